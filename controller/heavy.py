"""Heavy work apart from ticks: room builds, imports, import previews and what-if runs run on
the ``heavy`` queue, in heavy workers of their own (playground/workers.py). Here: how many one
owner may have at once, and how a job stopped by its time limit says so.

Slots: one Redis sorted set per owner (a signed-in user, else the client's address:
limits.owner_key), a member per job, scored with the instant it expires. A job takes its slot
at the request (refused there, with the setting named, when the owner has
PLAYGROUND_MAX_HEAVY_JOBS_PER_ADDRESS already), renews it when a heavy worker starts it (to
its hard time limit, plus a margin) and gives it back when it ends. A worker killed mid-job
gives nothing back: its slot expires by itself, so nothing leaks for longer than a job may
run (or wait in the queue: QUEUED_S)."""

from __future__ import annotations

import logging
import time

import redis
from celery.exceptions import SoftTimeLimitExceeded, TimeLimitExceeded
from django.conf import settings

from .limits import LimitError, limit
from .locks import redis_client

log = logging.getLogger(__name__)

CAP = "PLAYGROUND_MAX_HEAVY_JOBS_PER_ADDRESS"
TIME_LIMIT = "PLAYGROUND_HEAVY_TIME_LIMIT_SECONDS"
HARD_GRACE_S = 30.0  # the hard time limit (the process is killed) is this much later
QUEUED_S = 900.0  # a slot taken for a job still queued lasts this long (heavy workers busy)
RUNNING_MARGIN_S = 10.0

# KEYS[1] the owner's set; ARGV: now, until, cap, job. Drops expired members; takes (or
# renews) the job's slot unless the owner has ``cap`` already. Returns -1 when taken, else the
# number of jobs the owner has.
_TAKE = """
local now, till, cap = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('zremrangebyscore', KEYS[1], '-inf', now)
if not redis.call('zscore', KEYS[1], ARGV[4]) then
  local n = redis.call('zcard', KEYS[1])
  if cap > 0 and n >= cap then return n end
end
redis.call('zadd', KEYS[1], till, ARGV[4])
local last = redis.call('zrange', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('expireat', KEYS[1], math.ceil(tonumber(last[2])))
return -1
"""


def _key(owner: str) -> str:
    return f"playground:heavy:{owner}"


def time_limits() -> tuple[float | None, float | None]:
    """Celery's (soft, hard) time limits of a heavy task; (None, None) when turned off."""
    soft = float(getattr(settings, TIME_LIMIT))
    return (soft, soft + HARD_GRACE_S) if soft > 0 else (None, None)


def stopped_message() -> str:
    """What a job stopped by its time limit tells its user."""
    return f"stopped: took longer than {float(getattr(settings, TIME_LIMIT)):g} s ({TIME_LIMIT})"


class JobStopped(RuntimeError):
    """A heavy job stopped by its time limit (its message: stopped_message)."""


def is_stop(exc: BaseException) -> bool:
    return isinstance(exc, (SoftTimeLimitExceeded, TimeLimitExceeded, JobStopped))


def failure_message(exc: BaseException) -> str:
    """What a failed heavy job tells its user: its time limit named, or the error."""
    return stopped_message() if is_stop(exc) else str(exc)


def _who(owner: str) -> str:
    return "your account" if owner.startswith("user:") else "your address"


def take(owner: str, job: str) -> None:
    """Take a slot for ``job`` (e.g. ``room:12``, ``preview:<id>``) of ``owner``, or raise
    LimitError naming PLAYGROUND_MAX_HEAVY_JOBS_PER_ADDRESS. No owner (a management command),
    or the cap off: nothing to count. Redis away: allowed (the queue needs Redis anyway)."""
    cap = limit(CAP)
    if not owner or cap <= 0:
        return
    now = time.time()
    try:
        n = redis_client().eval(_TAKE, 1, _key(owner), now, now + QUEUED_S, cap, job)
    except redis.RedisError:
        log.warning("heavy job slots: Redis not answering; %s not counted", job)
        return
    if n >= 0:
        raise LimitError(
            CAP,
            f"{_who(owner)} already has {n} heavy jobs running or queued (room "
            "builds, imports, import previews, what-if runs); try again when one has finished",
        )


def started(owner: str, job: str) -> None:
    """A heavy worker starts ``job``: its slot lasts until its hard time limit (a worker
    killed mid-job gives it back by expiring)."""
    if not owner:
        return
    _soft, hard = time_limits()
    now = time.time()
    until = now + (hard if hard is not None else QUEUED_S) + RUNNING_MARGIN_S
    try:
        redis_client().eval(_TAKE, 1, _key(owner), now, until, 0, job)
    except redis.RedisError:
        pass


def release(owner: str, job: str) -> None:
    """``job`` ended (done, failed or stopped): its slot is free."""
    if not owner:
        return
    try:
        redis_client().zrem(_key(owner), job)
    except redis.RedisError:
        pass


def running(owner: str) -> list[str]:
    """The jobs holding a slot of ``owner`` now (tests, the admin)."""
    now = time.time()
    jobs = redis_client().zrangebyscore(_key(owner), now, "+inf")
    return [j.decode() if isinstance(j, bytes) else j for j in jobs]
