"""Sixteenth block of coverage faults (issue 13; README: Requirement proofs): what the counters
count and how the playback ceiling admits, one rule of the Limits section each.

Spec sections: Limits (per organisation; only valid keys counted; nothing refused before the
rate-limit step counted; counting error; burst and refill; ticket units; Behaviour at the
ceiling); Authentication 4 (order of checks).

Here: the rows and `limit_quirks_16` (playback/fault_policies.py: the limiter's quirks, shared
counters, early refusals, playback burst cap, catalog refill, ignored raises, default limits).
The acting hooks live in playback/coverage_faults_16.py (ARCHITECTURE: fault modules stay at
the bottom), each one call where the sandbox decides:
- `count_refused_16` (app.py, when authentication refuses): a refused request still counted;
- `hold_refusal_16` (app.py, after the answer is built): a 429 held before it is sent;
- `gate_16`, `malformed_cost_16`, `charge_refused_16`, `ticket_decision_16`
  (endpoints/playback.py): the gate before the body, the cost of a malformed body, of refused
  items, and each ticket's admission.
"""

# Fault tables hold one row a line, so their long rows are exempt from the line length.
# ruff: noqa: E501

from __future__ import annotations

from typing import Any

from delivery_sandbox.faults.names import FaultName
from delivery_sandbox.faults.rows import FaultRow, fault_rows

__all__ = ["COVERAGE_FAULT_ROWS_16", "NAMES", "limit_quirks_16"]

COVERAGE_FAULT_ROWS_16: tuple[FaultRow, ...] = fault_rows("""
limits_shared_across_orgs    | LIM-002 | one counter of each kind serves every organisation
limit_raise_ignored          | LIM-003 | a raised limit is recorded (and reported) but a live counter keeps its old limit
revoked_key_counted          | LIM-004 | a request with a revoked key is refused 401 but counted against its organisation
refused_requests_counted     | LIM-005 | a request refused before the rate-limit step (version, scope, organisation) is counted
minute_counter_two_early     | LIM-007 | clock-minute counters refuse two requests early (admit limit - 2)
playback_default_9000        | LIM-012 | the playback counter's default limit is 9,000 tickets (reported and enforced)
catalog_default_2500         | LIM-019 | the catalog counter's default limit is 2,500 requests (reported and enforced)
creatives_default_2500       | LIM-022 | the creatives counter's default limit is 2,500 requests (reported and enforced)
videos_default_2500          | LIM-025 | the videos counter's default limit is 2,500 requests (reported and enforced)
config_default_500           | LIM-028 | the config counter's default limit is 500 requests (reported and enforced)
playback_burst_capped_20     | LIM-014 | the playback bucket holds at most 20 tickets, whatever the limit
batch_costs_one_ticket       | LIM-015 | a batch costs one ticket however many it issues
malformed_body_free          | LIM-016 | a whole-request 400 of POST /playback costs nothing
refused_ticket_costs_one     | LIM-018 | every item refused before admission (403, 404, 409) costs a ticket
catalog_refill_half          | LIM-020 | the catalog bucket refills at half its rate (limit / 120 per second)
play_refused_while_shedding  | LIM-037 | once a prefetch is shed, play requests are refused too until the band is left
body_read_before_gate        | LIM-042 | with no ticket left the body is read first: a malformed one answers 400
prefetch_refusal_held        | LIM-044 | a prefetch refused at the ceiling is held 0.3 s before its 429
catalog_refusal_held         | LIM-045 | a catalog-counter 429 is held 0.3 s before it is sent
""")  # fmt: skip
NAMES = frozenset(row[0] for row in COVERAGE_FAULT_ROWS_16)

BURST_CAP = 20


def limit_quirks_16(on: frozenset[FaultName]) -> dict[str, Any]:
    """The `LimitQuirks` fields this block's faults set (fault_policies.py)."""
    return {
        "shared_counters": FaultName.limits_shared_across_orgs in on,
        "early_refusals": 2 if FaultName.minute_counter_two_early in on else 0,
        "playback_burst_cap": BURST_CAP if FaultName.playback_burst_capped_20 in on else 0,
        "catalog_refill_factor": 0.5 if FaultName.catalog_refill_half in on else 1.0,
        "raise_ignored": FaultName.limit_raise_ignored in on,
        "default_limits": _default_limits(on),
    }


def _default_limits(on: frozenset[FaultName]) -> tuple[tuple[str, int], ...]:
    """(counter, limit) of the switched-on `<counter>_default_<limit>` faults."""
    found = (name.partition("_default_") for name in sorted(on & NAMES))
    return tuple((counter, int(limit)) for counter, sep, limit in found if sep)
