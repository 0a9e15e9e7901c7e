"""``python manage.py load_demo``: make sure a demo room runs at 10x (used by ``make run``)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from controller import services
from controller.models import Room


class Command(BaseCommand):
    help = "Create the demo room (running at 10x) unless it exists."

    def handle(self, *args: Any, **opts: Any) -> None:
        room = Room.objects.filter(slug="demo").first()
        if room is None:
            text = (services.BUILTIN_DIR / "00-demo.yaml").read_text()
            room = services.room_create("demo", text, None, 10.0)
        self.stdout.write(f"demo room: /rooms/{room.slug}/?token={room.operator_token}")
