"""The pure limiter and the playback admission policy, driven by a fake clock."""

from __future__ import annotations

import math

import pytest

from delivery_sandbox.playback.admission import (
    PREFETCH_SHED,
    AdmissionPolicy,
    IntentClass,
    admission_order,
    classify_intent,
    decide_ticket,
    gate_request,
    holdable,
    recorded_intent,
)
from delivery_sandbox.playback.limits import (
    LIMITS,
    ClockMinuteCounter,
    LimitQuirks,
    Limits,
    Refill,
    Refusal,
    TokenBucket,
)

T0 = 1_800_000_000.0  # a whole UTC minute (divisible by 60)
PLAY, PREFETCH = IntentClass.PLAY, IntentClass.PREFETCH
POLICY = AdmissionPolicy()


def test_table_matches_the_spec_limits() -> None:
    expected = {
        "playback": (10_800, "tickets", Refill.CONTINUOUS),
        "catalog": (3_000, "requests", Refill.CONTINUOUS),
        "creatives": (3_000, "requests", Refill.CLOCK_MINUTE),
        "videos": (3_000, "requests", Refill.CLOCK_MINUTE),
        "video": (10_800, "requests", Refill.CLOCK_MINUTE),
        "config": (600, "requests", Refill.CLOCK_MINUTE),
        "simulated": (300, "requests", Refill.CLOCK_MINUTE),
    }
    assert {n: (p.limit, p.unit, p.refill) for n, p in LIMITS.items()} == expected


# -- token bucket --------------------------------------------------------------------------------


def test_bucket_is_full_from_idle() -> None:
    bucket = TokenBucket(10_800, 180)
    assert bucket.level(T0) == 10_800
    assert all(bucket.take(1, T0) for _ in range(10_800))
    assert not bucket.take(1, T0)


def test_bucket_refills_continuously_at_its_rate() -> None:
    bucket = TokenBucket(100, 10)
    assert bucket.take(100, T0)
    assert bucket.level(T0 + 0.5) == pytest.approx(5)
    assert bucket.level(T0 + 3) == pytest.approx(30)
    assert bucket.level(T0 + 100) == 100  # never above capacity


def test_bucket_time_until_counts_the_missing_tokens() -> None:
    bucket = TokenBucket(180, 180)
    assert bucket.time_until(1, T0) == 0
    bucket.take(180, T0)
    assert bucket.time_until(1, T0) == pytest.approx(1 / 180)
    assert bucket.time_until(90, T0) == pytest.approx(0.5)
    assert bucket.time_until(181, T0) == math.inf


def test_bucket_refuses_a_take_larger_than_its_level() -> None:
    bucket = TokenBucket(3, 1)
    assert bucket.take(2, T0)
    assert not bucket.take(2, T0)
    assert bucket.level(T0) == pytest.approx(1)


# -- clock minute --------------------------------------------------------------------------------


def test_clock_minute_counter_resets_exactly_at_the_utc_minute() -> None:
    counter = ClockMinuteCounter(2)
    start = T0 + 58.5
    assert counter.take(start) and counter.take(start)
    assert not counter.take(T0 + 59.999)
    assert counter.take(T0 + 60.0)


def test_clock_minute_retry_after_is_the_rest_of_the_minute() -> None:
    counter = ClockMinuteCounter(1)
    counter.take(T0 + 15.2)
    assert counter.retry_after(T0 + 15.2) == 45
    assert counter.retry_after(T0 + 59.9) == 1
    assert counter.remaining(T0 + 59.9) == 0
    assert counter.remaining(T0 + 60) == 1


def test_rolling_counter_starts_its_window_at_the_first_request() -> None:
    counter = ClockMinuteCounter(1, rolling=True)
    assert counter.take(T0 + 30)
    assert not counter.take(T0 + 60)  # an aligned counter would have reset here
    assert counter.take(T0 + 90)


# -- registry ------------------------------------------------------------------------------------


def test_take_request_on_a_continuous_counter_answers_retry_after_in_seconds() -> None:
    limits = Limits(scale=0.01)  # catalog 30, refilled 0.5/s
    for _ in range(30):
        assert limits.take_request("org", "catalog", T0) is None
    refusal = limits.take_request("org", "catalog", T0)
    assert refusal == Refusal(retry_after=2, limit=30, window=60)


def test_take_request_on_a_clock_minute_counter_answers_the_rest_of_the_minute() -> None:
    limits = Limits()
    for _ in range(600):
        assert limits.take_request("org", "config", T0 + 10) is None
    refusal = limits.take_request("org", "config", T0 + 10.5)
    assert refusal is not None and refusal.retry_after == 50 and refusal.limit == 600
    assert limits.take_request("org", "config", T0 + 60) is None


def test_counters_are_per_organisation_and_per_counter() -> None:
    limits = Limits(scale=0.01)  # config 6
    for _ in range(6):
        assert limits.take_request("a", "config", T0) is None
    assert limits.take_request("a", "config", T0) is not None
    assert limits.take_request("b", "config", T0) is None
    assert limits.take_request("a", "creatives", T0) is None


def test_scale_multiplies_limits_rates_and_the_advertised_doors() -> None:
    limits = Limits(scale=0.05)
    assert limits.limit_of("org", "playback") == 540
    assert limits.bucket("org").rate_per_s == pytest.approx(9)
    assert limits.doors("org")["config"] == {"limit": 30, "unit": "requests"}
    assert set(limits.doors("org")) == {"catalog", "playback", "creatives", "videos", "config"}


def test_set_limit_raises_a_continuous_counter_and_its_rate() -> None:
    limits = Limits()
    limits.take_request("org", "catalog", T0)
    limits.set_limit("org", "catalog", 6_000, T0)
    bucket = limits.bucket("org", "catalog")
    assert bucket.capacity == 6_000 and bucket.rate_per_s == pytest.approx(100)
    assert bucket.level(T0) == pytest.approx(5_999)
    assert limits.doors("org")["catalog"]["limit"] == 6_000


def test_set_limit_lowers_a_clock_minute_counter() -> None:
    limits = Limits()
    limits.set_limit("org", "config", 2)
    assert limits.take_request("org", "config", T0) is None
    assert limits.take_request("org", "config", T0) is None
    refusal = limits.take_request("org", "config", T0)
    assert refusal is not None and refusal.limit == 2


def test_set_limit_rejects_unknown_counters_and_zero() -> None:
    limits = Limits()
    with pytest.raises(KeyError):
        limits.set_limit("org", "nope", 5)
    with pytest.raises(ValueError):
        limits.set_limit("org", "config", 0)


def test_reset_refills_one_organisation_and_keeps_its_raised_limits() -> None:
    limits = Limits()
    limits.set_limit("org", "config", 1)
    limits.take_request("org", "config", T0)
    limits.take_request("other", "config", T0)
    limits.reset("org")
    assert limits.take_request("org", "config", T0) is None
    assert limits.take_request("org", "config", T0) is not None
    assert limits.snapshot("other", T0)["config"]["remaining"] == 599


def test_snapshot_lists_every_counter_with_what_is_left() -> None:
    limits = Limits()
    limits.take_request("org", "video", T0)
    snap = limits.snapshot("org", T0)
    assert set(snap) == set(LIMITS)
    assert snap["video"] == {
        "limit": 10_800,
        "unit": "requests",
        "refill": "clock_minute",
        "window": 60,
        "remaining": 10_799,
    }
    assert snap["playback"]["remaining"] == 10_800


def test_quirks_change_refill_capacity_and_advertised_values() -> None:
    limits = Limits(quirks=LimitQuirks(refill_factor=2, capacity_factor=1.5))
    assert limits.bucket("org").rate_per_s == pytest.approx(360)
    assert limits.bucket("org").capacity == pytest.approx(16_200)
    limits = Limits(scale=0.01, quirks=LimitQuirks(advertised_limit_factor=2, retry_after_offset=5))
    for _ in range(6):
        limits.take_request("org", "config", T0)
    assert limits.take_request("org", "config", T0 + 30) == Refusal(retry_after=35, limit=12)


# -- playback admission --------------------------------------------------------------------------


def test_intent_missing_or_other_counts_as_play_and_is_recorded_unknown() -> None:
    assert [recorded_intent(v) for v in ("play", "prefetch", None, "PLAY", 3)] == [
        "play",
        "prefetch",
        "unknown",
        "unknown",
        "unknown",
    ]
    assert classify_intent(None) is PLAY and classify_intent("prefetch") is PREFETCH


def test_admission_order_puts_play_items_first_and_keeps_request_order() -> None:
    order = admission_order([PREFETCH, PLAY, PREFETCH, PLAY], POLICY)
    assert order == [1, 3, 0, 2]
    reversed_policy = AdmissionPolicy(play_first=False)
    assert admission_order([PLAY, PREFETCH], reversed_policy) == [1, 0]


def test_prefetch_is_shed_under_twenty_percent_left_while_play_is_issued() -> None:
    bucket = TokenBucket(100, 100 / 60)
    bucket.take(80, T0)  # 20 left: not under 20 %
    assert decide_ticket(bucket, PREFETCH, T0, 0.5, POLICY).issued  # 19 left now
    shed = decide_ticket(bucket, PREFETCH, T0, 0.5, POLICY)
    assert shed.refused and shed.reason == PREFETCH_SHED
    assert shed.retry_after == pytest.approx(2 / (100 / 60))  # until 21 tokens
    assert decide_ticket(bucket, PLAY, T0, 0.5, POLICY).issued


def test_play_is_held_when_room_comes_within_the_hold_budget() -> None:
    bucket = TokenBucket(10, 10 / 60)  # one token every 6 s
    bucket.take(10, T0)
    refused = decide_ticket(bucket, PLAY, T0 + 5.4, 0.5, POLICY)
    assert refused.refused and refused.reason is None
    assert refused.retry_after == pytest.approx(0.6)
    assert decide_ticket(bucket, PLAY, T0 + 5.7, 0.5, POLICY).hold == pytest.approx(0.3)
    assert decide_ticket(bucket, PLAY, T0 + 6.0, 0.5, POLICY).issued


def test_prefetch_is_never_held() -> None:
    bucket = TokenBucket(10, 10 / 60)
    bucket.take(10, T0)
    decision = decide_ticket(bucket, PREFETCH, T0 + 5.9, 0.5, AdmissionPolicy(shed_prefetch=False))
    assert decision.refused and decision.hold == 0


def test_hold_uses_only_what_is_left_of_the_budget() -> None:
    bucket = TokenBucket(10, 10 / 60)
    bucket.take(10, T0)
    assert decide_ticket(bucket, PLAY, T0 + 5.7, 0.2, POLICY).refused


def test_gate_answers_the_wait_for_one_ticket_and_whether_it_is_holdable() -> None:
    bucket = TokenBucket(10, 10 / 60)
    assert gate_request(bucket, T0, POLICY) is None
    bucket.take(10, T0)
    assert gate_request(bucket, T0 + 1, POLICY) == pytest.approx(5)
    assert not holdable(5, POLICY)
    wait = gate_request(bucket, T0 + 5.6, POLICY)
    assert wait == pytest.approx(0.4) and holdable(wait, POLICY)
    assert not holdable(0.4, AdmissionPolicy(hold_play=False))


def test_limits_playback_api_spends_tickets_and_refuses_with_retry_after() -> None:
    limits = Limits(scale=0.001)  # playback 11 tickets, 0.18/s
    assert limits.playback_gate("org", T0) is None
    issued = [limits.playback_ticket("org", PLAY, T0, 0.5).issued for _ in range(11)]
    assert all(issued)
    refusal = limits.playback_gate("org", T0)
    assert refusal is not None and refusal.limit == 11 and refusal.retry_after == 6
    decision = limits.playback_ticket("org", PLAY, T0, 0.5)
    assert decision.refused
    assert limits.refusal("org", "playback", decision.retry_after or 0).retry_after == 6
    assert not limits.playback_charge("org", 1, T0)
    assert limits.playback_charge("org", 1, T0 + 6)


def test_batch_refuses_prefetch_items_first() -> None:
    limits = Limits(scale=0.001)  # 11 tickets; 20 % is 2.2
    for _ in range(8):
        limits.playback_ticket("org", PLAY, T0, 0.5)
    classes = [PREFETCH, PLAY, PREFETCH]  # 3 left
    outcome = {}
    for i in admission_order(classes, limits.policy):
        outcome[i] = limits.playback_ticket("org", classes[i], T0, 0.5)
    assert outcome[1].issued  # play first: 2 left
    assert outcome[0].reason == PREFETCH_SHED and outcome[2].reason == PREFETCH_SHED
