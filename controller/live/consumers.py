"""The room websocket: a protocol adapter only. Snapshot with a sequence number on connect,
then the group's deltas in order; operator messages go to the room
services (rooms/, lessons/), one call each.

It never raises to Channels (an exception there closes the socket with 1011 and skips
``disconnect``): every frame gets an answer (binary: a close with 4415; empty, not JSON, an
unknown type, over the size limit: an error reply), presence is removed in a ``finally``,
and when Redis is away the socket stays open: the page is told "live updates paused", the
consumer retries every second, and when Redis answers again it joins its group again and
sends a fresh snapshot ("live" messages)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.exceptions import StopConsumer
from channels.generic.websocket import AsyncJsonWebsocketConsumer, AsyncWebsocketConsumer
from channels.layers import get_channel_layer
from channels.utils import await_many_dispatch
from django.conf import settings

from .. import limits
from ..engine import values
from ..lessons import classroom, definition, messages
from ..locks import redis_client
from ..models import Room
from ..rooms import actions, broadcast, controls, errors
from . import codes, deltas, presence, sockets
from .roles import is_operator

log = logging.getLogger(__name__)

RETRY_S = 1.0  # while Redis is away: how often a socket tries to join its group again
PRESENCE_MARGIN_S = 0.05  # a presence broadcast reads the hash this long after its window
SENDING = "snapshot: the last one is still being sent to you; ask again once it has arrived"
# Scheduled presence broadcasts (kept referenced until they run; they outlive their socket).
_PRESENCE_TASKS: set[asyncio.Task[None]] = set()
PAUSED = "live updates paused: the server lost its connection to Redis; retrying"

# One log line per outage for the rate check that fails open (not one per message).
_RATE_CHECK_DOWN = {"logged": False}


def _unstorable(kind: Any, content: dict[str, Any]) -> tuple[str, str] | None:
    """The first value of a message that cannot be stored or sent (a NUL, a lone surrogate,
    NaN, an integer past 64 bits), with the path the services would name it by: an action's
    fields (and a parameter change's) under ``action``, any other message's under its type
    (``lesson.answer.name``, ``rewind.t``)."""
    bad = values.first_problem(kind, "type")
    if bad is not None:
        return bad
    if kind in ("action", "params"):
        return values.first_problem(content.get(kind), "action")
    rest = {k: v for k, v in content.items() if k != "type"}
    return values.first_problem(rest, kind if isinstance(kind, str) else "message")


class RewindUnconfirmed(Exception):
    """A rewind over actions applied after its time, not confirmed: the reply asks first."""

    def __init__(self, t: Any, undoes: list[dict[str, Any]]) -> None:
        super().__init__("rewind: not confirmed")
        self.t, self.undoes = t, undoes

    def reply(self) -> dict[str, Any]:
        def mmss(seconds: float) -> str:
            m, s = divmod(int(seconds), 60)
            return f"{m:02d}:{s:02d}"

        def one(a: dict[str, Any]) -> str:
            return f"{a['kind']} {a['target']}".strip() + f" at {mmss(a['at'])} by {a['actor']}"

        n = len(self.undoes)
        shown = "; ".join(one(a) for a in self.undoes[:5]) + ("; ..." if n > 5 else "")
        what = f"{n}{'+' if n >= 20 else ''} action{'s' if n != 1 else ''}"
        return {
            "type": "error",
            "message": f"rewind: rewinding to {mmss(float(self.t))} takes away {what} injected "
            f"after it, for everyone in the room: {shown}. Rewind anyway?",
            "confirm": {"type": "rewind", "t": self.t},
            "undoes": self.undoes,
        }


class RoomConsumer(AsyncJsonWebsocketConsumer):
    group = ""
    live_paused = False
    left = False
    address: str | None = None  # counted in sockets (released when the socket ends)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """AsyncConsumer.__call__, with the two things it lacks: a dispatch that never
        raises, and a channel-layer receive that survives Redis going away; the presence
        entry and the group membership are removed in a finally, however the socket ends."""
        self.scope = scope
        self.channel_layer = get_channel_layer(self.channel_layer_alias)
        self.channel_name = await self.channel_layer.new_channel()  # (no Redis call)
        self.base_send = send
        try:
            await await_many_dispatch([receive, self._layer_receive], self._dispatch)
        except StopConsumer:
            pass
        finally:
            await self._leave()
            if self.address is not None:
                sockets.release(self.address)

    async def _dispatch(self, message: dict[str, Any]) -> None:
        try:
            await self.dispatch(message)
        except StopConsumer:
            raise
        except Exception:  # a bug: logged, answered, the socket stays open
            log.exception("room websocket: %s failed", message.get("type"))
            if message.get("type") == "websocket.receive":
                await self._reply_error("server error: the message could not be handled")

    async def _reply_error(self, text: str, **extra: Any) -> None:
        try:
            await self.send_json({"type": "error", "message": text, **extra})
        except Exception:  # the socket is gone
            log.debug("room websocket: could not send an error", exc_info=True)

    async def _layer_receive(self) -> dict[str, Any]:
        """The next message of the channel layer; while Redis is away, retry every RETRY_S
        (the page shows "live updates paused") and, once it answers, join the room's group
        again (a restarted Redis has forgotten it) and send a fresh snapshot."""
        while True:
            if self.live_paused and self.group:
                try:
                    await self.channel_layer.group_add(self.group, self.channel_name)
                except Exception:
                    await asyncio.sleep(RETRY_S)
                    continue
                await self._resume_live()
            try:
                return await self.channel_layer.receive(self.channel_name)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                await self._pause_live(exc)
                await asyncio.sleep(RETRY_S)

    async def _pause_live(self, exc: BaseException) -> None:
        if self.live_paused:
            return
        self.live_paused = True
        log.warning("room websocket: channel layer unavailable (%s); live updates paused", exc)
        if self.group:
            try:
                await self.send_json({"type": "live", "paused": True, "message": PAUSED})
            except Exception:
                log.debug("room websocket: could not send the pause notice", exc_info=True)

    async def _resume_live(self) -> None:
        self.live_paused = False
        log.warning("room websocket: channel layer back; live updates resume")
        await self.send_json({"type": "live", "paused": False})
        await self._presence_join()
        await self._send_snapshot()  # what it missed meanwhile

    async def connect(self) -> None:
        address = (self.scope.get("client") or [None])[0]
        if address:  # (Daphne always knows it; a unix socket or a test communicator may not)
            if not sockets.admit(address):  # before it costs a database read or a snapshot
                await self.accept()
                await self.close(code=codes.TOO_MANY)
                return
            self.address = address
        slug = self.scope["url_route"]["kwargs"]["slug"]
        # (bytes that are not UTF-8 are replaced, not raised on)
        query = parse_qs(self.scope.get("query_string", b"").decode("utf-8", "replace"))
        token = (query.get("token") or [""])[0]
        name = (query.get("name") or [""])[0].replace("\x00", "")  # unstorable on PostgreSQL
        self.display_name = (name or "anonymous")[:40]
        # The page's own id (kept in its localStorage): one answer per client per question.
        client = (query.get("client") or [""])[0].replace("\x00", "")
        self.client = (client or self.channel_name)[:80]
        # The presenter view (a projector the class reads): held back like a viewer's page
        # while a lesson's question is open, even the operator's.
        self.presenting = (query.get("present") or [""])[0] == "1"
        room = await database_sync_to_async(Room.objects.filter(slug=slug).first)()
        if room is None:
            await self.close(code=codes.NOT_FOUND)
            return
        self.room = room
        self.operator = await database_sync_to_async(is_operator)(
            room, self.scope.get("user"), token
        )
        self.token_key = hashlib.sha256(token.encode()).hexdigest()[:16] if self.operator else ""
        self.group = broadcast.group_name(room.pk)
        try:
            await self.channel_layer.group_add(self.group, self.channel_name)
        except Exception as exc:  # Redis away: the page still gets its snapshot
            await self._pause_live(exc)
        await self.accept()
        await self._presence_join()
        if room.idle_since is not None:  # nobody watched it: its clock goes on from now
            await database_sync_to_async(controls.room_wake)(room.pk)
        await self._send_snapshot()
        if self.live_paused:
            await self.send_json({"type": "live", "paused": True, "message": PAUSED})

    async def _send_snapshot(self, inline: bool = False) -> None:
        """The room's snapshot (reading.room_snapshot) with this client's role and lesson
        state: the shared part is built once per room version for every client
        (deltas.snapshot_bytes: a class joining a 1,000-node room is one 17 MB build, not a
        hundred), this client's part is added to its end."""
        body = await database_sync_to_async(self._snapshot_body)(inline)
        await self.send(text_data=body.decode())
        wire = self.scope.get(sockets.WIRE)
        if wire is not None:
            wire.snapshot_sent()

    def _snapshot_body(self, inline: bool = False) -> bytes:
        room = Room.objects.get(pk=self.room.pk)
        lesson = messages.snapshot(room, self.client)
        self.hold = None
        if lesson:
            self.hold = messages.holds(lesson["state"], self.operator and not self.presenting)
            lesson["state"] = messages.for_role(lesson["state"], self._leads())
            self.lesson_latest = lesson["state"]["latest"]  # the steps this page has
        role = "operator" if self.operator else "viewer"
        if (
            not inline
            and lesson is None
            and deltas.view_rows(room) > settings.PLAYGROUND_SNAPSHOT_FETCH_ROWS
        ):
            # A big room (a 5,000-node room: 35,000 rows, 10 MB) gets a note to fetch
            # snapshot.json: the page's worker parses it and the page applies it in pieces
            # (static/js/snapshot-fetch.js), where a 10 MB message was parsed and applied in
            # one task of its main thread. Not a lesson room (held back per client; small).
            note = {
                "type": "snapshot",
                "fetch": True,
                "seq": room.seq,
                "lesson": None,
                "role": role,
            }
            return json.dumps(note, separators=(",", ":")).encode()
        body = deltas.snapshot_bytes(room, {"lesson": lesson, "role": role})
        if self.hold is not None:  # a lesson room (small): decoded, held, encoded again
            body = json.dumps(self.hold.snapshot(json.loads(body)), separators=(",", ":")).encode()
        return body

    def _leads(self) -> bool:
        """Whether this page gets the class's answers as they come (the operator's own page;
        not the presenter view, which the class reads: it gets the count until the reveal)."""
        return self.operator and not self.presenting

    async def disconnect(self, code: int) -> None:
        await self._leave()

    async def _leave(self) -> None:
        """Out of the group and the presence hash, once (disconnect, or the finally)."""
        if self.left or not self.group:
            return
        self.left = True
        try:
            await self.channel_layer.group_discard(self.group, self.channel_name)
        except Exception:  # Redis away: the group's entries expire by themselves
            log.debug("room websocket: group_discard failed", exc_info=True)
        await self._presence_leave()

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """Every frame is answered: binary closes the socket with 4415 (this protocol is
        JSON text); then the limits (size, then messages per second per connection, address
        and operator link); an empty or non-JSON frame gets an error reply."""
        if text_data is None:
            await self.close(code=codes.UNSUPPORTED)
            return
        size = len(text_data.encode("utf-8", "surrogatepass"))
        try:
            limits.check_message_size(size)
            await database_sync_to_async(self._count_message)()
        except limits.LimitError as exc:
            await self._reply_error(str(exc), limit=exc.setting)
            return
        if not text_data.strip():
            await self._reply_error("empty message: send a JSON object with a type")
            return
        content = await self.decode_json(text_data)
        await self.receive_json(content)

    def _count_message(self) -> None:
        """The rate limits; when Redis is away they fail open (one log line per outage)."""
        import redis

        client = self.scope.get("client") or [None]
        try:
            limits.check_rate(redis_client(), self.channel_name, client[0] or "", self.token_key)
        except redis.RedisError as exc:
            if not _RATE_CHECK_DOWN["logged"]:
                _RATE_CHECK_DOWN["logged"] = True
                log.warning("rate check skipped while Redis is unavailable: %s", exc)
            return
        _RATE_CHECK_DOWN["logged"] = False

    @classmethod
    async def decode_json(cls, text_data: str) -> Any:
        try:
            return json.loads(text_data)
        except (ValueError, RecursionError):  # not JSON, or nested past the parser's limit
            return None

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        if not isinstance(content, dict):
            await self.send_json({"type": "error", "message": "messages must be JSON objects"})
            return
        kind = content.get("type")
        bad = _unstorable(kind, content)
        if bad is not None:
            await self._reply_error(": ".join(bad))
            return
        if kind == "snapshot":  # inline: the page could not fetch snapshot.json
            wire = self.scope.get(sockets.WIRE)
            if wire is not None and wire.sending_snapshot():  # (a client that does not read)
                await self._reply_error(SENDING)
                return
            await self._send_snapshot(content.get("inline") is True)
            return
        if kind == "ping":
            await self.send_json({"type": "pong"})
            return
        if kind == "lesson.answer":  # anyone watching answers (the operator too, if they like)
            await self._lesson(classroom.answer, self.room.pk, self.client, content)
            return
        if kind in ("lesson.reveal", "lesson.next", "lesson.prev") and not self.operator:
            await self.send_json(
                {"type": "error", "message": f"{kind}: only the operator leads the lesson."}
            )
            return
        # ``at``: the state the page showed when its leader pressed (a repeated key's second
        # press finds the lesson moved on: nothing is done, the page is told where it is).
        at = content.get("at")
        if kind == "lesson.reveal":
            await self._lesson(classroom.reveal, self.room.pk, at)
            return
        if kind == "lesson.next":
            actor = f"{self.display_name} (operator)"
            await self._lesson(classroom.next_step, self.room.pk, actor, False, at)
            return
        if kind == "lesson.prev":
            await self._lesson(classroom.prev_step, self.room.pk, at)
            return
        if not self.operator:
            await self.send_json(
                {
                    "type": "error",
                    "message": "Only operators can change this room; you are watching.",
                }
            )
            return
        try:
            reply = await database_sync_to_async(self._operate)(kind, content)
        except RewindUnconfirmed as exc:
            await self.send_json(exc.reply())
            return
        except (definition.LessonError, *errors.REFUSALS) as exc:
            await self.send_json({"type": "error", "message": str(exc), "request": content})
            return
        except Exception:  # a bug: the viewer still gets an answer and the socket stays open
            log.exception("room %s: message %r failed", self.room.pk, kind)
            await self.send_json(
                {"type": "error", "message": f"{kind}: could not be done (server error)"}
            )
            return
        if "stale" in reply:  # the page is told where the lesson is (as a broadcast)
            await self.room_message({"message": reply.pop("stale")})
            reply["stale"] = True
        await self.send_json({"type": "ack", **reply})

    async def _lesson(self, fn: Any, *args: Any) -> None:
        try:
            reply = await database_sync_to_async(fn)(*args)
        except (definition.LessonError, *errors.REFUSALS) as exc:
            await self.send_json({"type": "error", "message": str(exc)})
            return
        except Exception:
            log.exception("room %s: lesson message failed", self.room.pk)
            await self.send_json({"type": "error", "message": "lesson: server error"})
            return
        if reply.get("lesson") == "stale":  # this page alone, as a broadcast (held per role)
            await self.room_message({"message": reply.pop("state")})
        await self.send_json({"type": "ack", **reply})

    def _operate(self, kind: str, content: dict[str, Any]) -> dict[str, Any]:
        from ..tasks import send_rewind, send_tick

        actor = f"{self.display_name} (operator)"
        if kind == "action":
            action = actions.action_submit(self.room, content.get("action") or {}, actor)
            send_tick(self.room.pk)
            return {"action": action.pk}
        if kind == "params":
            action = actions.parameters_submit(self.room, content.get("params") or {}, actor)
            send_tick(self.room.pk)
            return {"action": action.pk}
        if kind in ("speed", "pause", "resume", "step"):
            if kind in ("resume", "step") and content.get("at") is not None:
                state = classroom.stale_control(self.room.pk, kind, content.get("at"))
                if state is not None:  # pressed on a lesson state left since: dropped
                    return {"control": kind, "stale": state}
            controls.room_control(self.room.pk, kind, content.get("value"), actor)
            send_tick(self.room.pk)
            return {"control": kind}
        if kind == "rewind":
            # A time is required (no default: a missing one reset the room to 0 s). A rewind
            # that would take injected faults away for everyone is asked again first: an
            # error reply carrying the request to confirm (the page's "Rewind anyway").
            t = content.get("t")
            undoes = (
                [] if content.get("confirm") is True else controls.rewind_undoes(self.room.pk, t)
            )
            if undoes:
                raise RewindUnconfirmed(t, undoes)
            # Recorded and answered at once; the room's owner worker runs it (its engine, off
            # this process and outside any transaction) and the pages get the reset.
            for rid in controls.rewind_request(self.room.pk, t, actor):
                send_rewind(rid)
            return {"control": kind, "rewinding": True}
        raise errors.ActionError(f"unknown message type {kind!r}")

    async def room_message(self, event: dict[str, Any]) -> None:
        message = event["message"]
        released = False
        if message.get("type") == "lesson":
            # While a question is open, a page that answers it does not get what answers it
            # (engine/holdback.py): a fresh snapshot when the question opens and at its reveal.
            hold = messages.holds(message, self.operator and not self.presenting)
            # Held from now, or no longer: the whole state again, as this page may have it (a
            # row sent before the question holds its prediction until it changes).
            released = (getattr(self, "hold", None) is None) != (hold is None)
            self.hold = hold
            message = messages.for_role(message, self._leads())
            message = messages.for_page(message, getattr(self, "lesson_latest", None))
            self.lesson_latest = message["latest"]
        elif getattr(self, "hold", None) is not None and message.get("type") in ("delta", "reset"):
            message = self.hold.delta(message)
        await self.send(text_data=json.dumps(message, separators=(",", ":")))
        if released:
            await self._send_snapshot()

    async def presence_message(self, event: dict[str, Any]) -> None:
        await self.send_json({"type": "presence", "viewers": event["viewers"]})

    # -- presence (who is watching), kept in Redis --------------------------------------------
    async def _presence_join(self) -> None:
        await self._presence_change(True)

    async def _presence_leave(self) -> None:
        await self._presence_change(False)

    async def _presence_change(self, joining: bool) -> None:
        """Write the change; the first change of the room in a beat schedules its broadcast,
        one beat later, of everyone watching then (presence.update)."""
        window = float(settings.PLAYGROUND_TICK_SECONDS)
        due = await database_sync_to_async(self._presence_update)(joining, window)
        if due:
            task = asyncio.ensure_future(
                _broadcast_presence(self.channel_layer, self.room.pk, self.group, window)
            )
            _PRESENCE_TASKS.add(task)
            task.add_done_callback(_PRESENCE_TASKS.discard)

    def _presence_update(self, joining: bool, window: float) -> bool:
        role = "operator" if self.operator else "viewer"
        who = {"name": self.display_name, "role": role} if joining else None
        try:
            return presence.update(self.room.pk, self.channel_name, who, window)
        except Exception as exc:  # Redis away: presence is shown again once it is back
            log.warning("room %s: presence not updated (%s)", self.room.pk, exc)
            return False


async def _broadcast_presence(layer: Any, room_id: int, group: str, window: float) -> None:
    """Everyone watching the room, to its group, once its window has passed."""
    await asyncio.sleep(window + PRESENCE_MARGIN_S)
    try:
        viewers = await database_sync_to_async(presence.viewers)(room_id)
        await layer.group_send(group, {"type": "presence.message", "viewers": viewers})
    except Exception as exc:  # Redis away: the next change broadcasts again
        log.warning("room %s: presence not broadcast (%s)", room_id, exc)


class UnknownPathConsumer(AsyncWebsocketConsumer):
    """Any other websocket path: accepted and closed at once with 4404 (instead of the
    router's "No route found", an HTTP 500)."""

    async def connect(self) -> None:
        await self.accept()
        await self.close(code=codes.NOT_FOUND)
