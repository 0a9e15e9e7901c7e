"""What pagebench reads: the script installed in the page (every websocket message logged),
one sample of the page, and the room's row (the server's clock)."""

from __future__ import annotations

import sqlite3
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

# Installed before room.js runs, without touching the page's code: wraps the handler room.js
# sets as ws.onmessage to log each message (type and "t" read from its first bytes, arrival,
# the handler's end, simT after it), notes when the first snapshot has been drawn (the frame
# after the first that sees it applied: the steady state starts there), logs every long task (the browser's
# own PerformanceObserver "longtask": a main-thread task over 50 ms) and every measure the
# page takes of its own phases (room.js: performance.measure "room:..."), and counts frames.
INIT_SCRIPT = r"""
(() => {
  const m = window.__pagebench = { msgs: 0, chars: 0, types: {}, opens: 0, closes: 0,
    longTasks: 0, longTaskMs: 0, maxLongTaskMs: 0, frames: 0, log: [], firstDrawn: null,
    tasks: [], measures: [] };
  const epochMs = () => performance.timeOrigin + performance.now();
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      m.opens++;
      this.addEventListener("close", () => { m.closes++; });
    }
    get onmessage() { return super.onmessage; }
    set onmessage(fn) {
      super.onmessage = !fn ? fn : (e) => {
        const arrived = epochMs(), head = e.data.slice(0, 80);
        const type = (/^\{"type": ?"(\w+)"/.exec(head) || [])[1] || "?";
        const t = /"t": ?(-?[0-9.eE+-]+)/.exec(head);
        try { return fn.call(this, e); } finally {
          const r = window.playgroundRoom, s = r ? r.state() : null;
          m.msgs++; m.chars += e.data.length; m.types[type] = (m.types[type] || 0) + 1;
          m.log.push({ type, arrived, done: epochMs(), chars: e.data.length,
            t: t ? Number(t[1]) : null, simT: s ? s.simT : null });
        }
      };
    }
  };
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        m.longTasks++; m.longTaskMs += e.duration;
        m.maxLongTaskMs = Math.max(m.maxLongTaskMs, e.duration);
        m.tasks.push({ start: performance.timeOrigin + e.startTime, dur: e.duration });
      }
    }).observe({ type: "longtask", buffered: true });
  } catch (err) { m.longTasks = null; }
  try {
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        if (e.name.startsWith("room:")) m.measures.push({ name: e.name, start: performance.timeOrigin + e.startTime, dur: e.duration });
      }
    }).observe({ type: "measure", buffered: true });
  } catch (err) { /* no user timing: no phases */ }
  // The first snapshot drawn: the frame after the one that first sees it applied (seq >= 0:
  // a small room's comes in its message, a big room's is fetched after a note; the rAF
  // callback runs before that frame's paint, the task queued from it after).
  const frame = () => {
    m.frames++;
    if (m.firstDrawn === null && window.playgroundRoom && window.playgroundRoom.state().seq >= 0) {
      m.firstDrawn = 0;
      requestAnimationFrame(() => setTimeout(() => { m.firstDrawn = epochMs(); }));
    }
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
})();
"""

# One sample; drains the logs of messages, long tasks and measures.
SAMPLE_JS = """
() => {
  const r = window.playgroundRoom, s = r ? r.state() : null, m = window.__pagebench;
  const last = s && s.events.length ? s.events[s.events.length - 1] : null;
  return {
    simT: s ? s.simT : null, seq: s ? s.seq : null, paused: s ? s.paused : null,
    events: last ? last.idx + 1 : 0, nodes: s ? s.nodes.size : 0, pods: s ? s.pods.size : 0,
    clock: (document.getElementById("clock") || {}).textContent || "",
    heap: performance.memory ? performance.memory.usedJSHeapSize : null,
    msgs: m.msgs, chars: m.chars, types: { ...m.types }, opens: m.opens, closes: m.closes,
    longTasks: m.longTasks, longTaskMs: m.longTaskMs, maxLongTaskMs: m.maxLongTaskMs,
    frames: m.frames, log: m.log.splice(0), firstDrawn: m.firstDrawn || null,
    tasks: m.tasks.splice(0), measures: m.measures.splice(0),
  };
}
"""


@dataclass
class ServerClock:
    """The room's row at one instant."""

    target_s: float  # where the next tick takes the room (rooms.clock._now_target)
    sim_s: float  # Room.sim_ms: reached and persisted by the worker
    seq: int
    events: int
    paused: bool
    anchor_sim_ms: int
    anchor_epoch_s: float
    speed: float

    def at(self, epoch_ms: float) -> float:
        """The server's clock (simulated seconds) at a wall instant, from the anchors."""
        if self.paused:
            return max(self.sim_s, self.anchor_sim_ms / 1000)
        elapsed = epoch_ms / 1000 - self.anchor_epoch_s
        return (self.anchor_sim_ms + elapsed * self.speed * 1000) / 1000


def read_server(db: sqlite3.Connection, room_id: int) -> ServerClock:
    row = db.execute(
        "SELECT sim_ms, sim_anchor_ms, wall_anchor, speed, paused, seq, event_count"
        " FROM controller_room WHERE id = ?",
        (room_id,),
    ).fetchone()
    sim_ms, anchor_ms, wall_anchor, speed, paused, seq, events = row
    anchor = datetime.fromisoformat(str(wall_anchor))
    if anchor.tzinfo is None:
        anchor = anchor.replace(tzinfo=UTC)
    clock = ServerClock(
        0.0, sim_ms / 1000, int(seq), int(events), bool(paused), int(anchor_ms),
        anchor.timestamp(), float(speed),
    )  # fmt: skip
    # As rooms.clock._now_target: never behind what the worker reached.
    clock.target_s = max(clock.sim_s, clock.at(time.time() * 1000))
    return clock


@dataclass
class Message:
    """One websocket message as the page handled it (epoch milliseconds)."""

    type: str
    arrived: float
    done: float
    chars: int
    t: float | None  # the simulated time it carries
    sim_t: float | None  # the page's simT after handling it

    @property
    def handle_ms(self) -> float:
        return self.done - self.arrived


def parse_clock(text: str) -> float | None:
    """The page's "mm:ss.mmm" clock in seconds."""
    try:
        minutes, rest = text.strip().split(":")
        return int(minutes) * 60 + float(rest)
    except ValueError:
        return None


@dataclass
class Span:
    """A long task or a measure of the page's own (epoch milliseconds)."""

    name: str
    start: float
    dur: float

    @property
    def end(self) -> float:
        return self.start + self.dur


@dataclass
class Sample:
    t: float  # wall seconds since the room was resumed
    server: ServerClock
    page: dict[str, Any]
    eval_ms: float  # page.evaluate's round trip (the page's main thread answering)
    messages: list[Message]  # handled since the previous sample

    @property
    def page_sim(self) -> float:
        return float(self.page["simT"] or 0.0)

    @property
    def lag(self) -> float:
        return self.server.target_s - self.page_sim

    @property
    def worker_lag(self) -> float:
        return self.server.target_s - self.server.sim_s

    @property
    def delivery_lag(self) -> float:
        return self.server.sim_s - self.page_sim

    @property
    def shown_clock(self) -> float | None:
        return parse_clock(self.page["clock"])

    @property
    def deltas(self) -> int:
        return int(self.page["types"].get("delta", 0))


@dataclass
class Run:
    nodes: int
    speed: float
    seconds: int
    warmup: float
    tick: float
    samples: list[Sample] = field(default_factory=list)
    console: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    setup: dict[str, float] = field(default_factory=dict)
    start_epoch_ms: float = 0.0
    first_drawn_ms: float | None = None  # epoch ms: the first snapshot drawn (steady state)
    tasks: list[Span] = field(default_factory=list)  # every long task since the page loaded
    measures: list[Span] = field(default_factory=list)  # the page's "room:..." measures
    profile: str | None = None  # --profile: the .cpuprofile written
    profile_top: list[tuple[str, float, float]] = field(default_factory=list)  # fn, self ms, %
    trace_span: float = 0.0  # --profile: the trace's length, ms
    trace_top: list[tuple[str, float, float]] = field(default_factory=list)  # kind, self ms, %
    log_end: int = 0  # the stack log's size when sampling ended (shutdown noise after it)
