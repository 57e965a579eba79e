"""The variant `fewer_simulations` (request seam): only the scenarios the spec names are simulated.

POST /playback: `Service-Simulate` asks for a simulated error, "for example `rate_limited`,
`service_unavailable`, `not_entitled:outside_window`, `partial_batch`"; the list of scenarios is
not shown, and an unsupported scenario is ignored (the request runs normally). The default
sandbox simulates every row of its error tables; this server simulates the four examples only
and runs every other request as if the header were absent.
"""

from __future__ import annotations

from delivery_sandbox.variants.catalogue import VariantName, VariantSet

__all__ = ["NAMED_SCENARIOS", "kept_simulation"]

NAMED_SCENARIOS = frozenset(
    {"rate_limited", "service_unavailable", "not_entitled:outside_window", "partial_batch"}
)


def kept_simulation(variants: VariantSet, scenario: str | None) -> str | None:
    """The `Service-Simulate` value the server acts on; None: ignored."""
    if scenario is None or not variants.enabled(VariantName.fewer_simulations):
        return scenario
    return scenario if scenario.strip() in NAMED_SCENARIOS else None
