from django.apps import AppConfig
from django.conf import settings


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
        if not settings.PLAYGROUND_LOG_QUERIES:
            _queries_logged_only_when_forced()


def _queries_logged_only_when_forced() -> None:
    """With DEBUG (make run's default), Django keeps every query's SQL with its parameters
    written in (``connection.queries``, up to 9,000 per connection, one connection per thread):
    the INSERT of a 16.6 MiB kubectl List kept 16.6 MiB in Daphne, and more per thread that
    made one (issue #35, attack 4). Queries are logged only where a tool asks for them
    (``force_debug_cursor``: assertNumQueries, CaptureQueriesContext); PLAYGROUND_LOG_QUERIES=1
    gives Django's own rule back."""
    from django.db.backends.base.base import BaseDatabaseWrapper

    BaseDatabaseWrapper.queries_logged = property(  # type: ignore[method-assign, assignment]
        lambda self: self.force_debug_cursor
    )
