"""Which nodes and pods each stored tick changed, kept in Redis for a few dozen ticks while
someone watches the room through its Kubernetes API (controller/kubeapi/watch.py): a watch
then reads the changed views only, not every view of the room at every tick. Written after
the tick's transaction commits (its rows and its ``Room.seq`` are visible together); a tick
without a note (nobody watched yet, Redis down, a room's first rows, a rewind) makes a watch
read everything once, as it did before."""

from __future__ import annotations

import logging
from collections.abc import Iterable

import orjson
import redis
from django.db import transaction

from ..locks import redis_client

log = logging.getLogger(__name__)
KEEP = 64  # notes kept per room (ticks)
TTL_S = 300
WATCHING_TTL_S = 30
ALL = b"*"


def _key(room_id: int) -> str:
    return f"kubeapi:changes:{room_id}"


def _watching_key(room_id: int) -> str:
    return f"kubeapi:watching:{room_id}"


def mark_watching(room_id: int) -> None:
    """A kubectl watch is open on the room: its ticks note what they changed (for
    WATCHING_TTL_S; an open watch renews it)."""
    try:
        redis_client().set(_watching_key(room_id), b"1", ex=WATCHING_TTL_S)
    except redis.RedisError:
        log.warning("changes: Redis is not answering; room %s's ticks not noted", room_id)


def note_after_commit(
    room_id: int, seq: int, nodes: Iterable[str], pods: Iterable[str], everything: bool
) -> None:
    """Note (after the transaction commits) that the tick stored as ``seq`` changed these
    nodes and pods (``everything``: all of them), when a watch is open on the room."""
    names = (sorted(nodes), sorted(pods))

    def note() -> None:
        try:
            client = redis_client()
            if not client.exists(_watching_key(room_id)):
                return
            body = ALL if everything else orjson.dumps({"node": names[0], "pod": names[1]})
            pipe = client.pipeline()
            pipe.hset(_key(room_id), str(seq), body)
            old = [str(s) for s in range(max(0, seq - 2 * KEEP), seq - KEEP)]
            if old:
                pipe.hdel(_key(room_id), *old)
            pipe.expire(_key(room_id), TTL_S)
            pipe.execute()
        except redis.RedisError:
            log.warning(
                "changes: Redis is not answering; room %s's tick %s not noted", room_id, seq
            )

    transaction.on_commit(note)


def changed(room_id: int, after: int, upto: int) -> dict[str, set[str]] | None:
    """The nodes and pods changed by the ticks stored after ``after`` up to ``upto``; None
    when a tick of them has no note (or noted everything): read everything."""
    if upto <= after:
        return {"node": set(), "pod": set()}
    if upto - after > KEEP:
        return None
    try:
        bodies = redis_client().hmget(_key(room_id), [str(s) for s in range(after + 1, upto + 1)])
    except redis.RedisError:
        return None
    out: dict[str, set[str]] = {"node": set(), "pod": set()}
    for body in bodies:
        if body is None or body == ALL:
            return None
        names = orjson.loads(body)
        out["node"].update(names["node"])
        out["pod"].update(names["pod"])
    return out
