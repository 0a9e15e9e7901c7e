from django.apps import AppConfig


class ControllerConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "controller"
    verbose_name = "Node-failure playground"

    def ready(self) -> None:
        from . import checks  # noqa: F401  (registers system checks)
