"""The room services: everything a room does, one module per part of its life (style.md).

The only modules that import both the engine and the models. Views, consumers, tasks, admin
and management commands call them; they never call those adapters back.

- ``errors``    what a room refuses and how it says so (ActionError, REFUSALS, unstorable values)
- ``runtime``   the engine cache in this process, restore (snapshot + replay), snapshots taken
- ``clock``     where a room's simulated time stands at a wall instant; the clock message
- ``create``    a room's creation (validated whole), its first rows; ``room_went_live``
- ``build``     big rooms built by a worker while the page shows progress (room_start, ...)
- ``imports``   a room of kubectl output: in the request, or by the building worker
- ``actions``   an operator's faults and parameter changes, recorded for the next tick
- ``tick``      the tick: apply actions, advance, persist (rows, views, series), broadcast
- ``controls``  speed, pause, resume, step, rewind; idle rooms stop and wake
- ``reading``   snapshot, timeline, charts, manifests, export
- ``compare``   two rooms of one scenario with different settings, on one clock
- ``whatif``    a zone or nodes failed in the room's scenario, run headless
- ``catalog``   the built-in scenarios and lessons
- ``broadcast`` messages to a room's pages, sent after commit

See docs/architecture.md.
"""
