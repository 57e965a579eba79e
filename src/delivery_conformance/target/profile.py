"""Target profiles: the TOML file that tells the harness where a server is and how to call it.

The format is a shared contract (ARCHITECTURE.md > Target profile; docs/profile.md > Target profile
format); the sandbox writes it with `delivery-sandbox --profile-out FILE` and a server team writes
the same file by hand (`delivery-conformance init-profile` gives a commented template):

    base_url = "http://127.0.0.1:8123"   # scheme + host (+ port), no path, no query, no user:pw@
    test_organisation = true             # optional, default false
    bare_host = "delivery.sandbox"       # optional
    [keys]      role = "svc_live_" + 32 characters        (roles: profile_names.ROLES)
    [fixtures]  name = "string" or 3     # integers are kept as their text ("3")
    [admin]     url = "http://...", token = "..."   # optional
    [changes]   change_name = "command {value}", undo = "...", timeout = 60   # optional
                (how your server makes the changes of spec/changes.yaml: target/changes.py)
    [tenants]   keys = ["svc_live_...", ...], idle = "svc_live_..."   # optional: one key per
                test organisation of the `tenants` load campaign, and an idle organisation's

From the environment (`environ`, injected; `os.environ` when not given):
- `${NAME}` in any string value is replaced by the variable NAME (unset: an error); `$${NAME}`
  stays a literal `${NAME}`.
- `DELIVERY_KEY_<ROLE>` (e.g. `DELIVERY_KEY_FILMS`) gives or overrides the key of that role.
- `DELIVERY_TARGET` names the profile when no `--target` is given (`target_from_env`).

`load_profile(path)` returns a frozen `TargetProfile` or raises `ProfileError` with a one-line
message naming the mistake. Key values, tokens and URL passwords never appear in a message.
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any
from urllib.parse import urlsplit

from delivery_conformance.exceptions import ProfileError
from delivery_conformance.spec.changes import load_changes
from delivery_conformance.spec.endpoints import API_PREFIX
from delivery_conformance.target.changes import CHANGE_TIMEOUT, ChangeCommands
from delivery_conformance.target.profile_names import FIXTURES, KEY_ENV_PREFIX, ROLES, key_env

__all__ = [
    "API_PREFIX",
    "KEY_PATTERN",
    "MAX_PROFILE_BYTES",
    "TARGET_ENV",
    "AdminEndpoint",
    "TargetProfile",
    "load_profile",
    "target_from_env",
]

# spec: Authentication (item 2): a key is `svc_live_` + 32 characters. Printable ASCII without
# space, as AUTH-005 judges a rotated key. Any other value is refused (decision on AUTH-005).
KEY_PATTERN = re.compile(r"svc_live_[!-~]{32}")
TARGET_ENV = "DELIVERY_TARGET"
MAX_PROFILE_BYTES = 256 * 1024  # a full profile is a few KB; this bounds the TOML parser's work
MAX_WORKERS = 32  # processes of `run --workers N` (each one mostly waits on the network)
TOP_LEVEL = (
    "base_url", "test_organisation", "bare_host", "workers", "keys", "fixtures", "admin", "changes",
    "tenants",
)  # fmt: skip
ADMIN_ENTRIES = ("url", "token")
TENANT_ENTRIES = ("keys", "idle")
MAX_TENANTS = 200
_HOST = re.compile(r"[A-Za-z0-9.-]+(:\d{1,5})?")
_VARIABLE = re.compile(r"\$(\$?)\{([A-Za-z_][A-Za-z0-9_]*)\}")
# A dotted key of 32 parts or more: never a profile, and quadratic work for tomllib.
_PART = r"""(?:[A-Za-z0-9_-]+|"[^"\n]*"|'[^'\n]*')"""
_DEEP_DOTTED = re.compile(rf"""(?<![A-Za-z0-9_"'-])(?:{_PART}[ \t]*\.[ \t]*){{31,}}{_PART}""")


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
    workers: int | None = None  # `run --workers` unless the command line says (None: chosen)
    admin: AdminEndpoint | None = None
    changes: ChangeCommands | None = None
    source: Path | None = None
    # role -> where its key came from: "file" or the environment variable's name
    key_origins: Mapping[str, str] = field(default_factory=dict)
    # [tenants]: one key per organisation of the `tenants` load campaign, and the idle one's
    tenants: tuple[str, ...] = field(default=(), repr=False)
    tenant_idle: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        # A password in base_url would be repeated in every request line and report.
        if "@" in urlsplit(self.base_url).netloc:
            raise ProfileError("base_url must not carry user:password@ (credentials in a URL)")

    def has_role(self, role: str) -> bool:
        return role in self.keys

    def has_fixture(self, name: str) -> bool:
        return name in self.fixtures


def target_from_env(environ: Mapping[str, str] | None = None) -> Path | None:
    """The profile named by DELIVERY_TARGET (for `run` without --target), or None if unset."""
    value = (os.environ if environ is None else environ).get(TARGET_ENV, "").strip()
    return Path(value) if value else None


def _fail(path: Path, message: str) -> ProfileError:
    return ProfileError(f"profile {path}: {message}")


def _did_you_mean(names: Iterable[str], known: Iterable[str], what: str, where: str) -> str:
    known = list(known)
    shown = []
    for name in sorted(names):
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        shown.append(f"{name!r} (did you mean {close[0]!r}?)" if close else repr(name))
    plural = what if len(shown) == 1 else what + "s"
    return f"unknown {plural} {where}: {', '.join(shown)}"


def _refuse_unknown(path: Path, table: Mapping[str, Any], known: Iterable[str], what: str,
                    where: str) -> None:  # fmt: skip
    known = tuple(known)
    unknown = [name for name in table if name not in known]
    if unknown:
        raise _fail(path, _did_you_mean(unknown, known, what, where))


def _expand(path: Path, value: object, where: str, environ: Mapping[str, str]) -> object:
    """${NAME} -> environ[NAME]; $${NAME} -> a literal ${NAME}. Non-strings pass unchanged."""
    if not isinstance(value, str):
        return value

    def one(match: re.Match[str]) -> str:
        escaped, name = match.groups()
        if escaped:
            return "${" + name + "}"
        if name not in environ:
            raise _fail(path, f"{where} uses ${{{name}}}, but {name} is not set in the environment")
        return environ[name]

    return _VARIABLE.sub(one, value)


def _check_base_url(path: Path, value: object, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise _fail(path, f"{what} must be a non-empty string")
    if "@" in value:  # checked first: the value is never printed when it may hold a password
        raise _fail(
            path,
            f"{what} must not carry user:password@ (credentials in a URL end up in logs); "
            "give keys in [keys] and the admin token in [admin]",
        )
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


def _table(path: Path, data: Mapping[str, Any], name: str, shape: str) -> dict[str, Any]:
    table = data.get(name, {})
    if not isinstance(table, dict):
        raise _fail(path, f"[{name}] must be a table of {shape}")
    return table


def _env_keys(path: Path, environ: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """role -> (key, variable) for every DELIVERY_KEY_<ROLE> set in the environment."""
    found: dict[str, tuple[str, str]] = {}
    for variable in sorted(environ):
        if not variable.startswith(KEY_ENV_PREFIX):
            continue
        role = variable[len(KEY_ENV_PREFIX) :].lower()
        if role not in ROLES:
            known = [key_env(r) for r in ROLES]
            message = _did_you_mean([variable], known, "key variable", "in the environment")
            raise _fail(path, message)
        if not environ[variable]:
            raise _fail(path, f"{variable} is set but empty (a CI secret that is not defined?)")
        found[role] = (environ[variable], variable)
    return found


def _check_keys(path: Path, table: dict[str, Any], environ: Mapping[str, str]
                ) -> tuple[dict[str, str], dict[str, str]]:  # fmt: skip
    _refuse_unknown(path, table, ROLES, "role", "in [keys]")
    keys: dict[str, str] = {}
    origins: dict[str, str] = {}
    for role, value in table.items():
        keys[role] = _expand(path, value, f"[keys] {role}", environ)  # type: ignore[assignment]
        origins[role] = "file"
    for role, (key, variable) in _env_keys(path, environ).items():
        keys[role], origins[role] = key, variable
    owner: dict[str, str] = {}
    for role, key in keys.items():
        origin = "" if origins[role] == "file" else f" (from {origins[role]})"
        if not isinstance(key, str) or not KEY_PATTERN.fullmatch(key.strip()):
            raise _fail(
                path,
                f"key for role {role!r}{origin} is not svc_live_ followed by 32 characters "
                "(spec: Authentication; AUTH-005)",
            )
        if key != key.strip():
            raise _fail(path, f"key for role {role!r}{origin} has white space around it")
        if key in owner:
            raise _fail(
                path,
                f"roles {owner[key]!r} and {role!r} have the same key; each role needs a key of "
                "its own (they differ in organisation or scopes)",
            )
        owner[key] = role
    return keys, origins


def _check_fixtures(path: Path, table: dict[str, Any], environ: Mapping[str, str]
                    ) -> dict[str, str]:  # fmt: skip
    _refuse_unknown(path, table, FIXTURES, "fixture", "in [fixtures]")
    fixtures: dict[str, str] = {}
    for name, raw in table.items():
        value = _expand(path, raw, f"[fixtures] {name}", environ)
        if isinstance(value, int) and not isinstance(value, bool):
            value = str(value)  # episode numbers: kept as their decimal text
        if not isinstance(value, str):
            kind = type(value).__name__
            raise _fail(path, f"fixture {name!r} must be a string or an integer, got {kind}")
        if not value.strip():
            raise _fail(path, f"fixture {name!r} is empty: give an id or leave the line out")
        fixtures[name] = value
    return fixtures


def _check_admin(path: Path, table: object, environ: Mapping[str, str]) -> AdminEndpoint:
    if not isinstance(table, dict):
        raise _fail(path, "[admin] must be a table with url and token")
    _refuse_unknown(path, table, ADMIN_ENTRIES, "entry", "in [admin]")
    if "url" not in table or "token" not in table:
        raise _fail(path, "[admin] needs both url and token")
    url = _expand(path, table["url"], "[admin] url", environ)
    if not isinstance(url, str) or urlsplit(url).scheme not in ("http", "https"):
        raise _fail(path, "[admin] url must be an http(s) URL")
    if "@" in urlsplit(url).netloc:
        raise _fail(path, "[admin] url must not carry user:password@; the token goes in token")
    token = _expand(path, table["token"], "[admin] token", environ)
    if not isinstance(token, str) or not token.strip():
        raise _fail(path, "[admin] token must be a non-empty string")
    return AdminEndpoint(url=url.rstrip("/"), token=token)


def _tenant_key(path: Path, value: object, where: str, environ: Mapping[str, str]) -> str:
    key = _expand(path, value, where, environ)
    if not isinstance(key, str) or not KEY_PATTERN.fullmatch(key):
        raise _fail(path, f"{where} is not svc_live_ followed by 32 characters (AUTH-005)")
    return key


def _check_tenants(path: Path, table: object, keys: Mapping[str, str],
                   environ: Mapping[str, str]) -> tuple[tuple[str, ...], str]:  # fmt: skip
    """`[tenants]`: `keys`, a list of 1 to MAX_TENANTS keys (one per organisation, each its
    own), and `idle`, the key of an organisation the campaign leaves nearly idle."""
    if not isinstance(table, dict):
        raise _fail(path, '[tenants] must be a table: keys = ["svc_live_...", ...], idle = "..."')
    _refuse_unknown(path, table, TENANT_ENTRIES, "entry", "in [tenants]")
    listed = table.get("keys")
    if not isinstance(listed, list) or not 1 <= len(listed) <= MAX_TENANTS:
        raise _fail(path, f"[tenants] keys must be a list of 1 to {MAX_TENANTS} keys")
    if "idle" not in table:
        raise _fail(path, "[tenants] needs idle, the key of an organisation left idle")
    tenants = tuple(
        _tenant_key(path, value, f"[tenants] keys[{n}]", environ) for n, value in enumerate(listed)
    )
    idle = _tenant_key(path, table["idle"], "[tenants] idle", environ)
    every = [*tenants, idle]
    if len(set(every)) != len(every) or set(every) & set(keys.values()):
        raise _fail(
            path,
            "[tenants] keys must differ from each other and from [keys]: one organisation each",
        )
    return tenants, idle


def change_names() -> tuple[str, ...]:
    """The changes of the catalogue (spec/changes.yaml) a profile may name a command for."""
    return tuple(change.name for change in load_changes())


def _check_changes(path: Path, table: object, environ: Mapping[str, str]) -> ChangeCommands:
    if not isinstance(table, dict):
        raise _fail(path, '[changes] must be a table: change_name = "command"')
    _refuse_unknown(path, table, (*change_names(), "undo", "timeout"), "change", "in [changes]")
    timeout = table.get("timeout", CHANGE_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 1 <= timeout <= 600:
        raise _fail(path, "[changes] timeout is 1 to 600 seconds")
    commands: dict[str, str] = {}
    for name, value in table.items():
        if name == "timeout":
            continue
        command = _expand(path, value, f"[changes] {name}", environ)
        if not isinstance(command, str) or not command.strip():
            raise _fail(path, f"[changes] {name} must be a non-empty command string")
        commands[name] = command
    undo = commands.pop("undo", None)
    return ChangeCommands(MappingProxyType(commands), undo, float(timeout), path.parent)


def _read(path: Path) -> dict[str, Any]:
    if not path.exists():
        raise _fail(path, "file not found")
    if path.is_dir():
        raise _fail(path, "is a directory, not a file")
    if not path.is_file():
        raise _fail(path, "is not a regular file (a device or a pipe?)")
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_PROFILE_BYTES + 1)
    except OSError as error:
        raise _fail(path, f"cannot be read ({type(error).__name__})") from None
    if len(raw) > MAX_PROFILE_BYTES:
        raise _fail(path, f"is larger than {MAX_PROFILE_BYTES} bytes, the most a profile may be")
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise _fail(path, "is UTF-16; save it as UTF-8")
    try:
        text = raw.decode("utf-8-sig")  # a byte-order mark, as some editors write, is skipped
    except UnicodeDecodeError:
        raise _fail(path, "cannot be read (UnicodeDecodeError: not UTF-8)") from None
    if _DEEP_DOTTED.search(text):
        raise _fail(path, "not valid as a profile: a dotted key is nested too deeply")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise _fail(path, f"not valid TOML: {error}") from None
    except RecursionError:
        raise _fail(path, "not valid as a profile: arrays or tables nested too deeply") from None


def load_profile(path: str | Path, environ: Mapping[str, str] | None = None) -> TargetProfile:
    """Read and validate a target profile; raise `ProfileError` (one line) on any mistake.

    `environ` feeds `${NAME}` and `DELIVERY_KEY_<ROLE>`; None means `os.environ`. A profile the
    harness did not get from a user (the embedded sandbox's) is read with `environ={}`.
    """
    path = Path(path)
    environ = os.environ if environ is None else environ
    data = _read(path)
    _refuse_unknown(path, data, TOP_LEVEL, "top-level entry", "in the profile")
    if "base_url" not in data:
        raise _fail(path, "base_url is missing")
    base_url = _check_base_url(path, _expand(path, data["base_url"], "base_url", environ),
                               "base_url")  # fmt: skip
    test_org = data.get("test_organisation", False)
    if not isinstance(test_org, bool):
        raise _fail(path, "test_organisation must be true or false")
    bare_host = _expand(path, data.get("bare_host"), "bare_host", environ)
    if bare_host is not None and (not isinstance(bare_host, str) or not _HOST.fullmatch(bare_host)):
        raise _fail(path, "bare_host must be a host name such as 'example.com'")
    workers = data.get("workers")
    if workers is not None and (
        not isinstance(workers, int) or isinstance(workers, bool) or not 1 <= workers <= MAX_WORKERS
    ):
        raise _fail(path, f"workers must be a whole number from 1 to {MAX_WORKERS}")
    keys, origins = _check_keys(path, _table(path, data, "keys", "role = key"), environ)
    fixtures_table = _table(path, data, "fixtures", "name = string or integer")
    fixtures = _check_fixtures(path, fixtures_table, environ)
    admin = _check_admin(path, data["admin"], environ) if "admin" in data else None
    changes = _check_changes(path, data["changes"], environ) if "changes" in data else None
    tenants: tuple[str, ...] = ()
    idle = None
    if "tenants" in data:
        tenants, idle = _check_tenants(path, data["tenants"], keys, environ)
    return TargetProfile(
        base_url=base_url,
        keys=MappingProxyType(keys),
        fixtures=MappingProxyType(fixtures),
        test_organisation=test_org,
        bare_host=bare_host,
        workers=workers,
        admin=admin,
        changes=changes,
        source=path,
        key_origins=MappingProxyType(origins),
        tenants=tenants,
        tenant_idle=idle,
    )
