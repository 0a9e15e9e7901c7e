"""The Celery app, wired as in Celery's Django guide."""

import os

from celery import Celery
from celery.signals import worker_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "playground.settings")

app = Celery("playground")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_init.connect
def _worker_kind(sender=None, **kwargs) -> None:
    """A worker that consumes the heavy queue and not the ticks' (playground/workers.py) is a
    heavy worker: it never announces itself for room affinity (controller/tasks.py), takes a
    built room's snapshot in the build rather than in a forked child (the room's ticking
    worker restores it; a fork would copy the engine's memory once more), and runs at
    PLAYGROUND_HEAVY_NICE, which its pool's processes inherit. Before the pool forks."""
    from django.conf import settings

    from . import workers

    queues = set(sender.app.amqp.queues.consume_from)
    workers.HEAVY_PROCESS = workers.HEAVY_QUEUE in queues and workers.TICK_QUEUE not in queues
    if workers.HEAVY_PROCESS:
        settings.PLAYGROUND_SNAPSHOT_FORK = False
        nice = int(settings.PLAYGROUND_HEAVY_NICE)
        if nice:
            os.nice(nice)
