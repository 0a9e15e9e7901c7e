#!/usr/bin/env bash
# `make test`: the whole suite. JavaScript unit tests (tests/js, Node's runner) first, then
# pytest over tests/ (engine, app with a private redis-server and real Celery worker, browser).
# App tests start their own Redis, so a REDIS_URL or DATABASE_URL from the shell is not used.
set -euo pipefail
cd "$(dirname "$0")/.."
pkgs=(redis-server)
if [ -d tests/browser ]; then pkgs+=(chromium); fi
bash scripts/ensure-system.sh "${pkgs[@]}"
if compgen -G "tests/js/*.test.mjs" >/dev/null; then
  if command -v node >/dev/null 2>&1; then
    node --test tests/js/
  else
    echo "node is not installed: skipping the JavaScript unit tests in tests/js" >&2
  fi
fi
unset REDIS_URL DATABASE_URL
exec .venv/bin/pytest "$@"
