"""Faults of playback, limits and simulated responses: table rows and what each one changes.

Each fault breaks one rule. The rows are added to the sandbox's single table (`faults.FAULTS`)
through `faults.register` when this module is imported; `tuning(sb)` turns the switched-on faults
into the policies the pure cores take (admission, limit quirks, tickets, body rules).
"""

from __future__ import annotations

from dataclasses import dataclass

from delivery_sandbox.admission import AdmissionPolicy
from delivery_sandbox.context import Sandbox
from delivery_sandbox.faults import FAULTS, Fault, register
from delivery_sandbox.limits import LimitQuirks
from delivery_sandbox.playback_request import BodyRules
from delivery_sandbox.tickets import TicketPolicy

__all__ = ["PLAYBACK_FAULTS", "Tuning", "apply_faults", "tuning"]

PLAYBACK_FAULTS: tuple[Fault, ...] = (
    Fault("bucket_refills_too_fast", ("LIM-013",), "continuous counters refill at twice limit/60"),
    Fault("bucket_holds_too_much", ("LIM-006", "LIM-014"), "buckets hold 1.5 x the limit"),
    Fault("no_prefetch_shedding", ("LIM-035",), "prefetch is never shed near the ceiling"),
    Fault("shed_threshold_wrong", ("LIM-036",), "prefetch is shed with 50 % of the allowance left"),
    Fault(
        "prefetch_admitted_first", ("LIM-039", "PLAY-046"), "batch items admitted prefetch first"
    ),
    Fault("no_play_hold", ("LIM-043",), "a play request is never held; refused at once"),
    Fault("play_hold_too_long", ("LIM-043",), "a play request is held up to 3 s"),
    Fault("prefetch_held", ("LIM-044",), "prefetch requests are held like play requests"),
    Fault(
        "batch_whole_429_early",
        ("LIM-041", "PLAY-047"),
        "a batch is refused whole when fewer tickets are left than items",
    ),
    Fault("retry_after_wrong", ("LIM-033", "LIM-034"), "Retry-After is 30 s too long"),
    Fault("ratelimit_limit_wrong", ("LIM-031",), "X-RateLimit-Limit is twice the real limit"),
    Fault(
        "clock_minute_rolling",
        ("LIM-024",),
        "clock-minute windows roll from the first request instead of the UTC minute",
    ),
    Fault(
        "play_token_ttl_short", ("PLAY-051",), "play tokens expire after 20 minutes instead of 30"
    ),
    Fault(
        "manifest_ttl_long", ("PLAY-052",), "manifest links expire after 30 minutes instead of 15"
    ),
    Fault(
        "reuse_ignores_device",
        ("PLAY-002", "PLAY-062"),
        "reuse returns a ticket issued for other device values",
    ),
    Fault("reuse_counted", ("LIM-017", "PLAY-065"), "a reused ticket spends a ticket of the limit"),
    Fault("simulated_consumes_limit", ("SIM-004",), "simulations spend the endpoint counter"),
    Fault("simulated_header_missing", ("SIM-002",), "simulated responses lack Service-Simulated"),
    Fault("simulated_counter_not_counted", ("SIM-005", "SIM-006"), "simulations are not limited"),
    Fault("production_honours_simulate", ("SIM-007",), "production organisations get simulations"),
    Fault("subtitles_unsorted", ("PLAY-056",), "ticket subtitles come in reverse lang order"),
    Fault("device_value_untrimmed", ("PLAY-015",), "device values are measured before trimming"),
    Fault(
        "null_words_case_sensitive",
        ("PLAY-016", "PLAY-017"),
        "null-like words are matched in lower case only",
    ),
    Fault(
        "batch_item_intent_play",
        ("PLAY-039",),
        "later batch items default to play instead of prefetch",
    ),
    Fault(
        "next_past_end_issued",
        ("PLAY-037",),
        "`next` past the last episode is left out, not a 404 item",
    ),
    Fault("sdk_required_without_protection", ("PLAY-089",), "409 sdk_required has no `protection`"),
    Fault(
        "not_entitled_error_not_reason", ("PLAY-083",), "403 not_entitled has a message in `error`"
    ),
    Fault("batch_items_in_admission_order", ("PLAY-026",), "batch items[] come in admission order"),
)

if PLAYBACK_FAULTS[0].name not in FAULTS:
    register(*PLAYBACK_FAULTS)


@dataclass(frozen=True)
class Tuning:
    body: BodyRules
    tickets: TicketPolicy
    whole_429_early: bool


_cache: dict[frozenset[str], tuple[Tuning, AdmissionPolicy, LimitQuirks]] = {}


def _build(on: frozenset[str]) -> tuple[Tuning, AdmissionPolicy, LimitQuirks]:
    policy = AdmissionPolicy(
        shed_fraction=0.5 if "shed_threshold_wrong" in on else 0.2,
        max_hold_s=3.0 if "play_hold_too_long" in on else 0.5,
        hold_play="no_play_hold" not in on,
        shed_prefetch="no_prefetch_shedding" not in on,
        play_first="prefetch_admitted_first" not in on,
        hold_prefetch="prefetch_held" in on,
    )
    quirks = LimitQuirks(
        refill_factor=2.0 if "bucket_refills_too_fast" in on else 1.0,
        capacity_factor=1.5 if "bucket_holds_too_much" in on else 1.0,
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


def apply_faults(sb: Sandbox) -> Tuning:
    """Bring the limiter in line with the faults switched on; call after every fault switch."""
    on = sb.faults.on
    found = _cache.get(on)
    if found is None:
        found = _cache[on] = _build(on)
    tune, policy, quirks = found
    sb.limits.set_policy(policy)
    sb.limits.set_quirks(quirks)
    return tune


tuning = apply_faults
