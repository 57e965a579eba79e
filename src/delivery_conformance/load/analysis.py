"""Per-campaign analyses: raw records in, figures out (pure; spec: Limits).

Each function takes the records of one run, the `Expectations` (spec numbers and /config) and
returns the figures of its verdict plus details for the report. Decisions follow
docs/reading-of-the-spec.md and the `decision` fields of spec/requirements.yaml (LIM-007, LIM-033,
LIM-034, LIM-035, LIM-043).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from delivery_conformance.load.envelope import estimate_capacity, refill_slope, tickets_left_at
from delivery_conformance.load.records import Record
from delivery_conformance.load.schedule import percentile
from delivery_conformance.load.sustained import Result, analyse_mixed, analyse_soak
from delivery_conformance.load.tenants import analyse_tenants
from delivery_conformance.load.verdict import (
    Expectations,
    Figure,
    min_admitted,
    minute_figure,
    refill_figure,
    within,
)

__all__ = ["ANALYSES", "Analysis"]

Analysis = Callable[[Sequence[Record], Expectations, dict[str, Any]], Result]

# LIM-043 decision: a hold of up to 0.7 s is accepted; LIM-044: a prefetch is "at once" when
# no more than 0.1 s slower than the run's median 200.
MAX_HOLD_S = 0.7
MIN_HOLD_SEEN_S = 0.05
NOT_HELD_MARGIN_S = 0.1
# LIM-035 decision: "about 20 %" is 20 % give or take 2.5 % of the limit (the spec's own counting
# precision): the first shed must come with 17.5 % to 22.5 % of the allowance left.
SHED_WINDOW = (0.175, 0.225)
SHED_FRACTION = 0.2

CAPACITY_DERIVATION = (
    "spec Limits: never more than the limit (LIM-006), so high = limit + 1 unit of rounding; "
    "counting may run high by up to 2.5 %, so low = floor(0.975 x limit) minus the refill the "
    "latency may hide (rate x (first latency + latency at the worst point))"
)
REFILL_DERIVATION = (
    "spec Limits: refill = limit/60 per s; counting high by up to 2.5 % gives low = 0.975 x "
    "limit/60, no excess gives high = limit/60; both widened by the resolution (2 units + 2 x "
    "rate x round trip measured at the start) / window length"
)
SHED_DERIVATION = (
    "spec Limits, ceiling point 2: 'under about 20 %' read as 20 % +/- 2.5 % of the limit (the "
    "spec's counting precision); the true tickets-left interval at the first shed (widened by "
    "what was in flight and the refill meanwhile) must meet 17.5 %..22.5 %"
)
HOLD_DERIVATION = (
    "spec Limits, ceiling point 3: held up to about 0.5 s; accepted up to 0.7 s (decision LIM-043) "
    "plus the round trip measured at the start of the run"
)


def _rtt(ctx: dict[str, Any]) -> float:
    """The round trip measured at the start of the run (0 when not measured)."""
    rtt = ctx.get("rtt")
    return float(rtt.get("max_s", 0.0)) if isinstance(rtt, dict) else 0.0


def _phase(records: Sequence[Record], *names: str) -> list[Record]:
    return [r for r in records if r.phase in names]


def _share(name: str, ids: tuple[str, ...], good: int, total: int, note: str = "") -> Figure:
    """All of `total` must be good; an empty set is a failed figure (nothing was shown)."""
    measured = good / total if total else -1.0
    return within(name, ids, measured, 1.0, 1.0, 1.0, "share", note or f"{good}/{total}")


def _capacity_figure(
    name: str, ids: tuple[str, ...], records: Sequence[Record], limit: int, rate: float
) -> tuple[Figure, dict[str, Any]]:
    est = estimate_capacity(records, rate, limit)
    # The estimate can never exceed the limit on an exact server (envelope.py): one unit of
    # rounding at most. Below, the latency may hide `slack` units of refill.
    figure = Figure(
        name,
        ids,
        est.capacity,
        limit,
        min_admitted(limit) - est.slack,
        limit + 1,
        "units",
        f"beyond-refill allowance; latency slack {est.slack:.1f}",
        CAPACITY_DERIVATION,
    )
    details = {
        "first_refusal_s": est.first_refusal,
        "admitted_before_first_refusal": est.admitted_before_refusal,
        "admitted_total": est.admitted_total,
        "worst_point": None
        if est.worst is None
        else {
            "elapsed_s": round(est.worst.elapsed, 4),
            "admitted": est.worst.admitted,
            "envelope": round(est.worst.allowed, 2),
        },
    }
    return figure, details


def _refusal_shape(
    records: Sequence[Record], limit: int, ids: tuple[str, ...], label: str = ""
) -> list[Figure]:
    """LIM-029..032: every 429 is flat `rate_limited` with the three headers right."""
    refusals = [r for r in records if r.refused]
    good = sum(
        1
        for r in refusals
        if r.error_code == "rate_limited"
        and r.retry_after is not None
        and r.retry_after >= 1
        and r.limit_header == limit
        and r.window_header == 60
        and r.problem is None
    )
    return [
        _share(
            f"{label}429 body and headers",
            ids,
            good,
            len(refusals),
            f"{good}/{len(refusals)} with rate_limited, Retry-After, "
            f"X-RateLimit-Limit {limit}, X-RateLimit-Window 60",
        )
    ]


def _continuous_retry_after(records: Sequence[Record], rate: float) -> Figure:
    """LIM-033 decision: 95 % of 429s say 1 or 2 s (at rates of at least 1 unit a second)."""
    refusals = [r for r in records if r.refused and r.reason is None]
    hi = max(2, math.ceil(1 / rate) + 1) if rate > 0 else 2
    good = sum(1 for r in refusals if r.retry_after is not None and 1 <= r.retry_after <= hi)
    share = good / len(refusals) if refusals else -1.0
    return within(
        "Retry-After 1 to 2 s",
        ("LIM-033",),
        share,
        1.0,
        0.95,
        1.0,
        "share",
        f"{good}/{len(refusals)} within 1..{hi} s",
    )


def _problems(records: Sequence[Record]) -> Figure:
    bad = [r for r in records if r.problem]
    note = bad[0].problem or "" if bad else "every answer had the expected shape"
    return within("unexpected answers", ("LIM-029",), len(bad), 0, 0, 0, "requests", note)


def analyse_burst(records: Sequence[Record], exp: Expectations, ctx: dict[str, Any]) -> Result:
    """LIM-012/014/006/007: from idle, the whole allowance, then the first 429."""
    burst = [r for r in _phase(records, "burst") if r.endpoint == "playback"]
    limit, rate = exp.limit("playback"), exp.rate("playback")
    figure, details = _capacity_figure(
        "burst capacity", ("LIM-014", "LIM-006", "LIM-007"), burst, limit, rate
    )
    figures = [
        figure,
        _share("burst reached a 429", ("LIM-006",), 1 if any(r.refused for r in burst) else 0, 1),
    ]
    figures += _refusal_shape(burst, limit, ("LIM-029", "LIM-030", "LIM-031", "LIM-032"))
    figures += [_continuous_retry_after(burst, rate), _problems(records)]
    return figures, details


def _window_rate(
    records: Sequence[Record], counter: str, exp: Expectations, skip: float, rtt: float
) -> tuple[Figure, dict[str, Any]]:
    window = sorted(records, key=lambda r: r.sent)
    rate = exp.rate(counter)
    if not window:
        return within(f"{counter} refill rate", (), -1, rate, rate, rate, "units/s"), {}
    begin = window[0].sent + skip
    end = window[-1].answered
    slope, points = refill_slope(window, begin, end)
    span = max(end - begin, 1e-9)
    ids = ("LIM-013",) if counter == "playback" else ("LIM-020",)
    fig = refill_figure(
        f"{counter} refill rate",
        (*ids, "LIM-006", "LIM-007"),
        slope,
        rate,
        span,
        points,
        rtt,
        REFILL_DERIVATION,
    )
    offered = len(window) / max(window[-1].sent - window[0].sent, 1e-9)
    return fig, {
        "window_s": round(span, 3),
        "offered_per_s": round(offered, 2),
        "refused_in_window": sum(1 for r in window if r.refused),
    }


def analyse_refill(records: Sequence[Record], exp: Expectations, ctx: dict[str, Any]) -> Result:
    """LIM-013: after a drain, the slope of admitted tickets under twice the refill rate."""
    window = _phase(records, "window")
    fig, details = _window_rate(window, "playback", exp, skip=1.0, rtt=_rtt(ctx))
    saturated = _share(
        "window kept saturated (429s seen)",
        ("LIM-013",),
        1 if any(r.refused for r in window) else 0,
        1,
    )
    return [
        fig,
        saturated,
        _continuous_retry_after(window, exp.rate("playback")),
        _problems(records),
    ], details


def analyse_shedding(records: Sequence[Record], exp: Expectations, ctx: dict[str, Any]) -> Result:
    """LIM-035/036/037/038: prefetch shed near the ceiling, play issued until empty."""
    limit, rate = exp.limit("playback"), exp.rate("playback")
    run = sorted(_phase(records, "prefetch", "play"), key=lambda r: r.sent)
    prefetch, play = _phase(run, "prefetch"), _phase(run, "play")
    sheds = [r for r in prefetch if r.refused and r.reason == "prefetch_shed"]
    figures: list[Figure] = []
    details: dict[str, Any] = {}
    if sheds and run:
        low, high = tickets_left_at(run, sheds[0], run[0].sent, limit, rate)
        lo, hi = SHED_WINDOW[0] * limit, SHED_WINDOW[1] * limit
        # The true value lies in [low, high]: pass when that interval meets the accepted one.
        mid = (low + high) / 2
        half = (high - low) / 2
        figures.append(
            Figure(
                "tickets left when shedding started",
                ("LIM-035", "LIM-036"),
                mid,
                SHED_FRACTION * limit,
                lo - half,
                hi + half,
                "tickets",
                f"between {low:.1f} and {high:.1f} given latency",
                SHED_DERIVATION,
            )
        )
        details["shed_started_s"] = round(sheds[0].sent - run[0].sent, 4)
    else:
        figures.append(
            within(
                "tickets left when shedding started",
                ("LIM-035",),
                -1,
                SHED_FRACTION * limit,
                0,
                limit,
                "tickets",
                "no prefetch was shed",
            )
        )
    refused_prefetch = [r for r in prefetch if r.refused]
    figures.append(
        _share(
            "prefetch refusals carry prefetch_shed and Retry-After",
            ("LIM-035", "LIM-038"),
            sum(
                1
                for r in refused_prefetch
                if r.reason == "prefetch_shed" and r.retry_after is not None
            ),
            len(refused_prefetch),
        )
    )
    wrongly = sum(1 for r in play if r.refused and r.reason == "prefetch_shed")
    figures.append(within("play requests shed", ("LIM-037",), wrongly, 0, 0, 0, "requests"))
    cap, cap_details = _capacity_figure(
        "allowance used by prefetch then play", ("LIM-037", "LIM-006", "LIM-007"), run, limit, rate
    )
    figures += [cap, _problems(records)]
    details.update(cap_details)
    details["prefetch_admitted"] = sum(r.admitted for r in prefetch)
    details["play_admitted"] = sum(r.admitted for r in play)
    return figures, details


# spec: Errors > Playback (batch) and Behaviour at the ceiling 2: with the batch
# [prefetch, play, prefetch] and n tickets left, the play item goes first.
ADMISSION_EXPECTED: dict[int, tuple[int, ...]] = {
    2: (200, 200, 429),
    1: (429, 200, 429),
    0: (),  # whole request 429
}


def analyse_admission(records: Sequence[Record], exp: Expectations, ctx: dict[str, Any]) -> Result:
    """LIM-039/040/041: per-item outcomes with 2, 1 and 0 tickets left."""
    figures: list[Figure] = []
    details: dict[str, Any] = {}
    for left, statuses in ADMISSION_EXPECTED.items():
        batch = [r for r in records if r.phase == f"batch-{left}" and r.endpoint == "playback"]
        name = f"batch with {left} left"
        if not batch:
            figures.append(_share(name, ("LIM-039",), 0, 0, "not sent"))
            continue
        rec = batch[0]
        seen = tuple(item.status for item in rec.items)
        details[name] = {"status": rec.status, "items": list(seen)}
        if not statuses:
            ok = rec.status == 429 and not rec.items and rec.retry_after is not None
            figures.append(
                _share(
                    f"{name}: whole request 429",
                    ("LIM-041", "LIM-042"),
                    int(ok),
                    1,
                    f"status {rec.status}, items {list(seen)}",
                )
            )
            continue
        ok = rec.status == 200 and seen == statuses
        figures.append(
            _share(
                f"{name}: play item first, prefetch refused",
                ("LIM-039", "LIM-041"),
                int(ok),
                1,
                f"expected {list(statuses)}, got {rec.status} {list(seen)}",
            )
        )
        refused = [i for i in rec.items if i.status == 429]
        good = sum(
            1
            for i in refused
            if i.error_code == "rate_limited" and i.retry_after is not None and i.retry_after > 0
        )
        figures.append(
            _share(
                f"{name}: refused items carry their retry_after", ("LIM-040",), good, len(refused)
            )
        )
    figures.append(_problems(records))
    return figures, details


def analyse_hold(records: Sequence[Record], exp: Expectations, ctx: dict[str, Any]) -> Result:
    """LIM-043/044: plays on an empty bucket are held (up to ~0.5 s) and issued."""
    rtt = _rtt(ctx)
    held = _phase(records, "held")
    issued = [r for r in held if r.status == 200]
    latencies = sorted(r.latency for r in issued)
    plays = sorted(r.latency for r in records if r.intent == "play")
    figures = [
        within(
            "plays on an empty bucket issued",
            ("LIM-043",),
            len(issued),
            len(held),
            1,
            len(held),
            "requests",
            "offered at twice the refill: some are held and issued",
        ),
        Figure(
            "a play on an empty bucket waited",
            ("LIM-043",),
            latencies[-1] if latencies else -1,
            0.5,
            MIN_HOLD_SEEN_S,
            MAX_HOLD_S + rtt,
            "s",
            f"longest wait of the issued plays of the held phase; round trip {rtt:.3f} s",
            HOLD_DERIVATION,
        ),
        Figure(
            "longest answer to a play",
            ("LIM-043",),
            plays[-1] if plays else -1,
            0.5,
            0.0,
            MAX_HOLD_S + rtt,
            "s",
            "no play is held longer than the accepted hold",
            HOLD_DERIVATION,
        ),
    ]
    prefetch = _phase(records, "prefetch")
    oks = sorted(r.latency for r in records if r.status == 200 and r.phase == "drain")
    median_ok = percentile(oks, 0.5)
    at_once = sum(1 for r in prefetch if r.refused and r.latency <= median_ok + NOT_HELD_MARGIN_S)
    figures.append(_share("prefetch refused at once", ("LIM-044",), at_once, len(prefetch)))
    figures.append(_problems(records))
    return figures, {
        "held_latency_s": [round(x, 4) for x in latencies],
        "median_200_latency_s": round(median_ok, 4),
    }


def analyse_catalog(records: Sequence[Record], exp: Expectations, ctx: dict[str, Any]) -> Result:
    """LIM-019/020/021/045: the shared catalog counter's capacity and refill."""
    limit, rate = exp.limit("catalog"), exp.rate("catalog")
    burst = _phase(records, "burst")
    cap, details = _capacity_figure(
        "catalog capacity (catalog + series shared)",
        ("LIM-019", "LIM-021", "LIM-006", "LIM-007"),
        burst,
        limit,
        rate,
    )
    fig, window = _window_rate(_phase(records, "window"), "catalog", exp, skip=1.0, rtt=_rtt(ctx))
    details.update(window)
    endpoints = {r.endpoint for r in burst if r.refused}
    figures = [
        cap,
        fig,
        _share(
            "both endpoints refused at the shared ceiling",
            ("LIM-021",),
            len(endpoints),
            2,
            ", ".join(sorted(endpoints)),
        ),
    ]
    figures += _refusal_shape(records, limit, ("LIM-029", "LIM-030", "LIM-031", "LIM-032"))
    figures.append(_continuous_retry_after(records, rate))
    oks = sorted(r.latency for r in records if r.status == 200)
    slow = sum(
        1 for r in records if r.refused and r.latency > percentile(oks, 0.5) + NOT_HELD_MARGIN_S
    )
    figures.append(within("catalog refusals held", ("LIM-045",), slow, 0, 0, 0, "requests"))
    figures.append(_problems(records))
    return figures, details


MINUTE_COUNTERS = ("config", "creatives", "videos", "video")


def analyse_minute(records: Sequence[Record], exp: Expectations, ctx: dict[str, Any]) -> Result:
    """LIM-022/024/025/026/028/034: clock-minute counters, reset and Retry-After.

    `ctx["boundary"]` is the generator-clock time of the UTC minute boundary on the target.
    """
    boundary = float(ctx["boundary"])
    figures: list[Figure] = []
    ids = {"config": "LIM-028", "creatives": "LIM-022", "videos": "LIM-025", "video": "LIM-026"}
    details: dict[str, Any] = {}
    for counter in MINUTE_COUNTERS:
        fill = [r for r in records if r.phase == "fill" and r.endpoint == counter]
        after = [r for r in records if r.phase == "after" and r.endpoint == counter]
        if not fill:
            continue
        limit = exp.limit(counter)
        admitted = sum(r.admitted for r in fill)
        ids_of = (ids[counter], "LIM-006", "LIM-007")
        figures.append(minute_figure(f"{counter} admitted in one minute", ids_of, admitted, limit))
        refused = [r for r in fill if r.refused]
        good = sum(
            1
            for r in refused
            if r.retry_after is not None
            and math.ceil(boundary - r.answered) - 1
            <= r.retry_after
            <= math.ceil(boundary - r.sent) + 1
        )
        figures.append(
            _share(
                f"{counter} Retry-After is the rest of the minute", ("LIM-034",), good, len(refused)
            )
        )
        figures += [
            _share(
                f"{counter} open again at the UTC minute",
                ("LIM-024",),
                sum(1 for r in after if not r.refused),
                len(after),
            )
        ]
        figures += _refusal_shape(fill, limit, ("LIM-029", "LIM-031", "LIM-032"), f"{counter} ")
        details[counter] = {"admitted": admitted, "refused": len(refused)}
    figures.append(_problems(records))
    return figures, details


def analyse_simulated(records: Sequence[Record], exp: Expectations, ctx: dict[str, Any]) -> Result:
    """docs/reading-of-the-spec.md (SIM-006 (own limit)): 300 simulated answers a minute, apart
    from real tickets."""
    limit = exp.spec_limit("simulated")
    sim = _phase(records, "simulated")
    answered = sum(1 for r in sim if r.simulated and not r.refused)
    figures = [
        minute_figure("simulated answers in one minute", ("SIM-005", "SIM-002"), answered, limit)
    ]
    refused = [r for r in sim if r.refused]
    good = sum(
        1
        for r in refused
        if r.simulated is None
        and r.error_code == "rate_limited"
        and r.limit_header == limit
        and r.retry_after is not None
    )
    figures.append(
        _share(
            "past it: real 429 with X-RateLimit-Limit of the simulated limit",
            ("SIM-006",),
            good,
            len(refused),
        )
    )
    real = [r for r in _phase(records, "real") if r.endpoint == "playback"]
    cap, details = _capacity_figure(
        "real allowance left after the simulations",
        ("SIM-004",),
        real,
        exp.limit("playback"),
        exp.rate("playback"),
    )
    figures.append(cap)
    figures.append(_problems(records))
    return figures, {**details, "simulated_answered": answered, "simulated_refused": len(refused)}


ANALYSES: dict[str, Analysis] = {
    "mixed": analyse_mixed,
    "soak": analyse_soak,
    "burst": analyse_burst,
    "refill": analyse_refill,
    "shedding": analyse_shedding,
    "admission": analyse_admission,
    "hold": analyse_hold,
    "catalog": analyse_catalog,
    "minute": analyse_minute,
    "simulated": analyse_simulated,
    "tenants": analyse_tenants,
}
