"""Pure tests of the load campaign core: records, schedule, envelope, verdicts (no sockets)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from delivery_conformance.load.analysis import ANALYSES
from delivery_conformance.load.envelope import (
    bucket_envelope,
    estimate_capacity,
    refill_between,
    refill_slope,
    tickets_left_at,
)
from delivery_conformance.load.plots import write_plots
from delivery_conformance.load.records import (
    ItemOutcome,
    Record,
    merge_files,
    read_records,
    write_records,
)
from delivery_conformance.load.schedule import (
    LatenessBound,
    Plan,
    Stage,
    assess_generator,
    assess_workers,
)
from delivery_conformance.load.tenants import IDLE, NEAR, OVER, early_refusals, phase_name
from delivery_conformance.load.verdict import ExitCode, Expectations, Figure, Outcome, Verdict

T0 = 1_800_000_000.0
LAT = 0.002


def config(playback: int = 540, catalog: int = 150, **more: int) -> dict[str, object]:
    doors = {
        "playback": playback,
        "catalog": catalog,
        "creatives": 150,
        "videos": 150,
        "config": 30,
        **more,
    }
    return {
        "rate_limits": {
            "window_seconds": 60,
            "doors": {k: {"limit": v, "unit": "x"} for k, v in doors.items()},
        }
    }


EXP = Expectations.from_config(config(), scale=0.05)


def simulate_bucket(
    capacity: float,
    rate: float,
    offered: float,
    count: int,
    phase: str,
    start: float = T0,
    tickets: int = 1,
    level: float | None = None,
) -> tuple[list[Record], float]:
    """An exact token bucket answering an open-model stream of `count` requests."""
    level = capacity if level is None else level
    last = start
    out = []
    for i in range(count):
        sent = start + i / offered
        level = min(capacity, level + (sent - last) * rate)
        last = sent
        ok = level >= tickets
        if ok:
            level -= tickets
        out.append(
            Record(
                seq=i,
                phase=phase,
                endpoint="playback",
                due=sent,
                sent=sent,
                answered=sent + LAT,
                status=200 if ok else 429,
                intent="play",
                tickets=tickets,
                batch=tickets > 1,
                items=tuple(ItemOutcome(200 if ok else 429) for _ in range(tickets))
                if tickets > 1
                else (),
                error_code=None if ok else "rate_limited",
                retry_after=None if ok else 1.0,
                limit_header=None if ok else int(capacity),
                window_header=None if ok else 60,
            )
        )
    return out, level


def test_records_round_trip_through_jsonl(tmp_path: Path) -> None:
    records, _ = simulate_bucket(10, 1, 100, 15, "burst", tickets=3)
    path = tmp_path / "r.jsonl"
    assert write_records(path, records) == 15
    assert read_records(path) == records


def test_merge_orders_workers_by_send_time(tmp_path: Path) -> None:
    a = [Record(0, "p", "playback", T0, T0 + 0.2, T0 + 0.3, 200, worker="w0")]
    b = [Record(0, "p", "playback", T0, T0 + 0.1, T0 + 0.3, 200, worker="w1")]
    write_records(tmp_path / "a.jsonl", a)
    write_records(tmp_path / "b.jsonl", b)
    merged = merge_files([tmp_path / "a.jsonl", tmp_path / "b.jsonl"])
    assert [r.worker for r in merged] == ["w1", "w0"]


def test_read_records_names_the_damaged_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"seq": 1}\n')
    with pytest.raises(ValueError, match=r"bad\.jsonl:1"):
        read_records(path)


def test_batch_record_counts_issued_items_only() -> None:
    rec = Record(
        0,
        "p",
        "playback",
        T0,
        T0,
        T0,
        200,
        tickets=3,
        batch=True,
        items=(ItemOutcome(200), ItemOutcome(429), ItemOutcome(200)),
    )
    assert rec.admitted == 2


def test_open_plan_spaces_requests_by_rate_and_chains_stages() -> None:
    plan = Plan([Stage("a", 10, 5.0), Stage("b", 4, 2.0, pause=1.0)])
    assert plan.total == 14
    assert plan.slot(3).offset == pytest.approx(0.6)
    assert plan.slot(10).stage.name == "b"
    assert plan.slot(10).offset == pytest.approx(2.0 + 1.0)
    assert plan.slot(13).offset == pytest.approx(3.0 + 1.5)
    assert plan.duration == pytest.approx(5.0)


def test_plan_shares_indexes_between_workers() -> None:
    plan = Plan([Stage("a", 7, 5.0)])
    assert list(plan.indexes(0, 2)) == [0, 2, 4, 6]
    assert list(plan.indexes(1, 2)) == [1, 3, 5]


def test_generator_that_fell_behind_makes_the_run_invalid() -> None:
    late = [0.001] * 200 + [0.4]
    validity = assess_generator(late, LatenessBound(p99=0.05, worst=0.25))
    assert not validity.valid and "fell behind" in validity.reason
    assert assess_generator([0.001] * 200, LatenessBound()).valid
    assert not assess_generator([], LatenessBound()).valid


def test_invalid_generator_gives_exit_code_3_even_when_figures_pass() -> None:
    records, _ = simulate_bucket(540, 9, 900, 200, "burst", tickets=3)
    figures, _ = ANALYSES["burst"](records, EXP, {})
    behind = assess_generator([1.0], LatenessBound())
    verdict = Verdict("burst", tuple(figures), behind)
    assert verdict.outcome is Outcome.INVALID and verdict.exit_code is ExitCode.INVALID


def test_envelope_grows_with_refill() -> None:
    assert bucket_envelope(2.0, 540, 9) == 558
    assert bucket_envelope(-1.0, 540, 9) == 540


def test_capacity_estimate_subtracts_refill_during_burst() -> None:
    records, _ = simulate_bucket(540, 9, 100, 800, "burst")
    est = estimate_capacity(records, 9, 540)
    assert 539 <= est.capacity <= 541
    assert est.first_refusal is not None and est.admitted_total > 540


def test_burst_passes_on_an_exact_bucket() -> None:
    records, _ = simulate_bucket(540, 9, 900, 200, "burst", tickets=3)
    figures, _ = ANALYSES["burst"](records, EXP, {})
    verdict = Verdict("burst", tuple(figures), assess_generator([0.0], LatenessBound()))
    assert verdict.outcome is Outcome.PASS, verdict.summary()


@pytest.mark.parametrize("capacity", [600, 500])
def test_burst_fails_when_capacity_is_wrong(capacity: int) -> None:
    records, _ = simulate_bucket(capacity, 9, 900, 300, "burst", tickets=3)
    records = [
        r if r.status == 200 else r.__class__(**{**r.__dict__, "limit_header": 540})
        for r in records
    ]
    figures, _ = ANALYSES["burst"](records, EXP, {})
    failed = [f.name for f in figures if not f.passed]
    assert failed == ["burst capacity"]


def test_burst_fails_on_wrong_retry_after_or_limit_header() -> None:
    records, _ = simulate_bucket(540, 9, 900, 200, "burst", tickets=3)
    bad = [
        r.__class__(**{**r.__dict__, "retry_after": 6.0, "limit_header": 600}) if r.refused else r
        for r in records
    ]
    failed = {f.name for f in ANALYSES["burst"](bad, EXP, {})[0] if not f.passed}
    assert failed == {"429 body and headers", "Retry-After 1 to 2 s"}


def test_refill_slope_measures_the_rate() -> None:
    drain, level = simulate_bucket(540, 9, 900, 200, "drain", tickets=3)
    window, _ = simulate_bucket(540, 9, 18, 180, "window", start=T0 + 1, level=level)
    slope, points = refill_slope(window, window[0].sent + 1, window[-1].answered)
    assert slope == pytest.approx(9, rel=0.03) and points > 50
    figures, _ = ANALYSES["refill"](drain + window, EXP, {})
    assert all(f.passed for f in figures), [f.to_json() for f in figures if not f.passed]


def test_refill_fails_when_bucket_refills_too_fast() -> None:
    drain, level = simulate_bucket(540, 13.5, 900, 200, "drain", tickets=3)
    window, _ = simulate_bucket(540, 13.5, 27, 270, "window", start=T0 + 1, level=level)
    figures, _ = ANALYSES["refill"](drain + window, EXP, {})
    assert [f.name for f in figures if not f.passed] == ["playback refill rate"]


def test_tickets_left_is_bounded_by_in_flight_requests() -> None:
    records, _ = simulate_bucket(100, 0, 1000, 50, "p")
    low, high = tickets_left_at(records, records[30], T0, 100, 0)
    assert low <= 70 <= high and high - low <= 3  # the true 70 lies in the in-flight interval


def _shedding_run(threshold: float | None) -> list[Record]:
    """prefetch singles then play singles against a bucket that sheds under `threshold`."""
    cap, rate, level, out, t = 540.0, 9.0, 540.0, [], T0
    for i in range(600):
        phase = "prefetch" if i < 480 else "play"
        t += 1 / 400
        level = min(cap, level + rate / 400)
        shed = phase == "prefetch" and threshold is not None and level < threshold * cap
        ok = not shed and level >= 1
        if ok:
            level -= 1
        out.append(
            Record(
                i,
                phase,
                "playback",
                t,
                t,
                t + LAT,
                200 if ok else 429,
                intent=phase,
                error_code=None if ok else "rate_limited",
                reason="prefetch_shed" if shed else None,
                retry_after=None if ok else 1.0,
            )
        )
    return out


def test_shedding_passes_at_twenty_percent() -> None:
    figures, details = ANALYSES["shedding"](_shedding_run(0.2), EXP, {})
    assert all(f.passed for f in figures), [f.to_json() for f in figures if not f.passed]
    assert details["play_admitted"] > 100


@pytest.mark.parametrize("threshold", [None, 0.4])
def test_shedding_fails_without_shedding_or_too_early(threshold: float | None) -> None:
    figures, _ = ANALYSES["shedding"](_shedding_run(threshold), EXP, {})
    assert "tickets left when shedding started" in [f.name for f in figures if not f.passed]


def _batch(phase: str, status: int, items: tuple[int, ...]) -> Record:
    outcomes = tuple(
        ItemOutcome(
            s,
            error_code=None if s == 200 else "rate_limited",
            retry_after=None if s == 200 else 3.0,
        )
        for s in items
    )
    return Record(
        0,
        phase,
        "playback",
        T0,
        T0,
        T0 + LAT,
        status,
        tickets=3,
        batch=True,
        items=outcomes,
        retry_after=None if status == 200 else 15.0,
    )


def test_admission_passes_play_first_and_fails_prefetch_first() -> None:
    good = [
        _batch("batch-2", 200, (200, 200, 429)),
        _batch("batch-1", 200, (429, 200, 429)),
        _batch("batch-0", 429, ()),
    ]
    assert all(f.passed for f in ANALYSES["admission"](good, EXP, {})[0])
    wrong = [
        _batch("batch-2", 200, (200, 429, 200)),
        _batch("batch-1", 200, (200, 429, 429)),
        _batch("batch-0", 429, ()),
    ]
    failed = [f.name for f in ANALYSES["admission"](wrong, EXP, {})[0] if not f.passed]
    assert len(failed) == 2


def _hold_run(wait: float, issued: bool) -> list[Record]:
    drain = [
        Record(i, "drain", "playback", T0, T0, T0 + LAT, 200, intent="play") for i in range(10)
    ]
    held = [
        Record(
            i,
            "held",
            "playback",
            T0 + i,
            T0 + i,
            T0 + i + wait,
            200 if issued else 429,
            intent="play",
        )
        for i in range(4)
    ]
    pre = [
        Record(0, "prefetch", "playback", T0 + 9, T0 + 9, T0 + 9 + LAT, 429, reason="prefetch_shed")
    ]
    return drain + held + pre


def test_hold_passes_when_plays_wait_and_are_issued() -> None:
    assert all(f.passed for f in ANALYSES["hold"](_hold_run(0.3, True), EXP, {})[0])


@pytest.mark.parametrize(("wait", "issued"), [(0.001, False), (0.001, True), (1.2, True)])
def test_hold_fails_without_hold_or_with_too_long_a_hold(wait: float, issued: bool) -> None:
    figures = ANALYSES["hold"](_hold_run(wait, issued), EXP, {})[0]
    assert not all(f.passed for f in figures)


def _minute_run(limit: int, boundary: float, reset: bool, ra_offset: int = 0) -> list[Record]:
    out = []
    for i in range(limit + 5):
        t = boundary - 3 + i * 0.001
        ok = i < limit
        out.append(
            Record(
                i,
                "fill",
                "config",
                t,
                t,
                t + LAT,
                200 if ok else 429,
                error_code=None if ok else "rate_limited",
                retry_after=None if ok else 3.0 + ra_offset,
                limit_header=None if ok else limit,
                window_header=None if ok else 60,
            )
        )
    for i in range(3):
        t = boundary + 0.3 + i * 0.01
        out.append(Record(100 + i, "after", "config", t, t, t + LAT, 200 if reset else 429))
    return out


def test_minute_passes_and_fails_on_rolling_window_or_wrong_retry_after() -> None:
    b = T0 + 60
    assert all(
        f.passed for f in ANALYSES["minute"](_minute_run(30, b, True), EXP, {"boundary": b})[0]
    )
    rolling = ANALYSES["minute"](_minute_run(30, b, False), EXP, {"boundary": b})[0]
    assert [f.name for f in rolling if not f.passed] == ["config open again at the UTC minute"]
    wrong = ANALYSES["minute"](_minute_run(30, b, True, 10), EXP, {"boundary": b})[0]
    assert [f.name for f in wrong if not f.passed] == [
        "config Retry-After is the rest of the minute"
    ]


def test_config_figures_compare_advertised_with_spec_times_scale() -> None:
    assert all(f.passed for f in EXP.config_figures(["playback", "catalog"]))
    real = Expectations.from_config(config(), scale=None)
    assert not any(f.passed for f in real.config_figures(["playback"])[1:])


def test_a_door_raised_above_the_default_passes_and_is_what_the_campaign_measures() -> None:
    """Limits can be raised for an organisation (docs/reading-of-the-spec.md (LIM-012)): a door
    above the spec's default times the scale is conforming, and the campaigns judge against that
    door."""
    raised = Expectations.from_config(config(playback=1080, catalog=151), scale=0.05)
    figures = raised.config_figures(["playback", "catalog"])
    assert all(f.passed for f in figures)
    assert [f.low for f in figures[1:]] == [540, 150]
    assert (raised.limit("playback"), raised.rate("playback")) == (1080, 18)
    lowered = Expectations.from_config(config(playback=539), scale=0.05)
    passed = [f.passed for f in lowered.config_figures(["playback", "catalog"])]
    assert passed == [True, False, True]  # window, playback one below its default, catalog


def test_plots_are_written(tmp_path: Path) -> None:
    records, _ = simulate_bucket(540, 9, 900, 250, "burst", tickets=3)
    paths = write_plots(tmp_path, records, 540, 9)
    assert [p.name for p in paths] == ["admitted.png", "refusals.png", "latency.png"]
    assert all(p.stat().st_size > 1000 for p in paths)


@pytest.mark.parametrize("threshold", [0.15, 0.25])
def test_shedding_catches_an_onset_five_points_off(threshold: float) -> None:
    figures, _ = ANALYSES["shedding"](_shedding_run(threshold), EXP, {})
    onset = next(f for f in figures if f.name == "tickets left when shedding started")
    assert not onset.passed and "LIM-035" in onset.requirements and onset.derivation


@pytest.mark.parametrize(("factor", "passes"), [(1.0, True), (0.95, False), (1.05, False)])
def test_refill_resolution_separates_five_percent(factor: float, passes: bool) -> None:
    drain, level = simulate_bucket(540, 9.0 * factor, 400, 600, "drain")
    window, _ = simulate_bucket(
        540, 9.0 * factor, 18, 18 * 20, "window", start=drain[-1].sent + 1 / 400, level=level
    )
    figures, _ = ANALYSES["refill"](drain + window, EXP, {"rtt": {"max_s": 0.005}})
    rate = next(f for f in figures if f.name == "playback refill rate")
    assert rate.passed is passes, rate.to_json()


def test_together_stages_overlap_and_are_sent_in_due_order() -> None:
    plan = Plan([Stage("a", 10, 10.0), Stage("b", 4, 2.0, together=True), Stage("c", 2, 1.0)])
    assert plan.duration == 4.0 and plan.total == 16 and plan.peak_rate() == 12.0
    assert plan.slot(10).offset == 0.0 and plan.slot(14).offset == 2.0
    order = plan.order(0, 1)
    offsets = [plan.slot(i).offset for i in order]
    assert offsets == sorted(offsets) and sorted(order) == list(range(16))
    with pytest.raises(ValueError):
        Stage("closed", 1, 0.0, together=True)


def _request(endpoint: str, sent: float, status: int = 200, latency: float = LAT) -> Record:
    return Record(
        0,
        "mixed",
        endpoint,
        sent,
        sent,
        sent + latency,
        status,
        intent=None,
        error_code="rate_limited" if status == 429 else None,
    )


def _mixed(catalog_status: int) -> list[Record]:
    out = []
    for i in range(60):
        sent = T0 + i * 0.1
        out.append(_request("playback", sent))
        out.append(_request("catalog", sent, catalog_status if i > 50 else 200))
        out += [_request(name, sent) for name in ("creatives", "videos", "video")]
        if i < 32:
            out.append(_request("config", sent, 200 if i < 30 else 429))
    return out


def test_mixed_passes_when_only_config_is_refused_and_fails_when_catalog_is() -> None:
    figures, details = ANALYSES["mixed"](_mixed(200), EXP, {})
    assert all(f.passed for f in figures), [f.to_json() for f in figures if not f.passed]
    assert {"playback", "catalog", "config"} <= set(details["latency"])
    figures, _ = ANALYSES["mixed"](_mixed(429), EXP, {})
    failed = [f for f in figures if not f.passed]
    assert [f.name for f in failed] == ["catalog refusals while config is at its ceiling"]
    assert "LIM-021" in failed[0].requirements


def test_soak_reports_latency_per_bucket_and_drift_and_fails_on_a_refusal() -> None:
    records = [
        Record(i, "soak", "playback", T0 + i, T0 + i, T0 + i + 0.001 * (1 + i // 10), 200)
        for i in range(30)
    ]
    figures, details = ANALYSES["soak"](records, EXP, {"bucket_s": 10.0})
    playback = next(f for f in figures if f.name.startswith("playback"))
    assert playback.passed
    assert [row["t_s"] for row in details["latency"]["playback"]] == [0.0, 10.0, 20.0]
    assert details["drift_first_to_last"]["playback"]["p50_ms"] == pytest.approx(2.0)
    unexercised = next(f for f in figures if f.name.startswith("config"))
    assert not unexercised.passed and unexercised.note == "not exercised"
    refused = [*records[:-1], Record(99, "soak", "playback", T0, T0, T0 + LAT, 429)]
    figures, _ = ANALYSES["soak"](refused, EXP, {"bucket_s": 10.0})
    assert not next(f for f in figures if f.name.startswith("playback")).passed


def test_compare_flags_a_latency_rise_and_a_newly_failed_figure() -> None:
    from delivery_conformance.load.compare import compare_runs

    fast = [_request("playback", T0 + i, latency=0.010) for i in range(50)]
    slow = [_request("playback", T0 + i, latency=0.030) for i in range(50)]
    figure = {
        "name": "burst capacity",
        "measured": 540,
        "expected": 540,
        "passed": True,
        "unit": "units",
    }
    a = {"profile": "burst", "figures": [figure]}
    b = {"profile": "burst", "figures": [{**figure, "measured": 500, "passed": False}]}
    same = compare_runs(a, a, fast, fast)
    assert not same.regressions
    worse = compare_runs(a, b, fast, slow)
    assert {r.name for r in worse.regressions} == {
        "burst capacity",
        "playback p50",
        "playback p95",
        "playback p99",
    }
    noise = compare_runs(
        a, a, fast, [_request("playback", T0 + i, latency=0.0115) for i in range(50)]
    )
    assert not noise.regressions  # +1.5 ms is under the 2 ms floor


def test_killrate_leaves_load_only_faults_to_the_load_campaigns() -> None:
    from delivery_conformance.killrate.judge import catalogue_rows

    rows = catalogue_rows(
        [
            {"name": "a", "requirements": ["LIM-014"], "load_only": True},
            {"name": "b", "requirements": ["LIM-013"], "load_only": False},
        ]
    )
    assert [r.name for r in rows] == ["b"]


# -- tenants: every organisation judged against its own buckets (spec: Limits, LIM-002) --------


def _organisation(
    label: str, share: float, bucket_of: dict[str, float] | None = None, refill: float = 1.0
) -> list[Record]:
    """One organisation's playback (batches of 3) and catalog records over 20 s against exact
    buckets of its own (`bucket_of`: a capacity other than the limit, e.g. a pooled bucket;
    `refill`: the refill as a share of the spec's)."""
    bucket_of = bucket_of or {}
    out: list[Record] = []
    for counter, limit, tickets in (("playback", 540, 3), ("catalog", 150, 1)):
        allowance = limit + limit / 60 * 20
        count = int(share * allowance / tickets)
        capacity = bucket_of.get(counter, limit)
        rate = refill * limit / 60
        made, _ = simulate_bucket(capacity, rate, count / 20, count, label, tickets=tickets)
        out += [replace(r, endpoint=counter) for r in made]
    return out


def _tenants_run(over: dict[str, float] | None = None, refill: float = 1.0) -> list[Record]:
    over = over or {}
    records = _organisation(phase_name("tenant_01", OVER), 1.5, over, refill)
    records += _organisation(phase_name("tenant_02", NEAR), 0.9)
    idle = [_request("playback", T0 + i) for i in range(20)]
    return records + [replace(r, phase=phase_name(IDLE, IDLE)) for r in idle]


def _failed(records: list[Record]) -> list[Figure]:
    figures, _ = ANALYSES["tenants"](records, EXP, {"rtt": {"max_s": 0.002}})
    return [f for f in figures if not f.passed]


def test_tenants_pass_when_each_organisation_has_its_own_buckets() -> None:
    figures, details = ANALYSES["tenants"](_tenants_run(), EXP, {"rtt": {"max_s": 0.002}})
    assert all(f.passed for f in figures), [f.to_json() for f in figures if not f.passed]
    rows = {row["organisation"]: row for row in details["organisations"]}
    assert set(rows) == {"tenant_01", "tenant_02", "idle"}
    assert (
        rows["tenant_01"]["playback"]["refused"] > 0
        and rows["tenant_02"]["catalog"]["refused"] == 0
    )
    assert {f.name for f in figures} >= {
        "tenant_01 playback allowance beyond the refill",
        "tenant_01 catalog refill rate",
        "tenant_02 refusals while under its own allowance",
        "idle refused",
    }
    assert details["latency_per_minute"]["playback"][0]["t_s"] == 0.0


def test_tenants_fail_an_organisation_drawing_on_a_pooled_bucket() -> None:
    failed = _failed(_tenants_run({"playback": 2 * 540, "catalog": 2 * 150}))
    assert {f.name for f in failed} >= {
        "tenant_01 playback allowance beyond the refill",
        "tenant_01 catalog allowance beyond the refill",
    }
    assert all("LIM-002" in f.requirements for f in failed)


def test_tenants_refill_between_refusals_brackets_the_rate() -> None:
    over = [
        r for r in _tenants_run() if r.phase.startswith("tenant_01") and r.endpoint == "catalog"
    ]
    refused = [r for r in over if r.refused]
    bounds = refill_between(over, refused[0], refused[-1])
    assert bounds.slowest_possible <= 150 / 60 <= bounds.fastest_possible
    assert bounds.measured == pytest.approx(150 / 60, rel=0.03)


@pytest.mark.parametrize("refill", [0.8, 1.2])
def test_tenants_fail_an_organisation_refilled_at_another_rate(refill: float) -> None:
    failed = {f.name: f for f in _failed(_tenants_run(refill=refill))}
    for counter in ("playback", "catalog"):
        assert "LIM-002" in failed[f"tenant_01 {counter} refill rate"].requirements


def test_tenants_refill_holds_when_a_busy_generator_reads_answers_late() -> None:
    """A generator starved of processor for a second reads that second's answers at once: the
    server's decisions did not move, nor may the verdict (a least-squares slope of the answer
    times read the playback refill at 9.7/s on these records, over its 9.29 bound)."""
    records = _tenants_run()
    stalled = []
    for record in records:
        if record.phase.startswith("tenant_01"):
            mine = [r for r in records if r.phase == record.phase and r.endpoint == record.endpoint]
            resume = min(r.sent for r in mine if r.refused) + 2.0
            if resume - 1.0 <= record.sent < resume:
                record = replace(record, answered=resume)
        stalled.append(record)
    assert not _failed(stalled), [f.to_json() for f in _failed(stalled)]


def test_tenants_count_a_refusal_while_the_own_bucket_was_full_as_early() -> None:
    records = _tenants_run()
    starved = [
        replace(r, status=429, error_code="rate_limited")
        if r.phase.startswith("tenant_02") and r.endpoint == "catalog" and r.sent > T0 + 15
        else r
        for r in records
    ]
    failed = _failed(starved)
    assert [f.name for f in failed] == ["tenant_02 refusals while under its own allowance"]
    assert failed[0].measured > 0 and "LIM-002" in failed[0].requirements


def test_tenants_replay_allows_the_refusals_of_an_exact_bucket_and_counting_high() -> None:
    records, _ = simulate_bucket(540, 9.0, 30, 300, "x", tickets=3)
    assert early_refusals(records, 540, 0.002).early == 0
    # a server counting 2.5 % high refuses a little early: still no early refusal
    high, _ = simulate_bucket(540 / 1.025, 9.0 / 1.025, 30, 300, "x", tickets=3)
    replay = early_refusals(high, 540, 0.002)
    assert replay.refusals > 0 and replay.early == 0


@pytest.mark.parametrize("fault", ["refused", "slow"])
def test_tenants_fail_when_the_idle_organisation_is_refused_or_held(fault: str) -> None:
    records = _tenants_run()
    idle = next(i for i, r in enumerate(records) if r.phase.startswith(IDLE))
    first = records[idle]
    records[idle] = (
        replace(first, status=429, error_code="rate_limited")
        if fault == "refused"
        else replace(first, answered=first.sent + 0.5)
    )
    failed = _failed(records)
    assert (
        len(failed) == 1
        and failed[0].name.startswith("idle ")
        and failed[0].requirements == ("LIM-002",)
    )


def test_each_worker_is_judged_on_its_own_lateness_and_dropped_requests() -> None:
    bound = LatenessBound()
    kept = assess_workers({"w0": [0.001] * 100, "w1": [0.002] * 100}, {"w0": 100, "w1": 100}, bound)
    assert kept.valid and [w.dropped for w in kept.workers] == [0, 0]
    assert kept.to_json()["workers"][1]["p99_lateness_s"] == 0.002
    # one worker late enough to break the bound on its own share, not on the whole run's p99
    late = assess_workers({"w0": [0.001] * 200, "w1": [0.001] * 97 + [0.2] * 3}, {}, bound)
    assert not late.valid and "worker w1" in late.reason
    dropped = assess_workers({"w0": [0.001] * 100}, {"w0": 100, "w1": 100}, bound)
    assert not dropped.valid and dropped.to_json()["dropped"] == 100
    assert "w1" in dropped.reason and "never sent" in dropped.reason
    verdict = Verdict("tenants", (), dropped)
    assert verdict.exit_code == ExitCode.INVALID


def test_a_workers_planned_share_leaves_admin_steps_out() -> None:
    plan = Plan([Stage("reset", 1, 0, "admin", None), Stage("a", 9, 10.0)])
    assert [plan.requests_of(i, 2) for i in (0, 1)] == [4, 5]
