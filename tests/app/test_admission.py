"""Admission by cost (issue #35): a room's cost (nodes + pods at the most its faults take
them, times its speed over 10x) is counted with every room its owner holds (being built,
running, paused, idle; not expired) and every room on the server, refused with what would
fit; rooms nobody watches, paused ones too, expire; the worker's engine cache is bounded."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone

from controller import limits, tasks
from controller.limits import LimitError
from controller.live import presence
from controller.locks import redis_client
from controller.models import Action, Room
from controller.rooms import actions, compare, controls, create, reading, runtime, tick
from controller.rooms.errors import ActionError
from tests.app.scenarios import pod, scenario, workload

SMALL = scenario("small", 3, (pod(), workload("Deployment", "api", 4)))  # 3 + 5: costs 500
MID = scenario("mid", 3, (pod(), workload("Deployment", "api", 200)))  # 204 objects
# Issue #35's attack: 939 bytes, ~5,000 nodes, one Deployment of 145,000 replicas, a zone
# outage at 30 s; within the per-room limits (5,000 nodes, 150,000 pods).
ATTACK = (
    "apiVersion: playground/v1alpha1\nkind: Scenario\nmetadata: {name: big}\nspec:\n"
    "  nodes:\n"
    + "".join(
        f"    - generate: {{count: 1666, namePrefix: {z}-, zone: {z}, capacity: "
        '{cpu: "64", memory: 256Gi, pods: "110"}}\n'
        for z in "abc"
    )
    + "  objects:\n"
    + workload("Deployment", "web", 145000)
    + "  faults:\n    - {at: 30s, type: ZoneOutage, zone: a}\n"
)


def post(client: Client, addr: str, text: str, speed: float = 10, **extra: Any) -> Any:
    upload = SimpleUploadedFile("s.yaml", text.encode(), "application/yaml")
    data = {"name": extra.pop("name", "r"), "upload": upload, "speed": speed, **extra}
    return client.post("/", data, REMOTE_ADDR=addr)


@pytest.mark.django_db
def test_the_145000_replica_scenario_is_refused_saying_what_fits() -> None:
    """Within the default limits it was accepted (a 1 KB POST that held the server 16
    minutes); by its cost it is refused, and the page says how much would fit."""
    assert len(ATTACK) < 1000
    page = post(Client(), "10.0.0.1", ATTACK)
    assert page.status_code == 200
    assert (
        "PLAYGROUND_MAX_COST_PER_OWNER=60000: this room costs 149,998 (149,998 nodes and "
        "pods); the rooms you hold cost 0, 60,000 is left: at most 60,000 nodes and pods at "
        "10x fit (a room costs its nodes and pods, times its speed over 10x, at least 500; "
        "paused rooms count until they expire)"
    ) in page.content.decode()
    assert Room.objects.count() == 0


@pytest.mark.django_db
def test_what_fits_counts_the_rooms_held_and_the_speed(settings) -> None:
    settings.PLAYGROUND_MAX_COST_PER_OWNER = 2000
    owner = "addr:10.0.0.2"
    create.room_create("a", SMALL, None, 10.0, creator=owner)  # 500
    room = create.room_create("b", MID, None, 20.0, creator=owner)  # 500 (204 x 2 = 408)
    assert limits.held_cost(owner) == 1000
    # A scale fault's peak counts: 3 nodes + 1 + 600 pods, at 20x: 1,208.
    scaled = scenario(
        "s",
        3,
        (pod(), workload("Deployment", "api", 4)),
        ("{at: 5s, type: ScaleWorkload, workload: Deployment/api, replicas: 600}",),
    )
    with pytest.raises(LimitError) as info:
        create.room_create("c", scaled, None, 20.0, creator=owner)
    assert str(info.value).startswith(
        "PLAYGROUND_MAX_COST_PER_OWNER=2000: this room costs 1,208 (604 nodes and pods at "
        "20x: 2 times that); the rooms you hold cost 1,000, 1,000 is left: at most 500 nodes "
        "and pods at 20x fit"
    )
    # Faster is dearer: at 100x, 204 x 10 = 2,040, with the other room's 500: refused.
    with pytest.raises(LimitError) as info:
        controls.room_control(room.pk, "speed", 100, "op")
    assert str(info.value).startswith(
        "PLAYGROUND_MAX_COST_PER_OWNER=2000: this room at 100x costs 2,040 (204 nodes and pods "
        "at 100x: 10 times that); the rooms you hold cost 500, 1,500 is left: at most 150 "
        "nodes and pods at 100x fit"
    )
    assert Room.objects.get(pk=room.pk).speed == 20.0
    controls.room_control(room.pk, "speed", 70, "op")  # 1,428 + 500
    assert Room.objects.get(pk=room.pk).speed == 70.0
    controls.room_control(room.pk, "speed", 20, "op")  # slower: never refused
    # The server's budget counts every owner's rooms.
    settings.PLAYGROUND_MAX_COST_PER_OWNER = 0
    settings.PLAYGROUND_MAX_COST = 1400
    with pytest.raises(LimitError) as info:
        create.room_create("d", SMALL, None, 10.0, creator="addr:10.9.9.9")
    assert str(info.value).startswith(
        "PLAYGROUND_MAX_COST=1400: this room costs 500 (8 nodes and pods); the server's rooms "
        "cost 1,000, 400 is left: at most 0 nodes and pods at 10x fit"
    )


@pytest.mark.django_db
def test_paused_rooms_count_27_are_refused_at_the_cap(settings) -> None:
    """Pausing lets no one hold more: 26 rooms fill the address's budget, paused or not (only
    10 may run at once), and the 27th is refused through the form; another address is not;
    a comparison's two sides count both; an expired room no longer counts."""
    settings.PLAYGROUND_MAX_COST_PER_OWNER = 26 * 500
    owner = "addr:10.0.0.7"
    for i in range(26):
        room = create.room_create(f"r{i}", SMALL, None, 10.0, creator=owner)
        controls.room_control(room.pk, "pause", None, "op")
    page = post(Client(), "10.0.0.7", SMALL, name="r26")
    assert (
        "PLAYGROUND_MAX_COST_PER_OWNER=13000: this room costs 500 (8 nodes and pods); the rooms "
        "you hold cost 13,000, 0 is left: at most 0 nodes and pods at 10x fit"
    ) in page.content.decode()
    assert Room.objects.filter(creator=owner).count() == 26
    assert post(Client(), "10.0.0.8", SMALL, name="other").status_code == 302
    # An expired room frees its cost; a comparison needs both sides' (one more is not enough).
    first = Room.objects.filter(creator=owner).order_by("id").first()
    Room.objects.filter(pk=first.pk).update(expired_at=timezone.now())
    sides = [("x", {"apiServer": {}}), ("y", {"apiServer": {}})]
    with pytest.raises(LimitError, match="^PLAYGROUND_MAX_COST_PER_OWNER=13000: "):
        compare.comparison_create("cmp", SMALL, sides, None, 10.0, creator=owner)
    assert post(Client(), "10.0.0.7", SMALL, name="r27").status_code == 302
    assert Room.objects.filter(creator=owner, expired_at__isnull=True).count() == 26


@pytest.mark.django_db
def test_live_scaling_counts_against_the_budget(settings) -> None:
    settings.PLAYGROUND_MAX_COST_PER_OWNER = 1100
    owner = "addr:10.0.0.3"
    create.room_create("a", SMALL, None, 10.0, creator=owner)
    room = create.room_create("b", SMALL, None, 10.0, creator=owner)
    scale = {"type": "ScaleWorkload", "workload": "Deployment/default/api", "replicas": 600}
    with pytest.raises(LimitError) as info:
        actions.action_submit(room, scale, "op")
    assert str(info.value).startswith(
        "PLAYGROUND_MAX_COST_PER_OWNER=1100: this room with this action (596 more nodes and "
        "pods) costs 604 (604 nodes and pods); the rooms you hold cost 500, 600 is left: at "
        "most 600 nodes and pods at 10x fit"
    )
    assert not Action.objects.filter(room=room, kind="ScaleWorkload").exists()
    scale["replicas"] = 400  # 8 + 396 = 404: the minimum still; its cost grows by 396
    actions.action_submit(room, scale, "op")
    assert Room.objects.get(pk=room.pk).cost_objects == 8 + 396
    node = {"type": "AddNode", "node": {"name": "n-9", "zone": "z"}}
    actions.action_submit(room, node, "op")
    assert Room.objects.get(pk=room.pk).cost_objects == 8 + 396 + 1


# -- expiry -----------------------------------------------------------------------------------
@pytest.fixture
def redis_keys(redis_server, monkeypatch):
    monkeypatch.setattr(tasks.affinity, "live_workers", lambda client, now=None: [])
    client = redis_client()
    yield client
    for key in client.scan_iter("playground:room:*"):
        client.delete(key)


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("fresh_channel_layer")
def test_a_paused_room_nobody_watches_expires_and_cannot_be_stepped(settings, redis_keys):
    settings.PLAYGROUND_IDLE_PAUSE_SECONDS = 5
    settings.PLAYGROUND_ROOM_EXPIRY_SECONDS = 60
    settings.PLAYGROUND_MAX_COST_PER_OWNER = 500
    owner = "addr:10.0.0.4"
    room = create.room_create("p", SMALL, None, 10.0, creator=owner)
    paused_at = controls.room_control(room.pk, "pause", None, "op").sim_anchor_ms
    controls.room_control(room.pk, "step", 5, "op")  # paused: a step is taken
    stepped = paused_at + 5000
    # Nobody has watched it for 6 s: beat marks it idle (after its step's tick).
    redis_client().set(presence.watched_key(room.pk), repr(time.time() - 6))
    tasks.rooms_tick_task()
    room.refresh_from_db()
    assert room.idle_since is not None and room.expired_at is None and room.sim_ms == stepped
    with pytest.raises(LimitError):  # it still counts
        create.room_create("q", SMALL, None, 10.0, creator=owner)
    # Idle for longer than the expiry: the next beat expires it.
    Room.objects.filter(pk=room.pk).update(idle_since=room.idle_since - timedelta(seconds=61))
    tasks.rooms_tick_task()
    room.refresh_from_db()
    assert room.expired_at is not None and room.paused
    for kind, value in (("step", 5), ("resume", None), ("speed", 20)):
        with pytest.raises(ActionError, match=f"^{kind}: this room expired at .* UTC: nobody "):
            controls.room_control(room.pk, kind, value, "op")
    with pytest.raises(ActionError, match="^rewind: this room expired at "):
        controls.room_rewind(room.pk, 0, "op")
    with pytest.raises(ActionError, match="^action: this room expired at "):
        actions.action_submit(room, {"type": "StopKubelet", "node": "n-1"}, "op")
    # A step already asked for (or anything pending) is not ticked any more.
    Room.objects.filter(pk=room.pk).update(sim_anchor_ms=stepped + 4000)
    tasks.rooms_tick_task()
    assert Room.objects.get(pk=room.pk).sim_ms == stepped
    assert controls.room_wake(room.pk) is False  # a viewer does not bring it back
    # Its page still shows where it stopped; its cost is free again.
    assert reading.room_snapshot(room)["t"] == stepped / 1000
    create.room_create("q", SMALL, None, 10.0, creator=owner)


# -- the engine cache -------------------------------------------------------------------------
FAULTY = scenario(
    "cache",
    3,
    (pod(), workload("Deployment", "api", 4)),
    (
        "{at: 10s, type: StopKubelet, node: n-1}",
        "{at: 70s, type: ScaleWorkload, workload: Deployment/api, replicas: 7}",
    ),
)


def _state(room: Room) -> tuple[Any, ...]:
    snap = reading.room_snapshot(room)
    return Room.objects.get(pk=room.pk).sim_ms, snap["nodes"], snap["pods"], snap["events"]


@pytest.mark.django_db
def test_the_engine_cache_drops_the_least_recently_used_and_the_room_ticks_on(settings):
    settings.PLAYGROUND_ENGINE_CACHE_MB = 0  # no bound: the reference room stays cached
    runtime.forget_cache()
    ref = create.room_create("ref", FAULTY, None, 10.0)
    settings.PLAYGROUND_ENGINE_CACHE_MB = 1  # one small engine (~0.65 MB estimated) fits
    a = create.room_create("a", FAULTY, None, 10.0)
    assert list(runtime._CACHE) == [a.pk]  # ref's engine went back to its snapshot
    b = create.room_create("b", FAULTY, None, 10.0)
    assert list(runtime._CACHE) == [b.pk]
    t0 = timezone.now()
    for room in (ref, a, b):
        Room.objects.filter(pk=room.pk).update(wall_anchor=t0, sim_anchor_ms=0)
    restores = runtime.RESTORES
    for seconds in (3, 6, 9, 12):  # 30 ... 120 simulated seconds: the faults in between
        for room in (a, b, ref):
            tick.room_advance(room.pk, t0 + timedelta(seconds=seconds))
    # a, b and ref each took the other's place at every tick: restored from their snapshots.
    assert runtime.RESTORES - restores == 12
    assert len(runtime._CACHE) == 1
    settings.PLAYGROUND_ENGINE_CACHE_MB = 0
    runtime.forget_cache()
    expected = _state(ref)
    assert expected[0] == 120_000 and len(expected[3]) > 10
    assert _state(a) == expected
    assert _state(b) == expected


def test_the_cache_keeps_the_newest_even_alone_over_the_cap(settings) -> None:
    class Sim:
        class cluster:
            nodes = dict.fromkeys(range(100))
            pods = dict.fromkeys(range(400))

    settings.PLAYGROUND_ENGINE_CACHE_MB = 1
    cache = runtime.EngineCache()
    cache[1] = runtime.Runtime(Sim(), 0)  # 0.6 MB + 500 x 5 KB = 3.1 MB: over, kept
    assert list(cache) == [1]
    cache[2] = runtime.Runtime(Sim(), 0)
    assert list(cache) == [2]
    settings.PLAYGROUND_ENGINE_CACHE_MB = 7
    cache[3] = runtime.Runtime(Sim(), 0)
    assert cache.get(2) is not None  # used: now the most recent
    cache[4] = runtime.Runtime(Sim(), 0)  # 3 x 3.1 MB > 7 MB: 3, the least recently used, goes
    assert list(cache) == [2, 4]


@pytest.mark.parametrize(
    ("name", "raw", "error"),
    [
        ("PLAYGROUND_MAX_COST_PER_OWNER", "-1", "='-1': must not be negative (0 turns it off)"),
        ("PLAYGROUND_MAX_COST", "lots", "='lots': expected int"),
        ("PLAYGROUND_ROOM_EXPIRY_SECONDS", "nan", "=nan: must be from 0 to 2592000"),
        (
            "PLAYGROUND_ENGINE_CACHE_MB",
            "2000000",
            "=2000000: must be at most 1048576 (0 turns it off)",
        ),
    ],
)
def test_a_budget_setting_out_of_bounds_stops_start_up_naming_it(name, raw, error) -> None:
    """Read by a fresh process, as the server reads them."""
    import os
    import subprocess
    import sys

    env = {**os.environ, name: raw}
    out = subprocess.run(
        [sys.executable, "-c", "import playground.settings"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert out.returncode != 0
    assert f"ImproperlyConfigured: {name}{error}" in out.stderr


@pytest.mark.django_db
def test_an_expired_rooms_page_says_so() -> None:
    room = create.room_create("p", SMALL, None, 10.0)
    assert 'id="expired"' not in Client().get(f"/rooms/{room.slug}/").content.decode()
    Room.objects.filter(pk=room.pk).update(expired_at=timezone.now(), paused=True)
    page = Client().get(f"/rooms/{room.slug}/").content.decode()
    assert "This room expired on " in page and f"/rooms/{room.slug}/export" in page


@pytest.mark.django_db(transaction=True)
def test_two_admissions_at_once_do_not_both_pass_the_budget(settings) -> None:
    """One address's two requests at once: the second's check waits for the first's room to
    be stored (PostgreSQL: an advisory lock; SQLite: its write lock, taken as a transaction
    begins), and is refused."""
    import threading

    from django.db import connection, transaction

    settings.PLAYGROUND_MAX_COST_PER_OWNER = 500
    owner = "addr:10.0.0.5"
    checked, go = threading.Event(), threading.Event()
    outcome: dict[str, Any] = {}

    def first() -> None:
        try:
            with transaction.atomic():
                limits.check_budget(owner, 8, 10.0)
                checked.set()
                go.wait(5)  # the second request comes meanwhile
                Room.objects.create(
                    name="a", slug="a", creator=owner, wall_anchor=timezone.now(), cost_objects=8
                )
        finally:
            checked.set()
            connection.close()

    def second() -> None:
        try:
            create.room_create("b", SMALL, None, 10.0, creator=owner)
            outcome["second"] = "admitted"
        except LimitError as exc:
            outcome["second"] = str(exc)
        finally:
            connection.close()

    a = threading.Thread(target=first)
    a.start()
    checked.wait(5)
    b = threading.Thread(target=second)
    b.start()
    b.join(0.5)  # it waits for the first's transaction
    go.set()
    a.join(10)
    b.join(30)
    assert outcome["second"].startswith("PLAYGROUND_MAX_COST_PER_OWNER=500: this room costs 500")
    assert list(Room.objects.values_list("name", flat=True)) == ["a"]


@pytest.mark.django_db
def test_an_expired_lesson_room_is_not_resumed_by_its_lessons_next() -> None:
    """At a revealed question, Next resumes the clock: not an expired room's, and the lesson
    does not move on."""
    from pathlib import Path

    from controller.lessons import classroom
    from controller.models import LessonState

    text = (Path(__file__).resolve().parents[1] / "fixtures" / "lesson-heartbeat.yaml").read_text()
    room = create.room_create("lesson", text, None, 10.0)
    tick.room_advance(room.pk, room.wall_anchor + timedelta(seconds=20))  # stops at 70 s
    classroom.reveal(room.pk)
    Room.objects.filter(pk=room.pk).update(expired_at=timezone.now())
    before = LessonState.objects.filter(room=room).values_list("step", "checkpoint").get()
    with pytest.raises(ActionError, match="^lesson.next: this room expired at "):
        classroom.next_step(room.pk, "teacher")
    assert LessonState.objects.filter(room=room).values_list("step", "checkpoint").get() == before
    assert Room.objects.get(pk=room.pk).paused
    runtime.forget_cache()


def test_the_cache_is_safe_across_threads(settings) -> None:
    """A worker's threads tick rooms side by side: one thread's store drops another's engine
    (the cap) while a third takes them all (keep_engines_frozen): nothing fails."""
    import threading

    class Sim:
        class cluster:
            nodes = dict.fromkeys(range(10))
            pods = dict.fromkeys(range(10))

    settings.PLAYGROUND_ENGINE_CACHE_MB = 1  # about one engine
    cache = runtime.EngineCache()
    errors: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for i in range(3000):
                key = (n * 7 + i) % 11
                if n == 0:
                    cache.engines()
                elif i % 3:
                    cache[key] = runtime.Runtime(Sim(), 0)
                elif i % 2:
                    cache.pop(key, None)
                else:
                    cache.get(key)
        except BaseException as exc:
            errors.append(exc)

    import sys

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch as often as they can
    try:
        threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert errors == []
    assert len(cache) <= 2


def test_the_cache_drops_an_engine_only_while_it_is_still_the_rooms() -> None:
    """A tick whose result was superseded drops its own engine, never a newer one another
    thread stored for the room meanwhile (a rewind's, a restore's): one step of the cache
    (pop_if), not a get then a delete that another thread can come between."""
    import sys
    import threading

    class Sim:
        class cluster:
            nodes: dict[int, None] = {}
            pods: dict[int, None] = {}

    cache = runtime.EngineCache()
    old, new = runtime.Runtime(Sim(), 0), runtime.Runtime(Sim(), 1)
    cache[1] = old
    assert cache.pop_if(1, old) is True and 1 not in cache
    assert cache.pop_if(1, old) is False  # gone already: no KeyError
    cache[1] = new
    assert cache.pop_if(1, old) is False and cache.get(1) is new  # a newer one stays

    errors: list[BaseException] = []
    lost: list[int] = []

    def tick(n: int) -> None:
        # Each thread stores its own engine and drops it when "superseded"; another's store
        # in between must survive the drop.
        try:
            for _ in range(3000):
                mine = runtime.Runtime(Sim(), n)
                cache[7] = mine
                if cache.pop_if(7, mine) is False:
                    current = cache.get(7)
                    if current is mine:
                        lost.append(n)
        except BaseException as exc:
            errors.append(exc)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=tick, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert errors == [] and lost == []
