"""The requirement catalogue: spec/requirements.yaml as typed records.

Every check, scenario, fault and load verdict names the IDs defined here
(spec: the whole of Delivery API v1; see ARCHITECTURE.md, "Requirement IDs").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

import yaml

from delivery_conformance.resources import spec_path
from delivery_conformance.spec.files import parse_yaml, read_parsed

__all__ = [
    "PREFIXES",
    "Level",
    "Requirement",
    "RequirementsError",
    "Role",
    "default_path",
    "load_requirements",
]

PREFIXES = frozenset(
    {"GEN", "HDR", "AUTH", "VER", "PAGE", "ERR", "CAT", "CFG", "PLAY"}
    | {"CRE", "SER", "PLS", "VID", "LIM", "SIM", "STATE", "FRESH", "CLI"}
)
ID_PATTERN = re.compile(r"^[A-Z]{2,5}-\d{3}$")
REQUIRED_FIELDS = ("id", "section", "statement", "level", "role", "observe")
OPTIONAL_FIELDS = ("untestable", "decision", "load_campaign")


class RequirementsError(ValueError):
    """The requirements file is missing or malformed; the message is one line."""


class Level(Enum):
    """How binding a requirement is: a must fails a run, a should warns."""

    MUST = "must"
    SHOULD = "should"


class Role(Enum):
    """Which side a requirement binds: the server under test or a client."""

    SERVER = "server"
    CLIENT = "client"


@dataclass(frozen=True)
class Requirement:
    id: str
    section: str
    statement: str
    level: Level
    role: Role
    observe: str
    untestable: str | None = None
    decision: str | None = None
    load_campaign: str | None = None  # judged by this load campaign, not by a conformance run

    @property
    def prefix(self) -> str:
        return self.id.split("-", 1)[0]


def default_path() -> Path:
    return spec_path("requirements.yaml")


def load_requirements(path: Path | str | None = None) -> dict[str, Requirement]:
    """Read and validate the file; return the requirements by ID, in file order."""
    source = Path(path) if path is not None else default_path()
    document = read_parsed(source, parse_yaml, "not valid YAML", yaml.YAMLError, RequirementsError)
    if not isinstance(document, dict) or not isinstance(document.get("requirements"), list):
        raise RequirementsError(f"{source}: expected a mapping with a 'requirements' list")
    found: dict[str, Requirement] = {}
    for index, entry in enumerate(document["requirements"]):
        requirement = _parse_entry(entry, f"{source}: entry {index}")
        if requirement.id in found:
            raise RequirementsError(f"{source}: duplicate id {requirement.id}")
        found[requirement.id] = requirement
    return found


def _parse_entry(entry: Any, where: str) -> Requirement:
    if not isinstance(entry, dict):
        raise RequirementsError(f"{where}: not a mapping")
    unknown = set(entry) - set(REQUIRED_FIELDS) - set(OPTIONAL_FIELDS)
    if unknown:
        raise RequirementsError(f"{where}: unknown field(s) {', '.join(sorted(map(str, unknown)))}")
    for name in REQUIRED_FIELDS:
        value = entry.get(name)
        if not isinstance(value, str) or not value.strip():
            raise RequirementsError(f"{where}: field {name!r} missing or not a non-empty string")
    for name in OPTIONAL_FIELDS:
        value = entry.get(name)
        if value is not None and (not isinstance(value, str) or not value.strip()):
            raise RequirementsError(f"{where}: field {name!r} must be a non-empty string")
    ident = entry["id"]
    if not ID_PATTERN.match(ident):
        raise RequirementsError(f"{where}: bad id {ident!r} (expected PREFIX-NNN)")
    if ident.split("-", 1)[0] not in PREFIXES:
        raise RequirementsError(f"{where}: unknown prefix in id {ident}")
    try:
        level = Level(entry["level"])
        role = Role(entry["role"])
    except ValueError as exc:
        raise RequirementsError(f"{where} ({ident}): {exc}") from None
    return Requirement(
        id=ident,
        section=entry["section"],
        statement=entry["statement"],
        level=level,
        role=role,
        observe=entry["observe"],
        untestable=entry.get("untestable"),
        decision=entry.get("decision"),
        load_campaign=entry.get("load_campaign"),
    )
