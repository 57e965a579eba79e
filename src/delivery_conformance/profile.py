"""Target profiles: the TOML file that tells the harness where a server is and how to call it.

The format is a shared contract (ARCHITECTURE.md > Target profile); the sandbox writes it with
`delivery-sandbox --profile-out FILE` and a server team writes the same file by hand:

    base_url = "http://127.0.0.1:8123"   # scheme + host (+ port), no path, no query
    test_organisation = true             # optional, default false
    bare_host = "delivery.sandbox"       # optional
    [keys]      role = "svc_live_" + 32 characters
    [fixtures]  name = "string" or 3     # integers are kept as their text ("3")
    [admin]     url = "http://...", token = "..."   # optional

`load_profile(path)` returns a frozen `TargetProfile` or raises `ProfileError` with a one-line
message naming the mistake. Key values never appear in a message; the role does.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any
from urllib.parse import urlsplit

from delivery_conformance.exceptions import ProfileError

__all__ = ["API_PREFIX", "KEY_PATTERN", "AdminEndpoint", "TargetProfile", "load_profile"]

API_PREFIX = "/api/delivery/v1/"
# spec: Authentication (item 2) and Limits > Other constants: `svc_live_` + 32 characters.
KEY_PATTERN = re.compile(r"svc_live_[!-~]{32}")
TOP_LEVEL = frozenset({"base_url", "test_organisation", "bare_host", "keys", "fixtures", "admin"})
_HOST = re.compile(r"[A-Za-z0-9.-]+(:\d{1,5})?")


@dataclass(frozen=True)
class AdminEndpoint:
    """The sandbox admin API (or a partner's equivalent)."""

    url: str
    token: str = field(repr=False)


@dataclass(frozen=True)
class TargetProfile:
    base_url: str
    keys: Mapping[str, str] = field(default_factory=dict, repr=False)
    fixtures: Mapping[str, str] = field(default_factory=dict)
    test_organisation: bool = False
    bare_host: str | None = None
    admin: AdminEndpoint | None = None
    source: Path | None = None

    def has_role(self, role: str) -> bool:
        return role in self.keys

    def has_fixture(self, name: str) -> bool:
        return name in self.fixtures


def _fail(path: Path, message: str) -> ProfileError:
    return ProfileError(f"profile {path}: {message}")


def _check_base_url(path: Path, value: object, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise _fail(path, f"{what} must be a non-empty string")
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise _fail(path, f"{what} must start with http:// or https:// and name a host: {value!r}")
    try:
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError:
        raise _fail(path, f"{what} has an invalid port: {value!r}") from None
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise _fail(
            path, f"{what} must be scheme + host (+ port) only, no path or query: {value!r}"
        )
    return f"{parts.scheme}://{parts.netloc}"


def _check_keys(path: Path, table: object) -> dict[str, str]:
    if not isinstance(table, dict):
        raise _fail(path, "[keys] must be a table of role = key")
    keys: dict[str, str] = {}
    for role, key in table.items():
        if not isinstance(key, str) or not KEY_PATTERN.fullmatch(key):
            raise _fail(path, f"key for role {role!r} is not svc_live_ followed by 32 characters")
        keys[role] = key
    return keys


def _check_fixtures(path: Path, table: object) -> dict[str, str]:
    if not isinstance(table, dict):
        raise _fail(path, "[fixtures] must be a table of name = string or integer")
    fixtures: dict[str, str] = {}
    for name, value in table.items():
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)  # episode numbers: kept as their decimal text
        if not isinstance(value, str):
            kind = type(value).__name__
            raise _fail(path, f"fixture {name!r} must be a string or an integer, got {kind}")
        fixtures[name] = value
    return fixtures


def _check_admin(path: Path, table: object) -> AdminEndpoint:
    if not isinstance(table, dict):
        raise _fail(path, "[admin] must be a table with url and token")
    extra = sorted(set(table) - {"url", "token"})
    if extra:
        raise _fail(path, f"[admin] has unknown entries: {', '.join(extra)}")
    if "url" not in table or "token" not in table:
        raise _fail(path, "[admin] needs both url and token")
    url = table["url"]
    if not isinstance(url, str) or urlsplit(url).scheme not in ("http", "https"):
        raise _fail(path, "[admin] url must be an http(s) URL")
    token = table["token"]
    if not isinstance(token, str) or not token.strip():
        raise _fail(path, "[admin] token must be a non-empty string")
    return AdminEndpoint(url=url.rstrip("/"), token=token)


def _read(path: Path) -> dict[str, Any]:
    if not path.exists():
        raise _fail(path, "file not found")
    try:
        text = path.read_text(encoding="utf-8")
    except IsADirectoryError:
        raise _fail(path, "is a directory, not a file") from None
    except (OSError, UnicodeDecodeError) as error:
        raise _fail(path, f"cannot be read ({type(error).__name__})") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise _fail(path, f"not valid TOML: {error}") from None


def load_profile(path: str | Path) -> TargetProfile:
    """Read and validate a target profile; raise `ProfileError` (one line) on any mistake."""
    path = Path(path)
    data = _read(path)
    unknown = sorted(set(data) - TOP_LEVEL)
    if unknown:
        raise _fail(path, f"unknown top-level entries: {', '.join(unknown)}")
    if "base_url" not in data:
        raise _fail(path, "base_url is missing")
    base_url = _check_base_url(path, data["base_url"], "base_url")
    test_org = data.get("test_organisation", False)
    if not isinstance(test_org, bool):
        raise _fail(path, "test_organisation must be true or false")
    bare_host = data.get("bare_host")
    if bare_host is not None and (not isinstance(bare_host, str) or not _HOST.fullmatch(bare_host)):
        raise _fail(path, "bare_host must be a host name such as 'example.com'")
    admin = _check_admin(path, data["admin"]) if "admin" in data else None
    return TargetProfile(
        base_url=base_url,
        keys=MappingProxyType(_check_keys(path, data.get("keys", {}))),
        fixtures=MappingProxyType(_check_fixtures(path, data.get("fixtures", {}))),
        test_organisation=test_org,
        bare_host=bare_host,
        admin=admin,
        source=path,
    )
