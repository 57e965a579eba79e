"""The answer at a counter's ceiling: flat 429 and its headers, clock-minute Retry-After and reset.

spec: Limits (table; Behaviour at the ceiling item 1); Common response headers (`Retry-After`,
`X-RateLimit-Limit`, `X-RateLimit-Window`); Errors > Formats (429 flat on every endpoint).
Each counter is lowered through the admin API on the dedicated roles. Readings followed
(docs/reading-of-the-spec.md): LIM-034 (Retry-After is the seconds left in the UTC minute, rounded
up, 1 to 60), LIM-027 (counter names).

Timing: every scenario runs as one burst (the `_burst` fixture): it spends a counter it lowered
itself on a dedicated organisation (put back by the admin fixture afterwards). The clock-minute
scenarios move that organisation's clock (the whole target's where the admin API keeps one clock)
to a known second and place each request by setting the clock again (never by counting on real
time); where real time still matters the round trip of the admin call widens the window.
"""

from __future__ import annotations

import math
import time

import limits_support as limits
import pytest
from expect_support import expect_equal
from json_support import at
from playback_support import body_of

from delivery_conformance.checks import ConformanceFailure, expect, expect_status, violation
from delivery_conformance.evidence import ledger
from delivery_conformance.suite.exclusive import LIMITS_ORGANISATION, OWN_CLOCK
from delivery_conformance.target.client import Response

pytestmark = [
    pytest.mark.needs("admin", "role:limits", "role:limits_videos"),
    pytest.mark.usefixtures("dedicated_counters"),
    pytest.mark.exclusive(LIMITS_ORGANISATION),
]

LOWERED = 3


def _exhaust(client, admin, fixture_id, counter: str, limit: int = LOWERED) -> Response:
    call = limits.COUNTERS[counter]
    limits.require_fixtures(fixture_id, counter)
    limits.lower(admin, call.role, counter, limit)
    admitted, refused = limits.spend(lambda: call.send(client, fixture_id), limit=limit + 5)
    expect(
        "LIM-029",
        refused is not None,
        expected=f"a 429 within {limit + 5} calls",
        actual=f"{len(admitted)} calls without one",
        response=admitted[-1] if admitted else None,
    )
    assert refused is not None
    return refused


def _int_header(response: Response, name: str) -> int | None:
    value = response.headers.get(name, "")
    return int(value) if value.isdigit() else None


@pytest.mark.exclusive(LIMITS_ORGANISATION, OWN_CLOCK)  # it moves the organisation's clock
@pytest.mark.requirement("LIM-029", "LIM-030", "LIM-031", "LIM-032", "LIM-011")
@pytest.mark.parametrize("counter", list(limits.COUNTERS))
def test_ceiling_answers_flat_429_with_rate_limit_headers(client, admin, fixture_id, counter):
    if counter in limits.CLOCK_MINUTE:
        limits.fresh_minute(admin, limits.COUNTERS[counter].role)  # never straddle a minute
    refused = _exhaust(client, admin, fixture_id, counter)
    body = body_of(refused)
    expect(
        "LIM-029",
        isinstance(body.get("error"), str)
        and body.get("error_code") == "rate_limited"
        and "code" not in body,
        expected="flat body with `error` and error_code rate_limited",
        actual={k: body.get(k) for k in ("error", "error_code", "code")},
        response=refused,
    )
    wait = _int_header(refused, "retry-after")
    expect(
        "LIM-030",
        wait is not None and wait > 0,
        expected="Retry-After: positive seconds",
        actual=refused.headers.get("retry-after"),
        response=refused,
    )
    expect(
        "LIM-031",
        _int_header(refused, "x-ratelimit-limit") == LOWERED,
        expected=f"X-RateLimit-Limit: {LOWERED} (the lowered limit)",
        actual=refused.headers.get("x-ratelimit-limit"),
        response=refused,
    )
    # One rule stated twice (Limits: every counter's window is 60 s, and the 429 says so): a
    # wrong window on the 429 is charged to both.
    window = refused.headers.get("x-ratelimit-window")
    ledger.record(("LIM-032", "LIM-011"))
    wrong = [
        violation(rid, "window not 60 s", expected="X-RateLimit-Window: 60", actual=window,
                  response=refused)
        for rid in ("LIM-032", "LIM-011")
        if window != "60"
    ]  # fmt: skip
    if wrong:
        raise ConformanceFailure(wrong)


@pytest.mark.requirement("LIM-033")
@pytest.mark.parametrize("counter", limits.CONTINUOUS)
def test_continuous_retry_after_is_the_wait_for_one_unit(client, admin, fixture_id, counter):
    """docs/reading-of-the-spec.md (LIM-033): with a lowered limit L, Retry-After is at most 60 / L
    seconds, + 1."""
    refused = _exhaust(client, admin, fixture_id, counter)
    wait = _int_header(refused, "retry-after")
    bound = math.ceil(60 / LOWERED) + 1
    expect(
        "LIM-033",
        wait is not None and 0 < wait <= bound,
        expected=f"Retry-After 1 to {bound} s (one unit back at {LOWERED} a minute)",
        actual=refused.headers.get("retry-after"),
        response=refused,
    )


def _set_second(admin, role: str, second: int) -> tuple[float, float, float]:
    """Move `role`'s clock (the target's, where it has no clock per organisation) forward to
    `second` of a coming UTC minute.

    Answers (base, spread, minute): `role`'s epoch is `base + time.monotonic()` give or
    take `spread` (half the admin call's round trip: the clock was set somewhere inside it), and
    `minute` is the epoch where that UTC minute starts.
    """
    now = admin.now(role)
    minute = (math.floor((time.time() if now is None else now) / 60) + 2) * 60
    before = time.monotonic()
    admin.clock(set_to=minute + second, role=role)
    after = time.monotonic()
    return minute + second - (before + after) / 2, (after - before) / 2, minute


@pytest.mark.exclusive(LIMITS_ORGANISATION, OWN_CLOCK)  # it moves the organisation's clock
@pytest.mark.requirement("LIM-034")
@pytest.mark.parametrize("counter", limits.CLOCK_MINUTE)
def test_clock_minute_retry_after_is_the_rest_of_the_minute(client, admin, fixture_id, counter):
    """The target's second is known within half the admin call's round trip (`_set_second`);
    the refusal was produced between its request's start and its answer's arrival."""
    limits.require_fixtures(fixture_id, counter)
    base, spread, _ = _set_second(admin, limits.COUNTERS[counter].role, 30)
    refused = _exhaust(client, admin, fixture_id, counter)
    started = base + time.monotonic() - refused.exchange.elapsed - spread
    ended = base + time.monotonic() + spread
    rest = sorted({60 - math.floor(t % 60) for t in (started - 1, ended)})
    wait = _int_header(refused, "retry-after")
    expect(
        "LIM-034",
        wait is not None and rest[0] - 1 <= wait <= rest[-1] + 1,
        expected=f"Retry-After {rest[0]} to {rest[-1]} s (the rest of the minute, +-1)",
        actual=refused.headers.get("retry-after"),
        response=refused,
    )


@pytest.mark.exclusive(LIMITS_ORGANISATION, OWN_CLOCK)  # it moves the organisation's clock
@pytest.mark.requirement("LIM-024")
@pytest.mark.parametrize("counter", limits.CLOCK_MINUTE)
def test_clock_minute_counter_refills_at_the_next_minute_and_not_before(
    client, admin, fixture_id, counter
):
    """Assumes exhausting a limit of 3 takes under 20 s: the clock is then set to second 50 of
    the same minute (not advanced, so the round trips spent meanwhile do not move the second),
    then to second 5 of the next minute, 35 s after the first request."""
    limits.require_fixtures(fixture_id, counter)
    call = limits.COUNTERS[counter]
    _, _, minute = _set_second(admin, call.role, 30)
    _exhaust(client, admin, fixture_id, counter)
    admin.clock(set_to=minute + 50, role=call.role)
    early = call.send(client, fixture_id)
    expect_status("LIM-024", early, 429, expected="still 429 before the minute ends")
    admin.clock(set_to=minute + 65, role=call.role)
    late = call.send(client, fixture_id)
    expect_status("LIM-024", late, 200, expected="200 in the next UTC minute")


@pytest.mark.requirement("LIM-009")
@pytest.mark.parametrize("counter", ["catalog", "playback", "creatives", "videos"])
def test_config_door_shows_the_lowered_limit(client, admin, fixture_id, counter):
    call = limits.COUNTERS[counter]
    admin.set_limit(call.role, counter, 40)
    response = client.get("config", role=call.role)
    doors = at(body_of(response), "rate_limits.doors")
    door = doors.get(counter) if isinstance(doors, dict) else None
    limit = door.get("limit") if isinstance(door, dict) else None
    expect_equal(
        "LIM-009", limit, 40, expected=f"rate_limits.doors.{counter}.limit 40", response=response
    )
