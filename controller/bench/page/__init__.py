"""``python manage.py pagebench [--nodes 1000] [--speed 10] [--seconds 60]``: the run in
``driver``, what it reads in ``probe``, its figures in ``report``.

Does the room page keep up with a big room? Starts a private stack as ``make run`` would
(redis-server, Daphne, a Celery worker with ``--pool=threads`` and beat, the default tick) on
a temporary SQLite database, creates a room of N nodes in three zones (a Deployment plus bare
pods on every node; a kubelet stops at 60 s, zone-b goes dark at 240 s), opens it as operator
in headless Chromium and, once a wall second, samples:

- the server's clock: where the room's next tick takes it (the room's anchors, as
  ``rooms.clock._now_target``), and ``Room.sim_ms``, the time the worker has reached;
- the page: ``window.playgroundRoom.state().simT`` (the simulated time of the last applied
  delta), the clock it shows, events applied, websocket traffic, JS heap, long tasks, frames.

The steady state starts at the first frame drawn after the first snapshot's handler (the page's
load, the snapshot's parse and first render are before it) and runs to the last sample, the
resyncs included: in it, every long task (Chromium's "longtask" entries: main-thread tasks over
50 ms) with the page's own measures that overlap it (room.js: performance.measure "room:..."),
and each measure's times. ``--profile`` records a CPU profile and a trace of it (profile.py).

lag = server clock - page simT, in simulated seconds (wall seconds = sim / speed); it splits
into the worker's share (clock - sim_ms) and the delivery + page share (sim_ms - simT). With a
1 s tick even a perfect pipeline shows a sawtooth from ~0 to speed x tick simulated seconds,
and 1 Hz samples see one phase of it. So the page also logs every websocket message (arrival,
the time its handler took, simT after it): that gives the lag as a continuous function of
time, each delta's age when it arrived, and a trend free of the sawtooth. What matters is that
the lag does not grow. Prints a table and a summary; writes a screenshot, the samples (CSV)
and the stack's log to test-artifacts/.

The stack's processes get REDIS_URL and DATABASE_URL before Django starts; the room is
created (and later resumed) by this command run again in a child process with the same
environment (``--internal create|resume``); this process reads the room's row with sqlite3.
"""
