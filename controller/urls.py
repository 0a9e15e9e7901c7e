from django.urls import path, re_path

from . import views
from .kubeapi import views as kubeapi

urlpatterns = [
    path("", views.index, name="index"),
    path("healthz", views.healthz, name="healthz"),
    path("import/preview/<str:preview_id>/", views.import_preview_page, name="import-preview"),
    path(
        "import/preview/<str:preview_id>.json",
        views.import_preview_json,
        name="import-preview-json",
    ),
    path("rooms/<slug:slug>/", views.room_page, name="room"),
    path("rooms/<slug:slug>/build.json", views.room_build, name="room-build"),
    path("rooms/<slug:slug>/export.yaml", views.room_export, name="room-export"),
    path("rooms/<slug:slug>/events.json", views.room_events, name="room-events"),
    path("rooms/<slug:slug>/timeline.csv", views.room_timeline_csv, name="room-timeline-csv"),
    path("rooms/<slug:slug>/events.yaml", views.room_events_yaml, name="room-events-yaml"),
    path("rooms/<slug:slug>/manifests.yaml", views.room_manifests, name="room-manifests"),
    path("rooms/<slug:slug>/whatif", views.room_what_if, name="room-whatif"),
    path(
        "rooms/<slug:slug>/whatif/<str:task_id>",
        views.room_what_if_result,
        name="room-whatif-result",
    ),
    path("rooms/<slug:slug>/snapshot.json", views.room_snapshot, name="room-snapshot"),
    path("rooms/<slug:slug>/series.json", views.room_series, name="room-series"),
    path("compare/<slug:slug>/", views.compare_page, name="compare"),
    # Each room's Kubernetes API (controller/kubeapi/) and the kubeconfig its page offers.
    path("rooms/<slug:slug>/kubeconfig", kubeapi.room_kubeconfig, name="room-kubeconfig"),
    re_path(
        r"^k8s/rooms/(?P<slug>[-a-zA-Z0-9_]+)/(?P<rest>.*)$", kubeapi.kube_api, name="kube-api"
    ),
]
