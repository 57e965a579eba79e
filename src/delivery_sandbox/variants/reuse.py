"""Variants at the `playback` seam: ticket reuse (spec: POST /playback > Server-side reuse, "best
effort only"; Limits > Other constants, reuse window until 5 minutes before `expires_at`).

`Reuse` holds plain values; playback/variant_policies.py makes them the defaults of the ticket
policy (`TicketPolicy`):

- `no_reuse`: no ticket is ever reused; every request mints (and is counted for) a new one;
- `short_reuse_window`: a ticket is reused only while 20 minutes of it are left (so a
  15-minute manifest link never is): reuse is best effort, the 5-minute margin a bound.

Pure: no clock, no sandbox state.
"""

from __future__ import annotations

from dataclasses import dataclass

from delivery_sandbox.variants.catalogue import VariantName, VariantSet

__all__ = ["REUSE", "Reuse", "reuse"]

SHORT_WINDOW_MARGIN = 1_200  # seconds that must be left of a ticket to reuse it


@dataclass(frozen=True, slots=True)
class Reuse:
    reuses: bool = True
    margin: int = 300  # reuse until 5 minutes before expires_at


REUSE = Reuse()


def reuse(variants: VariantSet) -> Reuse:
    if variants.enabled(VariantName.no_reuse):
        return Reuse(reuses=False)
    if variants.enabled(VariantName.short_reuse_window):
        return Reuse(margin=SHORT_WINDOW_MARGIN)
    return REUSE
