"""The scenario catalogue: data files, one per family (certify/scenarios/*.toml).

    [[scenario]]
    id = "retry-429-retry-after"          # unique across the catalogue
    title = "..."                          # one line
    flow = "catalog"                       # a flow of the plan (FLOWS)
    runs = 1                               # how many times the flow runs (two-walk rules)
    exit = "zero"                          # required: zero | handled | any (below)
    export = false                         # read the client's exported state after each run
    quick = true                           # part of the scaled-down form (make test)
    time_note = "..."                      # how the scenario scales the spec's figures, if it does
    [[scenario.inject]]                    # see injections.py
    [[scenario.expect]]                    # one client requirement and the judge that proves it
    requirement = "CLI-008"
    judge = "retried"
    params = {injected = "429"}

`exit` says which exit statuses finish the flow: `zero` (every answer is one the client can
get past: 0 only), `handled` (an item is refused: 0, or the plan's `per_item_failure_exit`),
`any` (the scenario's answers may rightly make the flow give up: any status; a flow that hangs
is still a finding). Every scenario states it, so a flow that crashes never passes a scenario
that gives it what it needs to finish.

Unknown keys, unknown judges, unknown requirement IDs and duplicate ids are refused with one
line naming the file and the scenario.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from delivery_conformance.certify.injections import Injection, InjectionError, parse_injection
from delivery_conformance.certify.judges import JUDGES
from delivery_conformance.exceptions import UsageError
from delivery_conformance.spec.files import read_parsed

__all__ = ["EXITS", "FLOWS", "Expectation", "Scenario", "catalogue_files", "load_catalogue"]

FLOWS = (
    "catalog", "catalog_paged", "creatives", "playback", "playback_encrypted", "playback_batch",
    "config", "series", "playlists", "download", "watch", "videos_follow",
)  # fmt: skip
EXITS = ("zero", "handled", "any")
_SCENARIO_KEYS = frozenset(
    {"id", "title", "flow", "runs", "exit", "export", "quick", "time_note", "inject", "expect"}
)
_EXPECT_KEYS = frozenset({"requirement", "judge", "params"})


@dataclass(frozen=True)
class Expectation:
    """One `[[scenario.expect]]`: a client requirement and the judge (with its params) that
    proves it."""

    requirement: str
    judge: str
    params: Mapping[str, Any]


@dataclass(frozen=True, kw_only=True)
class Scenario:
    """One `[[scenario]]` table of a catalogue file, its keys in the order above; `family`: the
    file's `family` key, else its name."""

    id: str
    family: str
    title: str
    flow: str
    runs: int = 1
    exit: str
    export: bool = False
    quick: bool = False
    time_note: str = ""
    injections: tuple[Injection, ...]
    expectations: tuple[Expectation, ...]

    @property
    def requirements(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(e.requirement for e in self.expectations))


def catalogue_files() -> list[Path]:
    folder = resources.files("delivery_conformance.certify") / "scenarios"
    return sorted(Path(str(p)) for p in folder.iterdir() if str(p).endswith(".toml"))


def _scenario(data: Any, family: str, where: str, known_ids: Iterable[str]) -> Scenario:
    if not isinstance(data, Mapping):
        raise UsageError(f"{where}: a scenario is a table")
    unknown = set(data) - _SCENARIO_KEYS
    sid = str(data.get("id", "?"))
    here = f"{where} scenario {sid}"
    if unknown:
        raise UsageError(f"{here}: unknown keys {', '.join(sorted(unknown))}")
    for name in ("id", "title", "flow"):
        if not isinstance(data.get(name), str) or not data[name]:
            raise UsageError(f"{here}: `{name}` is a non-empty string")
    if data["flow"] not in FLOWS:
        raise UsageError(f"{here}: flow {data['flow']!r} is not one of {', '.join(FLOWS)}")
    if data.get("exit") not in EXITS:
        raise UsageError(f"{here}: exit is {', '.join(EXITS)} (required)")
    known = set(known_ids)
    expectations = []
    for n, item in enumerate(data.get("expect", [])):
        if not isinstance(item, Mapping) or set(item) - _EXPECT_KEYS:
            raise UsageError(f"{here}: expect #{n + 1} takes {', '.join(sorted(_EXPECT_KEYS))}")
        judge, rid = str(item.get("judge", "")), str(item.get("requirement", ""))
        if judge not in JUDGES:
            raise UsageError(f"{here}: unknown judge {judge!r}")
        if rid not in known:
            raise UsageError(f"{here}: {rid!r} is not a client requirement")
        expectations.append(Expectation(rid, judge, dict(item.get("params", {}))))
    if not expectations:
        raise UsageError(f"{here}: no expectation")
    try:
        injections = tuple(
            parse_injection(item, f"{here} inject #{n + 1}")
            for n, item in enumerate(data.get("inject", []))
        )
    except InjectionError as error:
        raise UsageError(str(error)) from None
    runs = data.get("runs", 1)
    if not isinstance(runs, int) or not 1 <= runs <= 5:
        raise UsageError(f"{here}: runs is 1 to 5")
    return Scenario(
        id=sid,
        family=family,
        title=data["title"],
        flow=data["flow"],
        runs=runs,
        exit=data["exit"],
        export=bool(data.get("export", False)),
        quick=bool(data.get("quick", False)),
        time_note=str(data.get("time_note", "")),
        injections=injections,
        expectations=tuple(expectations),
    )


def load_catalogue(
    client_ids: Iterable[str], files: Iterable[Path] | None = None
) -> list[Scenario]:
    """Every scenario of the catalogue (or of `files`), in file then file order."""
    ids = set(client_ids)
    scenarios: list[Scenario] = []
    seen: set[str] = set()
    for path in files if files is not None else catalogue_files():
        data = read_parsed(path, tomllib.loads, "not TOML", tomllib.TOMLDecodeError, UsageError)
        family = str(data.get("family", path.stem))
        if set(data) - {"family", "scenario"}:
            raise UsageError(f"{path}: top-level keys are family and scenario")
        for item in data.get("scenario", []):
            scenario = _scenario(item, family, path.name, ids)
            if scenario.id in seen:
                raise UsageError(f"{path.name}: scenario id {scenario.id} used twice")
            seen.add(scenario.id)
            scenarios.append(scenario)
    return scenarios
