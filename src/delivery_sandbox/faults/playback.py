"""What the faults of playback, limits and simulated responses change.

The rows (name, requirement IDs, summary) are in `playback_fault_rows.py`, appended to the single
table of `faults.py`. `apply_faults(sb)` turns the switched-on faults into the policies the pure
cores take (admission, limit quirks, tickets, body rules); the handlers read the others directly.
"""

from __future__ import annotations

from dataclasses import dataclass

from delivery_sandbox.playback.admission import AdmissionPolicy
from delivery_sandbox.playback.limits import LimitQuirks
from delivery_sandbox.playback.request import BodyRules
from delivery_sandbox.playback.tickets import TicketPolicy
from delivery_sandbox.state.context import Sandbox

__all__ = ["Tuning", "apply_faults", "tuning"]


@dataclass(frozen=True)
class Tuning:
    body: BodyRules
    tickets: TicketPolicy
    whole_429_early: bool


def _pick(on: frozenset[str], values: dict[str, float], default: float) -> float:
    """The value of the first switched-on fault of `values`, else the default."""
    return next((v for name, v in values.items() if name in on), default)


_cache: dict[frozenset[str], tuple[Tuning, AdmissionPolicy, LimitQuirks]] = {}


def _build(on: frozenset[str]) -> tuple[Tuning, AdmissionPolicy, LimitQuirks]:
    policy = AdmissionPolicy(
        shed_fraction=_pick(on, {"shed_threshold_wrong": 0.5, "shed_at_15pc": 0.15,
                                 "shed_at_25pc": 0.25}, 0.2),
        max_hold_s=_pick(on, {"play_hold_too_long": 3.0, "play_hold_1s": 1.0}, 0.5),
        hold_play="no_play_hold" not in on,
        shed_prefetch="no_prefetch_shedding" not in on,
        play_first="prefetch_admitted_first" not in on,
    )
    quirks = LimitQuirks(
        refill_factor=_pick(on, {"bucket_refills_too_fast": 2.0, "bucket_refill_5pc_slow": 0.95,
                                 "bucket_refill_5pc_fast": 1.05}, 1.0),
        capacity_factor=_pick(on, {"bucket_holds_too_much": 1.5, "bucket_capacity_5pc_low": 0.95,
                                   "bucket_capacity_5pc_high": 1.05}, 1.0),
        minute_limit_factor=0.95 if "minute_counter_5pc_low" in on else 1.0,
        simulated_limit_factor=0.95 if "simulated_limit_285" in on else 1.0,
        config_spends_catalog="config_spends_catalog" in on,
        rolling_minute="clock_minute_rolling" in on,
        retry_after_offset=30 if "retry_after_wrong" in on else 0,
        advertised_limit_factor=2.0 if "ratelimit_limit_wrong" in on else 1.0,
    )
    tickets = TicketPolicy(
        play_token_ttl=1_200 if "play_token_ttl_short" in on else 1_800,
        manifest_ttl=1_800 if "manifest_ttl_long" in on else 900,
        reuse_ignores_device="reuse_ignores_device" in on,
        sort_subtitles="subtitles_unsorted" not in on,
    )
    body = BodyRules(
        trim_device_values="device_value_untrimmed" not in on,
        null_words_any_case="null_words_case_sensitive" not in on,
        later_items_default="play" if "batch_item_intent_play" in on else "prefetch",
    )
    return Tuning(body, tickets, "batch_whole_429_early" in on), policy, quirks


_last: list[tuple[int, frozenset[str], Tuning]] = []


def apply_faults(sb: Sandbox) -> Tuning:
    """Bring the limiter in line with the faults switched on; call after every fault switch."""
    on = sb.faults.on
    if _last and _last[0][0] == id(sb) and _last[0][1] is on:
        return _last[0][2]  # same sandbox, same switch state: nothing to do
    found = _cache.get(on)
    if found is None:
        found = _cache[on] = _build(on)
    tune, policy, quirks = found
    sb.limits.set_policy(policy)
    sb.limits.set_quirks(quirks)
    _last[:] = [(id(sb), on, tune)]
    return tune


tuning = apply_faults
