"""What the legal variants change in the playback and limits cores: their policies before any
fault (`Policies`, bent further by faults/limits.py: `bend_policies` when faults are switched on).

The numbers come from variants/counters.py (counting high, raised limits, earlier shedding, a
longer Retry-After), variants/reuse.py (no reuse, a shorter reuse window) and
variants/readings.py (the body readings and the suspended organisation's batch). The default
sandbox gets `DEFAULT_BASES`, the cores' own defaults.
"""

from __future__ import annotations

from delivery_sandbox.playback.admission import AdmissionPolicy
from delivery_sandbox.playback.limits import LIMITS, LimitQuirks
from delivery_sandbox.playback.policies import DEFAULT_BASES, Policies
from delivery_sandbox.playback.request import BodyRules
from delivery_sandbox.playback.tickets import TicketPolicy
from delivery_sandbox.variants.catalogue import VariantSet
from delivery_sandbox.variants.counters import counting
from delivery_sandbox.variants.readings import readings
from delivery_sandbox.variants.reuse import reuse

__all__ = ["variant_bases"]

SIMULATED = "simulated"  # its own limit of 300 (Behaviour at the ceiling 4), never raised here


def variant_bases(variants: VariantSet) -> Policies:
    """The cores' policies under the variants on (`DEFAULT_BASES` when none touches them)."""
    count, kept, read = counting(variants), reuse(variants), readings(variants)
    raised: tuple[tuple[str, int], ...] = ()
    if count.limit_factor != 1.0:
        raised = tuple(
            (name, round(row.limit * count.limit_factor))
            for name, row in sorted(LIMITS.items())
            if name != SIMULATED
        )
    quirks = LimitQuirks(
        counted_high=count.counted_high,
        default_limits=raised,
        continuous_retry_after=count.continuous_retry_after,
    )
    bases = Policies(
        admission=AdmissionPolicy(shed_fraction=count.shed_fraction),
        quirks=quirks,
        tickets=TicketPolicy(reuses=kept.reuses, reuse_margin=kept.margin),
        body=BodyRules(
            fields_as_values=read.device_fields_as_values,
            episode_id_uuid_only=read.episode_id_uuid_only,
        ),
        suspended_per_item=read.suspended_batch_per_item,
    )
    return DEFAULT_BASES if bases == DEFAULT_BASES else bases
