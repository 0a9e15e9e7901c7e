"""Settings from the environment: production hardening when DEBUG=0 (`check --deploy` has
nothing to say), plain http for local runs."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def manage(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in ("DEBUG", "SECRET_KEY", "HTTPS_ONLY")}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def secure_settings(**env: str) -> str:
    code = (
        "from django.conf import settings as s; print(s.DEBUG, s.SECURE_SSL_REDIRECT, "
        "s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SECURE_HSTS_SECONDS)"
    )
    done = manage("shell", "-c", code, **env)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]  # after any "objects imported" notice


def test_check_deploy_with_debug_off_and_a_real_secret_prints_no_warnings() -> None:
    done = manage(
        "check",
        "--deploy",
        "--fail-level",
        "WARNING",
        DEBUG="0",
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="example.com",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "System check identified no issues" in done.stdout
    assert "WARNINGS" not in done.stdout + done.stderr


def test_debug_off_without_a_secret_key_refuses_to_start() -> None:
    done = manage("check", DEBUG="0")
    assert done.returncode != 0
    assert "SECRET_KEY must be set when DEBUG=0" in done.stderr


def test_debug_on_serves_plain_http() -> None:
    assert secure_settings(DEBUG="1") == "True False False False 0"


def test_debug_off_can_still_serve_plain_http_locally() -> None:
    key = secrets.token_urlsafe(50)
    assert secure_settings(DEBUG="0", SECRET_KEY=key) == "False True True True 31536000"
    assert secure_settings(DEBUG="0", SECRET_KEY=key, HTTPS_ONLY="0") == "False False False False 0"
