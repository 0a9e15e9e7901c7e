"""The room websocket: a protocol adapter only. Snapshot with a sequence number on connect,
then the group's deltas in order; operator messages go to the room services (rooms/, lessons/),
one call each."""

from __future__ import annotations

import json
import logging
from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from .. import limits
from ..lessons import classroom, definition, messages
from ..locks import redis_client
from ..models import Room
from ..rooms import actions, broadcast, controls, errors
from . import deltas, presence
from .roles import is_operator

log = logging.getLogger(__name__)


class RoomConsumer(AsyncJsonWebsocketConsumer):
    async def connect(self) -> None:
        slug = self.scope["url_route"]["kwargs"]["slug"]
        query = parse_qs(self.scope.get("query_string", b"").decode())
        token = (query.get("token") or [""])[0]
        name = (query.get("name") or [""])[0].replace("\x00", "")  # unstorable on PostgreSQL
        self.display_name = (name or "anonymous")[:40]
        # The page's own id (kept in its localStorage): one answer per client per question.
        client = (query.get("client") or [""])[0].replace("\x00", "")
        self.client = (client or self.channel_name)[:80]
        room = await database_sync_to_async(Room.objects.filter(slug=slug).first)()
        if room is None:
            await self.close(code=4404)
            return
        self.room = room
        self.operator = await database_sync_to_async(is_operator)(
            room, self.scope.get("user"), token
        )
        self.group = broadcast.group_name(room.pk)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        await self._presence_join()
        if room.idle_since is not None:  # nobody watched it: its clock goes on from now
            await database_sync_to_async(controls.room_wake)(room.pk)
        await self._send_snapshot()

    async def _send_snapshot(self) -> None:
        """The room's snapshot (reading.room_snapshot) with this client's role and lesson
        state: the shared part is built once per room version for every client
        (deltas.snapshot_bytes: a class joining a 1,000-node room is one 17 MB build, not a
        hundred), this client's part is added to its end."""
        body = await database_sync_to_async(self._snapshot_body)()
        await self.send(text_data=body.decode())

    def _snapshot_body(self) -> bytes:
        room = Room.objects.get(pk=self.room.pk)
        lesson = messages.snapshot(room, self.client)
        if lesson:
            lesson["state"] = messages.for_role(lesson["state"], self.operator)
        role = "operator" if self.operator else "viewer"
        return deltas.snapshot_bytes(room, {"lesson": lesson, "role": role})

    async def disconnect(self, code: int) -> None:
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)
            await self._presence_leave()

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """Limits first: the message's size, then this client's messages per second."""
        size = len(text_data.encode()) if text_data is not None else len(bytes_data or b"")
        try:
            limits.check_message_size(size)
            if size:
                await database_sync_to_async(self._count_message)()
        except limits.LimitError as exc:
            await self.send_json({"type": "error", "message": str(exc), "limit": exc.setting})
            return
        await super().receive(text_data=text_data, bytes_data=bytes_data)

    def _count_message(self) -> None:
        client = self.scope.get("client") or [None]
        limits.check_rate(client[0] or self.channel_name, redis_client())

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
        if kind == "snapshot":
            await self._send_snapshot()
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
        if kind == "lesson.reveal":
            await self._lesson(classroom.reveal, self.room.pk)
            return
        if kind == "lesson.next":
            await self._lesson(classroom.next_step, self.room.pk, f"{self.display_name} (operator)")
            return
        if kind == "lesson.prev":
            await self._lesson(classroom.prev_step, self.room.pk)
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
        except errors.REFUSALS as exc:
            await self.send_json({"type": "error", "message": str(exc), "request": content})
            return
        except Exception:  # a bug: the viewer still gets an answer and the socket stays open
            log.exception("room %s: message %r failed", self.room.pk, kind)
            await self.send_json(
                {"type": "error", "message": f"{kind}: could not be done (server error)"}
            )
            return
        await self.send_json({"type": "ack", **reply})

    async def _lesson(self, fn: Any, *args: Any) -> None:
        try:
            reply = await database_sync_to_async(fn)(*args)
        except (definition.LessonError, errors.ActionError) as exc:
            await self.send_json({"type": "error", "message": str(exc)})
            return
        except Exception:
            log.exception("room %s: lesson message failed", self.room.pk)
            await self.send_json({"type": "error", "message": "lesson: server error"})
            return
        await self.send_json({"type": "ack", **reply})

    def _operate(self, kind: str, content: dict[str, Any]) -> dict[str, Any]:
        from ..tasks import send_tick

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
            controls.room_control(self.room.pk, kind, content.get("value"), actor)
            send_tick(self.room.pk)
            return {"control": kind}
        if kind == "rewind":
            controls.room_rewind(self.room.pk, content.get("t", 0), actor)
            return {"control": kind}
        raise errors.ActionError(f"unknown message type {kind!r}")

    async def room_message(self, event: dict[str, Any]) -> None:
        message = event["message"]
        if message.get("type") == "lesson":
            message = messages.for_role(message, self.operator)
        await self.send(text_data=json.dumps(message, separators=(",", ":")))

    async def presence_message(self, event: dict[str, Any]) -> None:
        await self.send_json({"type": "presence", "viewers": event["viewers"]})

    # -- presence (who is watching), kept in Redis --------------------------------------------
    async def _presence_join(self) -> None:
        await database_sync_to_async(self._presence_update)(True)

    async def _presence_leave(self) -> None:
        await database_sync_to_async(self._presence_update)(False)

    def _presence_update(self, joining: bool) -> None:
        from asgiref.sync import async_to_sync

        role = "operator" if self.operator else "viewer"
        who = {"name": self.display_name, "role": role} if joining else None
        viewers = presence.update(self.room.pk, self.channel_name, who)
        async_to_sync(self.channel_layer.group_send)(
            self.group, {"type": "presence.message", "viewers": viewers}
        )
