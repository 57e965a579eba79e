"""Rules checked alone: each scenario checks one rule on its own, so that a server breaking only
that rule fails a test naming it (and not a neighbour rule checked first).

spec: Errors > Formats (envelope code); Endpoints > GET /creatives (order); Endpoints > GET
/videos (collection order); Errors > Series and playlists (epoch seconds,
docs/reading-of-the-spec.md (CRE-029, SER-042, PLS-037): a valid `updated_since` is a non-negative
integer of 1 to 11 digits).
"""

from __future__ import annotations

import itertools
from typing import Any

import listing_support as listing
import pytest

from delivery_conformance.checks import expect, expect_status
from delivery_conformance.evidence.events import NOT_EXERCISED_PREFIX
from delivery_conformance.target.client import DeliveryClient, Response

# (method, path, role, fixture put into the path, status); each answers an envelope error.
ENVELOPE_ERRORS = [
    ("series", None, None, 401),
    ("creatives", "films_metadata", None, 403),
    ("creatives/{}", "films", "creative_other_org", 404),
    ("creatives?limit=0", "films", None, 422),
]


def _json(response: Response) -> Any:
    body = response.json_body()
    return body if isinstance(body, dict) else {}


@pytest.mark.requirement("ERR-009")
@pytest.mark.parametrize(
    ("path", "role", "fixture", "status"),
    ENVELOPE_ERRORS,
    ids=[f"{e[0].split('?')[0]}-{e[3]}" for e in ENVELOPE_ERRORS],
)
def test_envelope_error_code_starts_with_the_status(
    client: DeliveryClient,
    key: Any,
    fixture_id: Any,
    path: str,
    role: str | None,
    fixture: str | None,
    status: int,
) -> None:
    if role:
        key(role)
    response = client.get(path.format(fixture_id(fixture) if fixture else ""), role=role)
    expect_status("ERR-009", response, status, expected=f"status {status}")
    code = _json(response).get("code")
    fits = isinstance(code, int) and not isinstance(code, bool) and 1000 <= code <= 9999
    expect(
        "ERR-009",
        fits and code // 10 == status,
        expected=f"a four-digit code whose first three digits are {status}",
        actual=code,
        response=response,
    )


def _page_rows(
    client: DeliveryClient,
    rid: str,
    family: listing.Family,
    path: str,
    role: str,
    params: dict[str, str | int],
) -> tuple[Response, list[Any]]:
    """The rows of the first page with at least two (the order inside one page needs two);
    pages may be short or empty while more follow (spec: Paging and envelopes), so the walk
    follows the cursor to it. A list with no such page cannot show the order."""
    pages = listing.walk(
        client,
        family,
        path,
        role=role,
        params=params,
        requirement_id=rid,
        until=lambda page: len(page.items) > 1,
    )
    page = pages[-1]
    if len(page.items) < 2:
        pytest.skip(NOT_EXERCISED_PREFIX + f"no page of /{path} holds two items")
    return page.response, page.items


@pytest.mark.requirement("CRE-027")
@pytest.mark.needs("role:films", "fixture:creative_id")
def test_one_page_of_creatives_is_in_feed_order(client: DeliveryClient) -> None:
    """The order holds inside a single page, whatever the cursor does."""
    response, rows = _page_rows(
        client, "CRE-027", listing.Family.ENVELOPE, "creatives", "films", {"limit": 100}
    )
    keys = [(r.get("updated_at"), str(r.get("creative_id")).lower()) for r in rows]
    bad = [
        (a, b)
        for a, b in itertools.pairwise(keys)
        if not (isinstance(a[0], int) and isinstance(b[0], int) and a <= b)
    ]
    expect(
        "CRE-027",
        not bad,
        expected="updated_at then creative_id ascending in the page",
        actual=bad[:2],
        response=response,
    )


@pytest.mark.requirement("VID-007")
@pytest.mark.needs("role:videos", "fixture:collection_code")
def test_one_page_of_videos_is_in_collection_order(client: DeliveryClient, fixture_id: Any) -> None:
    params = {"collection": fixture_id("collection_code"), "limit": 200}
    response, rows = _page_rows(
        client, "VID-007", listing.Family.VIDEOS, "videos", "videos", params
    )
    positions = [r.get("position") for r in rows]
    ordered = all(
        isinstance(a, int) and isinstance(b, int) and a < b
        for a, b in itertools.pairwise(positions)
    )
    expect(
        "VID-007",
        ordered,
        expected="position increasing along the page",
        actual=positions[:10],
        response=response,
    )


BOUNDARY_SECONDS = ["0", "2147483648", "99999999999"]


def _epoch_rows(path: str, role: str, rid: str, marks: Any) -> list[Any]:
    needs = pytest.mark.needs(f"role:{role}")
    return [
        pytest.param(path, role, rid, since, marks=[marks, needs], id=f"{path}-{since}")
        for since in BOUNDARY_SECONDS
    ]


@pytest.mark.parametrize(
    ("path", "role", "rid", "since"),
    [
        *_epoch_rows("series", "films_metadata", "SER-042", pytest.mark.requirement("SER-042")),
        *_epoch_rows("playlists", "videos", "PLS-037", pytest.mark.requirement("PLS-037")),
    ],
)
def test_updated_since_takes_every_epoch_second_of_up_to_11_digits(
    client: DeliveryClient, path: str, role: str, rid: str, since: str
) -> None:
    response = client.get(path, role=role, params={"updated_since": since})
    expect(
        rid,
        response.status_code == 200,
        expected="200: epoch seconds, not an error",
        actual=f"{response.status_code} {_json(response).get('code')!r}",
        response=response,
    )
