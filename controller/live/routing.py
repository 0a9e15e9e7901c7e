from django.urls import path, re_path

from .consumers import RoomConsumer, UnknownPathConsumer

websocket_urlpatterns = [
    path("ws/rooms/<slug:slug>/", RoomConsumer.as_asgi()),
    re_path(
        r"", UnknownPathConsumer.as_asgi()
    ),  # any other path: closed with 4404 (codes.NOT_FOUND)
]
