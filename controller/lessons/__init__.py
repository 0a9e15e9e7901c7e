"""Lessons in a room: the room side of LESSON-CONTRACT.md (the engine side, parsing and the
checkpoints' expectations, is controller/engine/lesson.py).

A lesson room is a room whose scenario has ``spec.lesson``. Its steps are anchored in simulated
time and their faults are the scenario's own, so the room's timeline always equals ``simulate``
of its export: nothing here changes the simulation, only when the clock stops and what the page
shows.

- The tick (rooms.tick._advance) runs the engine through :func:`progress.begin`'s
  ``LessonRun`` (outside any transaction; its ``save`` writes in the tick's short one): the
  engine advances to the room's "now" but stops right after the instant the next checkpoint is reached (its time, or the first matching
  timeline event at or after its step began); the room is then PAUSED there (persisted in Room
  and LessonState, so a worker restart keeps it) and the class is asked.
- The step shown follows the clock: when the clock passes a step's begin the page shows it. The
  operator's prev/next move the step shown; next at a checkpoint closes it and resumes the clock.
- Answers: one per client per checkpoint (the last counts), only while its question is open and
  not yet revealed; a bad one is refused with the field named and nothing stored.
- Reveal (operator only) shows the right answer, the class's counts and the why.

Broadcast (to the room's group; the consumer hides the counts from viewers before the reveal
and names from viewers always): ``{"type": "lesson", "step", "checkpoint", "paused", "counts",
"answered", "revealed", "answer"?, "why"?, "right"?, "names"?}``.

- ``definition``  the lesson of a scenario text (cached), its checkpoints, what the page shows
- ``progress``    the clock's side: state at creation, the tick's run to the next checkpoint,
                  a rewind
- ``messages``    the lesson message by role, a snapshot's lesson, the broadcast
- ``classroom``   answer, reveal, next, prev (the websocket's lesson messages); a lesson's rule
                  for Play and Step at an open question (``on_control``)
- ``holding``     what a page that answers does not get before the reveal
"""
