from django.urls import path

from . import views

urlpatterns = [
    path("", views.index, name="index"),
    path("healthz", views.healthz, name="healthz"),
    path("rooms/<slug:slug>/", views.room_page, name="room"),
    path("rooms/<slug:slug>/build.json", views.room_build, name="room-build"),
    path("rooms/<slug:slug>/export.yaml", views.room_export, name="room-export"),
    path("rooms/<slug:slug>/events.json", views.room_events, name="room-events"),
    path("rooms/<slug:slug>/snapshot.json", views.room_snapshot, name="room-snapshot"),
    path("rooms/<slug:slug>/series.json", views.room_series, name="room-series"),
    path("compare/<slug:slug>/", views.compare_page, name="compare"),
]
