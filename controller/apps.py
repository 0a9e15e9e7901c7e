from django.apps import AppConfig


class ControllerConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "controller"
    verbose_name = "Node-failure playground"

    def ready(self) -> None:
        from . import checks  # noqa: F401  (registers system checks)
        from .lessons import classroom
        from .rooms import controls

        # A lesson's open question comes first for the room's Play and Step (a callback:
        # classroom resumes the clock through controls).
        controls.lesson_control = classroom.on_control
