"""Variants at the `limits` seam: counters the spec lets differ from the table (spec: Limits).

`Counting` holds plain numbers; playback/variant_policies.py turns them into the defaults of the
limiter's pure cores (`LimitQuirks`, `AdmissionPolicy`), under any fault switched on later:

- `counting_high`: each request or ticket counts 2.5 % more ("counting is approximate on the
  high side by up to about 2.5 %"): every counter admits limit/1.025 rounded up (a small limit
  loses no whole unit), a continuous one also refills at 1/1.025 of its rate; the advertised
  limit stays;
- `raised_limits`: every organisation's default limits are 1.5 times the table's ("they can be
  raised for an organisation on request"), reported by `/config` and the 429s; a limit set
  through the admin API is still that exact value;
- `shed_earlier`: prefetches are shed with 22 % of the playback allowance left ("under about
  20 %");
- `retry_after_three`: a continuous counter's 429 says at least `Retry-After: 3` ("usually 1
  to 2 seconds"); the clock-minute counters keep the rest of the minute.

Pure: no clock, no sandbox state.
"""

from __future__ import annotations

from dataclasses import dataclass

from delivery_sandbox.variants.catalogue import VariantName, VariantSet

__all__ = ["COUNTING", "Counting", "counting"]

COUNTED_HIGH = 1.025  # "up to about 2.5 %"
RAISED = 1.5
SHED_EARLIER = 0.22  # "about 20 %"
RETRY_AFTER_CONTINUOUS = 3


@dataclass(frozen=True, slots=True)
class Counting:
    counted_high: float = 1.0  # each request or ticket counts this much
    limit_factor: float = 1.0  # every default limit times this (not the simulated counter)
    shed_fraction: float = 0.2
    continuous_retry_after: int = 0  # the least Retry-After of a continuous counter's 429


COUNTING = Counting()


def counting(variants: VariantSet) -> Counting:
    on = variants.enabled
    return Counting(
        counted_high=COUNTED_HIGH if on(VariantName.counting_high) else 1.0,
        limit_factor=RAISED if on(VariantName.raised_limits) else 1.0,
        shed_fraction=SHED_EARLIER if on(VariantName.shed_earlier) else COUNTING.shed_fraction,
        continuous_retry_after=RETRY_AFTER_CONTINUOUS if on(VariantName.retry_after_three) else 0,
    )
