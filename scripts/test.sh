#!/usr/bin/env bash
# `make test`: the whole suite. JavaScript unit tests (tests/js, Node's runner) first, then
# pytest over tests/ (engine, app with a private redis-server and real Celery worker, browser).
# App tests start their own Redis, so a REDIS_URL or DATABASE_URL from the shell is not used.
# Then the app tests (tests/app) run a second time on a private PostgreSQL cluster
# (PLAYGROUND_DB=postgres, tests/postgres_plugin.py) when the run included them.
set -euo pipefail
cd "$(dirname "$0")/.."
pkgs=(redis-server postgresql)
if [ -d tests/browser ]; then pkgs+=(chromium); fi
bash scripts/ensure-system.sh "${pkgs[@]}"
if compgen -G "tests/js/*.test.mjs" >/dev/null; then
  if command -v node >/dev/null 2>&1; then
    node --test tests/js/
  else
    echo "node is not installed: skipping the JavaScript unit tests in tests/js" >&2
  fi
fi
unset REDIS_URL DATABASE_URL PLAYGROUND_DB
status=0
.venv/bin/pytest "$@" || status=$?
# The PostgreSQL pass: tests/app, or the app paths among the arguments given.
pg_args=()
paths=0
for arg in "$@"; do
  case "$arg" in
    tests/app*) pg_args+=("$arg"); paths=1 ;;
    tests* | */*.py | *::*) paths=1 ;;
    *) pg_args+=("$arg") ;;
  esac
done
if [ "$paths" = 0 ]; then pg_args+=(tests/app); fi
if printf '%s\n' "${pg_args[@]}" | grep -q '^tests/app'; then
  echo "== tests/app again on PostgreSQL (PLAYGROUND_DB=postgres) =="
  PLAYGROUND_DB=postgres .venv/bin/pytest "${pg_args[@]}" || status=$?
fi
exit "$status"
