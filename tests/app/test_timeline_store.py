"""A room's stored timeline (controller/timeline_store.py): many events at once (a big room's
first instant, a tick in which a zone changed) go in compressed chunks, the others in rows,
and every reader (the events endpoint, a client's snapshot, exports, lessons) sees one
timeline in idx order, the engine's own."""

from __future__ import annotations

import os

import pytest
from django.utils import timezone

from controller import timeline_store
from controller.engine.scenario import load_scenario
from controller.engine.simulation import Simulation
from controller.models import Room, TimelineChunk, TimelineEvent
from controller.rooms import controls, create, reading, tick

# 12 nodes and 600 pods: ~3,700 events at t=0, over CHUNK_MIN, so the first instant is chunked.
BIG = """
apiVersion: playground/v1alpha1
kind: Scenario
metadata: {name: chunked}
spec:
  kubernetesVersion: "1.34"
  nodes:
    - generate: {count: 6, namePrefix: a-, zone: zone-a}
    - generate: {count: 6, namePrefix: b-, zone: zone-b}
  objects:
    - apiVersion: apps/v1
      kind: Deployment
      metadata: {name: web, namespace: default}
      spec:
        replicas: 600
        selector: {matchLabels: {app: web}}
        template:
          metadata: {labels: {app: web}}
          spec: {containers: [{name: web, resources: {requests: {cpu: 10m}}}]}
  faults:
    - {at: 30s, type: StopKubelet, node: a-1}
"""


def _engine(until_ms: int) -> list[tuple[int, str, dict]]:
    sim = Simulation(load_scenario(BIG))
    sim.run(until_ms)
    return [
        (e["t"], e["type"], {k: v for k, v in e.items() if k not in ("t", "type")})
        for e in sim.timeline.events
    ]


def _synthetic(n: int, t: int = 0) -> list[dict]:
    return [
        {"t": t + i // 1000, "type": "PodPhase", "pod": f"p-{i}", "phase": "Running"}
        for i in range(n)
    ]


@pytest.fixture
def room(db) -> Room:
    return Room.objects.create(
        name="store", slug="store", scenario_yaml="", wall_anchor=timezone.now()
    )


@pytest.mark.parametrize(
    ("events", "chunks", "rows"),
    [
        (timeline_store.CHUNK_MIN - 1, 0, timeline_store.CHUNK_MIN - 1),  # rows
        (timeline_store.CHUNK_MIN, 1, 0),
        (2 * timeline_store.CHUNK + 1, 3, 0),  # the last chunk holds one event
    ],
)
def test_many_events_at_once_are_chunked_few_are_rows(room, events, chunks, rows) -> None:
    timeline_store.write(room.pk, 0, _synthetic(events))
    assert TimelineChunk.objects.filter(room=room).count() == chunks
    assert TimelineEvent.objects.filter(room=room).count() == rows
    assert timeline_store.count(room) == events
    got = timeline_store.after(room)
    assert [r[0] for r in got] == list(range(events))
    assert got[-1][1:] == (
        (events - 1) // 1000,
        "PodPhase",
        {"pod": f"p-{events - 1}", "phase": "Running"},
    )


# Chunks 0..9999 and 10000..11999, then rows 12000..12099 (later ticks).
@pytest.mark.parametrize(
    ("since", "limit", "first", "last"),
    [
        (-1, None, 0, 12_099),
        (-1, 5000, 0, 4999),
        (9_998, 3, 9_999, 10_001),  # across the chunks' boundary
        (11_990, 20, 11_991, 12_010),  # from a chunk into the rows
        (12_050, None, 12_051, 12_099),  # rows only
        (12_099, None, None, None),  # nothing after the last
    ],
)
def test_after_reads_chunks_then_rows_in_order(room, since, limit, first, last) -> None:
    timeline_store.write(room.pk, 0, _synthetic(12_000))
    TimelineEvent.objects.bulk_create(
        TimelineEvent(room=room, idx=12_000 + i, t_ms=500 + i, type="Fault", data={"i": i})
        for i in range(100)
    )
    got = [r[0] for r in timeline_store.after(room, since, limit)]
    if first is None:
        assert got == []
    else:
        assert got == list(range(first, last + 1))


@pytest.mark.parametrize(
    ("rows", "n", "first"),
    [
        (0, 300, 11_700),  # all from the last chunk
        (100, 300, 11_800),  # 200 from the chunk, 100 rows
        (100, 50, 12_050),  # rows only
        (0, 20_000, 0),  # more than there are: all of them
    ],
)
def test_last_reads_back_over_the_chunks(room, rows, n, first) -> None:
    timeline_store.write(room.pk, 0, _synthetic(12_000))
    TimelineEvent.objects.bulk_create(
        TimelineEvent(room=room, idx=12_000 + i, t_ms=500, type="Fault", data={})
        for i in range(rows)
    )
    got = [r[0] for r in timeline_store.last(room, n)]
    assert got == list(range(first, 12_000 + rows))


def test_at_finds_an_instant_in_chunks_and_rows(room) -> None:
    timeline_store.write(room.pk, 0, _synthetic(12_000))  # t = idx // 1000 ms
    TimelineEvent.objects.create(room=room, idx=12_000, t_ms=11, type="Fault", data={})
    got = timeline_store.at(room, 11)
    assert [r[0] for r in got] == [*range(11_000, 12_000), 12_000]
    assert [r[0] for r in timeline_store.at(room, 9)] == list(range(9_000, 10_000))
    assert timeline_store.at(room, 99) == []


def _interleaved(room: Room) -> None:
    """Rows 0..99 (ticks), a tick's 12,000 events at once in chunks 100..10099 and
    10100..12099 (t = 1 + (idx - 100) // 1000 ms), rows 12100..12199 (t = 13 ms) after it."""
    timeline_store.write(room.pk, 0, _synthetic(100))
    timeline_store.write(room.pk, 100, _synthetic(12_000, t=1))
    timeline_store.write(room.pk, 12_100, _synthetic(100, t=13))


@pytest.mark.parametrize(
    ("since", "limit", "first", "last"),
    [
        (-1, None, 0, 12_199),
        (-1, 150, 0, 149),  # rows, then into the first chunk
        (50, 100, 51, 150),
        (10_090, 20, 10_091, 10_110),  # across the chunks' boundary
        (12_090, 20, 12_091, 12_110),  # from the last chunk into the later rows
        (12_150, None, 12_151, 12_199),  # rows only
    ],
)
def test_a_ticks_chunks_between_rows_read_in_order(room, since, limit, first, last) -> None:
    _interleaved(room)
    assert TimelineChunk.objects.filter(room=room).count() == 2
    assert TimelineEvent.objects.filter(room=room).count() == 200
    assert timeline_store.count(room) == 12_200
    got = [r[0] for r in timeline_store.after(room, since, limit)]
    assert got == list(range(first, last + 1))


@pytest.mark.parametrize(
    ("n", "first"),
    [(50, 12_150), (300, 11_900), (12_150, 50), (20_000, 0)],
)
def test_last_reads_back_over_a_ticks_chunks_between_rows(room, n, first) -> None:
    _interleaved(room)
    assert [r[0] for r in timeline_store.last(room, n)] == list(range(first, 12_200))


def test_at_finds_an_instant_in_a_ticks_chunks_and_the_rows_around_them(room) -> None:
    _interleaved(room)
    assert [r[0] for r in timeline_store.at(room, 0)] == list(range(100))
    assert [r[0] for r in timeline_store.at(room, 11)] == list(range(10_100, 11_100))
    assert [r[0] for r in timeline_store.at(room, 13)] == list(range(12_100, 12_200))


def test_a_big_room_stores_the_engines_timeline_and_every_reader_sees_it(db, client) -> None:
    room = create.room_create("chunked", BIG, None, 10.0)
    expected = _engine(0)
    assert len(expected) > timeline_store.CHUNK_MIN
    assert TimelineChunk.objects.filter(room=room).exists()
    assert not TimelineEvent.objects.filter(room=room).exists()
    stored = [(t, typ, data) for _i, t, typ, data in timeline_store.after(room)]
    assert stored == expected
    # Later ticks are rows after the chunks; the whole timeline is still the engine's.
    controls.room_control(room.pk, "step", 60, "t")
    tick.room_advance(room.pk)
    room.refresh_from_db()
    assert TimelineEvent.objects.filter(room=room).exists()
    assert [(e["t"], e["type"]) for e in reading.room_timeline(room)] == [
        (t, typ) for t, typ, _d in _engine(room.sim_ms)
    ]
    assert timeline_store.count(room) == room.event_count
    # The events endpoint, paged from the start, as a client catching up reads it.
    paged: list[dict] = []
    since = -1
    while True:
        page = client.get(f"/rooms/{room.slug}/events.json", {"since": since}).json()["events"]
        if not page:
            break
        paged += page
        since = page[-1]["idx"]
    assert [e["idx"] for e in paged] == list(range(room.event_count))
    assert [(round(e["t"] * 1000), e["type"]) for e in paged] == [
        (t, typ) for t, typ, _d in _engine(room.sim_ms)
    ]
    # A client's snapshot carries the last 300 events, over the chunks and rows.
    snap = reading.room_snapshot(room)
    assert [e["idx"] for e in snap["events"]] == list(
        range(room.event_count - 300, room.event_count)
    )


def test_a_rewind_of_a_chunked_room_stores_its_timeline_again(db) -> None:
    room = create.room_create("chunked", BIG, None, 10.0)
    controls.room_control(room.pk, "step", 60, "t")
    tick.room_advance(room.pk)
    controls.room_rewind(room.pk, 0, "teacher")
    room.refresh_from_db()
    assert room.sim_ms == 0 and timeline_store.count(room) == room.event_count
    stored = [(t, typ, data) for _i, t, typ, data in timeline_store.after(room)]
    assert stored == _engine(0)


def test_a_ticks_views_are_upserted_changed_rows_replaced_new_ones_added(room) -> None:
    """bulk.upsert_views (a tick's changed nodes and pods): a row of the same (room, kind,
    key) gets the new data, a new key a new row, other rows and other rooms stay."""
    from controller import bulk
    from controller.models import ObjectView

    other = Room.objects.create(
        name="other", slug="other", scenario_yaml="", wall_anchor=timezone.now()
    )
    bulk.insert_views(room.pk, [("node", "n-1", {"ready": "True"}), ("pod", "p", {"v": 1})])
    bulk.insert_views(other.pk, [("node", "n-1", {"ready": "True"})])
    bulk.upsert_views(
        room.pk,
        [("node", "n-1", {"ready": "Unknown", "taints": [1, 2]}), ("node", "n-2", {"new": True})],
    )
    rows = {
        (r.room_id, r.kind, r.key): r.data
        for r in ObjectView.objects.filter(room__in=[room, other])
    }
    assert rows == {
        (room.pk, "node", "n-1"): {"ready": "Unknown", "taints": [1, 2]},
        (room.pk, "node", "n-2"): {"new": True},
        (room.pk, "pod", "p"): {"v": 1},
        (other.pk, "node", "n-1"): {"ready": "True"},
    }


def test_bulk_inserts_of_several_statements_store_each_rows_room(room) -> None:
    """bulk.insert_views and insert_events give the room's id once (on SQLite a number written
    into each statement, not a parameter of each row): over several statements (and a last,
    shorter one) every row is the given room's, another room's rows stay its own, and a room
    id that is not a number is refused before anything is written."""
    from controller import bulk
    from controller.models import ObjectView

    other = Room.objects.create(
        name="other", slug="other", scenario_yaml="", wall_anchor=timezone.now()
    )
    n = 2 * bulk.MULTI_ROWS + 7  # more than two statements' rows wherever they are counted
    bulk.insert_views(room.pk, [("pod", f"p-{i}", {"i": i}) for i in range(n)])
    bulk.insert_views(other.pk, [("pod", "p-0", {"other": True})])
    bulk.insert_events(room.pk, 4, _synthetic(n))
    bulk.insert_events(other.pk, 0, _synthetic(1))
    views = {(v.room_id, v.key): v.data for v in ObjectView.objects.filter(room__in=[room, other])}
    assert views == {(room.pk, f"p-{i}"): {"i": i} for i in range(n)} | {
        (other.pk, "p-0"): {"other": True}
    }
    assert list(
        TimelineEvent.objects.filter(room=room).order_by("idx").values_list("idx", "data")
    ) == [(4 + i, {"pod": f"p-{i}", "phase": "Running"}) for i in range(n)]
    assert TimelineEvent.objects.filter(room=other).count() == 1
    with pytest.raises(ValueError):
        bulk.insert_views("1) --", [("pod", "x", {})])  # type: ignore[arg-type]
    assert not ObjectView.objects.filter(key="x").exists()


def test_a_big_new_rooms_views_stored_as_they_are_made_are_the_engines_views(db) -> None:
    """A new room over FIRST_DELTA_MAX events stores its views as they are made (tick._persist,
    bulk.insert_views, several statements or a streamed COPY): every node, pod, the zones,
    the parameters and the workloads' replicas, as the engine's state gives them at t=0."""
    from controller.engine.state import node_state, parameters_view, pod_state, zone_states
    from controller.models import ObjectView

    room = create.room_create("chunked", BIG, None, 10.0)
    sim = Simulation(load_scenario(BIG))
    sim.run(0)
    assert len(sim.timeline.events) > tick.FIRST_DELTA_MAX
    expected = {("node", n): node_state(sim, node) for n, node in sim.cluster.nodes.items()}
    expected |= {("pod", k): pod_state(sim, pod) for k, pod in sim.cluster.pods.items()}
    expected[("zone", "*")] = zone_states(sim)
    expected[("params", "*")] = parameters_view(sim)
    expected[("metrics", "workloads")] = {r: list(v) for r, v in sim.workloads.metrics().items()}
    stored = {(v.kind, v.key): v.data for v in ObjectView.objects.filter(room=room)}
    assert len(stored) == 12 + 600 + 3
    assert stored == expected
    # What a page gets: every node and pod, in name order.
    snap = reading.room_snapshot(room)
    assert [n["name"] for n in snap["nodes"]] == sorted(sim.cluster.nodes)
    assert [p["key"] for p in snap["pods"]] == sorted(sim.cluster.pods)


@pytest.mark.skipif(
    os.environ.get("PLAYGROUND_DB") == "postgres", reason="SQLite's write-ahead log"
)
def test_a_big_writes_log_is_copied_into_the_database_file_by_a_thread_after_its_commit(
    transactional_db,
) -> None:
    """bulk.checkpoint_later (around a new room's build): the commit leaves SQLite's log
    uncopied (the database file untouched, the rows committed), the connection's automatic
    checkpoint is back after it, and a thread copies the log into the file."""
    import threading

    from django.db import connection, transaction

    from controller import bulk
    from controller.models import ObjectView

    room = Room.objects.create(name="big", slug="big", scenario_yaml="", wall_anchor=timezone.now())
    path = connection.settings_dict["NAME"]
    rows = [("pod", f"p-{i}", {"text": "x" * 2000}) for i in range(3000)]  # ~1,500 log pages
    before = os.stat(path).st_mtime_ns
    with bulk.checkpoint_later():
        with transaction.atomic():
            bulk.insert_views(room.pk, rows)
        assert os.stat(path).st_mtime_ns == before  # committed, the file not written
        assert connection.cursor().execute("PRAGMA wal_autocheckpoint").fetchone() == (0,)
    assert connection.cursor().execute("PRAGMA wal_autocheckpoint").fetchone() == (1000,)
    for thread in threading.enumerate():
        if thread.name == "sqlite-checkpoint":
            thread.join(30)
    assert os.stat(path).st_mtime_ns > before
    assert ObjectView.objects.filter(room=room).count() == 3000


@pytest.mark.skipif(os.environ.get("PLAYGROUND_DB") == "postgres", reason="SQLite's page cache")
def test_a_big_write_has_a_roomy_page_cache_and_the_same_rows(transactional_db) -> None:
    """bulk.big_write (around a new room's build): SQLite's page cache may hold the whole
    transaction meanwhile, and has its size as before after it; the rows are those stored
    without it."""
    from django.db import connection, transaction

    from controller import bulk
    from controller.models import ObjectView

    def cache_size() -> int:
        return connection.cursor().execute("PRAGMA cache_size").fetchone()[0]

    rows = [("pod", f"p-{i}", {"text": "x" * 2000, "i": i}) for i in range(3000)]
    plain, big = (
        Room.objects.create(name=n, slug=n, scenario_yaml="", wall_anchor=timezone.now())
        for n in ("plain", "big")
    )
    with transaction.atomic():
        bulk.insert_views(plain.pk, rows)
    before = cache_size()
    assert before != -bulk.BIG_WRITE_CACHE_KIB
    with bulk.big_write():
        assert cache_size() == -bulk.BIG_WRITE_CACHE_KIB
        with transaction.atomic():
            bulk.insert_views(big.pk, rows)
    assert cache_size() == before

    def stored(room: Room) -> list[tuple]:
        return list(
            ObjectView.objects.filter(room=room).order_by("key").values_list("kind", "key", "data")
        )

    assert stored(big) == stored(plain) and len(stored(big)) == 3000


@pytest.mark.skipif(
    os.environ.get("PLAYGROUND_DB") == "postgres", reason="SQLite's CHECK of JSON columns"
)
def test_the_bulk_inserts_json_is_valid_and_the_check_is_on_again_after_them(room) -> None:
    """bulk's inserts skip SQLite's json_valid CHECK for the JSON they encode themselves;
    every stored text is valid JSON, and the CHECK holds again right after (an invalid text
    is refused), also after an insert that failed."""
    from django.db import IntegrityError, connection, transaction

    from controller import bulk

    bulk.insert_views(room.pk, [("node", "n-1", {"a": [1, "é", None]}), ("pod", "p", {})])
    bulk.insert_events(room.pk, 0, _synthetic(3))
    with pytest.raises(IntegrityError), transaction.atomic():
        bulk.insert_views(room.pk, [("node", "n-1", {"again": True})])  # (room, kind, key) taken
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA ignore_check_constraints")
        assert cursor.fetchone() == (0,)
        for table in ("controller_objectview", "controller_timelineevent"):
            cursor.execute(f"SELECT count(*), sum(json_valid(data)) FROM {table}")
            assert cursor.fetchone() in ((2, 2), (3, 3))
        with pytest.raises(IntegrityError), transaction.atomic():
            cursor.execute(
                "INSERT INTO controller_objectview (room_id, kind, key, data) "
                "VALUES (%s, 'pod', 'q', '{not json')",
                [room.pk],
            )


@pytest.mark.parametrize("events", [timeline_store.CHUNK_MIN, 2 * timeline_store.CHUNK + 1])
def test_chunks_made_by_a_thread_are_writes_and_the_events_are_taken_over(room, events) -> None:
    """timeline_store.written_after (a big new room's chunks, made by a thread while its views
    are stored) stores the very rows that write stores (the straightforward path), and takes
    the events over: the caller's list is empty after it."""
    other = Room.objects.create(
        name="other", slug="other", scenario_yaml="", wall_anchor=timezone.now()
    )
    given = _synthetic(events, t=7)
    timeline_store.write(other.pk, 5, _synthetic(events, t=7))
    with timeline_store.written_after(room.pk, 5, given):
        pass
    assert given == []

    def rows(r: Room) -> list[tuple]:
        return list(
            TimelineChunk.objects.filter(room=r)
            .order_by("first_idx")
            .values_list("first_idx", "count", "first_t_ms", "last_t_ms", "blob")
        )

    assert [(*r[:4], bytes(r[4])) for r in rows(room)] == [
        (*r[:4], bytes(r[4])) for r in rows(other)
    ]
    assert timeline_store.after(room) == timeline_store.after(other)
