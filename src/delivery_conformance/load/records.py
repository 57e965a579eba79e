"""Raw per-request records of a load campaign, as JSON lines.

Verdicts are computed from these records, never from Locust's rounded aggregates. One record
is one HTTP exchange: when it was due on the open-model clock, when it left, when its answer
came back, and what the answer said about the limits (spec: Limits > Behaviour at the ceiling;
Errors > Playback). Secrets never enter a record: no key, no ticket, no link.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "ItemOutcome",
    "Record",
    "merge_files",
    "read_records",
    "sort_records",
    "write_records",
]


@dataclass(frozen=True)
class ItemOutcome:
    """One entry of a batch answer (`items[]`): its own status and refusal details."""

    status: int
    intent: str | None = None
    error_code: str | None = None
    reason: str | None = None
    retry_after: float | None = None


@dataclass(frozen=True)
class Record:
    """One exchange. Times are epoch seconds on the load generator's clock."""

    seq: int
    phase: str
    endpoint: str
    due: float
    sent: float
    answered: float
    status: int
    worker: str = "local"
    intent: str | None = None
    tickets: int = 1  # tickets asked (playback) or 1 (request counters)
    batch: bool = False
    items: tuple[ItemOutcome, ...] = field(default_factory=tuple)
    error_code: str | None = None
    reason: str | None = None
    retry_after: float | None = None  # the Retry-After header
    limit_header: int | None = None  # X-RateLimit-Limit
    window_header: int | None = None  # X-RateLimit-Window
    simulated: str | None = None  # Service-Simulated
    problem: str | None = None  # a wrong body or header seen by the generator

    @property
    def lateness(self) -> float:
        return self.sent - self.due

    @property
    def latency(self) -> float:
        return self.answered - self.sent

    @property
    def refused(self) -> bool:
        return self.status == 429

    @property
    def admitted(self) -> int:
        """Units this exchange took from its counter (tickets for playback, else requests)."""
        if self.endpoint != "playback":
            return 0 if self.status == 429 or self.status == 0 else 1
        if self.batch:
            return sum(1 for item in self.items if item.status == 200)
        return 1 if self.status == 200 else 0

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["items"] = [asdict(item) for item in self.items]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Record:
        items = tuple(ItemOutcome(**item) for item in data.get("items", ()))
        return cls(**{**data, "items": items})


def write_records(path: Path, records: Iterable[Record], append: bool = False) -> int:
    """Write records as JSON lines; return how many were written."""
    count = 0
    with path.open("a" if append else "w", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record.to_json(), separators=(",", ":")) + "\n")
            count += 1
    return count


def _lines(path: Path) -> Iterator[str]:
    with path.open(encoding="utf-8") as source:
        for line in source:
            if line.strip():
                yield line


def read_records(path: Path) -> list[Record]:
    """Read a JSON-lines file; a damaged line raises ValueError naming its number."""
    records = []
    for number, line in enumerate(_lines(path), start=1):
        try:
            records.append(Record.from_json(json.loads(line)))
        except (ValueError, TypeError) as error:
            raise ValueError(f"{path}:{number}: not a load record ({error})") from None
    return records


def merge_files(paths: Iterable[Path]) -> list[Record]:
    """Merge per-worker files into one list ordered by send time (then worker, then seq)."""
    merged: list[Record] = []
    for path in paths:
        merged.extend(read_records(path))
    return sort_records(merged)


def sort_records(records: Iterable[Record]) -> list[Record]:
    return sorted(records, key=lambda r: (r.sent, r.worker, r.seq))
