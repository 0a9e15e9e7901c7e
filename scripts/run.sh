#!/usr/bin/env bash
# `make run`: make sure a Redis server answers on REDIS_URL (starting our own when none does),
# migrate, load the demo room, then run Daphne, a Celery worker and Celery beat under honcho
# (Procfile). Ctrl-C stops every process, our redis-server last. Expects the venv (`make venv`).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python

export DEBUG=${DEBUG:-1} # plain http on localhost: no HTTPS redirect, no secure-only cookies
export REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379/0}
export WEB_PORT=${WEB_PORT:-8000}
export WEB_BIND=${WEB_BIND:-127.0.0.1}
mkdir -p .run

# Redis: use the server that answers on REDIS_URL; otherwise start redis-server ourselves,
# before the set-up below (the demo room broadcasts on creation), in its own session so that
# Ctrl-C reaches honcho's processes first; it is stopped when this script ends.
redis_pid=""
stop_redis() {
  if [ -n "$redis_pid" ]; then
    kill "$redis_pid" 2>/dev/null || true
    wait "$redis_pid" 2>/dev/null || true
  fi
}
trap stop_redis EXIT
trap 'exit 130' INT TERM
if $PY scripts/redis_url.py ping; then
  echo "Using the Redis server that answers on $REDIS_URL"
else
  read -r redis_host redis_port < <($PY scripts/redis_url.py hostport)
  case "$redis_host" in
    localhost) redis_host=127.0.0.1 ;;
    127.* | ::1) ;;
    *)
      echo "Nothing answers on $REDIS_URL and it is not a local address: start that Redis first." >&2
      exit 1
      ;;
  esac
  bash scripts/ensure-system.sh redis-server
  echo "Starting redis-server on $redis_host:$redis_port (log: .run/redis.log)"
  setsid redis-server --bind "$redis_host" --port "$redis_port" --save "" --appendonly no \
    --dir "$PWD/.run" --logfile "$PWD/.run/redis.log" &
  redis_pid=$!
  if ! $PY scripts/redis_url.py wait 15; then
    tail -20 .run/redis.log >&2 || true
    exit 1
  fi
fi

$PY manage.py migrate --noinput -v 0
if [ "$DEBUG" = 1 ]; then
  mkdir -p staticfiles # with DEBUG=1 WhiteNoise serves static/ itself, always fresh
else
  $PY manage.py collectstatic --noinput -v 0
fi

# --- DEMO ROOM HOOK ---------------------------------------------------------------------
# Loads the demo room once the `load_demo` management command exists; never blocks the run.
demo=""
if $PY manage.py help load_demo >/dev/null 2>&1; then
  demo=$($PY manage.py load_demo) || echo "load_demo failed; starting without the demo room" >&2
fi
# --- end of the demo room hook ------------------------------------------------------------

url="http://localhost:${WEB_PORT}"
echo
echo "  The node-failure playground runs at ${url}/"
# One "label: /path" line each: the demo room, the demo lesson's viewer and operator links.
while IFS= read -r line; do
  if [ -n "$line" ]; then echo "  ${line%%: *}: ${url}${line##* }"; fi
done <<<"$demo"
echo "  Health: ${url}/healthz    Stop: Ctrl-C"
echo
# WEB_PROCESSES Daphne processes on WEB_PORT, WEB_PORT+1, ... (put a proxy in front of more
# than one: README "Several workers and web servers"); WORKER_PROCESSES Celery workers, each
# ticking the rooms it owns; always exactly one beat.
webs=${WEB_PROCESSES:-1}
workers=${WORKER_PROCESSES:-1}
if [ "$webs" -gt 1 ]; then echo "  Daphne on ports ${WEB_PORT}..$((WEB_PORT + webs - 1))"; fi
.venv/bin/honcho start -f Procfile -p "$WEB_PORT" -c "web=${webs},worker=${workers},beat=1"
