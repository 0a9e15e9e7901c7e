#!/usr/bin/env bash
# `make run`: Redis, Daphne, a Celery worker and beat under honcho, a demo room, the URL.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-system.sh
mkdir -p .run
export DEBUG=${DEBUG:-1}
export REDIS_URL=${REDIS_URL:-redis://127.0.0.1:${REDIS_PORT:-6379}/0}
.venv/bin/python manage.py migrate --noinput -v 0
.venv/bin/python manage.py collectstatic --noinput -v 0
# The demo room needs no Redis to be created; it is ticked once the worker runs.
demo=$(.venv/bin/python manage.py load_demo)
echo
echo "  The playground runs at http://localhost:${WEB_PORT:-8000}/"
echo "  Demo room (operator link): http://localhost:${WEB_PORT:-8000}${demo#demo room: }"
echo "  Health: http://localhost:${WEB_PORT:-8000}/healthz    Stop: Ctrl-C"
echo
exec .venv/bin/honcho start -f Procfile
