"""The policies the playback and limits cores run under, as one value, and putting them in force.

`Policies` gathers the admission policy, the limiter's quirks, the ticket policy, the body rules
and two batch readings. `DEFAULT_BASES` are the cores' own defaults; a sandbox's legal variants
give other bases (playback/variant_policies.py), and the switched-on faults bend the bases at one
seam (`state/context.py: Sandbox.policies`, through faults/limits.py: `bend_policies`).
`in_force` hands the admission policy and the quirks to the limiter.
"""

from __future__ import annotations

from dataclasses import dataclass

from delivery_sandbox.playback.admission import AdmissionPolicy
from delivery_sandbox.playback.limits import LimitQuirks, Limits
from delivery_sandbox.playback.request import BodyRules
from delivery_sandbox.playback.tickets import TicketPolicy

__all__ = ["DEFAULT_BASES", "Policies", "in_force"]

ADMISSION, QUIRKS, TICKETS, BODY = AdmissionPolicy(), LimitQuirks(), TicketPolicy(), BodyRules()


@dataclass(frozen=True, slots=True)
class Policies:
    """What the cores read: admission at the ceiling, the limiter's quirks, tickets and reuse,
    the body rules, and how a batch is answered."""

    admission: AdmissionPolicy = ADMISSION
    quirks: LimitQuirks = QUIRKS
    tickets: TicketPolicy = TICKETS
    body: BodyRules = BODY
    suspended_per_item: bool = False  # a suspended organisation's batch answered per item
    whole_429_early: bool = False  # a batch refused whole when the bucket holds fewer tickets


DEFAULT_BASES = Policies()


def in_force(limits: Limits, policies: Policies) -> Policies:
    """Hand `policies` to the limiter (a no-op when it already runs under them)."""
    if limits.policy is not policies.admission:
        limits.set_policy(policies.admission)
    if limits.quirks is not policies.quirks:
        limits.set_quirks(policies.quirks)
    return policies
