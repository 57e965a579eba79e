"""Fault rows of playback, limits and simulated responses: name, requirement IDs, summary.

Plain data, one row a line (`rows.py`), that `registry.py` appends to the sandbox's single fault
table; what each fault changes is in faults/limits.py (`bend_policies`: the policies of the
pure cores) and the step hooks of faults/playback.py, faults/limits.py and faults/catalog.py.
"""

# Fault tables hold one row a line, so their long rows are exempt from the line length.
# ruff: noqa: E501

from delivery_sandbox.faults.rows import FaultRow, fault_rows
from delivery_sandbox.faults.switch import declare

__all__ = ["PLAYBACK_FAULTS", "PLAYBACK_FAULT_ROWS"]

PLAYBACK_FAULT_ROWS: tuple[FaultRow, ...] = fault_rows("""
bucket_refills_too_fast         | LIM-013           | continuous counters refill at twice limit/60
bucket_holds_too_much           | LIM-006 LIM-014   | buckets hold 1.5 x the limit
no_prefetch_shedding            | LIM-035           | prefetch is never shed near the ceiling
shed_threshold_wrong            | LIM-036           | prefetch is shed with 50 % of the allowance left
prefetch_admitted_first         | LIM-039 PLAY-046  | batch items admitted prefetch first
no_play_hold                    | LIM-043           | a play request is never held; refused at once
play_hold_too_long              | LIM-043           | a play request is held up to 3 s
batch_whole_429_early           | LIM-041 PLAY-047  | a batch is refused whole when fewer tickets are left than items
retry_after_wrong               | LIM-033 LIM-034   | Retry-After is 30 s too long
ratelimit_limit_wrong           | LIM-031           | X-RateLimit-Limit is twice the real limit
clock_minute_rolling            | LIM-024           | clock-minute windows roll from the first request instead of the UTC minute
play_token_ttl_short            | PLAY-051 STATE-018 | play tokens expire after 20 minutes instead of 30
manifest_ttl_long               | PLAY-052 STATE-019 | manifest links expire after 30 minutes instead of 15
reuse_ignores_device            | PLAY-002 PLAY-062 | reuse returns a ticket issued for other device values
reuse_counted                   | LIM-017 PLAY-065  | a reused ticket spends a ticket of the limit
simulated_consumes_limit        | SIM-004           | simulations spend the endpoint counter
simulated_header_missing        | SIM-002           | simulated responses lack Service-Simulated
simulated_counter_not_counted   | SIM-005 SIM-006   | simulations are not limited
production_honours_simulate     | SIM-007           | production organisations get simulations
subtitles_unsorted              | PLAY-056          | ticket subtitles come in reverse lang order
device_value_untrimmed          | PLAY-015          | device values are measured before trimming
null_words_case_sensitive       | PLAY-016 PLAY-017 | null-like words are matched in lower case only
batch_item_intent_play          | PLAY-039          | later batch items default to play instead of prefetch
next_past_end_issued            | PLAY-037          | `next` past the last episode is left out, not a 404 item
sdk_required_without_protection | PLAY-089          | 409 sdk_required has no `protection`
not_entitled_error_not_reason   | PLAY-083          | 403 not_entitled has a message in `error`
batch_items_in_admission_order  | PLAY-026          | batch items[] come in admission order
""")
PLAYBACK_FAULTS = declare(
    PLAYBACK_FAULT_ROWS,
    area="POST /playback; Limits; simulated answers",
    # through the policies of the pure cores (faults/limits.py: `bend_policies`) or at a step
    # of POST /playback (faults/playback.py: `org_suspended`, `bend_items`; faults/limits.py:
    # `reuse_charge`; faults/catalog.py: `simulation_rules`)
    seam="step",
    slow=("play_hold_too_long",),  # proven only once a Freshness bound has passed
    collateral={
        "device_value_untrimmed": tuple(
            (rid, "its rows send null-like words padded with spaces: untrimmed, none is recognised")
            for rid in ("PLAY-016", "PLAY-017", "PLAY-018")
        ),
        "null_words_case_sensitive": (
            ("PLAY-018", "the drm_kek row sends a mixed-case null-like word"),
        ),
        "batch_item_intent_play": (
            ("LIM-040", "later items recorded as play are not shed as prefetch: no prefetch_shed"),
            ("PLAY-090", "the same unshed item, as Errors > Playback states the rule"),
        ),
    },
)
