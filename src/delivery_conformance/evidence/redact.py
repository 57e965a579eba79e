"""Redaction: secrets never reach a report or a log.

What counts as a secret (spec: Authentication; Playback ticket; Creative record `final.file_url`;
Open video row `mp4.*`; Episode `poster_signed_url`; GET /creatives/{id}/file):

- the value of an `Authorization` header, any `svc_live_...` string, the admin token;
- the JSON fields in `SECRET_FIELDS` wherever they appear;
- a `url` that sits beside an `expires_at` (materials, the file link, short-lived images);
- the `Location` of a response unless it points back into the API (the 308 of the bare host).

Each redacted value keeps a short visible prefix so a reader can tell two keys apart:
`svc_live_ab…[redacted]`. Everything here is pure; `Redactor` adds the exact secrets the harness
knows (the profile's keys and admin token) on top of the patterns, and, given the profile's
key -> role map, names the credential a request carried before its header is masked
(`Redactor.credential`: `role:films`, `none`, `unknown key` or `altered key`), so a finding can be
sent again with the same role's key taken from the environment (reports/reproduce.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

__all__ = [
    "ALTERED_KEY",
    "MARK",
    "NO_KEY",
    "ROLE_PREFIX",
    "SECRET_FIELDS",
    "UNKNOWN_KEY",
    "Redactor",
    "mask",
    "redact_headers",
    "redact_json",
    "redact_text",
    "redact_url",
]

MARK = "…[redacted]"
SECRET_FIELDS = frozenset(
    {
        "play_auth_token",
        "manifest_url",
        "p480",
        "p720",
        "poster_signed_url",
        "file_url",
        "token",
        "key",
        "api_key",
    }
)
SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie"})
_KEY = re.compile(r"svc_live_[!-~]{2}[!-~]*?(?=[\s\"',;}\]\\]|$)")
# spec: Authentication (items 1, 2): `Bearer`, one space, `svc_live_` + 32 characters.
_BEARER_KEY = re.compile(r"Bearer (svc_live_[!-~]{32})")
# What `Redactor.credential` says a request carried (the closed set of `Exchange.credential`).
NO_KEY = "none"  # no Authorization header
ROLE_PREFIX = "role:"  # `Bearer <the key of that role in the profile>`
UNKNOWN_KEY = "unknown key"  # `Bearer` + a well-formed key the profile does not hold
ALTERED_KEY = "altered key"  # any other value: another scheme or spacing, a cut or padded key
_FIELD_IN_TEXT = re.compile(
    r'"(' + "|".join(sorted(SECRET_FIELDS)) + r')"(\s*:\s*)"((?:[^"\\]|\\.)*)"'
)


def mask(value: str, visible: int = 4) -> str:
    """Keep `visible` characters (after a `svc_live_` prefix, two) and mark the rest."""
    if MARK in value:
        return value
    if value.startswith("svc_live_"):
        return value[: len("svc_live_") + 2] + MARK
    return value[:visible] + MARK


def redact_url(url: str) -> str:
    """Keep scheme and host of a signed link, hide path and query."""
    parts = urlsplit(url)
    if parts.scheme and parts.netloc:
        return f"{parts.scheme}://{parts.netloc}/{MARK}"
    return mask(url)


def redact_text(text: str) -> str:
    """Hide API keys and secret JSON fields in free text (bodies that did not parse, logs)."""
    if "svc_live_" in text:  # each pattern needs its literal: most strings skip both
        text = _KEY.sub(lambda m: mask(m.group(0)), text)
    if '"' not in text:
        return text
    return _FIELD_IN_TEXT.sub(
        lambda m: f'"{m.group(1)}"{m.group(2)}"{_mask_field(m.group(1), m.group(3))}"', text
    )


def _mask_field(name: str, value: str) -> str:
    if name in ("manifest_url", "p480", "p720", "poster_signed_url", "file_url"):
        return redact_url(value)
    return mask(value)


def redact_json(value: Any) -> Any:
    """Return a copy of a decoded JSON value with every secret field masked."""
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        signed = "expires_at" in value
        out: dict[str, Any] = {}
        for name, item in value.items():
            if isinstance(item, str):
                if name in SECRET_FIELDS or (signed and name == "url"):
                    out[name] = _mask_field(name, item) if name != "url" else redact_url(item)
                else:
                    out[name] = redact_text(item)
            elif isinstance(item, (dict, list)):
                out[name] = redact_json(item)
            else:
                out[name] = item
        return out
    if isinstance(value, list):
        return [redact_json(item) for item in value]
    return value


def redact_headers(headers: Iterable[tuple[str, str]] | Mapping[str, str]) -> dict[str, str]:
    """Mask secret headers; a repeated header is joined with ', '."""
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    out: dict[str, str] = {}
    for name, value in pairs:
        lower = name.lower()
        if lower in SECRET_HEADERS:
            scheme, _, credential = value.partition(" ")
            shown = f"{scheme} {mask(credential)}" if credential else mask(value)
        elif lower == "location" and not urlsplit(value).path.startswith("/api/delivery/v1/"):
            shown = redact_url(value)
        else:
            shown = redact_text(value)
        out[name] = f"{out[name]}, {shown}" if name in out else shown
    return out


class Redactor:
    """Pattern redaction plus the exact secrets the harness knows (keys, admin token)."""

    def __init__(self, secrets: Iterable[str] = (), roles: Mapping[str, str] | None = None) -> None:
        self._secrets = sorted({s for s in secrets if len(s) >= 4}, key=len, reverse=True)
        self._roles = dict(roles or {})  # API key -> role

    def credential(self, headers: Iterable[tuple[str, str]] | Mapping[str, str]) -> str:
        """What the request's `Authorization` carried, named without the secret itself."""
        pairs = headers.items() if isinstance(headers, Mapping) else headers
        values = [value for name, value in pairs if name.lower() == "authorization"]
        if not values:
            return NO_KEY
        match = _BEARER_KEY.fullmatch(values[0]) if len(values) == 1 else None
        if match is None:
            return ALTERED_KEY
        role = self._roles.get(match.group(1))
        if role is not None:
            return ROLE_PREFIX + role
        if any(secret in match.group(1) for secret in self._secrets):
            return ALTERED_KEY
        return UNKNOWN_KEY

    def text(self, text: str) -> str:
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, mask(secret))
        return redact_text(text)

    def body(self, text: str) -> str:
        """Redact a body: JSON is decoded, masked and re-encoded; anything else as text."""
        try:
            decoded = json.loads(text)
        except ValueError:
            return self.text(text)
        return self.text(json.dumps(redact_json(decoded), ensure_ascii=False))

    def headers(self, headers: Iterable[tuple[str, str]] | Mapping[str, str]) -> dict[str, str]:
        return {name: self.text(value) for name, value in redact_headers(headers).items()}
