"""Two runs of a campaign side by side: every figure and latency percentile, with the delta.

Pure: verdict bodies and raw records in, rows out. A row is a *regression* when run B is worse
than run A beyond the threshold:

- a figure that passed in A and fails in B, or whose distance to its expected value grew by more
  than `threshold` x max(|expected|, 1);
- a latency percentile (p50, p95, p99 per endpoint, from the raw records) higher in B by more
  than `threshold` (relative) and by more than `floor_ms` (absolute: sub-millisecond noise on a
  loopback run is not a regression).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from delivery_conformance.load.records import Record
from delivery_conformance.load.sustained import endpoint_percentiles

__all__ = ["Comparison", "Row", "compare_runs"]

PERCENTILES = ("p50_ms", "p95_ms", "p99_ms")
# A row as compare.json lists it: its fields with the deltas (properties) before the verdict.
ROW_KEYS = ("kind", "name", "a", "b", "unit", "delta", "delta_pct", "regression", "note")


@dataclass(frozen=True)
class Row:
    kind: str  # "figure" or "latency"
    name: str
    a: float | None
    b: float | None
    unit: str
    regression: bool
    note: str = ""

    @property
    def delta(self) -> float | None:
        return None if self.a is None or self.b is None else self.b - self.a

    @property
    def delta_pct(self) -> float | None:
        if self.delta is None or not self.a:
            return None
        return 100.0 * self.delta / abs(self.a)

    def to_json(self) -> dict[str, Any]:
        return {key: getattr(self, key) for key in ROW_KEYS}


@dataclass(frozen=True)
class Comparison:
    profile_a: str
    profile_b: str
    threshold: float
    floor_ms: float
    rows: tuple[Row, ...]

    @property
    def regressions(self) -> list[Row]:
        return [r for r in self.rows if r.regression]

    def to_json(self) -> dict[str, Any]:
        return {
            "profile_a": self.profile_a,
            "profile_b": self.profile_b,
            "threshold": self.threshold,
            "latency_floor_ms": self.floor_ms,
            "regressions": len(self.regressions),
            "rows": [r.to_json() for r in self.rows],
        }


def _figure_rows(a: Mapping[str, Any], b: Mapping[str, Any], threshold: float) -> list[Row]:
    figs_a = {f["name"]: f for f in a.get("figures", [])}
    figs_b = {f["name"]: f for f in b.get("figures", [])}
    rows = []
    for name in list(figs_a) + [n for n in figs_b if n not in figs_a]:
        fa, fb = figs_a.get(name), figs_b.get(name)
        if fa is None or fb is None:
            rows.append(
                Row(
                    "figure",
                    name,
                    fa and fa["measured"],
                    fb and fb["measured"],
                    (fa or fb or {}).get("unit", ""),
                    False,
                    "only in one run",
                )
            )
            continue
        expected = float(fb["expected"])
        worse = abs(fb["measured"] - expected) - abs(fa["measured"] - expected)
        newly_failed = fa["passed"] and not fb["passed"]
        regression = newly_failed or worse > threshold * max(abs(expected), 1.0)
        note = "failed in B" if newly_failed else ("passed" if fb["passed"] else "failed in both")
        rows.append(
            Row(
                "figure",
                name,
                float(fa["measured"]),
                float(fb["measured"]),
                fb.get("unit", ""),
                regression,
                note,
            )
        )
    return rows


def _latency_rows(
    records_a: Sequence[Record], records_b: Sequence[Record], threshold: float, floor_ms: float
) -> list[Row]:
    pa, pb = endpoint_percentiles(records_a), endpoint_percentiles(records_b)
    rows = []
    for endpoint in sorted(set(pa) | set(pb)):
        for key in PERCENTILES:
            va = pa.get(endpoint, {}).get(key)
            vb = pb.get(endpoint, {}).get(key)
            regression = (
                va is not None
                and vb is not None
                and vb - va > floor_ms
                and vb > va * (1 + threshold)
            )
            rows.append(Row("latency", f"{endpoint} {key[:3]}", va, vb, "ms", regression))
    return rows


def compare_runs(
    verdict_a: Mapping[str, Any],
    verdict_b: Mapping[str, Any],
    records_a: Sequence[Record],
    records_b: Sequence[Record],
    threshold: float = 0.10,
    floor_ms: float = 2.0,
) -> Comparison:
    """Run A is the reference, run B the candidate."""
    if threshold < 0 or floor_ms < 0:
        raise ValueError("threshold and latency floor must not be negative")
    rows = _figure_rows(verdict_a, verdict_b, threshold)
    rows += _latency_rows(records_a, records_b, threshold, floor_ms)
    return Comparison(
        str(verdict_a.get("profile")),
        str(verdict_b.get("profile")),
        threshold,
        floor_ms,
        tuple(rows),
    )
