"""Chains of requests along the OpenAPI links, every step judged by the spec.

Schemathesis's state machine walks the links of spec/openapi.yaml: catalog -> playback (by
`episode_id`, and by `film_ref` + `episode_no`), series, playlists, creatives and videos lists ->
their detail, creative -> its file, and every list -> its next page with the `next_cursor` it
just issued. Each response is held to every harness check and to the error-table judge, which
reads a cursor issued in the run as valid input (it must get the next page, spec: Endpoints >
Paging and envelopes). Bounded (`DELIVERY_PROPERTIES_EXAMPLES` scenarios of at most
`DELIVERY_PROPERTIES_STEPS` steps) and repeatable with the run's seed.
"""

from __future__ import annotations

from typing import Any

import pytest
from properties_support import as_conformance_failure, requirements_for

from delivery_conformance.checks import ConformanceFailure
from delivery_conformance.evidence.events import NOT_EXERCISED_PREFIX
from delivery_conformance.properties import OPERATION_ROLES, PropertySettings, load_schema
from delivery_conformance.properties.links import run_links
from delivery_conformance.target.client import DeliveryClient
from delivery_conformance.target.profile import TargetProfile

# What following the links proves, beyond the per-response checks: a returned cursor passed
# back gets the next page (PAGE-001; CAT-062, CRE-033, SER-031, PLS-023, VID-009).
LINK_REQUIREMENTS = ("PAGE-001", "CAT-062", "CRE-033", "SER-031", "PLS-023", "VID-009")
WALK_REQUIREMENTS = tuple(
    dict.fromkeys(
        LINK_REQUIREMENTS + tuple(i for op in OPERATION_ROLES for i in requirements_for(op))
    )
)


@pytest.mark.requirement(*WALK_REQUIREMENTS)
@pytest.mark.needs("role:films", "role:videos")
def test_requests_along_the_links_get_the_answers_the_spec_gives(
    profile: TargetProfile,
    delivery_schema: Any,
    client: DeliveryClient,
    property_settings: PropertySettings,
    request: pytest.FixtureRequest,
) -> None:
    # Positive generation: the walk is about valid chains; invalid input is the per-operation
    # tests' job (test_operations.py).
    schema = load_schema(profile, property_settings, mode="positive")
    walk = run_links(schema, client, property_settings)
    followed = ", ".join(f"{name} x{n}" for name, n in sorted(walk.followed.items()))
    print(f"stateful: {walk.steps} steps; links followed: {followed or 'none'}")
    if walk.findings:
        found: list[Exception] = [AssertionError(title) for title in walk.findings.builtin]
        if walk.findings.violations:
            found.insert(0, ConformanceFailure(walk.findings.violations))
        error = found[0] if len(found) == 1 else ExceptionGroup("stateful run", found)
        raise as_conformance_failure(error, property_settings, request.node.nodeid)
    if not walk.followed:
        pytest.skip(NOT_EXERCISED_PREFIX + "no link could be followed (empty lists on the target)")
