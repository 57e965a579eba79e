"""GET /creatives and GET /creatives/{id}: the creative record, feed order, paging, errors.

spec: Resources and their fields > Creative record; Endpoints > GET /creatives,
GET /creatives/{id}; Errors > Creatives list, single read and file.
"""

from __future__ import annotations

import itertools
import re
import uuid
from typing import Any

import listing_support as listing
import pytest
from expect_support import each_requirement, expect_equal, expect_object, expect_rows_follow
from json_support import arr, key, obj, objs, strings_in

from delivery_conformance.checks import ConformanceFailure, expect
from delivery_conformance.suite.exclusive import LIMITS_ORGANISATION
from delivery_conformance.target.client import DeliveryClient, Response

ROLE = "films"
FILMS = pytest.mark.needs(f"role:{ROLE}", "fixture:creative_id")
UNKNOWN_KEY = "svc_live_" + "Cc3" * 10 + "Cc"
ASPECTS = {"reels_9x16": "9:16", "feed_4x5": "4:5", "square_1x1": "1:1"}
SIGNED = re.compile(r"[?&](sig|signature|expires|exp|token|x-amz-signature)=", re.IGNORECASE)

RECORD_FIELDS: dict[str, tuple[str, ...]] = {
    "CRE-003": ("schema_version",),
    "CRE-004": ("creative_id",),
    "CRE-005": ("creative_code",),
    "CRE-006": ("name",),
    "CRE-007": ("status",),
    "CRE-008": ("created_at", "approved_at", "updated_at"),
    "CRE-009": ("org",),
    "CRE-010": ("created_by",),
    "CRE-011": ("film",),
    "CRE-012": ("episodes",),
    "CRE-013": ("placement",),
    "CRE-014": ("aspect",),
    "CRE-015": ("duration_ms",),
    "CRE-016": ("scenes",),
    "CRE-018": ("formula",),
    "CRE-019": ("rights",),
    "CRE-020": ("lineage",),
    "CRE-021": ("final",),
}


@pytest.fixture(scope="module")
def walked(client: DeliveryClient) -> list[listing.Page] | ConformanceFailure:
    try:
        return listing.envelope_walk(client, "creatives", ROLE, "CRE-033", limit=100)
    except ConformanceFailure as failure:  # raised again inside each test, not at setup
        return failure


def settled(walked: list[listing.Page] | ConformanceFailure) -> list[listing.Page]:
    if isinstance(walked, ConformanceFailure):
        raise walked
    return walked


def records(feed: list[listing.Page]) -> list[dict[str, Any]]:
    return [r for r in listing.items_of(feed) if isinstance(r, dict)]


def single(client: DeliveryClient, creative: str) -> tuple[Response, dict[str, Any]]:
    response = client.get(f"creatives/{creative}", role=ROLE)
    body = response.json_body()
    data = body.get("data") if isinstance(body, dict) else None
    expect_object("CRE-034", response, data, expected="200 with data")
    return response, data


@FILMS
@pytest.mark.parametrize("requirement_id", each_requirement(RECORD_FIELDS))
def test_records_follow_the_creative_table(
    walked: list[listing.Page] | ConformanceFailure, requirement_id: str
) -> None:
    feed = settled(walked)
    expect(
        requirement_id,
        bool(records(feed)),
        expected="records",
        actual="none",
        response=feed[0].response,
    )
    for page in feed:
        expect_rows_follow(
            requirement_id,
            page.items,
            "Creative",
            RECORD_FIELDS[requirement_id],
            where="data.items",
            response=page.response,
        )


def rule_failures(record: dict[str, Any]) -> dict[str, str]:
    """Rules across fields of one record, by requirement (spec: Creative record)."""
    bad: dict[str, str] = {}
    episodes = arr(record.get("episodes"))
    if len(episodes) != len(set(map(str, episodes))):
        bad["CRE-012"] = f"duplicate episodes {episodes}"
    placement, aspect = record.get("placement"), record.get("aspect")
    # Open value sets (docs/reading-of-the-spec.md (CRE-014)): the pairing holds between known
    # values only.
    known = placement in ASPECTS and aspect in ASPECTS.values()
    if known and ASPECTS[placement] != aspect:
        bad["CRE-014"] = f"{placement} with {aspect}"
    scenes = objs(record.get("scenes"))
    if any(
        listing.is_int(s.get("start_ms"))
        and listing.is_int(s.get("end_ms"))
        and s["end_ms"] < s["start_ms"]
        for s in scenes
    ):
        bad["CRE-016"] = "a scene ends before it starts"
    hook = record.get("hook")
    if (hook is None) != (not scenes):
        bad["CRE-017"] = f"hook {'null' if hook is None else 'set'} with {len(scenes)} scenes"
    elif (
        scenes
        and isinstance(hook, dict)
        and (hook.get("action"), hook.get("line"))
        != (scenes[0].get("action"), scenes[0].get("line"))
    ):
        bad["CRE-017"] = "hook differs from the first scene"
    ends = obj(record.get("rights")).get("ends_at")
    if listing.is_int(ends) and ends % 86400:
        bad["CRE-019"] = f"ends_at {ends} not at 00:00 UTC"
    final = obj(record.get("final"))
    if record.get("status") == "pushed" and final.get("ready") is not True:
        bad["CRE-021"] = "pushed without a ready final"
    url = final.get("file_url")
    if (final.get("ready") is False and url is not None) or (
        url is not None and not re.fullmatch(r"https?://[^/]+/api/c/[^/?#]+\.mp4", str(url))
    ):
        bad["CRE-022"] = "file_url set while not ready, or not {base_url}/api/c/<token>.mp4"
    target = obj(final.get("target"))
    if (target.get("width"), target.get("height"), target.get("fps"), target.get("codec")) != (
        1080,
        1920,
        30,
        "h264",
    ):
        bad["CRE-025"] = f"target {target}"
    links = [
        s
        for k, v in record.items()
        if k not in ("final", "links")
        for s in strings_in(v)
        if SIGNED.search(s)
    ]
    if links:
        bad["CRE-001"] = f"{len(links)} signed links outside final.file_url"
    return bad


RULES = [
    "CRE-001",
    "CRE-012",
    "CRE-014",
    "CRE-016",
    "CRE-017",
    "CRE-019",
    "CRE-021",
    "CRE-022",
    "CRE-025",
]


@FILMS
@pytest.mark.parametrize("requirement_id", each_requirement(RULES))
def test_records_keep_the_rules_across_fields(
    walked: list[listing.Page] | ConformanceFailure, requirement_id: str
) -> None:
    feed = settled(walked)
    for page in feed:
        for record in page.items:
            problem = rule_failures(record).get(requirement_id)
            expect(
                requirement_id,
                problem is None,
                expected="the rule holds",
                actual=f"{record.get('creative_id')}: {problem}",
                response=page.response,
            )


@FILMS
@pytest.mark.requirement("CRE-002", "CRE-004", "CRE-005", "CRE-034", "CRE-035")
def test_single_read_returns_the_listed_record(
    client: DeliveryClient,
    fixture_id: Any,
    walked: list[listing.Page] | ConformanceFailure,
    profile: Any,
) -> None:
    feed = settled(walked)
    creative = fixture_id("creative_id")
    listed = [r for r in records(feed) if r.get("creative_id") == creative]
    expect_equal("CRE-035", len(listed), 1, expected="listed once", response=feed[0].response)
    response, data = single(client, creative)
    due = f"{profile.base_url}/api/delivery/v1/creatives/{creative}"
    for record in (listed[0], data):
        expect_equal(
            "CRE-002",
            obj(record.get("links")).get("self"),
            due,
            what="links.self",
            response=response,
        )
    expect_equal("CRE-004", data.get("creative_id"), creative, response=response)
    expect_equal(
        "CRE-005", data.get("creative_code"), listed[0].get("creative_code"), response=response
    )
    body = response.json_body()
    expect(
        "CRE-034",
        isinstance(body.get("links"), dict) and body.get("code") == 0,
        expected="envelope with links",
        actual=sorted(body),
        response=response,
    )
    expect(
        "CRE-035",
        data == listed[0],
        expected="the same record as the list",
        actual=sorted(k for k in data if data.get(k) != listed[0].get(k)),
        response=response,
    )


@pytest.mark.needs(f"role:{ROLE}", "fixture:creative_other_org")
@pytest.mark.requirement("CRE-026")
def test_feed_holds_only_the_organisation_s_creatives(
    walked: list[listing.Page] | ConformanceFailure, fixture_id: Any
) -> None:
    feed = settled(walked)
    other = fixture_id("creative_other_org")
    expect(
        "CRE-026",
        other not in {key(r.get("creative_id")) for r in records(feed)},
        expected="no creative of another organisation",
        actual=other,
        response=feed[-1].response,
    )


@FILMS
@pytest.mark.requirement("CRE-027", "CRE-033", "CRE-032", "PAGE-005", "PAGE-010")
def test_small_pages_walk_the_feed_in_order(
    client: DeliveryClient, walked: list[listing.Page] | ConformanceFailure
) -> None:
    feed = settled(walked)
    pages = listing.envelope_walk(client, "creatives", ROLE, "CRE-033", limit=7)
    for page in pages:
        listing.expect_list_envelope(page, "CRE-032")
        listing.expect_next_link_ends_with_the_walk(page)
    keys = [(r.get("updated_at"), str(r.get("creative_id")).lower()) for r in records(pages)]
    bad = [
        f"{a} then {b}"
        for a, b in itertools.pairwise(keys)
        if listing.is_int(a[0]) and listing.is_int(b[0]) and b < a
    ]
    expect(
        "CRE-027",
        not bad,
        expected="updated_at then creative_id ascending",
        actual=bad[:2],
        response=pages[-1].response,
    )
    expect(
        "CRE-033",
        [k[1] for k in keys] == [str(r.get("creative_id")).lower() for r in records(feed)],
        expected="the same records as pages of 100",
        actual=f"{len(keys)} records",
        response=pages[-1].response,
    )


@FILMS
@pytest.mark.requirement("CRE-028")
def test_updated_since_is_strictly_after(
    client: DeliveryClient, walked: list[listing.Page] | ConformanceFailure
) -> None:
    feed = settled(walked)
    items = records(feed)
    pivot = listing.middle_updated_at(items)
    pages = listing.envelope_walk(
        client, "creatives", ROLE, "CRE-028", updated_since=pivot, limit=100
    )
    stale = [
        r.get("creative_id")
        for r in records(pages)
        if listing.is_int(r.get("updated_at")) and r["updated_at"] <= pivot
    ]
    newer = [r for r in items if listing.is_int(r.get("updated_at")) and r["updated_at"] > pivot]
    expect(
        "CRE-028",
        not stale and len(records(pages)) == len(newer),
        expected=f"{len(newer)} records after {pivot}",
        actual=f"{len(records(pages))} records, {len(stale)} not after",
        response=pages[0].response,
    )


@FILMS
@pytest.mark.requirement("CRE-029")
@pytest.mark.parametrize(("since", "empty"), [("0", False), ("99999999999", True)])
def test_updated_since_takes_up_to_11_digits(
    client: DeliveryClient, since: str, empty: bool
) -> None:
    """Pages may be empty while more follow: the walk goes on to the first page with items."""
    pages = listing.envelope_walk(
        client, "creatives", ROLE, "CRE-029", updated_since=since, until=listing.has_items
    )
    found = sum(len(page.items) for page in pages)
    expect(
        "CRE-029",
        (found == 0) is empty,
        expected=f"200{' and no items' if empty else ' with items'}",
        actual=f"{len(pages)} pages of 200, {found} items",
        response=pages[-1].response,
    )


# -- errors (spec: Errors > Creatives list, single read and file) ------------------------------

LIST, ONE, FILE = "creatives", "creatives/{id}", "creatives/{id}/file"
ERROR_ROWS: list[listing.ErrorRow] = [
    *[
        ("CRE-044", p, ROLE, {}, 400, listing.Code.ERROR_CODE, "unsupported_version")
        for p in (LIST, ONE, FILE)
    ],
    *[("CRE-045", p, None, {}, 401, listing.Code.ENVELOPE, 4010) for p in (LIST, ONE, FILE)],
    *[
        ("CRE-046", p, w, {}, 401, listing.Code.ENVELOPE, 4011)
        for p in (LIST, ONE, FILE)
        for w in ("revoked", "unknown")
    ],
    *[
        ("CRE-047", p, "films_metadata", {}, 403, listing.Code.ENVELOPE, 4030)
        for p in (LIST, ONE, FILE)
    ],
    *[("CRE-048", p, "suspended", {}, 403, listing.Code.ENVELOPE, 4031) for p in (LIST, ONE, FILE)],
    *[
        ("CRE-054", LIST, ROLE, {"limit": v}, 422, listing.Code.ENVELOPE, 4220)
        for v in ("0", "101", "-1", "1.5", "abc")
    ],
    ("CRE-055", LIST, ROLE, {"limit": ""}, 422, listing.Code.ENVELOPE, 4220),
    *[
        ("CRE-056", LIST, ROLE, {"updated_since": v}, 422, listing.Code.ENVELOPE, 4221)
        for v in ("abc", "-5", "1.5", "123456789012", "")
    ],
    ("CRE-057", LIST, ROLE, {"cursor": "forged"}, 422, listing.Code.ENVELOPE, 4222),
    *[
        ("CRE-060", p, "unverifiable", {}, 503, listing.Code.ENVELOPE, 5031)
        for p in (LIST, ONE, FILE)
    ],
]


test_error_rows = listing.error_rows_scenario(
    ERROR_ROWS, "CRE-062", "creative_id", UNKNOWN_KEY, needs=FILMS
)


@pytest.mark.needs(f"role:{ROLE}", "fixture:creative_other_org", "role:films_metadata")
@pytest.mark.requirement("CRE-036", "CRE-050", "CRE-051", "CRE-062")
def test_foreign_unknown_and_malformed_ids_get_the_same_404(
    client: DeliveryClient, fixture_id: Any
) -> None:
    cases = {
        "CRE-036": fixture_id("creative_other_org"),
        "CRE-050": str(uuid.uuid4()),
        "CRE-051": "not-a-uuid",
    }
    for requirement_id, creative in cases.items():
        response = client.get(f"creatives/{creative}", role=ROLE)
        listing.expect_error_row(
            requirement_id, "CRE-062", response, 404, listing.Code.ENVELOPE, 4040
        )


@pytest.mark.exclusive(LIMITS_ORGANISATION)
@pytest.mark.needs("role:limits", "admin")
@pytest.mark.requirement("CRE-058")
def test_creatives_counter_reached_is_a_flat_429(client: DeliveryClient, admin: Any) -> None:
    admin.set_limit("limits", "creatives", 2)
    answers = [client.get("creatives", role="limits", params={"limit": 1}) for _ in range(4)]
    listing.expect_counter_refused("CRE-058", answers, limit=2, flat_only=True)
