"""``python manage.py load_demo``: make sure the demo room waits at 0 s (10x once opened) and the demo
lesson waits for its class (used by ``make run``, which prints the links).

- ``/?solo``: where a newcomer starts, learning the demo lesson alone (printed first).
- ``demo``: the built-in demo scenario (00-demo.yaml), at 10x, from 0 s on each run (rewound
  there: every event it shows is to come, whenever the last run stopped); its clock waits at
  0 s until the first page opens it (an idle room, woken by its first viewer).
- ``demo-lesson``: the tour a newcomer opens first (25-lesson-node-failure-tour.yaml), paused
  at its first step's question (the clock runs to the first checkpoint, as in any lesson room,
  and stops there), so a viewer who opens the link sees the question at once.

Each is created only when no room of that slug exists. Output, one ``label: path`` per line:
the learn-alone link, the demo room's operator link, then the demo lesson's viewer and
operator links.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand
from django.db.models import F
from django.utils import timezone

from controller.lessons import definition
from controller.models import Room
from controller.rooms import catalog, controls, create, tick

DEMO_SLUG = "demo"
DEMO_LESSON_SLUG = "demo-lesson"


def _room_url(room: Room, operator: bool) -> str:
    url = f"/rooms/{room.slug}/"
    return f"{url}?token={room.operator_token}" if operator else url


def create_demo_lesson() -> Room:
    """The demo-lesson room (created unless it exists), paused at its first checkpoint."""
    room = Room.objects.filter(slug=DEMO_LESSON_SLUG).first()
    if room is not None:
        return room
    text = (catalog.BUILTIN_DIR / f"{catalog.DEMO_LESSON}.yaml").read_text()
    room = create.room_create(DEMO_LESSON_SLUG, text, None, 10.0)
    lesson = definition.lesson_of(room)
    first = next(
        (s for s in lesson.steps if s.checkpoint is not None) if lesson is not None else (),
        None,
    )
    at_ms = first.checkpoint.when_at_ms if first is not None and first.checkpoint else None
    if at_ms is not None:
        from controller.locks import RoomLock

        with RoomLock(room.pk) as got:
            if got:  # else a worker already ticks it: the clock stops there anyway
                tick.room_advance(room.pk, extra_ms=at_ms)
        room.refresh_from_db()
    return room


def restart_demo(room: Room) -> None:
    """The demo room back at 0 s, running (its "what to watch for" speaks of the first
    minutes: a room found at 40:00 has shown it all)."""
    if room.sim_ms > 0 and room.build_state == Room.LIVE:
        controls.room_rewind(room.pk, 0, "make run (load_demo)")
    room.refresh_from_db()
    if room.paused:
        controls.room_control(room.pk, "resume", None, "make run (load_demo)")
    wait_for_a_viewer(room)


def wait_for_a_viewer(room: Room) -> None:
    """The demo room stands at its time (0 s) until someone opens it: marked idle now, its
    clock stops here (clock._now_target) and the first page that connects wakes it
    (controls.room_wake), so nobody finds it at 53:28 with all it shows gone by."""
    now = timezone.now()
    Room.objects.filter(pk=room.pk).update(
        idle_since=now, wall_anchor=now, sim_anchor_ms=F("sim_ms")
    )


class Command(BaseCommand):
    help = (
        "Create the demo room (running at 10x; rewound to 0 s when it exists) and the demo "
        "lesson room unless they exist."
    )

    def handle(self, *args: Any, **opts: Any) -> None:
        self.stdout.write("new here? learn alone, at your own pace: /?solo")
        room = Room.objects.filter(slug=DEMO_SLUG).first()
        if room is None:
            text = (catalog.BUILTIN_DIR / "00-demo.yaml").read_text()
            room = create.room_create(DEMO_SLUG, text, None, 10.0)
            wait_for_a_viewer(room)
        else:
            restart_demo(room)
        self.stdout.write(f"demo room: {_room_url(room, operator=True)}")
        lesson_room = create_demo_lesson()
        self.stdout.write(f"demo lesson (viewer link): {_room_url(lesson_room, operator=False)}")
        self.stdout.write(f"demo lesson (operator link): {_room_url(lesson_room, operator=True)}")
