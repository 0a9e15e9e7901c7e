"""``manage.py load_demo`` (scripts/run.sh prints its lines): the demo room, and the demo lesson
room "demo-lesson" of 25-lesson-node-failure-tour, paused at its first step's question (60 s),
with its viewer and operator links; the landing page lists the demo lesson first."""

from __future__ import annotations

import io
import re

from django.core.management import call_command

from controller.models import LessonState, Room
from controller.rooms import catalog, controls, runtime, tick


def load_demo() -> list[str]:
    out = io.StringIO()
    call_command("load_demo", stdout=out)
    return out.getvalue().splitlines()


def test_load_demo_creates_the_demo_lesson_paused_at_its_first_question(db: None) -> None:
    try:
        lines = load_demo()
        demo = Room.objects.get(slug="demo")
        room = Room.objects.get(slug="demo-lesson")
        assert lines == [
            "new here? learn alone, at your own pace: /?solo",
            f"demo room: /rooms/demo/?token={demo.operator_token}",
            "demo lesson (viewer link): /rooms/demo-lesson/",
            f"demo lesson (operator link): /rooms/demo-lesson/?token={room.operator_token}",
        ]
        text = (catalog.BUILTIN_DIR / "25-lesson-node-failure-tour.yaml").read_text()
        assert room.scenario_yaml == text
        assert room.speed == 10.0
        # Paused at the first step's checkpoint (b-1's kubelet has just stopped, at 60 s).
        assert room.paused is True
        assert room.sim_ms == 60_000
        ls = LessonState.objects.get(room=room)
        assert (ls.step, ls.checkpoint, ls.revealed) == (1, "heartbeats", False)
        assert room.events.filter(type="Fault", t_ms=60_000).count() == 1
        assert not room.events.filter(t_ms__gt=60_000).exists()

        # Run again (every `make run`): nothing new, the same links.
        assert load_demo() == lines
        assert Room.objects.filter(slug__startswith="demo").count() == 2
        assert Room.objects.get(pk=room.pk).sim_ms == 60_000
    finally:
        runtime.forget_cache()


def test_each_run_finds_the_demo_room_at_0_s_waiting_for_its_first_viewer(db: None) -> None:
    from datetime import timedelta

    try:
        load_demo()
        demo = Room.objects.get(slug="demo")
        assert (demo.sim_ms, demo.idle_since is not None) == (0, True)
        controls.room_wake(demo.pk)  # someone opened it and watched it to 40:00
        demo = Room.objects.get(slug="demo")
        tick.room_advance(demo.pk, demo.wall_anchor + timedelta(seconds=240))  # 40:00
        controls.room_control(demo.pk, "pause", None, "someone")
        assert Room.objects.get(pk=demo.pk).sim_ms == 2_400_000
        load_demo()  # the next `make run`
        again = Room.objects.get(pk=demo.pk)
        assert (again.sim_ms, again.paused, again.operator_token) == (0, False, demo.operator_token)
        assert not again.events.filter(t_ms__gt=0).exists()
        # Unwatched, it waits at 0 s (issue #38: it was at 53:28 when first opened) ...
        tick.room_advance(demo.pk, again.wall_anchor + timedelta(seconds=600))
        assert Room.objects.get(pk=demo.pk).sim_ms == 0
        # ... until someone opens it: its clock runs from then.
        assert controls.room_wake(demo.pk)
        woken = Room.objects.get(pk=demo.pk)
        tick.room_advance(demo.pk, woken.wall_anchor + timedelta(seconds=6))
        assert Room.objects.get(pk=demo.pk).sim_ms == 60_000
    finally:
        runtime.forget_cache()


def test_viewer_link_is_not_an_operator_and_operator_link_is(client, db: None) -> None:
    try:
        lines = load_demo()
        viewer = lines[2].split(": ", 1)[1]
        operator = lines[3].split(": ", 1)[1]
        page = client.get(viewer).content.decode()
        assert 'data-operator="0"' in page
        assert 'id="operator-link"' not in page
        page = client.get(operator).content.decode()
        assert 'data-operator="1"' in page
    finally:
        runtime.forget_cache()


def test_landing_page_lists_the_demo_lesson_first_with_its_viewer_link(client, db: None) -> None:
    page = client.get("/").content.decode()
    found = re.findall(r'data-lesson="([^"]+)"', page)
    assert found[0] == "25-lesson-node-failure-tour"
    assert sorted(found[1:]) == found[1:] and len(found) == len(catalog.builtin_lessons())
    assert "Start here" in page
    assert "join-demo-lesson" not in page  # no demo-lesson room yet
    try:
        load_demo()
        page = client.get("/").content.decode()
        assert '<a class="join-demo-lesson" href="/rooms/demo-lesson/">' in page
    finally:
        runtime.forget_cache()
