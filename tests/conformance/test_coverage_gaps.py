"""Rules the suite named but could not charge on their own (issue 13): each scenario here
charges a violation to the exact rule it judges, so a server breaking only that rule fails it.

spec: Endpoints > Paging and envelopes (the success envelope: which members, `code`, `message`,
`links`).
"""

from __future__ import annotations

from typing import Any

import pytest
from envelope_support import envelope_violations

from delivery_conformance.checks import (
    ConformanceFailure,
    Violation,
    expect_status,
    ledger,
    violation,
)
from delivery_conformance.client import DeliveryClient

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


@pytest.mark.needs("role:videos", "fixture:playlist_code_not_granted")
@pytest.mark.requirement("PLS-025")
def test_a_playlist_not_granted_is_read_like_any_other(
    client: DeliveryClient, fixture_id: Any
) -> None:
    """spec: Endpoints > GET /playlists/{code}: any playlist of the library reads, granted or
    not (what it then holds is PLS-016's)."""
    code = fixture_id("playlist_code_not_granted")
    response = client.get(f"playlists/{code}", role="videos")
    expect_status("PLS-025", response, 200, expected=f"200 for the library playlist {code}")
