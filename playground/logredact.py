"""Tokens never in a log: an operator's link carries ``?token=...`` (and a websocket's URL
too), so every access-log line Daphne writes and every log record the app emits has its
token query values replaced by ``[REDACTED]``. ``install`` (called by playground.asgi, before
Daphne serves) wraps Daphne's access-log writer; ``RedactFilter`` is on the console handler of
settings.LOGGING (Django's own ``django.server`` and ``django.request`` lines included)."""

from __future__ import annotations

import logging
import re

# A query parameter named token / access_token / operator_token (any case, percent-encoded
# or not), up to the next separator.
TOKEN_QUERY = re.compile(r"([?&;](?:[a-z_]*token)=)[^&;#\s\"']*", re.IGNORECASE)
REDACTED = "[REDACTED]"


def redact(text: str) -> str:
    if "token" not in text.lower():
        return text
    return TOKEN_QUERY.sub(r"\1" + REDACTED, text)


class RedactFilter(logging.Filter):
    """A log record's message with its token query values redacted (formatted once here)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:
            return True
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


def install() -> None:
    """Daphne's access log (daphne.access.AccessLogGenerator, which writes to its stream, not
    through logging) writes each request line redacted. Idempotent."""
    try:
        from daphne.access import AccessLogGenerator
    except ImportError:  # not served by Daphne
        return
    if getattr(AccessLogGenerator.write_entry, "redacts", False):
        return
    original = AccessLogGenerator.write_entry

    def write_entry(self, host, date, request, status=None, length=None, ident=None, user=None):
        return original(self, host, date, redact(str(request)), status, length, ident, user)

    write_entry.redacts = True  # type: ignore[attr-defined]
    AccessLogGenerator.write_entry = write_entry  # type: ignore[method-assign]
