#!/usr/bin/env bash
# `make run`: make sure a Redis server answers on REDIS_URL (starting our own when none does),
# migrate, load the demo room, then run Daphne, a Celery tick worker, a heavy worker (builds,
# imports, previews, what-ifs apart from the ticks) and Celery beat under supervisord
# (scripts/supervisor_conf.py writes its configuration into RUN_DIR): a process that crashes or
# is killed is started again at once, the others go on. Ctrl-C stops every process, our
# redis-server last. Expects the venv (`make venv`). RUN_DIR (default .run) holds the logs,
# the configuration and supervisord's socket; LOAD_DEMO=0 skips the demo rooms.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python

export DEBUG=${DEBUG:-1} # plain http on localhost: no HTTPS redirect, no secure-only cookies
export REDIS_URL=${REDIS_URL:-redis://127.0.0.1:6379/0}
export WEB_PORT=${WEB_PORT:-8000}
export WEB_BIND=${WEB_BIND:-127.0.0.1}
RUN_DIR=${RUN_DIR:-.run}
mkdir -p "$RUN_DIR"
# The rooms' Kubernetes API: https on KUBEAPI_PORT (issue #36), its certificate in RUN_DIR.
export KUBEAPI_PORT=${KUBEAPI_PORT:-$((WEB_PORT + 443))} # 8443 beside 8000
export KUBEAPI_TLS_DIR=${KUBEAPI_TLS_DIR:-$(cd "$RUN_DIR" && pwd)/kubeapi-tls}

# Redis: use the server that answers on REDIS_URL; otherwise start redis-server ourselves,
# before the set-up below (the demo room broadcasts on creation), in its own session so that
# Ctrl-C reaches supervisord's processes first; it is stopped when this script ends.
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
  echo "Starting redis-server on $redis_host:$redis_port (log: $RUN_DIR/redis.log)"
  run_abs=$(cd "$RUN_DIR" && pwd)
  setsid redis-server --bind "$redis_host" --port "$redis_port" --save "" --appendonly no \
    --dir "$run_abs" --logfile "$run_abs/redis.log" &
  redis_pid=$!
  if ! $PY scripts/redis_url.py wait 15; then
    tail -20 "$RUN_DIR/redis.log" >&2 || true
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
if [ "${LOAD_DEMO:-1}" = 1 ] && $PY manage.py help load_demo >/dev/null 2>&1; then
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
# kubectl against the demo room (its operator's kubeconfig: keep it secret).
if [ -n "$demo" ] && [ "$KUBEAPI_PORT" != 0 ] &&
  $PY manage.py kubeconfig demo --role operator >"$RUN_DIR/demo.kubeconfig" 2>/dev/null; then
  chmod 600 "$RUN_DIR/demo.kubeconfig"
  echo "  kubectl: export KUBECONFIG=$RUN_DIR/demo.kubeconfig; kubectl get nodes -w  (then: kubectl describe node a-2)"
fi
# The admin (staff only: rooms, their parameters as a form per field, presets, the action log).
if $PY manage.py shell -c "from django.contrib.auth import get_user_model as U; \
import sys; sys.exit(0 if U().objects.filter(is_superuser=True).exists() else 1)" 2>/dev/null; then
  echo "  Admin: ${url}/admin/"
else
  echo "  Admin: ${url}/admin/ (no user yet: .venv/bin/python manage.py createsuperuser)"
fi
echo
# WEB_PROCESSES Daphne processes on WEB_PORT, WEB_PORT+1, ... (put a proxy in front of more
# than one: README "Several workers and web servers"); WORKER_PROCESSES Celery workers, each
# ticking the rooms it owns; HEAVY_WORKER_PROCESSES heavy workers (default 1, each running
# HEAVY_WORKER_CONCURRENCY jobs at once, default 2); always exactly one beat. supervisord
# restarts any of them that exits.
webs=${WEB_PROCESSES:-1}
if [ "$webs" -gt 1 ]; then echo "  Daphne on ports ${WEB_PORT}..$((WEB_PORT + webs - 1))"; fi
conf=$($PY scripts/supervisor_conf.py "$RUN_DIR")
.venv/bin/supervisord -c "$conf" &
supervisor_pid=$!
trap 'kill -TERM "$supervisor_pid" 2>/dev/null || true' INT TERM
wait "$supervisor_pid" || true
wait "$supervisor_pid" 2>/dev/null || true
