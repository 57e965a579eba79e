"""The success envelope of the lists: each member is judged by its own rule, and a list that
does not answer 200 is charged to that list's own rule, never to the envelope's.

spec: Endpoints > Paging and envelopes (the success envelope: which members, `code`, `message`,
`links`).
"""

from __future__ import annotations

import pytest
from envelope_support import envelope_violations

from delivery_conformance.checks import ConformanceFailure, Violation, violation
from delivery_conformance.evidence import ledger
from delivery_conformance.target.client import DeliveryClient

# The envelope lists: path, key role, the rule a list that does not answer 200 breaks.
ENVELOPE_LISTS = (
    ("series", "films_metadata", "SER-030"),
    ("playlists", "videos", "PLS-023"),
    ("creatives", "films", "CRE-032"),
)
ENVELOPE_RULES = ("PAGE-005", "PAGE-006", "PAGE-007", "PAGE-009")


@pytest.mark.needs("role:films", "role:films_metadata", "role:videos")
@pytest.mark.needs("fixture:series_code", "fixture:playlist_code", "fixture:creative_id")
@pytest.mark.requirement("PAGE-005", "PAGE-006", "PAGE-007", "PAGE-009")
def test_every_success_envelope_member_is_judged_by_its_own_rule(client: DeliveryClient) -> None:
    """A list that does not answer 200 is charged to that list's own rule, not to PAGE-*."""
    found: list[Violation] = []
    for path, role, list_rule in ENVELOPE_LISTS:
        response = client.get(path, role=role, params={"limit": 2})
        if response.status_code != 200:
            found.append(
                violation(
                    list_rule,
                    f"GET /{path} did not answer 200",
                    expected="200 with a list envelope",
                    actual=response.status_code,
                    response=response,
                )
            )
            continue
        ledger.record(ENVELOPE_RULES)
        found += envelope_violations(response, listing=True)
    if found:
        raise ConformanceFailure(found)
