"""The Retry policy table and backoff as pure functions (spec: Errors > Retry policy (client
side)). One row per case of the table and each boundary; Hypothesis for the bounds."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from delivery_client.policy import (
    BACKGROUND,
    INTERACTIVE,
    Answer,
    Decision,
    RetryProfile,
    RetryState,
    backoff_bound,
    classify,
    plan_retry,
    wait_for,
)

TABLE = [
    # (id of the row, answer, decision)
    ("CLI-007 network error", Answer(None, error="network"), Decision.BACKOFF),
    ("CLI-007 timeout", Answer(None, error="timeout"), Decision.BACKOFF),
    ("CLI-008 429 catalog", Answer(429, "rate_limited", 2.0), Decision.AFTER),
    ("CLI-008 429 envelope endpoint (flat)", Answer(429, "rate_limited"), Decision.AFTER),
    ("CLI-009 503 service_unavailable", Answer(503, "service_unavailable", 2.0), Decision.AFTER),
    ("CLI-009 503 without Retry-After", Answer(503, "service_unavailable"), Decision.AFTER),
    ("CLI-009 creatives 5030", Answer(503, "5030", 1.0), Decision.AFTER),
    ("CLI-009 creatives 5031", Answer(503, "5031", 1.0), Decision.AFTER),
    ("CLI-010 500 no code", Answer(500), Decision.BACKOFF),
    ("CLI-010 502 no code", Answer(502), Decision.BACKOFF),
    ("CLI-010 unknown 504", Answer(504), Decision.BACKOFF),
    ("CLI-010 unknown 599", Answer(599, "weird"), Decision.BACKOFF),
    ("CLI-011 503 not_ready", Answer(503, "not_ready"), Decision.NOT_NOW),
    ("CLI-012 400", Answer(400, "invalid_request"), Decision.NO_RETRY),
    ("CLI-012 401", Answer(401), Decision.NO_RETRY),
    ("CLI-012 403", Answer(403, "not_entitled"), Decision.NO_RETRY),
    ("CLI-012 404 / ERR-018 not_found", Answer(404, "not_found"), Decision.NO_RETRY),
    ("CLI-012 405 / ERR-018", Answer(405), Decision.NO_RETRY),
    ("CLI-012 409", Answer(409, "sdk_required"), Decision.NO_RETRY),
    ("CLI-012 422", Answer(422, "4220"), Decision.NO_RETRY),
    ("CLI-012 unknown 418", Answer(418, "teapot"), Decision.NO_RETRY),
    ("CLI-005 unknown code on 429", Answer(429, "brand_new", 1.0), Decision.AFTER),
    ("CLI-005 unknown code on 503", Answer(503, "brand_new"), Decision.AFTER),
    ("CLI-005 unknown code on 500", Answer(500, "brand_new"), Decision.BACKOFF),
    ("boundary 399 is no error", Answer(399), Decision.DONE),
    ("boundary 200", Answer(200), Decision.DONE),
    ("boundary 499", Answer(499), Decision.NO_RETRY),
    ("boundary 500", Answer(500), Decision.BACKOFF),
]


@pytest.mark.parametrize(("name", "answer", "decision"), TABLE, ids=[row[0] for row in TABLE])
def test_retry_table_row_cli_005_to_012_err_010_err_018(
    name: str, answer: Answer, decision: Decision
) -> None:
    assert classify(answer) is decision


def test_profiles_hold_the_spec_figures_cli_015_016_017_018_019_020_021_022() -> None:
    assert (INTERACTIVE.base, INTERACTIVE.cap, INTERACTIVE.attempt_timeout) == (0.5, 8.0, 8.0)
    assert (INTERACTIVE.max_retries, INTERACTIVE.total) == (3, 15.0)
    assert (BACKGROUND.base, BACKGROUND.cap, BACKGROUND.attempt_timeout) == (1.0, 30.0, 15.0)
    assert (BACKGROUND.max_retries, BACKGROUND.total) == (5, 120.0)


@pytest.mark.parametrize(
    ("profile", "bounds"),
    [(INTERACTIVE, [0.5, 1, 2, 4, 8, 8]), (BACKGROUND, [1, 2, 4, 8, 16, 30])],
)
def test_backoff_bound_for_attempts_0_to_5_cli_014(
    profile: RetryProfile, bounds: list[float]
) -> None:
    assert [backoff_bound(attempt, profile) for attempt in range(6)] == bounds


def test_retry_after_adds_zero_to_one_second_cli_013() -> None:
    low = wait_for(Decision.AFTER, 3, 7.0, INTERACTIVE, lambda a, b: a)
    high = wait_for(Decision.AFTER, 3, 7.0, INTERACTIVE, lambda a, b: b)
    assert (low, high) == (7.0, 8.0)


def test_retryable_503_without_retry_after_uses_backoff_cli_009() -> None:
    assert wait_for(Decision.AFTER, 2, None, BACKGROUND, lambda a, b: b) == 4.0


def test_interactive_timeout_is_never_below_five_seconds_cli_016() -> None:
    tiny = RetryProfile("tiny", 0.5, 8.0, 1.0, 3, 15.0)
    state = RetryState(tiny, started_at=0.0)
    assert state.attempt_timeout(0.0) == 5.0
    assert RetryState(INTERACTIVE, 0.0).attempt_timeout(0.0) == 8.0
    assert RetryState(INTERACTIVE, 0.0).attempt_timeout(9.0) == 6.0  # cut to the time left
    assert RetryState(INTERACTIVE, 0.0).attempt_timeout(14.0) == 5.0


def _run(profile: RetryProfile, answer: Answer, uniform=lambda a, b: b) -> tuple[int, float]:
    """Calls made and time spent for an always-`answer` server, each attempt instant."""
    now, state, calls = 0.0, RetryState(profile, 0.0), 1
    while True:
        step = plan_retry(state, answer, now, uniform)
        if not step.retry:
            return calls, now
        now += step.wait
        state, calls = step.state, calls + 1


def test_interactive_always_503_sees_4_calls_within_15_s_cli_017_018() -> None:
    calls, spent = _run(INTERACTIVE, Answer(503, "service_unavailable"))
    assert calls == 4 and spent <= 15.0
    calls, spent = _run(INTERACTIVE, Answer(503, "service_unavailable", 4.0))
    assert spent <= 15.0 - 5.0 and calls == 3  # 4 + 1 s twice; a third wait would end past 10 s


def test_background_always_503_sees_6_calls_within_2_minutes_cli_021_022() -> None:
    calls, spent = _run(BACKGROUND, Answer(503, "service_unavailable"))
    assert calls == 6 and spent <= 120.0
    calls, spent = _run(BACKGROUND, Answer(429, "rate_limited", 50.0))
    assert calls == 3 and spent <= 120.0


def test_not_now_and_no_retry_end_at_once_cli_011_cli_012() -> None:
    for answer in (Answer(503, "not_ready"), Answer(404, "not_found"), Answer(405)):
        assert _run(INTERACTIVE, answer) == (1, 0.0)


def test_a_retry_returns_a_new_state_with_its_history() -> None:
    state = RetryState(INTERACTIVE, 0.0)
    step = plan_retry(state, Answer(500), 0.0, lambda a, b: b)
    assert state.attempt == 0 and step.state.attempt == 1
    assert step.state.history == ((Answer(500), 0.5),)


profiles = st.sampled_from([INTERACTIVE, BACKGROUND])


@given(profiles, st.integers(0, 40), st.floats(0, 1), st.integers(0, 2**32 - 1))
def test_property_backoff_wait_lies_in_zero_to_bound_cli_014(profile, attempt, _, seed) -> None:
    rng = random.Random(seed)
    wait = wait_for(Decision.BACKOFF, attempt, None, profile, rng.uniform)
    assert 0.0 <= wait <= min(profile.cap, profile.base * 2**attempt)


@given(profiles, st.integers(0, 10), st.integers(0, 3600), st.integers(0, 2**32 - 1))
def test_property_retry_after_wait_lies_in_its_window_cli_013(
    profile, attempt, after, seed
) -> None:
    wait = wait_for(Decision.AFTER, attempt, float(after), profile, random.Random(seed).uniform)
    assert after <= wait <= after + 1.0


@given(
    profiles,
    st.lists(
        st.sampled_from(
            [
                Answer(500),
                Answer(429, None, 3.0),
                Answer(503, "5031"),
                Answer(None, error="timeout"),
                Answer(503, "x", 30.0),
            ]
        ),
        min_size=8,
        max_size=8,
    ),
    st.integers(0, 2**32 - 1),
)
def test_property_retries_and_total_time_stay_in_the_profile_cli_018_022(
    profile, answers, seed
) -> None:
    rng = random.Random(seed)
    now, state = 0.0, RetryState(profile, 0.0)
    for answer in answers:
        step = plan_retry(state, answer, now, rng.uniform)
        if not step.retry:
            break
        now += step.wait
        # the next attempt's timeout still ends inside the total
        state = step.state
        assert now + state.attempt_timeout(now) <= profile.total + 1e-9
        now += rng.uniform(0, 0.2)  # the attempt itself
    assert state.attempt <= profile.max_retries
    assert now <= profile.total
