"""Sandbox state: faults reach the limiter from the start; a reset empties the reuse book."""

from __future__ import annotations

from delivery_sandbox.playback.tickets import TicketBook
from delivery_sandbox.state.context import Settings, build_sandbox


def test_limiter_faults_given_at_start_apply_before_any_playback_request() -> None:
    sb = build_sandbox(Settings(faults=("retry_after_wrong",)), time_source=lambda: 1_800_000_000.0)
    assert sb.limits.quirks.retry_after_offset == 30


def test_limiter_faults_switched_later_apply_on_the_next_change() -> None:
    sb = build_sandbox(Settings(), time_source=lambda: 1_800_000_000.0)
    assert sb.limits.quirks.rolling_minute is False
    sb.faults.switch(["clock_minute_rolling"], [])
    sb.changed()
    assert sb.limits.quirks.rolling_minute is True
    sb.reset()
    assert sb.limits.quirks.rolling_minute is False


def test_reset_replaces_the_ticket_reuse_book() -> None:
    sb = build_sandbox(Settings(), time_source=lambda: 1_800_000_000.0)
    before = sb.tickets
    assert isinstance(before, TicketBook)
    sb.reset()
    assert sb.tickets is not before
