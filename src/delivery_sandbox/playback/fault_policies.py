"""What the faults of playback, limits and simulated responses change.

The rows (name, requirement IDs, summary) are in `playback_rows.py`, appended to the single
table of `registry.py`. `apply_faults(faults, limits)` turns the switched-on faults into the
policies the pure cores take (admission, limit quirks, tickets, body rules), built once per switch
state and kept on the sandbox's own `FaultSwitch` (`memo`); the handlers read the others directly.
The faults bend `Bases`, the policies before any fault: the cores' own defaults, or those of the
sandbox's legal variants (playback/variant_policies.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from delivery_sandbox.faults.coverage_faults_16 import limit_quirks_16
from delivery_sandbox.faults.names import FaultName
from delivery_sandbox.faults.registry import FaultSwitch
from delivery_sandbox.playback.admission import AdmissionPolicy
from delivery_sandbox.playback.limits import LimitQuirks, Limits
from delivery_sandbox.playback.request import BodyRules
from delivery_sandbox.playback.tickets import TicketPolicy

__all__ = ["DEFAULT_BASES", "Bases", "Tuning", "apply_faults"]


ADMISSION, QUIRKS, TICKETS, BODY = AdmissionPolicy(), LimitQuirks(), TicketPolicy(), BodyRules()


@dataclass(frozen=True, slots=True)
class Bases:
    """The policies with no fault switched on."""

    admission: AdmissionPolicy = ADMISSION
    quirks: LimitQuirks = QUIRKS
    tickets: TicketPolicy = TICKETS
    body: BodyRules = BODY
    suspended_per_item: bool = False  # a suspended organisation's batch answered per item


DEFAULT_BASES = Bases()


@dataclass(frozen=True, slots=True)
class Tuning:
    """The request-body rules, ticket policy and batch refusal the switched-on faults set."""

    body: BodyRules
    tickets: TicketPolicy
    whole_429_early: bool
    suspended_per_item: bool = False  # a legal variant (Bases)


# Fault -> (the policy field it bends, the value it sets there); the first switched-on row wins.
BENT_VALUES: dict[FaultName, tuple[str, float]] = {
    FaultName.shed_threshold_wrong: ("shed_fraction", 0.5),
    FaultName.shed_at_15pc: ("shed_fraction", 0.15),
    FaultName.shed_at_25pc: ("shed_fraction", 0.25),
    FaultName.play_hold_too_long: ("max_hold_s", 3.0),
    FaultName.play_hold_1s: ("max_hold_s", 1.0),
    FaultName.bucket_refills_too_fast: ("refill_factor", 2.0),
    FaultName.bucket_refill_5pc_slow: ("refill_factor", 0.95),
    FaultName.bucket_refill_5pc_fast: ("refill_factor", 1.05),
    FaultName.bucket_holds_too_much: ("capacity_factor", 1.5),
    FaultName.bucket_capacity_5pc_low: ("capacity_factor", 0.95),
    FaultName.bucket_capacity_5pc_high: ("capacity_factor", 1.05),
}


def _pick(on: frozenset[FaultName], field: str, default: float) -> float:
    """The value the first switched-on fault of `BENT_VALUES` sets on `field`, else the default."""
    return next((v for name, (f, v) in BENT_VALUES.items() if f == field and name in on), default)


def _build(on: frozenset[FaultName], bases: Bases) -> tuple[Tuning, AdmissionPolicy, LimitQuirks]:
    admission, quirks, tickets, body = bases.admission, bases.quirks, bases.tickets, bases.body
    policy = replace(
        admission,
        shed_fraction=_pick(on, "shed_fraction", admission.shed_fraction),
        max_hold_s=_pick(on, "max_hold_s", admission.max_hold_s),
        hold_play=admission.hold_play and FaultName.no_play_hold not in on,
        shed_prefetch=admission.shed_prefetch and FaultName.no_prefetch_shedding not in on,
        play_first=admission.play_first and FaultName.prefetch_admitted_first not in on,
    )
    bent_16 = limit_quirks_16(on)
    defaults = dict(quirks.default_limits) | dict(bent_16.pop("default_limits"))
    quirks = replace(
        quirks,
        refill_factor=_pick(on, "refill_factor", quirks.refill_factor),
        capacity_factor=_pick(on, "capacity_factor", quirks.capacity_factor),
        minute_limit_factor=0.95
        if FaultName.minute_counter_5pc_low in on
        else quirks.minute_limit_factor,
        simulated_limit_factor=0.95
        if FaultName.simulated_limit_285 in on
        else quirks.simulated_limit_factor,
        config_spends_catalog=FaultName.config_spends_catalog in on,
        rolling_minute=FaultName.clock_minute_rolling in on,
        retry_after_offset=30 if FaultName.retry_after_wrong in on else quirks.retry_after_offset,
        advertised_limit_factor=2.0
        if FaultName.ratelimit_limit_wrong in on
        else quirks.advertised_limit_factor,
        default_limits=tuple(sorted(defaults.items())),
        **bent_16,
    )
    tickets = replace(
        tickets,
        play_token_ttl=1_200 if FaultName.play_token_ttl_short in on else tickets.play_token_ttl,
        manifest_ttl=1_800 if FaultName.manifest_ttl_long in on else tickets.manifest_ttl,
        reuse_ignores_device=FaultName.reuse_ignores_device in on,
        sort_subtitles=FaultName.subtitles_unsorted not in on,
        reuse_margin=60 if FaultName.reuse_margin_one_minute in on else tickets.reuse_margin,
        reuse_extension=300 if FaultName.reuse_extends_ticket in on else tickets.reuse_extension,
    )
    body = replace(
        body,
        trim_device_values=FaultName.device_value_untrimmed not in on,
        null_words_any_case=FaultName.null_words_case_sensitive not in on,
        later_items_default="play" if FaultName.batch_item_intent_play in on else "prefetch",
        next_items_intent="play" if FaultName.next_items_play in on else "prefetch",
    )
    tune = Tuning(body, tickets, FaultName.batch_whole_429_early in on, bases.suspended_per_item)
    return tune, policy, quirks


def apply_faults(faults: FaultSwitch, limits: Limits, bases: Bases = DEFAULT_BASES) -> Tuning:
    """Bring the limiter in line with the faults switched on (over `bases`, the sandbox's own
    policies before any fault); call after every fault switch."""
    key = "playback" if bases is DEFAULT_BASES else "playback+variants"
    tune, policy, quirks = faults.memo(key, lambda on: _build(on, bases))
    if limits.policy is not policy:
        limits.set_policy(policy)
    if limits.quirks is not quirks:
        limits.set_quirks(quirks)
    tuned: Tuning = tune
    return tuned
