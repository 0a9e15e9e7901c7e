#!/usr/bin/env bash
# `make test`: the whole suite (tests/). App tests start their own redis-server on a free port
# and their own Celery worker, so a REDIS_URL or DATABASE_URL from the shell is not used.
set -euo pipefail
cd "$(dirname "$0")/.."
pkgs=(redis-server)
if [ -d tests/browser ]; then pkgs+=(chromium); fi
bash scripts/ensure-system.sh "${pkgs[@]}"
unset REDIS_URL DATABASE_URL
exec .venv/bin/pytest "$@"
