"""Settings, all from the environment (twelve-factor).

DATABASE_URL   database (default: SQLite file db.sqlite3 beside manage.py)
REDIS_URL      Celery broker and results, the Channels layer, beat's heartbeat, room locks
               (default redis://127.0.0.1:6379/0)
SECRET_KEY     required when DEBUG=0
DEBUG          1/0 (default 1: the convenient local setting; deploy with DEBUG=0)
ALLOWED_HOSTS  comma-separated (default localhost,127.0.0.1,[::1])
HTTPS_ONLY     1/0 (default: the opposite of DEBUG): HTTPS redirect, secure cookies, HSTS;
               DEBUG=0 HTTPS_ONLY=0 serves plain http (a local production-like run).
               SECURE_SSL_REDIRECT, SESSION_COOKIE_SECURE, CSRF_COOKIE_SECURE,
               SECURE_HSTS_SECONDS override each one.
TRUST_X_FORWARDED_PROTO  1 behind a TLS-terminating proxy that sets X-Forwarded-Proto
CSRF_TRUSTED_ORIGINS     comma-separated origins (e.g. https://playground.example.com)
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env_number(name: str, default: float, kind: type = int) -> Any:
    """An integer (or float) setting; a bad value names its variable."""
    value = os.environ.get(name, "").strip()
    if not value:
        return kind(default)
    try:
        number = kind(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r}: expected {kind.__name__}") from None
    if number < 0:
        raise ImproperlyConfigured(f"{name}={value!r}: must not be negative (0 turns it off)")
    return number


def env_within(name: str, default: float, low: float, high: float) -> float:
    """A float setting from ``low`` to ``high``; a value outside (or not a number) names its
    variable."""
    number = env_number(name, default, float)
    if not low <= number <= high:  # (also NaN)
        raise ImproperlyConfigured(f"{name}={number!r}: must be from {low} to {high}")
    return number


def env_at_most(name: str, default: int, high: int) -> int:
    """A non-negative integer setting (0: the limit is off) of at most ``high``."""
    number = env_number(name, default)
    if number > high:
        raise ImproperlyConfigured(f"{name}={number}: must be at most {high} (0 turns it off)")
    return number


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name, "").strip().lower()
    if not value:
        return default
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ImproperlyConfigured(f"{name}={value!r}: expected 1/0, true/false, yes/no or on/off")


def env_list(name: str, default: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


DEBUG = env_bool("DEBUG", True)
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG=0")
    SECRET_KEY = "django-insecure-dev-only-key-never-use-it-with-debug-off-0123456789"
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1]")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "controller",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "playground.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]
WSGI_APPLICATION = None
ASGI_APPLICATION = "playground.asgi.application"

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}"), conn_max_age=0
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Several processes (Daphne, worker, beat) share the file: wait for locks, don't fail.
    DATABASES["default"].setdefault("OPTIONS", {})["timeout"] = 20
    DATABASES["default"]["OPTIONS"]["transaction_mode"] = "IMMEDIATE"
    # Write-ahead log: a commit appends to the log without waiting for the disk (synchronous
    # NORMAL: a power cut may lose the last commits, a crash of a process loses none), and
    # readers (a page's snapshot) do not wait for a tick's write. The default rollback journal
    # synced the disk several times per commit: 10-40 ms of every tick on a busy disk.
    DATABASES["default"]["OPTIONS"]["init_command"] = (
        "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL"
    )
if os.environ.get("PLAYGROUND_TEST_DB") and DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # Tests: a file database, so that a real Celery worker process sees the same rows.
    # (On PostgreSQL, pytest-django's test database is already shared by every process.)
    DATABASES["default"]["TEST"] = {"NAME": os.environ["PLAYGROUND_TEST_DB"]}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]
LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "staticfiles"
WHITENOISE_USE_FINDERS = True  # serve static/ directly too (no stale collectstatic in dev)

REDIS_URL = os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"
CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        "CONFIG": {"hosts": [REDIS_URL]},
    }
}

CELERY_BROKER_URL = REDIS_URL
CELERY_RESULT_BACKEND = REDIS_URL
CELERY_TASK_ALWAYS_EAGER = False
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_ACKS_LATE = False
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Limits (controller/limits.py; README "Limits"); 0 turns one off.
PLAYGROUND_MAX_RUNNING_ROOMS = env_number("PLAYGROUND_MAX_RUNNING_ROOMS", 200)
PLAYGROUND_MAX_RUNNING_ROOMS_PER_OWNER = env_number("PLAYGROUND_MAX_RUNNING_ROOMS_PER_OWNER", 10)
PLAYGROUND_MAX_NODES_PER_ROOM = env_number("PLAYGROUND_MAX_NODES_PER_ROOM", 5000)
PLAYGROUND_MAX_PODS_PER_ROOM = env_number("PLAYGROUND_MAX_PODS_PER_ROOM", 150000)
PLAYGROUND_MAX_ACTIONS_PER_SECOND = env_number("PLAYGROUND_MAX_ACTIONS_PER_SECOND", 20)
PLAYGROUND_MAX_ACTIONS_PER_SECOND_PER_ADDRESS = env_number(
    "PLAYGROUND_MAX_ACTIONS_PER_SECOND_PER_ADDRESS", 400
)
PLAYGROUND_MAX_ACTIONS_PER_SECOND_PER_TOKEN = env_number(
    "PLAYGROUND_MAX_ACTIONS_PER_SECOND_PER_TOKEN", 60
)
PLAYGROUND_MAX_MESSAGE_BYTES = env_number("PLAYGROUND_MAX_MESSAGE_BYTES", 65536)
PLAYGROUND_MAX_SCENARIO_BYTES = env_number("PLAYGROUND_MAX_SCENARIO_BYTES", 16 * 1024 * 1024)
# The cost of the rooms held (being built, running, paused, idle; not expired), per owner and on
# the server: a room costs its nodes + pods times its speed over 10x (limits.room_cost). 60,000:
# a 1,000-node room of 30 pods per node at 20x, or two at 10x; 300,000 is ~1.1 GB of engines
# (3.7 KB per object traced; 1.5 GB as the engine cache estimates them: within one worker's
# default cache, so admitted rooms do not push each other out) and ~2% of a CPU in engine work
# at 10x (150 million object-simulated-seconds per CPU second; storing what changed costs more).
PLAYGROUND_MAX_COST_PER_OWNER = env_at_most("PLAYGROUND_MAX_COST_PER_OWNER", 60000, 10**9)
PLAYGROUND_MAX_COST = env_at_most("PLAYGROUND_MAX_COST", 300000, 10**10)
# A room nobody has watched for this long, running or paused, expires: it stops for good and
# no longer counts against a budget (0: never).
PLAYGROUND_ROOM_EXPIRY_SECONDS = env_within("PLAYGROUND_ROOM_EXPIRY_SECONDS", 7200, 0, 30 * 86400)
# The engines a worker process keeps in memory between ticks, estimated from their nodes and
# pods (rooms.runtime.ENGINE_BYTES_PER_OBJECT); past it the least recently ticked go back to
# their snapshot (0: no bound).
PLAYGROUND_ENGINE_CACHE_MB = env_at_most("PLAYGROUND_ENGINE_CACHE_MB", 2048, 1024 * 1024)
# A request body over its limit is answered 413 by Daphne from its headers, before it is read
# (playground/httplimits.py): the upload forms at "/" take a scenario's bytes plus the form's
# fields; every other path this many bytes (at most 64 MiB; 0 turns it off).
PLAYGROUND_MAX_REQUEST_BYTES = env_at_most("PLAYGROUND_MAX_REQUEST_BYTES", 2**20, 64 * 2**20)
# What one websocket may hold: bytes its client has not read, behind the snapshot being sent
# (more: closed with 4408; playground/wslimits.py), and live sockets per client address in one
# Daphne process (more: closed with 4429; controller/live/sockets.py). 0 turns one off.
PLAYGROUND_MAX_UNSENT_BYTES = env_at_most("PLAYGROUND_MAX_UNSENT_BYTES", 2**20, 256 * 2**20)
PLAYGROUND_MAX_SOCKETS_PER_ADDRESS = env_at_most("PLAYGROUND_MAX_SOCKETS_PER_ADDRESS", 64, 100_000)
# Uploaded files go to a temporary file as they are parsed, never into memory (Django keeps
# those under FILE_UPLOAD_MAX_MEMORY_SIZE in memory by default).
FILE_UPLOAD_HANDLERS = ["django.core.files.uploadhandler.TemporaryFileUploadHandler"]
# A room nobody watches for this long stops ticking; a viewer's arrival resumes it (0: never).
PLAYGROUND_IDLE_PAUSE_SECONDS = env_number("PLAYGROUND_IDLE_PAUSE_SECONDS", 300, float)
# A running room more than this many wall seconds behind its clock (no worker ticked it: the
# stack was stopped) resumes from where it stood instead of catching up (rooms.tick._stalled).
PLAYGROUND_MAX_CATCH_UP_SECONDS = env_number("PLAYGROUND_MAX_CATCH_UP_SECONDS", 300, float)
# A big room's engine snapshot is pickled by a forked child, not in its tick (the room's lock is
# released at once; controller/snapshots.py): when os.fork exists, this is on, and pickling
# the engine takes at least PLAYGROUND_SNAPSHOT_FORK_MIN_SECONDS and longer than the fork. A child running longer than
# PLAYGROUND_SNAPSHOT_CHILD_TIMEOUT_SECONDS is killed (the next periodic snapshot retries).
PLAYGROUND_SNAPSHOT_FORK = os.environ.get("PLAYGROUND_SNAPSHOT_FORK", "1").strip().lower() not in (
    "0",
    "false",
    "no",
    "off",
)
PLAYGROUND_SNAPSHOT_FORK_MIN_SECONDS = env_number(
    "PLAYGROUND_SNAPSHOT_FORK_MIN_SECONDS", 0.05, float
)
# At most this many snapshot children per process (each may copy up to its engine's memory).
PLAYGROUND_SNAPSHOT_MAX_CHILDREN = env_number("PLAYGROUND_SNAPSHOT_MAX_CHILDREN", 2)
PLAYGROUND_SNAPSHOT_CHILD_TIMEOUT_SECONDS = env_number(
    "PLAYGROUND_SNAPSHOT_CHILD_TIMEOUT_SECONDS", 600, float
)
# Every worker also consumes its own queue (<hostname>.dq2): room affinity (controller/affinity.py).
CELERY_WORKER_DIRECT = True
# Heavy work apart from ticks (playground/workers.py, controller/heavy.py): room builds, import
# previews, big imports and what-if runs go to the "heavy" queue, which only heavy workers
# consume (their own processes), so that they never take a tick worker's thread.
CELERY_TASK_ROUTES = {
    f"controller.tasks.{name}": {"queue": "heavy"}
    for name in ("room_build_task", "import_preview_task", "what_if_task")
}
# Heavy jobs (builds, imports, previews, what-ifs) one owner (address, or signed-in user) may
# have queued or running at once; more are refused at the request (0: no cap).
PLAYGROUND_MAX_HEAVY_JOBS_PER_ADDRESS = env_number("PLAYGROUND_MAX_HEAVY_JOBS_PER_ADDRESS", 2)
# A heavy job is stopped after this many seconds (Celery's soft time limit; the hard one, which
# kills its process, 30 s later), and says so to its user (0: no limit).
PLAYGROUND_HEAVY_TIME_LIMIT_SECONDS = env_number("PLAYGROUND_HEAVY_TIME_LIMIT_SECONDS", 300, float)
# Heavy workers run at this lower CPU priority (os.nice), so that ticks come first (0: as ticks).
PLAYGROUND_HEAVY_NICE = env_within("PLAYGROUND_HEAVY_NICE", 19, 0, 19)
# Django keeps every query with DEBUG (connection.queries); only where a tool forces it when 0
# (controller/apps.py: a 16.6 MiB INSERT stayed in Daphne's memory with its parameters).
PLAYGROUND_LOG_QUERIES = env_bool("PLAYGROUND_LOG_QUERIES", False)
# Beat's period: the page shows the state of the last beat (static/js/state.js shownTime), so
# a room's picture stands between one beat's delay and one period plus it behind "now". 0.75 s
# keeps its p95 under a second (50 rooms on 2 workers: 0.88 s; 1.12 s at 1 s) for ~20% more
# worker CPU per room; its bounds keep beat from spinning or a room from freezing.
PLAYGROUND_TICK_SECONDS = env_within("PLAYGROUND_TICK_SECONDS", 0.75, 0.05, 60.0)
# Each room's Kubernetes API (controller/kubeapi/): the https port Daphne also listens on for
# kubectl (it sends a bearer token over https only), the directory of its self-signed
# certificate (controller/kubeapi/tls.py), and the open watches allowed per token and per
# client address.
PLAYGROUND_KUBEAPI_PORT = int(env_within("KUBEAPI_PORT", 8443, 1, 65535))
PLAYGROUND_KUBEAPI_TLS_DIR = Path(
    os.environ.get("KUBEAPI_TLS_DIR") or BASE_DIR / ".run" / "kubeapi-tls"
)
PLAYGROUND_KUBEAPI_WATCHES_PER_TOKEN = env_number("PLAYGROUND_KUBEAPI_WATCHES_PER_TOKEN", 20)
PLAYGROUND_KUBEAPI_WATCHES_PER_ADDRESS = env_number("PLAYGROUND_KUBEAPI_WATCHES_PER_ADDRESS", 50)
# A worker's tick advances a room's engine for at most about this long (wall seconds; a step
# never splits an instant of simulated time, so one may take longer): a room too big to keep
# up runs slower than asked, and says so on its page, instead of holding its worker from the
# other rooms (controller/rooms/tick.py). A quarter of a second leaves most of a 0.75 s beat
# to the worker's other rooms; the bound stays well under the room lock's 30 s (locks.py).
PLAYGROUND_TICK_BUDGET_SECONDS = env_within("PLAYGROUND_TICK_BUDGET_SECONDS", 0.25, 0.01, 10.0)
# A room with more view rows than this gets, on connect, a note to fetch snapshot.json (parsed
# by the page's worker) instead of its snapshot on the websocket (controller/live/consumers.py).
PLAYGROUND_SNAPSHOT_FETCH_ROWS = int(os.environ.get("PLAYGROUND_SNAPSHOT_FETCH_ROWS", "10000"))
# No tick broadcasts more than this; a larger one becomes a resync notice (controller/rooms/broadcast.py).
PLAYGROUND_DELTA_MAX_BYTES = int(os.environ.get("PLAYGROUND_DELTA_MAX_BYTES", str(256 * 1024)))
# /healthz says "degraded" (still 200) when a running room's last tick is this many seconds
# older than beat's period, or when the database takes longer than this to answer SELECT 1
# (controller/health.py): the server answers, but its rooms or pages lag.
PLAYGROUND_HEALTH_TICK_LATE_SECONDS = env_within(
    "PLAYGROUND_HEALTH_TICK_LATE_SECONDS", 5.0, 0.0, 3600.0
)
PLAYGROUND_HEALTH_DB_SLOW_SECONDS = env_within("PLAYGROUND_HEALTH_DB_SLOW_SECONDS", 0.5, 0.0, 60.0)
CELERY_BEAT_SCHEDULE = {
    # Beat is a coarse trigger: each tick advances every running room to "now".
    "rooms-tick": {
        "task": "controller.tasks.rooms_tick_task",
        "schedule": PLAYGROUND_TICK_SECONDS,
        "options": {"expires": PLAYGROUND_TICK_SECONDS * 2},
    },
    "beat-heartbeat": {
        "task": "controller.tasks.beat_heartbeat_task",
        "schedule": 1.0,
        "options": {"expires": 2.0},
    },
}

# HTTPS hardening: on when DEBUG=0, so `check --deploy` is clean; HTTPS_ONLY=0 (or each
# setting's own variable) turns it off for plain-http runs. /healthz is exempt from the
# redirect so a load balancer can probe it over http.
HTTPS_ONLY = env_bool("HTTPS_ONLY", not DEBUG)
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", HTTPS_ONLY)
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", HTTPS_ONLY)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", HTTPS_ONLY)
SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", 31_536_000 if HTTPS_ONLY else 0))
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", HTTPS_ONLY)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", HTTPS_ONLY)
if env_bool("TRUST_X_FORWARDED_PROTO", False):
    # Only behind a proxy that sets (and strips any client-sent) X-Forwarded-Proto.
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # No ?token= value in any line (playground/logredact.py; Daphne's access log too).
    "filters": {"redact": {"()": "playground.logredact.RedactFilter"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "filters": ["redact"]}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
}
