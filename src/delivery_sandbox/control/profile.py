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
    tenants = {r.role for r in sb.accounts.tenants.roles}  # listed in [tenants] instead
    keys: dict[str, str | int | bool] = {
        role: key for role, key in sb.accounts.start_keys().items() if role not in tenants
    }
    lines += _table("keys", keys)
    lines += _table("fixtures", dict(sb.fixtures()))
    lines += _table("admin", {"url": f"{base_url}/_sandbox", "token": sb.admin_token})
    lines += _tenants(sb)
    return "\n".join(lines)


def _tenants(sb: Sandbox) -> list[str]:
    """`[tenants]`: the keys of the `--tenants N` organisations in order, and the idle one's
    (their admin roles are tenant_01.. and tenant_idle, in the same order)."""
    roles = [r.role for r in sb.accounts.tenants.roles]
    if not roles:
        return []
    start = sb.accounts.start_keys()
    keys = ", ".join(_value(start[role]) for role in roles[:-1])
    return ["[tenants]", f"keys = [{keys}]", f"idle = {_value(start[roles[-1]])}", ""]


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
