"""Limits that keep one person (or one script) from taking the whole server: running rooms per
owner and per server, the cost of the rooms held per owner and per server (check_budget),
nodes and pods per room, messages per second per client, websocket
message size, scenario size. Each is a setting read from the environment (settings.py,
README "Limits"); 0 turns a limit off. A refusal names the limit, its setting and value, and
what was asked: ``PLAYGROUND_MAX_NODES_PER_ROOM=2000: this scenario has 5000 nodes``."""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.db import connection

from .engine.scenario import Scenario
from .models import ObjectView, Room

# setting name -> what it limits (for the README and error messages)
LIMITS = {
    "PLAYGROUND_MAX_RUNNING_ROOMS": "running (not paused) rooms on the server",
    "PLAYGROUND_MAX_RUNNING_ROOMS_PER_OWNER": "running rooms per owner (user, or client address)",
    "PLAYGROUND_MAX_NODES_PER_ROOM": "nodes in one room",
    "PLAYGROUND_MAX_PODS_PER_ROOM": "pods in one room",
    "PLAYGROUND_MAX_ACTIONS_PER_SECOND": "websocket messages per second per connection",
    "PLAYGROUND_MAX_ACTIONS_PER_SECOND_PER_ADDRESS": "websocket messages per second per address",
    "PLAYGROUND_MAX_ACTIONS_PER_SECOND_PER_TOKEN": "websocket messages per second per operator link",
    "PLAYGROUND_MAX_MESSAGE_BYTES": "size of one websocket message",
    "PLAYGROUND_MAX_SCENARIO_BYTES": "size of a scenario",
}


class LimitError(ValueError):
    """A request refused by a limit; the message names the setting."""

    def __init__(self, setting: str, what: str) -> None:
        super().__init__(f"{setting}={limit(setting)}: {what}")
        self.setting = setting


def limit(setting: str) -> int:
    return int(getattr(settings, setting))


def _over(setting: str, value: int) -> bool:
    cap = limit(setting)
    return cap > 0 and value > cap


def owner_key(user: Any = None, address: str | None = None) -> str:
    """Whose rooms these are: the signed-in user, else the client's address."""
    if user is not None and getattr(user, "is_authenticated", False):
        return f"user:{user.pk}"
    return f"addr:{address}" if address else ""


# -- rooms ---------------------------------------------------------------------------------
def check_scenario_size(text: str | bytes | int) -> None:
    size = text if isinstance(text, int) else len(text.encode() if isinstance(text, str) else text)
    if _over("PLAYGROUND_MAX_SCENARIO_BYTES", size):
        raise LimitError("PLAYGROUND_MAX_SCENARIO_BYTES", f"this scenario is {size} bytes")


def _pods_of(obj: Any) -> tuple[str, int]:
    """What one object adds to a room's pods: ("Kind/namespace/name", its replicas) for a
    workload (whose replicas a later Apply or ScaleWorkload replaces), ("DaemonSet", 1) for a
    DaemonSet (a pod per node), ("", 1) for a bare Pod; ("", 0) for a Pod with a controller
    owner (an imported cluster's: one of its workload's pods, adopted: counted once, with the
    workload) and for anything else."""
    if not isinstance(obj, dict):
        return "", 0
    kind = obj.get("kind")
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    if kind == "Pod":
        owners = meta.get("ownerReferences")
        owned = isinstance(owners, list) and any(
            isinstance(o, dict) and o.get("controller") is True for o in owners
        )
        return "", 0 if owned else 1
    if kind == "DaemonSet":
        return "DaemonSet", 1
    if kind in ("Deployment", "ReplicaSet", "StatefulSet"):
        replicas = spec.get("replicas", 1)
        key = f"{kind}/{meta.get('namespace') or 'default'}/{meta.get('name')}"
        return key, replicas if isinstance(replicas, int) and replicas > 0 else 0
    return "", 0


def scenario_pods(nodes: int, objects: list[dict[str, Any]]) -> int:
    """The pods a scenario's objects make at t=0 (a DaemonSet: one per node, at most)."""
    total = 0
    for obj in objects:
        key, n = _pods_of(obj)
        total += nodes * n if key == "DaemonSet" else n
    return total


def check_scenario_counts(scenario: Scenario) -> int:
    """The nodes and pods of a room's scenario at t=0, and what its faults (a lesson's steps'
    among them), in time order, take them to: an AddNode adds a node (and a DaemonSet's pod on
    it), a DeleteNode removes one, an Apply adds its object's pods (or replaces a workload's
    replicas), a ScaleWorkload replaces its workload's replicas. They are counted as a live
    action's are (check_action); the refusal names the fault that passes the limit. Returns
    the room's objects for its cost (room_cost): the most nodes plus the most pods it reaches
    (a pod scaled away is not gone at once, so the two peaks are added)."""
    nodes = len(scenario.nodes)
    workloads: dict[str, int] = {}  # "Kind/namespace/name" -> replicas
    daemonsets = bare = 0
    peak_nodes = peak_pods = 0

    def add(obj: Any) -> None:
        nonlocal daemonsets, bare
        key, n = _pods_of(obj)
        if key == "DaemonSet":
            daemonsets += n
        elif key:
            workloads[key] = n
        else:
            bare += n

    def check(after: str) -> None:
        nonlocal peak_nodes, peak_pods
        if _over("PLAYGROUND_MAX_NODES_PER_ROOM", nodes):
            raise LimitError(
                "PLAYGROUND_MAX_NODES_PER_ROOM", f"this scenario has {nodes} nodes{after}"
            )
        pods = bare + sum(workloads.values()) + daemonsets * nodes
        if _over("PLAYGROUND_MAX_PODS_PER_ROOM", pods):
            raise LimitError(
                "PLAYGROUND_MAX_PODS_PER_ROOM", f"this scenario has {pods} pods{after}"
            )
        peak_nodes, peak_pods = max(peak_nodes, nodes), max(peak_pods, pods)

    for obj in scenario.objects:
        add(obj)
    check("")
    for fault in scenario.faults:
        if fault.type == "AddNode":
            nodes += 1
        elif fault.type == "DeleteNode":
            nodes -= 1
        elif fault.type == "Apply":
            add(fault.args.get("object"))
        elif fault.type == "ScaleWorkload":
            kind, _, name = str(fault.args["workload"]).partition("/")
            key = f"{kind}/{name}" if "/" in name else f"{kind}/default/{name}"
            workloads[key] = int(fault.args["replicas"])
        else:
            continue
        check(f" after {fault.path} ({fault.type})")
    return peak_nodes + peak_pods


# -- cost: what the rooms a visitor holds take from the workers ---------------------------
# A room's cost is counted in objects (nodes + pods): an engine holds ~3.7 KB of Python
# objects per node or pod (tracemalloc, the scenario's parse included: 3.8 KB at 100 nodes of
# 30 pods, 3.6 KB at 1,000) and its ticks' work grows with them and with its speed: the
# engine advances ~150 million object-simulated-seconds per CPU second (README's bench:
# 1,000 nodes / 30,000 pods at ~5,000x, 5,000 / 150,000 at ~960x), so a room faster than
# SPEED_UNIT costs its objects times speed / SPEED_UNIT (slower: its memory is held anyway).
SPEED_UNIT = 10.0
# A room costs at least this: an engine's fixed part (its controllers, configuration and
# parsed scenario: 0.58 MB traced for 3 nodes, what ~150 objects take), its rows and its
# tick's fixed queries and messages, whatever its size: 120 small rooms are what the default
# per-owner budget holds.
MIN_ROOM_COST = 500
BUDGETS = {
    "PLAYGROUND_MAX_COST_PER_OWNER": "the cost of the rooms one owner holds",
    "PLAYGROUND_MAX_COST": "the cost of the rooms the server holds",
}
LIMITS.update(BUDGETS)


def room_cost(objects: int, speed: float) -> int:
    """A room's cost: its objects (nodes + pods, the most its scenario's faults or its live
    actions take them to), times its speed over SPEED_UNIT, at least MIN_ROOM_COST."""
    return max(MIN_ROOM_COST, int(max(0, objects) * max(1.0, speed / SPEED_UNIT)))


def _cost_text(objects: int, speed: float) -> str:
    """How a cost was reckoned, for a refusal."""
    if speed > SPEED_UNIT:
        return f"{objects:,} nodes and pods at {speed:g}x: {speed / SPEED_UNIT:g} times that"
    return f"{objects:,} nodes and pods"


def held_rooms() -> Any:
    """The rooms that count against a budget: being built, running, paused or idle; not a
    failed build, not an expired room (controls.room_expire)."""
    return Room.objects.filter(build_state__in=(Room.BUILDING, Room.LIVE), expired_at__isnull=True)


def held_cost(owner: str | None = None, exclude: tuple[int, ...] = ()) -> int:
    """What the rooms held (by ``owner``, or on the whole server) cost now."""
    rooms = held_rooms().exclude(pk__in=exclude)
    if owner is not None:
        rooms = rooms.filter(creator=owner)
    return sum(room_cost(n, speed) for n, speed in rooms.values_list("cost_objects", "speed"))


# The advisory lock of admissions (PostgreSQL): the budget's check and the room's row stored
# after it, one caller's transaction at a time.
_ADMISSION_LOCK = 0x61646D74


def _one_admission_at_a_time() -> None:
    """Two requests of one address at once would each see the budget before the other's room
    is stored, and both be admitted. Inside a transaction (the form's, room_create's, a
    comparison's), on PostgreSQL, admissions wait for each other until the transaction ends (a
    transaction-scoped advisory lock); SQLite's transactions take its write lock when they
    begin (transaction_mode IMMEDIATE), so they already do."""
    if connection.vendor == "postgresql" and connection.in_atomic_block:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_ADMISSION_LOCK])


def check_budget(
    owner: str, objects: int, speed: float, exclude: tuple[int, ...] = (), what: str = "this room"
) -> int:
    """Before a room is admitted (created, imported, a comparison's side, a solo lesson) or
    made dearer (faster, scaled up): its cost with the rooms held by its owner (per owner, when
    known) and on the server (``exclude``: the room itself, counted at its new cost). The
    refusal says what would fit. Returns the cost."""
    cost = room_cost(objects, speed)
    _one_admission_at_a_time()
    for setting, who, held in (
        ("PLAYGROUND_MAX_COST_PER_OWNER", owner, "the rooms you hold"),
        ("PLAYGROUND_MAX_COST", None, "the server's rooms"),
    ):
        cap = limit(setting)
        if cap <= 0 or (setting.endswith("OWNER") and not owner):
            continue
        used = held_cost(who, exclude)
        if used + cost > cap:
            left = max(0, cap - used)
            fits = int(left / max(1.0, speed / SPEED_UNIT))
            raise LimitError(
                setting,
                f"{what} costs {cost:,} ({_cost_text(objects, speed)}); {held} cost {used:,}, "
                f"{left:,} is left: at most {fits if left >= MIN_ROOM_COST else 0:,} nodes and "
                f"pods at {speed:g}x fit (a room costs its nodes and pods, times its speed "
                f"over {SPEED_UNIT:g}x, at least {MIN_ROOM_COST}; paused rooms count until "
                "they expire)",
            )
    return cost


def check_running_rooms(owner: str, new: int = 1, exclude: int | None = None) -> None:
    """Before ``new`` rooms start running (created, or resumed): the server's and the owner's
    running rooms. ``exclude``: the room being resumed."""
    running = Room.objects.filter(paused=False, expired_at__isnull=True)
    if exclude is not None:
        running = running.exclude(pk=exclude)
    count = running.count()
    if _over("PLAYGROUND_MAX_RUNNING_ROOMS", count + new):
        raise LimitError(
            "PLAYGROUND_MAX_RUNNING_ROOMS",
            f"the server already runs {count} rooms; pause one, or wait for one to be paused",
        )
    if owner:
        mine = running.filter(creator=owner).count()
        if _over("PLAYGROUND_MAX_RUNNING_ROOMS_PER_OWNER", mine + new):
            raise LimitError(
                "PLAYGROUND_MAX_RUNNING_ROOMS_PER_OWNER",
                f"you already run {mine} rooms; pause one of them first",
            )


def check_action(room: Room, payload: dict[str, Any]) -> int:
    """A live action that adds nodes or pods (AddNode, Apply, ScaleWorkload): the room's
    limits, then its owner's and the server's budgets with the room at its cost plus what the
    action adds. Returns the objects it adds (0 for none): action_submit adds them to the
    room's cost (scaling down gives none back: the pods may still be terminating)."""
    kind = payload.get("type")
    views = ObjectView.objects.filter(room=room)
    metrics = views.filter(kind="metrics").values_list("data", flat=True).first() or {}
    if not isinstance(metrics, dict):
        metrics = {}
    if kind == "AddNode":
        nodes = views.filter(kind="node").count()
        if _over("PLAYGROUND_MAX_NODES_PER_ROOM", nodes + 1):
            raise LimitError(
                "PLAYGROUND_MAX_NODES_PER_ROOM", f"this room has {nodes} nodes already"
            )
        more = 1 + sum(1 for key in metrics if str(key).startswith("DaemonSet/"))
    elif kind == "Apply":
        nodes = views.filter(kind="node").count()
        obj = payload.get("object")
        more = scenario_pods(nodes, [obj] if isinstance(obj, dict) else [])
    elif kind == "ScaleWorkload":
        replicas = payload.get("replicas")
        now = metrics.get(payload.get("workload"), [0, 0])
        desired = now[1] if isinstance(now, list) and len(now) > 1 else 0
        more = replicas - desired if isinstance(replicas, int) else 0
    else:
        return 0
    if more <= 0:
        return 0
    if kind != "AddNode" and limit("PLAYGROUND_MAX_PODS_PER_ROOM") > 0:
        pods = views.filter(kind="pod").count()
        if _over("PLAYGROUND_MAX_PODS_PER_ROOM", pods + more):
            raise LimitError(
                "PLAYGROUND_MAX_PODS_PER_ROOM",
                f"this room has {pods} pods and this action adds {more}",
            )
    objects, speed = Room.objects.filter(pk=room.pk).values_list("cost_objects", "speed").get()
    check_budget(
        room.creator,
        objects + more,
        speed,
        exclude=(room.pk,),
        what=f"this room with this action ({more} more nodes and pods)",
    )
    return more


# -- websocket clients -----------------------------------------------------------------------
def check_message_size(size: int) -> None:
    if _over("PLAYGROUND_MAX_MESSAGE_BYTES", size):
        raise LimitError("PLAYGROUND_MAX_MESSAGE_BYTES", f"this message is {size} bytes")


def check_rate(redis_client: Any, connection: str, address: str = "", token: str = "") -> None:
    """One more message this second from a connection, counted in Redis per connection, then
    per address (every connection from it, through every Daphne process) and per room
    operator link (``token``: a digest of it). A message refused for its connection is not
    counted for its address or link, so one flooding client cannot starve the others behind
    the same address (a class behind one NAT, a viewer beside the operator)."""
    second = int(time.time())
    for setting, key, what in (
        ("PLAYGROUND_MAX_ACTIONS_PER_SECOND", connection, "this client sent {n} messages"),
        (
            "PLAYGROUND_MAX_ACTIONS_PER_SECOND_PER_ADDRESS",
            address and f"addr:{address}",
            "the connections from this address sent {n} messages",
        ),
        (
            "PLAYGROUND_MAX_ACTIONS_PER_SECOND_PER_TOKEN",
            token and f"token:{token}",
            "this room's operator link sent {n} messages",
        ),
    ):
        cap = limit(setting)
        if cap <= 0 or not key:
            continue
        name = f"playground:rate:{key}:{second}"
        pipe = redis_client.pipeline()
        pipe.incr(name)
        pipe.expire(name, 2)
        count = pipe.execute()[0]
        if count > cap:
            raise LimitError(setting, what.format(n=count) + " this second; slow down")
