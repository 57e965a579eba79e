"""Sustained campaigns: every counter at once (mixed) and a long run under the limits (soak).

Pure: raw records in, figures and latency tables out (spec: Limits, the table and "Counting is
approximate on the high side by up to about 2.5 %").

- mixed: every counter is driven near its ceiling at the same time and the config counter past
  it. Counters are separate (spec: Limits table, one row per counter): the config counter at its
  ceiling must never refuse a request of another counter, and no other counter may refuse a
  request while it has more than 2.5 % of its allowance left.
- soak: every counter at 80 % of its limit for a long time: no refusal at all, no error, and
  the latency percentiles per endpoint per time bucket (with their drift) for the report.
"""

from __future__ import annotations

import math
from collections import Counter as Tally
from collections.abc import Sequence
from typing import Any

from delivery_conformance.load.records import Record
from delivery_conformance.load.schedule import percentile
from delivery_conformance.load.verdict import (
    Expectations,
    Figure,
    minute_figure,
    within,
)

__all__ = [
    "COUNTER_OF",
    "MIXED_OVER",
    "analyse_mixed",
    "analyse_soak",
    "error_kinds",
    "latency_table",
]

# Which counter each campaign endpoint spends (spec: Limits table; /series shares catalog).
COUNTER_OF = {
    "playback": "playback",
    "catalog": "catalog",
    "series": "catalog",
    "creatives": "creatives",
    "videos": "videos",
    "video": "video",
    "config": "config",
}
# The requirement that sets each counter's allowance.
LIMIT_ID = {
    "playback": "LIM-012",
    "catalog": "LIM-019",
    "creatives": "LIM-022",
    "videos": "LIM-025",
    "video": "LIM-026",
    "config": "LIM-028",
}
# Which endpoints share each counter: a request of another counter spending it breaks these.
SHARING_ID = {
    "catalog": ("LIM-021",),
    "creatives": ("LIM-023",),
    "videos": ("LIM-027",),
    "video": ("LIM-027",),
}
MIXED_OVER = "config"  # the counter the mixed campaign pushes past its ceiling

# What an analysis returns: the figures of its verdict and the details for the report.
Result = tuple[list[Figure], dict[str, Any]]

INDEPENDENCE_DERIVATION = (
    "spec Limits: one counter per row, each with its own allowance; the campaign offers this "
    "counter at most 90 % of its allowance (bucket: capacity + refill over the run), so an exact "
    "server refuses none of it, and one counting up to 2.5 % high still refuses none"
)
SOAK_DERIVATION = (
    "spec Limits: 80 % of every limit per 60 s is 20 % under the ceiling, far beyond the 2.5 % "
    "the counting may run high: an exact or approximate server refuses nothing"
)


def latency_table(
    records: Sequence[Record], start: float, bucket: float
) -> dict[str, list[dict[str, float]]]:
    """Per endpoint and time bucket (by send time): count, p50, p95, p99 latency in ms."""
    groups: dict[str, dict[int, list[float]]] = {}
    for r in records:
        if r.status == 0:
            continue
        slot = max(0, int((r.sent - start) // bucket))
        groups.setdefault(r.endpoint, {}).setdefault(slot, []).append(r.latency)
    table: dict[str, list[dict[str, float]]] = {}
    for endpoint, slots in sorted(groups.items()):
        rows = []
        for slot, values in sorted(slots.items()):
            values.sort()
            rows.append(
                {
                    "t_s": round(slot * bucket, 3),
                    "count": len(values),
                    "p50_ms": round(percentile(values, 0.50) * 1000, 3),
                    "p95_ms": round(percentile(values, 0.95) * 1000, 3),
                    "p99_ms": round(percentile(values, 0.99) * 1000, 3),
                }
            )
        table[endpoint] = rows
    return table


def endpoint_percentiles(records: Sequence[Record]) -> dict[str, dict[str, float]]:
    """Whole-run p50/p95/p99 latency in ms per endpoint."""
    groups: dict[str, list[float]] = {}
    for r in records:
        if r.status != 0:
            groups.setdefault(r.endpoint, []).append(r.latency)
    out = {}
    for endpoint, values in sorted(groups.items()):
        values.sort()
        out[endpoint] = {
            f"p{int(q * 100)}_ms": round(percentile(values, q) * 1000, 3)
            for q in (0.50, 0.95, 0.99)
        } | {"count": len(values)}
    return out


def error_kinds(records: Sequence[Record]) -> dict[str, int]:
    """Answers that were neither expected nor a 429, by kind."""
    kinds: Tally[str] = Tally()
    for r in records:
        if r.status == 0:
            kinds["no answer"] += 1
        elif r.status >= 500:
            kinds[f"{r.status}"] += 1
        elif r.problem:
            kinds[r.problem] += 1
    return dict(kinds)


def _drift(table: dict[str, list[dict[str, float]]]) -> dict[str, dict[str, float]]:
    """Latency drift per endpoint: last bucket minus first bucket (p50, p95, p99 in ms)."""
    out = {}
    for endpoint, rows in table.items():
        if len(rows) >= 2:
            first, last = rows[0], rows[-1]
            keys = ("p50_ms", "p95_ms", "p99_ms")
            out[endpoint] = {k: round(last[k] - first[k], 3) for k in keys}
    return out


def _errors_figure(records: Sequence[Record]) -> Figure:
    kinds = error_kinds(records)
    total = sum(kinds.values())
    note = ", ".join(f"{k}: {v}" for k, v in sorted(kinds.items())) or "none"
    return within(
        "errors (no answer, 5xx, wrong shape)", ("LIM-029",), total, 0, 0, 0, "requests", note
    )


def _counters(records: Sequence[Record]) -> dict[str, list[Record]]:
    by: dict[str, list[Record]] = {}
    for r in records:
        by.setdefault(COUNTER_OF.get(r.endpoint, r.endpoint), []).append(r)
    return by


def analyse_mixed(records: Sequence[Record], exp: Expectations, ctx: dict[str, Any]) -> Result:
    """Every counter near its ceiling at once; config past it; counters stay independent."""
    run = [r for r in records if r.phase == "mixed"]
    by = _counters(run)
    figures: list[Figure] = []
    details: dict[str, Any] = {}
    for counter in sorted(LIMIT_ID):
        mine = by.get(counter, [])
        refused = sum(1 for r in mine if r.refused)
        admitted = sum(r.admitted for r in mine)
        details[counter] = {"sent": len(mine), "admitted": admitted, "refused": refused}
        if counter == MIXED_OVER:
            limit = exp.limit(counter)
            figures.append(
                minute_figure(
                    f"{counter} admitted in the minute (pushed past its ceiling)",
                    (LIMIT_ID[counter], "LIM-006", "LIM-007"),
                    admitted,
                    limit,
                    f"{refused} refused",
                )
            )
            continue
        if not mine:
            figures.append(
                within(
                    f"{counter} exercised",
                    (LIMIT_ID[counter],),
                    0,
                    1,
                    1,
                    math.inf,
                    "requests",
                    "no request of this counter was sent",
                )
            )
            continue
        figures.append(
            Figure(
                f"{counter} refusals while {MIXED_OVER} is at its ceiling",
                (LIMIT_ID[counter], *SHARING_ID.get(counter, ()), "LIM-007"),
                refused,
                0,
                0,
                0,
                "requests",
                f"{len(mine)} sent, {admitted} admitted",
                INDEPENDENCE_DERIVATION,
            )
        )
    figures.append(_errors_figure(records))
    start = min((r.sent for r in run), default=0.0)
    duration = max((r.sent for r in run), default=start) - start
    bucket = max(1.0, duration / 10)
    details["latency_bucket_s"] = bucket
    details["latency"] = latency_table(run, start, bucket)
    details["latency_overall"] = endpoint_percentiles(run)
    return figures, details


def analyse_soak(records: Sequence[Record], exp: Expectations, ctx: dict[str, Any]) -> Result:
    """80 % of every limit for the whole run: no refusal, no error; latency per bucket."""
    run = [r for r in records if r.phase == "soak"]
    by = _counters(run)
    figures: list[Figure] = []
    for counter in sorted(LIMIT_ID):
        mine = by.get(counter, [])
        refused = sum(1 for r in mine if r.refused)
        figures.append(
            Figure(
                f"{counter} refusals at 80 % of the limit",
                (LIMIT_ID[counter], "LIM-007"),
                refused if mine else -1,
                0,
                0,
                0,
                "requests",
                f"{len(mine)} sent" if mine else "not exercised",
                SOAK_DERIVATION,
            )
        )
    figures.append(_errors_figure(records))
    start = min((r.sent for r in run), default=0.0)
    bucket = float(ctx.get("bucket_s") or 60.0)
    table = latency_table(run, start, bucket)
    return figures, {
        "latency_bucket_s": bucket,
        "latency": table,
        "drift_first_to_last": _drift(table),
        "latency_overall": endpoint_percentiles(run),
        "errors": error_kinds(records),
    }
