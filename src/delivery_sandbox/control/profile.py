"""The target profile the sandbox writes once it listens (ARCHITECTURE: Target profile).

TOML written by hand (strings, integers and booleans only), atomically: temp file + rename.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from delivery_sandbox.state.context import BARE_HOST, Sandbox

__all__ = ["render_profile", "write_profile"]


def _value(value: str | int | bool) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    return json.dumps(value)


def _table(name: str, values: dict[str, str | int | bool]) -> list[str]:
    return [f"[{name}]", *(f"{key} = {_value(values[key])}" for key in sorted(values)), ""]


def render_profile(sb: Sandbox, base_url: str) -> str:
    lines = [
        "# Target profile written by delivery-sandbox (format: ARCHITECTURE.md, Target profile).",
        f"base_url = {_value(base_url)}",
        "test_organisation = true",
        f"bare_host = {_value(BARE_HOST)}",
        "",
    ]
    lines += _table("keys", dict(sb.accounts.start_keys()))
    lines += _table("fixtures", dict(sb.fixtures()))
    lines += _table("admin", {"url": f"{base_url}/_sandbox", "token": sb.admin_token})
    return "\n".join(lines)


def write_profile(path: Path, text: str) -> None:
    """Write `text` to `path` atomically, readable only by the owner (it holds keys)."""
    directory = path.parent if str(path.parent) else Path(".")
    fd, temp = tempfile.mkstemp(prefix=".profile-", suffix=".toml", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
