#!/usr/bin/env bash
# `make run`: migrate, make sure a Redis server answers on REDIS_URL, then run Daphne, a Celery
# worker and Celery beat (and our own redis-server when none was running) under honcho.
# Ctrl-C stops every process. Expects the venv (`make venv`).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python

export DEBUG=${DEBUG:-1} # plain http on localhost: no HTTPS redirect, no secure-only cookies
export REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379/0}
export WEB_PORT=${WEB_PORT:-8000}
export WEB_BIND=${WEB_BIND:-127.0.0.1}
mkdir -p .run

# Redis: use the server that answers on REDIS_URL; otherwise start redis-server ourselves.
processes=(web worker beat)
if $PY scripts/redis_url.py ping; then
  echo "Using the Redis server that answers on $REDIS_URL"
else
  read -r REDIS_HOST REDIS_PORT < <($PY scripts/redis_url.py hostport)
  case "$REDIS_HOST" in
    127.* | localhost | ::1) ;;
    *)
      echo "Nothing answers on $REDIS_URL and it is not a local address: start that Redis first." >&2
      exit 1
      ;;
  esac
  bash scripts/ensure-system.sh redis-server
  export REDIS_HOST REDIS_PORT
  processes=(redis "${processes[@]}")
  echo "Starting redis-server on $REDIS_HOST:$REDIS_PORT"
fi

$PY manage.py migrate --noinput -v 0
$PY manage.py collectstatic --noinput -v 0

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
if [ -n "$demo" ]; then echo "  ${demo%%: *}: ${url}${demo##* }"; fi
echo "  Health: ${url}/healthz    Stop: Ctrl-C"
echo
exec .venv/bin/honcho start -f Procfile "${processes[@]}"
