"""Secrets never reach a log line or an exception message (spec: Authentication; Playback
ticket; Creative record `final.file_url`; GET /creatives/{id}/file; Episode `poster_signed_url`).

Secrets: API keys (`svc_live_...`, `Bearer ...`), `play_auth_token`, `manifest_url`, signed links
(a URL whose query carries a signature or expiry, share links `/api/c/<token>`), and any exact
value the client registers (`Redactor.add`). `SecretFilter` is a logging filter that rewrites
each record's final message through the redactor, so no handler ever sees the secret.
"""

from __future__ import annotations

import logging
import re
import threading

__all__ = ["MARK", "SECRET_FIELDS", "Redactor", "SecretFilter", "redactor"]

MARK = "[redacted]"
SECRET_FIELDS = frozenset(
    {"play_auth_token", "manifest_url", "file_url", "poster_signed_url", "url", "p480", "p720"}
)
_PATTERNS = (
    re.compile(r"svc_live_[A-Za-z0-9_\-]+"),
    re.compile(r"(?i)(bearer\s+)\S+"),
    re.compile(r"https?://[^\s\"'<>]*/api/c/[^\s\"'<>]*"),
    re.compile(
        r"https?://[^\s\"'<>]*\?[^\s\"'<>]*(?:sig|signature|token|exp|expires|auth)"
        r"[^\s\"'<>]*",
        re.IGNORECASE,
    ),
    re.compile(r'("(?:' + "|".join(sorted(SECRET_FIELDS)) + r')"\s*:\s*)"(?:[^"\\]|\\.)*"'),
)


class Redactor:
    def __init__(self) -> None:
        self._values: set[str] = set()
        self._lock = threading.Lock()

    def add(self, *values: str | None) -> None:
        """Register exact secret values seen at run time (keys, tokens, links)."""
        with self._lock:
            self._values.update(value for value in values if value and len(value) >= 6)

    def __call__(self, text: str) -> str:
        with self._lock:
            values = sorted(self._values, key=len, reverse=True)
        for value in values:
            text = text.replace(value, MARK)
        for pattern in _PATTERNS:
            text = pattern.sub(_replacement, text)
        return text


def _replacement(match: re.Match[str]) -> str:
    if match.lastindex:  # keep the prefix group ("Bearer ", '"field": ')
        prefix = match.group(1)
        return prefix + (f'"{MARK}"' if prefix.startswith('"') else MARK)
    return MARK


redactor = Redactor()  # the process-wide one every client registers its secrets with


class SecretFilter(logging.Filter):
    """Install on a handler or logger: `handler.addFilter(SecretFilter())`."""

    def __init__(self, redact: Redactor = redactor) -> None:
        super().__init__()
        self.redact = redact

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        record.msg, record.args = self.redact(message), None
        return True
