"""The certification plan (TOML): how to run the partner's client.

    name = "reference client"
    timeout = 60                       # seconds per flow command (1 to 600); then it is killed
    per_item_failure_exit = 1          # optional (1 to 255): the exit status by which a flow
                                       # says "handled, but an item was refused"
    [flows]                            # one shell command per supported flow (scenarios.FLOWS)
    catalog = "delivery-client --state {state}/c.sqlite sync-catalog"
    series = "node {plan_dir}/partner.mjs pull-series"   # {plan_dir}: the plan file's folder
    [export]
    command = "delivery-client --state {state}/c.sqlite --export-state - export"
    [vars]                             # extra {placeholders}; the embedded sandbox adds its own
    episode = "..."
    [upstream]                         # optional: a real test organisation instead of the sandbox
    url = "https://www.example.test"
    key_env = "PARTNER_DELIVERY_KEY"   # the environment variable holding the key (never the key)

Commands run through /bin/sh with DELIVERY_BASE_URL (the proxy) and DELIVERY_API_KEY set, in a
fresh working folder per scenario (`{state}`). `{plan_dir}` is the absolute folder that holds
the plan file, so a plan kept beside its client can name it from any working folder. Built-in
placeholders are filled in [vars] values too (by name; nothing else there is touched, so shell
text such as `${HOME}` stays as written). Unknown keys are refused (exit 2).

A flow's exit status means only what the plan says it means: 0 is success, and
`per_item_failure_exit` (when given) is the status by which the client says it finished but
refused or could not use an item (a batch item refused with `not_entitled`, say). In a scenario
with a refused item that status is accepted like 0; any other status is a failure of the flow.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from delivery_conformance.certify.scenarios import FLOWS
from delivery_conformance.exceptions import UsageError
from delivery_conformance.spec.files import read_parsed

__all__ = ["DEFAULT_TIMEOUT", "Plan", "load_plan"]

DEFAULT_TIMEOUT = 60.0
_TOP = frozenset(
    {"name", "timeout", "per_item_failure_exit", "flows", "export", "vars", "upstream"}
)


@dataclass(frozen=True)
class Plan:
    name: str
    flows: Mapping[str, str]
    timeout: float = DEFAULT_TIMEOUT
    export: str | None = None
    vars: Mapping[str, str] = field(default_factory=dict)
    upstream: str | None = None
    key_env: str | None = None
    per_item_failure_exit: int | None = None  # the exit of "handled, an item was refused"
    text: str = ""  # the plan file as read (it holds no secret: keys come from the environment)
    plan_dir: str | None = None  # the absolute folder of the plan file (None: not read from one)


def load_plan(path: Path) -> Plan:
    data, text = read_parsed(
        path, _toml_and_text, "not TOML", tomllib.TOMLDecodeError, UsageError, where="plan "
    )
    return replace(parse_plan(data, str(path), text), plan_dir=str(path.resolve().parent))


def _toml_and_text(text: str) -> tuple[dict[str, Any], str]:
    return tomllib.loads(text), text


def _table(data: Mapping[str, Any], name: str, where: str) -> Mapping[str, Any]:
    value = data.get(name, {})
    if not isinstance(value, Mapping):
        raise UsageError(f"plan {where}: [{name}] is a table")
    return value


def parse_plan(data: Mapping[str, Any], where: str = "plan", text: str = "") -> Plan:
    unknown = set(data) - _TOP
    if unknown:
        raise UsageError(f"plan {where}: unknown keys {', '.join(sorted(unknown))} "
                         f"(known: {', '.join(sorted(_TOP))})")  # fmt: skip
    flows = _table(data, "flows", where)
    if not flows:
        raise UsageError(f"plan {where}: [flows] names no flow (known: {', '.join(FLOWS)})")
    bad = set(flows) - set(FLOWS)
    if bad:
        raise UsageError(f"plan {where}: unknown flows {', '.join(sorted(bad))} "
                         f"(known: {', '.join(FLOWS)})")  # fmt: skip
    if not all(isinstance(v, str) and v.strip() for v in flows.values()):
        raise UsageError(f"plan {where}: each flow is a non-empty command string")
    export = _table(data, "export", where)
    if set(export) - {"command"}:
        raise UsageError(f"plan {where}: [export] takes only command")
    upstream = _table(data, "upstream", where)
    if set(upstream) - {"url", "key_env"}:
        raise UsageError(f"plan {where}: [upstream] takes url and key_env")
    if upstream and not (upstream.get("url") and upstream.get("key_env")):
        raise UsageError(f"plan {where}: [upstream] needs url and key_env")
    timeout = data.get("timeout", DEFAULT_TIMEOUT)
    if not isinstance(timeout, int | float) or isinstance(timeout, bool) or not 1 <= timeout <= 600:
        raise UsageError(f"plan {where}: timeout is 1 to 600 seconds")
    variables = _table(data, "vars", where)
    item_exit = data.get("per_item_failure_exit")
    if item_exit is not None and (type(item_exit) is not int or not 1 <= item_exit <= 255):
        raise UsageError(f"plan {where}: per_item_failure_exit is a whole number 1 to 255")
    return Plan(
        name=str(data.get("name", Path(where).stem)),
        flows={k: str(v) for k, v in flows.items()},
        timeout=float(timeout),
        export=str(export["command"]) if export.get("command") else None,
        vars={str(k): str(v) for k, v in variables.items()},
        upstream=str(upstream["url"]) if upstream else None,
        key_env=str(upstream["key_env"]) if upstream else None,
        per_item_failure_exit=item_exit,
        text=text,
    )
