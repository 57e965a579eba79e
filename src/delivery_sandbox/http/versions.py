"""Dated versions of the API (spec: Versioning; Authentication, order of checks).

A `VersionSet` is a table of dated versions. The spec's set has only 2026-10-02; the
`extended` set adds a retired and a deprecated version so that `unsupported_version` with
`upgrade_to` and the Deprecation/Sunset/Link headers can be exercised.
"""

from __future__ import annotations

import re
from calendar import timegm
from dataclasses import dataclass, field
from email.utils import formatdate
from enum import StrEnum

__all__ = ["LATEST", "VERSION_SETS", "Version", "VersionSet", "VersionSetName"]

LATEST = "2026-10-02"
DATE_PATTERN = re.compile(r"\A\d{4}-\d{2}-\d{2}\Z")


def date_epoch(date: str) -> int:
    """Epoch seconds of 00:00 UTC of a YYYY-MM-DD date."""
    year, month, day = (int(part) for part in date.split("-"))
    return timegm((year, month, day, 0, 0, 0))


@dataclass(frozen=True, slots=True)
class Version:
    """One dated version and its life cycle."""

    version: str
    released_at: str
    summary: str
    deprecated_at: str | None = None
    sunset_at: str | None = None
    retired: bool = False

    def deprecation_header(self) -> str | None:
        """RFC 9745 value: `@<unix seconds>` of the deprecation date. (HDR-017, HDR-018)"""
        return None if self.deprecated_at is None else f"@{date_epoch(self.deprecated_at)}"

    def sunset_header(self) -> str | None:
        """RFC 8594 value: an HTTP date. (HDR-020, HDR-021)"""
        if self.sunset_at is None:
            return None
        return formatdate(date_epoch(self.sunset_at), usegmt=True)


class VersionSetName(StrEnum):
    SPEC = "spec"
    EXTENDED = "extended"


@dataclass(frozen=True)
class VersionSet:
    versions: tuple[Version, ...]
    latest: str = LATEST
    _usable: dict[str, Version] = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        first: dict[str, Version] = {}
        for version in self.versions:
            first.setdefault(version.version, version)  # `get` answers the first of a name
        usable = {k: v for k, v in first.items() if not v.retired and DATE_PATTERN.match(k)}
        object.__setattr__(self, "_usable", usable)  # a dated, known, non-retired name

    def get(self, value: str) -> Version | None:
        for version in self.versions:
            if version.version == value:
                return version
        return None

    def usable(self, value: str) -> Version | None:
        """The version when `value` is a known, non-retired dated version; else None.

        Requirements: VER-003, VER-004, VER-005, VER-006.
        """
        return self._usable.get(value)

    @property
    def supported(self) -> list[str]:
        return [v.version for v in self.versions if not v.retired]

    @property
    def deprecated(self) -> list[Version]:
        return [v for v in self.versions if v.deprecated_at is not None and not v.retired]

    def first_with(self, *, retired: bool = False, deprecated: bool = False) -> str | None:
        for version in self.versions:
            if retired and version.retired:
                return version.version
            if deprecated and version.deprecated_at is not None and not version.retired:
                return version.version
        return None


_CURRENT = Version(LATEST, LATEST, "First dated version of v1.")

VERSION_SETS: dict[VersionSetName, VersionSet] = {
    VersionSetName.SPEC: VersionSet((_CURRENT,)),
    VersionSetName.EXTENDED: VersionSet(
        (
            Version(
                "2026-05-01",
                "2026-05-01",
                "Early beta shape (retired).",
                deprecated_at="2026-07-01",
                sunset_at="2026-09-01",
                retired=True,
            ),
            Version(
                "2026-08-01",
                "2026-08-01",
                "Late beta shape (deprecated).",
                deprecated_at="2026-10-02",
                sunset_at="2027-04-01",
            ),
            _CURRENT,
        )
    ),
}
