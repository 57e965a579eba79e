"""What a key is and what it reaches: a key of the key form only, sent as `Bearer`, one space,
the key; a key acts for its whole organisation, so two keys of one organisation see one list.

spec: Authentication (key form, the header's form, a key acting for its whole organisation).
"""

from __future__ import annotations

from typing import Any

import listing_support as listing
import pytest
from timing_support import CATALOG_AGE, settle

from delivery_conformance.checks import expect, expect_status
from delivery_conformance.target.client import DeliveryClient, Response


def _key_forms(key: str) -> dict[str, str]:
    """Keys not of the form `svc_live_` + 32 characters, built from a real one."""
    secret = key.removeprefix("svc_live_")
    return {
        "wrong prefix": "svc_test_" + secret,
        "one character more": key + "x",
        "one character less": key[:-1],
        "empty": "",
    }


@pytest.mark.needs("role:films")
@pytest.mark.requirement("AUTH-005")
def test_a_key_not_of_the_key_form_is_refused(client: DeliveryClient, key: Any) -> None:
    """spec: Authentication: a key is `svc_live_` then 32 characters; a value of another form
    is no key of the organisation, even when a real key's secret sits inside it."""
    opened = {}
    for form, value in _key_forms(key("films")).items():
        # An empty key is sent as `Bearer` alone: HTTP trims the space that would follow it.
        header = f"Bearer {value}".rstrip()
        response = client.get("catalog", headers={"Authorization": header})
        if response.status_code != 401:
            opened[form] = response.status_code
    expect(
        "AUTH-005",
        not opened,
        expected="401 for each malformed key",
        actual=f"answered {opened}",
    )


@pytest.mark.needs("role:films")
@pytest.mark.requirement("AUTH-036")
@pytest.mark.parametrize("spacing", ["  ", "\t"], ids=["two spaces", "tab"])
def test_bearer_then_anything_but_one_space_is_refused(
    client: DeliveryClient, key: Any, spacing: str
) -> None:
    """spec: Authentication: the header is `Bearer`, one space, the key (decision AUTH-036)."""
    response = client.get("catalog", headers={"Authorization": f"Bearer{spacing}{key('films')}"})
    expect_status("AUTH-036", response, 401, expected=f"401 for Bearer{spacing!r}<key>")


def _listed(client: DeliveryClient, path: str, role: str, field: str) -> tuple[Response, list]:
    """The whole list in order (pages may be short or empty while more follow), by `field`."""
    pages = listing.envelope_walk(client, path, role, "GEN-012", limit=100)
    return pages[-1].response, [i.get(field) for i in listing.items_of(pages)]


# (path, the role holding only that scope, the field naming an item)
ONE_SCOPE_KEYS = (
    ("series", "films_metadata", "code"),
    ("creatives", "films_creatives", "creative_id"),
)


@pytest.mark.needs("role:films", "role:films_metadata", "role:films_creatives")
@pytest.mark.requirement("GEN-012")
@pytest.mark.parametrize(("path", "role", "field"), ONE_SCOPE_KEYS, ids=["series", "creatives"])
def test_two_keys_of_one_organisation_see_the_same_list(
    client: DeliveryClient, path: str, role: str, field: str
) -> None:
    """spec: Authentication: a key acts for its whole organisation, on every endpoint its scope
    opens (GEN-004 judges the catalog). Two keys may be served from caches of different ages
    (Limits > Freshness): the walks are compared again until they agree, for 30 s."""
    seen = settle(
        lambda: (_listed(client, path, "films", field), _listed(client, path, role, field)),
        lambda pair: bool(pair[0][1]) and pair[0][1] == pair[1][1],
        CATALOG_AGE,
    )
    (_, mine), (second, theirs) = seen.value
    expect(
        "GEN-012",
        seen.settled,
        expected=f"the same non-empty /{path} for films and {role}",
        actual=f"{len(mine)} vs {len(theirs)} items",
        response=second,
    )
