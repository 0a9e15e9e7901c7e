"""Configuration invariants as Django system checks."""

from django.conf import settings
from django.core.checks import Error, register


@register()
def channel_layer_is_redis(app_configs, **kwargs):  # type: ignore[no-untyped-def]
    backend = settings.CHANNEL_LAYERS.get("default", {}).get("BACKEND", "")
    if "RedisChannelLayer" not in backend and "RedisPubSubChannelLayer" not in backend:
        return [
            Error(
                "The channel layer must be Redis: rooms are shared between processes.",
                id="controller.E001",
            )
        ]
    return []


@register()
def celery_not_eager(app_configs, **kwargs):  # type: ignore[no-untyped-def]
    if getattr(settings, "CELERY_TASK_ALWAYS_EAGER", False):
        return [
            Error("Celery must not run tasks eagerly: ticks need the broker.", id="controller.E002")
        ]
    return []
