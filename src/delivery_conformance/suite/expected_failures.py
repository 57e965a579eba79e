"""The known-failure baseline of a server run (`run --expected-failures FILE`).

    [[expected]]
    requirement = "CAT-033"
    reason = "the cursor of a filtered walk is rebuilt from page 1 (tracked as API-812)"
    expires = 2027-01-31

Each entry names one server requirement of spec/requirements.yaml, why it is accepted and until
when (a TOML date). A listed requirement that fails is reported as a warning carrying the
reason; one that passes is reported as fixed (the entry can go); an entry whose date has passed
is not applied, and fails the run, so a baseline cannot outlive its promise. Reading is strict:
an unknown key, requirement or table, a missing reason, a date that is not a date, a repeated
requirement, a client requirement: one line, exit 2, before the target is touched.
"""

from __future__ import annotations

import datetime as dt
import tomllib
from collections.abc import Mapping
from pathlib import Path

from delivery_conformance.evidence.events import ExpectedFailure
from delivery_conformance.exceptions import UsageError
from delivery_conformance.spec.requirements import Requirement, Role

__all__ = ["MAX_FILE_BYTES", "load_expected_failures", "parse_expected_failures"]

MAX_FILE_BYTES = 256 * 1024  # a baseline is a few entries; this bounds the parser's work
KEYS = frozenset({"requirement", "reason", "expires"})


def load_expected_failures(
    path: Path, requirements: Mapping[str, Requirement], today: dt.date
) -> tuple[ExpectedFailure, ...]:
    """Read FILE; raise `UsageError` (one line naming the file and entry) on anything wrong."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            raise UsageError(f"expected failures {path}: larger than {MAX_FILE_BYTES} bytes")
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else error
        raise UsageError(f"expected failures {path}: cannot read ({reason})") from None
    return parse_expected_failures(text, requirements, today, source=str(path))


def parse_expected_failures(
    text: str, requirements: Mapping[str, Requirement], today: dt.date, *, source: str = "-"
) -> tuple[ExpectedFailure, ...]:
    where = f"expected failures {source}"
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise UsageError(f"{where}: not valid TOML ({error})") from None
    if set(data) - {"expected"}:
        extra = ", ".join(sorted(set(data) - {"expected"}))
        raise UsageError(f"{where}: only [[expected]] tables, not {extra}")
    entries = data.get("expected", [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise UsageError(f"{where}: `expected` must be an array of tables ([[expected]])")
    out: list[ExpectedFailure] = []
    seen: set[str] = set()
    for number, entry in enumerate(entries, start=1):
        out.append(_entry(entry, requirements, today, f"{where} #{number}", seen))
    return tuple(out)


def _entry(
    entry: Mapping[str, object],
    requirements: Mapping[str, Requirement],
    today: dt.date,
    where: str,
    seen: set[str],
) -> ExpectedFailure:
    if set(entry) != KEYS:
        missing, extra = sorted(KEYS - set(entry)), sorted(set(entry) - KEYS)
        said = "; ".join(
            part
            for part in (
                f"missing {', '.join(missing)}" if missing else "",
                f"unknown {', '.join(extra)}" if extra else "",
            )
            if part
        )
        raise UsageError(f"{where}: needs requirement, reason and expires ({said})")
    rid, reason, expires = entry["requirement"], entry["reason"], entry["expires"]
    if not isinstance(rid, str) or rid not in requirements:
        raise UsageError(f"{where}: {rid!r} is no requirement of spec/requirements.yaml")
    if requirements[rid].role is not Role.SERVER:
        raise UsageError(
            f"{where}: {rid} is a client requirement; a server run never judges it "
            "(certify-client takes its own --expected-failures)"
        )
    if rid in seen:
        raise UsageError(f"{where}: {rid} is listed twice")
    seen.add(rid)
    if not isinstance(reason, str) or not reason.strip():
        raise UsageError(f"{where}: {rid} needs a reason (why the failure is accepted)")
    if isinstance(expires, dt.datetime) or not isinstance(expires, dt.date):
        raise UsageError(
            f"{where}: {rid}: expires must be a TOML date (2027-01-31), not {expires!r}"
        )
    return ExpectedFailure(rid, " ".join(reason.split()), expires, expired=expires < today)
