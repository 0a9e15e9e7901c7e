#!/usr/bin/env bash
# Runs a Redis server for `make run` unless one already answers on REDIS_URL's port.
set -euo pipefail
port=${REDIS_PORT:-6379}
if redis-cli -p "$port" ping >/dev/null 2>&1; then
  echo "using the Redis server already running on port $port"
  exec sleep infinity
fi
exec redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no
