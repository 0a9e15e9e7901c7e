"""Persistence of live rooms.

Design (per-tick cost proportional to what changed): the engine itself lives in the
worker's memory between ticks; each tick appends its new timeline events as rows, upserts
the view rows of the nodes/pods/zones those events touched, and updates the room's clock.
Every ~30 s (and whenever a worker had to rebuild it) a compressed pickle of the engine is
stored; a worker that does not hold the room (restart, another worker) restores that
snapshot and replays the applied actions after it, which the engine's determinism makes
exact. Rewind re-simulates from the scenario and the action log.
"""

from __future__ import annotations

import secrets
from typing import Any

from django.conf import settings
from django.db import models


def new_token() -> str:
    return secrets.token_urlsafe(24)


class Room(models.Model):
    name = models.CharField(max_length=120)
    slug = models.SlugField(max_length=80, unique=True)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    scenario_name = models.CharField(max_length=120)
    speed = models.FloatField(
        default=10.0, help_text="Simulated seconds per wall second (0.1 to 100)."
    )
    paused = models.BooleanField(default=False)
    sim_ms = models.BigIntegerField(default=0, help_text="Simulated time reached, in ms.")
    sim_anchor_ms = models.BigIntegerField(default=0)
    wall_anchor = models.DateTimeField()
    operator_token = models.CharField(max_length=64, default=new_token)
    seq = models.BigIntegerField(default=0, help_text="Sequence number of the last delta.")
    event_count = models.BigIntegerField(default=0)
    version = models.BigIntegerField(default=0)
    series_t_ms = models.BigIntegerField(
        default=0, help_text="Chart points are stored up to this simulated time (ms)."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # Asynchronous creation (controller/rooms/build.py): a room is "building" until a worker has
    # built its engine and stored its first views; a build that failed says why.
    BUILDING, LIVE, FAILED = "building", "live", "failed"
    build_state = models.CharField(
        max_length=10,
        default=LIVE,
        choices=[(BUILDING, "building"), (LIVE, "live"), (FAILED, "failed")],
    )
    build_progress = models.CharField(max_length=200, blank=True)
    build_error = models.TextField(blank=True)
    # Whose running rooms this one counts against (limits.owner_key: a user, or the
    # creating client's address).
    creator = models.CharField(max_length=160, blank=True, default="", db_index=True)
    # Set while nobody watches (PLAYGROUND_IDLE_PAUSE_SECONDS): the room does not tick and its
    # clock stands still until a viewer arrives.
    idle_since = models.DateTimeField(null=True, blank=True)
    # Nodes + pods its admission counted (limits.check_budget: the most its scenario's faults
    # reach, plus what live actions added); its cost is this times its speed over 10x.
    cost_objects = models.BigIntegerField(default=0)
    # Set when nobody had watched it for PLAYGROUND_ROOM_EXPIRY_SECONDS (running or paused):
    # it no longer ticks, takes controls or actions, or counts against a budget; its page
    # shows where it stopped (controls.rooms_expire).
    expired_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    # The scenario's text lives in its own row (RoomScenario): every tick reads and writes
    # the room's row, and on SQLite a 10 MB text in it (a 5,000-node scenario) was read and
    # written again with it (~13 ms of CPU per tick, and more of disk). Read on first use.
    _scenario_text: str | None = None
    _scenario_changed = False

    def __str__(self) -> str:
        return self.name

    def save(self, *args: Any, **kwargs: Any) -> None:
        """As Model.save; a changed scenario text is stored in its row (``update_fields`` may
        name ``scenario_yaml``)."""
        fields = kwargs.get("update_fields")
        store = self._scenario_changed and (fields is None or "scenario_yaml" in fields)
        if fields is not None and "scenario_yaml" in fields:
            kwargs["update_fields"] = [f for f in fields if f != "scenario_yaml"]
        adding = self._state.adding
        super().save(*args, **kwargs)  # nothing when update_fields is left empty
        if adding:
            RoomScenario.objects.create(room_id=self.pk, text=self._scenario_text or "")
        elif store:
            RoomScenario.objects.update_or_create(
                room_id=self.pk, defaults={"text": self._scenario_text or ""}
            )
        self._scenario_changed = False

    def refresh_from_db(self, *args: Any, **kwargs: Any) -> None:
        super().refresh_from_db(*args, **kwargs)
        if not self._scenario_changed:
            self._scenario_text = None  # read again on use

    @property
    def scenario_yaml(self) -> str:
        """The scenario as the room was created from it ("" while an import waits)."""
        if self._scenario_text is None:
            text = None
            if self.pk is not None:
                rows = RoomScenario.objects.filter(room_id=self.pk).values_list("text", flat=True)
                text = rows.first()
            self._scenario_text = text or ""
        return self._scenario_text

    @scenario_yaml.setter
    def scenario_yaml(self, text: str) -> None:
        self._scenario_text = text
        self._scenario_changed = True


class RoomScenario(models.Model):
    """A room's scenario text (Room.scenario_yaml), apart from the row its ticks update."""

    room = models.OneToOneField(
        Room, on_delete=models.CASCADE, primary_key=True, related_name="scenario_row"
    )
    text = models.TextField()

    def __str__(self) -> str:
        return f"scenario of room {self.room_id}"


class PendingImport(models.Model):
    """A big cluster import waiting for its worker (build.py, issue #14): the kubectl output
    and the import form's options, parsed into the room's scenario by the worker that builds
    the room (a parse of several MB of YAML takes seconds); deleted once parsed. Or a side of
    a big comparison (issue #27): the scenario's text and, in ``options["compare"]``, the side
    (left/right), its label, its changes and the comparison's given name (rooms.create
    .side_finish)."""

    room = models.OneToOneField(Room, on_delete=models.CASCADE, related_name="pending_import")
    text = models.TextField()
    # name, kubelet_config, controller_manager_config, flags: as import_scenario takes them.
    options = models.JSONField(default=dict, blank=True)

    def __str__(self) -> str:
        return f"import of {len(self.text):,} characters for room {self.room_id}"


class Comparison(models.Model):
    """Two rooms of one scenario with different settings (or Kubernetes releases), run side
    by side on one clock: a control on either applies to both, at one wall instant. Both rooms
    share one operator token."""

    slug = models.SlugField(max_length=80, unique=True)
    name = models.CharField(max_length=120)
    left = models.OneToOneField(Room, on_delete=models.CASCADE, related_name="compared_left")
    right = models.OneToOneField(Room, on_delete=models.CASCADE, related_name="compared_right")
    left_label = models.CharField(max_length=80)
    right_label = models.CharField(max_length=80)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name}: {self.left_label} vs {self.right_label}"


class ClusterParameters(models.Model):
    """The room's component settings, in the scenario format's field names."""

    room = models.OneToOneField(Room, on_delete=models.CASCADE, related_name="parameters")
    controller_manager = models.JSONField(default=dict, blank=True)
    kubelet = models.JSONField(default=dict, blank=True)
    api_server = models.JSONField(default=dict, blank=True)

    class Meta:
        verbose_name_plural = "cluster parameters"

    def __str__(self) -> str:
        return f"parameters of {self.room}"


class Preset(models.Model):
    """A named parameter set ("Kubernetes defaults", "fast failover")."""

    name = models.CharField(max_length=80, unique=True)
    description = models.TextField(blank=True)
    controller_manager = models.JSONField(default=dict, blank=True)
    kubelet = models.JSONField(default=dict, blank=True)
    api_server = models.JSONField(default=dict, blank=True)

    def __str__(self) -> str:
        return self.name


class Action(models.Model):
    """Every fault and user action, with who did it and when (simulated and wall time)."""

    PENDING, APPLIED, REFUSED, REWOUND = "pending", "applied", "refused", "rewound"
    room = models.ForeignKey(
        Room, on_delete=models.CASCADE, related_name="actions", db_index=False
    )  # room lookups use the composite index below (room first)
    actor = models.CharField(max_length=120, blank=True)
    kind = models.CharField(max_length=40)  # fault type, or speed/pause/resume/step/rewind
    payload = models.JSONField(default=dict)
    status = models.CharField(max_length=10, default=PENDING)
    error = models.TextField(blank=True)
    at_ms = models.BigIntegerField(null=True, blank=True, help_text="Simulated time applied.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["room", "status", "id"])]

    def __str__(self) -> str:
        return f"{self.kind} by {self.actor or 'someone'}"


class TimelineEvent(models.Model):
    room = models.ForeignKey(
        Room, on_delete=models.CASCADE, related_name="events", db_index=False
    )  # room lookups use the composite index below (room first)
    idx = models.BigIntegerField()
    t_ms = models.BigIntegerField()
    type = models.CharField(max_length=20)
    data = models.JSONField()

    class Meta:
        ordering = ["idx"]
        constraints = [models.UniqueConstraint(fields=["room", "idx"], name="event_idx_unique")]

    def __str__(self) -> str:
        return f"{self.type} at {self.t_ms / 1000:g}s"


class TimelineChunk(models.Model):
    """Consecutive timeline events stored as one compressed row: a big room's first instant
    (about 185,000 events at 1,000 nodes) is written as a few dozen of these instead of one
    row per event (controller/timeline_store.py reads both)."""

    room = models.ForeignKey(
        Room, on_delete=models.CASCADE, related_name="event_chunks", db_index=False
    )  # room lookups use the composite index below (room first)
    first_idx = models.BigIntegerField()
    count = models.IntegerField()
    first_t_ms = models.BigIntegerField()
    last_t_ms = models.BigIntegerField()
    blob = models.BinaryField()  # zlib of the JSON list of the engine's event dicts

    class Meta:
        ordering = ["first_idx"]
        constraints = [
            models.UniqueConstraint(fields=["room", "first_idx"], name="chunk_idx_unique")
        ]

    def __str__(self) -> str:
        return f"events {self.first_idx}..{self.first_idx + self.count - 1}"


class SeriesPoint(models.Model):
    """One point of a chart series of a room, as the engine keeps it (changes only): ready
    nodes per zone, nodes waiting in each zone's queue, ready/desired replicas per workload.
    The page's charts read them from t=0 whenever it is opened."""

    room = models.ForeignKey(
        Room, on_delete=models.CASCADE, related_name="series_points", db_index=False
    )  # room lookups use the composite index below (room first)
    series = models.CharField(max_length=320)  # zones | queue/<zone> | workload/<Kind/ns/name>
    t_ms = models.BigIntegerField()
    value = models.JSONField()

    class Meta:
        indexes = [models.Index(fields=["room", "t_ms"])]

    def __str__(self) -> str:
        return f"{self.series} at {self.t_ms / 1000:g}s"


class ObjectView(models.Model):
    """The current state of one node, pod or zone of a room, as the page shows it."""

    room = models.ForeignKey(
        Room, on_delete=models.CASCADE, related_name="views", db_index=False
    )  # room lookups use the composite index below (room first)
    kind = models.CharField(max_length=8)  # node / pod / zone
    key = models.CharField(max_length=300)
    data = models.JSONField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["room", "kind", "key"], name="view_key_unique")
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.key}"


class EngineSnapshot(models.Model):
    room = models.OneToOneField(Room, on_delete=models.CASCADE, related_name="snapshot")
    sim_ms = models.BigIntegerField()
    event_count = models.BigIntegerField()
    last_action_id = models.BigIntegerField(default=0)
    # Room.version of the engine's instant: a snapshot taken in the background is stored only
    # over an older one (controller/snapshots.py); a rewind leaves a tombstone of its version.
    room_version = models.BigIntegerField(default=0)
    # The engine code the blob was pickled by (rooms.runtime.ENGINE_VERSION); another version's
    # snapshot is not trusted and the room is replayed from its scenario and action log.
    engine_version = models.CharField(max_length=64, default="")
    blob = models.BinaryField()
    taken_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"snapshot of {self.room_id} at {self.sim_ms / 1000:g}s"


class LessonState(models.Model):
    """Where a lesson room is: the step shown, the checkpoint the clock is paused at (if any),
    whether its answer is revealed, and the simulated time each checkpoint was reached at (a
    reached checkpoint does not pause the room again; a rewind before it forgets it)."""

    room = models.OneToOneField(Room, on_delete=models.CASCADE, related_name="lesson")
    step = models.IntegerField(default=0, help_text="Index of the step shown.")
    checkpoint = models.CharField(
        max_length=80, blank=True, help_text="Id of the checkpoint the room is paused at."
    )
    revealed = models.BooleanField(default=False)
    reached = models.JSONField(
        default=dict, blank=True, help_text="checkpoint id -> simulated ms it was reached at"
    )
    solo = models.BooleanField(
        default=False,
        help_text="Learning alone: the room's operator is the learner, who answers, reveals "
        "and goes on, and gets nothing that answers an open question before its reveal.",
    )

    def __str__(self) -> str:
        return f"lesson of {self.room}"


class LessonAnswer(models.Model):
    """One viewer's answer to one checkpoint (the last one given counts)."""

    room = models.ForeignKey(Room, on_delete=models.CASCADE, related_name="lesson_answers")
    checkpoint = models.CharField(max_length=80)
    client = models.CharField(max_length=80)
    value = models.FloatField()
    name = models.CharField(max_length=40, blank=True)
    answered_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["room", "checkpoint", "client"], name="lesson_answer_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.client}: {self.value:g} to {self.checkpoint}"
