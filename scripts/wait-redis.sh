#!/usr/bin/env bash
# Wait (up to 20 s) for Redis before starting a process that needs it.
port=${REDIS_PORT:-6379}
for _ in $(seq 1 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && exit 0; sleep 0.2; done
echo "Redis did not come up on port $port" >&2; exit 1
