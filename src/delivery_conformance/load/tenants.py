"""The `tenants` campaign's verdicts: many organisations at their ceilings at once, one by one.

Pure: raw records in, figures and per-organisation rows out (spec: Limits, "Limits are abuse
ceilings per organisation (not per key) per counter"; LIM-001, LIM-002). Each organisation has
its own playback and catalog buckets, full from idle: what one organisation does never changes
what another is admitted, so each is judged against its own limit alone.

A record's `phase` names its organisation and how hard it was driven: `tenant_03:over` (offered
more than its allowance over the run: it reaches its ceiling), `tenant_04:near` (offered 90 % of
it: an exact server refuses none, one counting 2.5 % high neither) and `idle:idle` (a trickle
that must be served at once).

Figures per organisation (each names LIM-002: a server whose organisations share a bucket, or
where one organisation's burst spends another's allowance, fails them):
- over: its allowance beyond the refill (the bucket envelope, `envelope.estimate_capacity`) for
  playback and catalog, 97.5 % - latency slack to the limit + 1; its refill between its first
  and last refusal (`envelope.refill_between`, when they are at least `MIN_WINDOW_S` apart);
- every organisation: refusals while under its own allowance, 0. The organisation's own bucket
  is replayed from the records (full at its first request, refilled at limit/60 per second,
  every admitted unit counted 2.5 % high); a refusal is early when that bucket still held the
  units asked plus what the latency and the requests in flight may hide;
- idle: no refusal, and no answer slower than the p99 of the organisations driven near their
  ceiling (never held there; all busy ones when there are none) plus `AT_ONCE_S`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from delivery_conformance.load.envelope import estimate_capacity, refill_between
from delivery_conformance.load.records import Record
from delivery_conformance.load.schedule import percentile
from delivery_conformance.load.sustained import (
    COUNTER_OF,
    Result,
    endpoint_percentiles,
    error_kinds,
    latency_table,
)
from delivery_conformance.load.verdict import (
    COUNTING_TOLERANCE,
    Expectations,
    Figure,
    min_admitted,
    refill_bounds_figure,
    within,
)

__all__ = [
    "COUNTERS",
    "IDLE",
    "NEAR",
    "OVER",
    "analyse_tenants",
    "early_refusals",
    "phase_name",
    "split_phase",
]

OVER, NEAR, IDLE = "over", "near", "idle"
COUNTERS = ("playback", "catalog")  # the continuous counters every organisation is driven on
LIMIT_ID = {"playback": "LIM-014", "catalog": "LIM-019"}
REFILL_ID = {"playback": "LIM-013", "catalog": "LIM-020"}
MIN_WINDOW_S = 2.0  # a refill over a shorter window between refusals says too little
AT_ONCE_S = 0.25  # the idle organisation: no answer this much slower than the near ones' p99
MINUTE_S = 60.0

OWN_ALLOWANCE_DERIVATION = (
    "spec Limits: limits per organisation per counter (LIM-002): the organisation's own bucket, "
    "full at its first request, is replayed from its records with every admitted unit counted "
    "2.5 % high; a refusal is early when that bucket still held the units asked plus the refill "
    "and the requests in flight the latency may hide (offered + refill rate x max(latency, rtt))"
)
CAPACITY_DERIVATION = (
    "spec Limits: each organisation's bucket holds its own limit: high = limit + 1 unit of "
    "rounding (more: it drew on another organisation's allowance), low = floor(0.975 x limit) "
    "minus the refill the latency may hide"
)
REFILL_DERIVATION = (
    "spec Limits: refill = limit/60 per s per organisation; counting high by up to 2.5 % gives "
    "low = 0.975 x limit/60. Measured between the organisation's first and last refusal: the "
    "bucket held less than each refusal asked, so the units admitted between the two decisions "
    "are the refill between them give or take those asks; each decision lies between its "
    "request's send and answer, and the range is widened by exactly that doubt"
)
IDLE_DERIVATION = (
    "spec Limits: an organisation far under its allowance is admitted whatever the others do "
    "(LIM-002); 'at once': no hold (LIM-043 holds only at the ceiling), so no answer slower than "
    "the p99 of the organisations driven near (not at) their ceiling + 0.25 s"
)


def phase_name(organisation: str, share: str) -> str:
    return f"{organisation}:{share}"


def split_phase(phase: str) -> tuple[str, str]:
    organisation, _, share = phase.partition(":")
    return organisation, share or NEAR


@dataclass(frozen=True)
class Replay:
    """What an organisation's own bucket says about its refusals of one counter."""

    refusals: int
    early: int
    first_early_s: float | None  # seconds after the organisation's first request


def _asked(record: Record) -> int:
    return record.tickets if record.endpoint == "playback" else 1


def _refused_units(record: Record) -> bool:
    return record.refused or any(item.status == 429 for item in record.items)


def early_refusals(records: Sequence[Record], limit: int, rtt: float) -> Replay:
    """Replay one organisation's bucket of one counter (records of that counter only)."""
    ordered = sorted(records, key=lambda r: r.sent)
    if not ordered:
        return Replay(0, 0, None)
    rate = limit / MINUTE_S
    start = ordered[0].sent
    span = max(ordered[-1].sent - start, 1e-9)
    offered = sum(_asked(r) for r in ordered) / span
    level, at = float(limit), start
    refusals = early = 0
    first: float | None = None
    for record in ordered:
        level = min(float(limit), level + (record.sent - at) * rate)
        at = record.sent
        if _refused_units(record):
            refusals += 1
            hidden = (offered + rate) * max(record.latency, rtt)
            if level >= _asked(record) + hidden:
                early += 1
                first = record.sent - start if first is None else first
        level -= record.admitted * (1 + COUNTING_TOLERANCE)
    return Replay(refusals, early, first)


def _capacity(
    label: str, counter: str, records: Sequence[Record], limit: int
) -> tuple[Figure, dict[str, Any]]:
    rate = limit / MINUTE_S
    est = estimate_capacity(records, rate, limit)
    figure = Figure(
        f"{label} {counter} allowance beyond the refill",
        ("LIM-002", LIMIT_ID[counter], "LIM-006", "LIM-007"),
        est.capacity,
        limit,
        min_admitted(limit) - est.slack,
        limit + 1,
        "units",
        f"latency slack {est.slack:.1f}; {est.admitted_total} admitted",
        CAPACITY_DERIVATION,
    )
    return figure, {"first_refusal_s": est.first_refusal, "admitted": est.admitted_total}


def _refill(label: str, counter: str, records: Sequence[Record], limit: int) -> Figure | None:
    """The refill between the organisation's first and last refusal of the counter."""
    refused = sorted((r for r in records if _refused_units(r)), key=lambda r: r.sent)
    if len(refused) < 2:
        return None
    bounds = refill_between(records, refused[0], refused[-1])
    if bounds.span_low < MIN_WINDOW_S:
        return None
    return refill_bounds_figure(
        f"{label} {counter} refill rate",
        ("LIM-002", REFILL_ID[counter], "LIM-006", "LIM-007"),
        bounds,
        limit / MINUTE_S,
        REFILL_DERIVATION,
    )


def _by_organisation(records: Sequence[Record]) -> dict[str, tuple[str, list[Record]]]:
    found: dict[str, tuple[str, list[Record]]] = {}
    for record in records:
        organisation, share = split_phase(record.phase)
        found.setdefault(organisation, (share, []))[1].append(record)
    return found


def _organisation_figures(
    label: str, share: str, mine: Sequence[Record], exp: Expectations, rtt: float
) -> tuple[list[Figure], dict[str, Any]]:
    figures: list[Figure] = []
    row: dict[str, Any] = {"organisation": label, "driven": share, "sent": len(mine)}
    early_total = 0
    for counter in COUNTERS:
        limit = exp.limit(counter)
        of_counter = [r for r in mine if COUNTER_OF.get(r.endpoint) == counter]
        replay = early_refusals(of_counter, limit, rtt)
        early_total += replay.early
        row[counter] = {
            "sent": len(of_counter),
            "admitted": sum(r.admitted for r in of_counter),
            "refused": replay.refusals,
            "early_refusals": replay.early,
        }
        if share == OVER and of_counter:
            figure, found = _capacity(label, counter, of_counter, limit)
            figures.append(figure)
            row[counter]["allowance_beyond_refill"] = round(figure.measured, 2)
            row[counter]["first_refusal_s"] = found["first_refusal_s"]
            refill = _refill(label, counter, of_counter, limit)
            if refill is not None:
                figures.append(refill)
                row[counter]["refill_per_s"] = round(refill.measured, 3)
    figures.append(
        Figure(
            f"{label} refusals while under its own allowance",
            ("LIM-002", "LIM-007"),
            early_total,
            0,
            0,
            0,
            "requests",
            f"{len(mine)} sent ({share})",
            OWN_ALLOWANCE_DERIVATION,
        )
    )
    row["passed"] = all(f.passed for f in figures)
    return figures, row


def _idle_figures(
    label: str, mine: Sequence[Record], reference: Sequence[Record]
) -> tuple[list[Figure], dict[str, Any]]:
    refused = sum(1 for r in mine if _refused_units(r))
    answered = [r for r in reference if r.status == 200]
    bound = percentile([r.latency for r in answered], 0.99) + AT_ONCE_S
    slow = sum(1 for r in mine if r.status != 0 and r.latency > bound)
    slowest = max((r.latency for r in mine if r.status != 0), default=0.0)
    figures = [
        within(f"{label} refused", ("LIM-002",), refused, 0, 0, 0, "requests", f"{len(mine)} sent"),
        Figure(
            f"{label} answers slower than the p99 of the near ones + {AT_ONCE_S:g} s",
            ("LIM-002",),
            slow,
            0,
            0,
            0,
            "requests",
            f"bound {bound:.3f} s, slowest {slowest:.3f} s",
            IDLE_DERIVATION,
        ),
    ]
    row = {
        "organisation": label,
        "driven": IDLE,
        "sent": len(mine),
        "refused": refused,
        "slowest_s": round(slowest, 4),
        "passed": all(f.passed for f in figures),
    }
    return figures, row


def _errors(records: Sequence[Record]) -> Figure:
    kinds = error_kinds(records)
    note = ", ".join(f"{k}: {v}" for k, v in sorted(kinds.items())) or "none"
    total = sum(kinds.values())
    return within("errors (no answer, 5xx, wrong shape)", ("LIM-029",), total, 0, 0, 0, "requests",
                  note)  # fmt: skip


def analyse_tenants(records: Sequence[Record], exp: Expectations, ctx: dict[str, Any]) -> Result:
    """Every organisation judged against its own limits; the idle one served at once."""
    rtt_info = ctx.get("rtt")
    rtt = float(rtt_info.get("max_s", 0.0)) if isinstance(rtt_info, dict) else 0.0
    groups = _by_organisation(records)
    busy = [r for _, (share, mine) in groups.items() if share != IDLE for r in mine]
    near = [r for _, (share, mine) in groups.items() if share == NEAR for r in mine]
    figures: list[Figure] = []
    rows: list[dict[str, Any]] = []
    for label in sorted(groups, key=lambda name: (groups[name][0] == IDLE, name)):
        share, mine = groups[label]
        if share == IDLE:
            found, row = _idle_figures(label, mine, near or busy)
        else:
            found, row = _organisation_figures(label, share, mine, exp, rtt)
        figures += found
        rows.append(row)
    if not any(share == IDLE for share, _ in groups.values()):
        figures.append(_share_missing("idle organisation exercised"))
    if not any(share == OVER for share, _ in groups.values()):
        figures.append(_share_missing("an organisation driven past its ceiling"))
    figures.append(_errors(records))
    start = min((r.sent for r in records), default=0.0)
    end = max((r.sent for r in records), default=start)
    bucket = float(ctx.get("bucket_s") or max(1.0, (end - start) / 5))
    return figures, {
        "organisations": rows,
        "organisations_passed": sum(1 for row in rows if row["passed"]),
        "latency_bucket_s": bucket,
        "latency": latency_table(records, start, bucket),
        "latency_per_minute": latency_table(records, start, MINUTE_S),
        "latency_overall": endpoint_percentiles(records),
        "errors": error_kinds(records),
    }


def _share_missing(name: str) -> Figure:
    return within(name, ("LIM-002",), 0, 1, 1, math.inf, "organisations", "not in the records")
