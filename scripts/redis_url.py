"""Redis helpers for the shell scripts, driven by REDIS_URL (no redis-cli needed).

redis_url.py ping          exit 0 when something answers PING on REDIS_URL, else 1
redis_url.py wait [SECS]   wait (default 30 s) until it answers; exit 1 on time-out
redis_url.py hostport      print "HOST PORT" of REDIS_URL
"""

from __future__ import annotations

import os
import sys
import time
from urllib.parse import urlsplit

DEFAULT_URL = "redis://127.0.0.1:6379/0"


def url() -> str:
    return os.environ.get("REDIS_URL") or DEFAULT_URL


def answers() -> bool:
    import redis

    try:
        client = redis.Redis.from_url(url(), socket_timeout=0.5, socket_connect_timeout=0.5)
        return bool(client.ping())
    except redis.RedisError:
        return False


def main(argv: list[str]) -> int:
    command = argv[1] if len(argv) > 1 else "ping"
    if command == "ping":
        return 0 if answers() else 1
    if command == "wait":
        deadline = time.monotonic() + float(argv[2] if len(argv) > 2 else 30)
        while not answers():
            if time.monotonic() > deadline:
                print(f"Redis did not answer on {url()}", file=sys.stderr)
                return 1
            time.sleep(0.2)
        return 0
    if command == "hostport":
        parts = urlsplit(url())
        print(parts.hostname or "127.0.0.1", parts.port or 6379)
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
