#!/usr/bin/env bash
# `make test`: the whole suite. Engine tests need nothing; app tests start their own
# redis-server and Celery worker; browser tests drive Debian's Chromium.
set -euo pipefail
cd "$(dirname "$0")/.."
WITH_CHROMIUM=1 bash scripts/ensure-system.sh
.venv/bin/ruff check .
exec .venv/bin/pytest "$@"
