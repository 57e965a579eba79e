"""GET /playlists and GET /playlists/{code}: fields, grants, clips, paging, filters, errors.

spec: Resources and their fields > Playlist list item, Playlist detail; Endpoints >
GET /playlists, GET /playlists/{code}; Errors > Series and playlists.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import listing_support as listing
import pytest
from expect_support import each_requirement, expect_equal, expect_object
from json_support import arr, at, body_of, json_for, key, obj, objs, strings_in
from timing_support import CATALOG_AGE, settle

from delivery_conformance.checks import expect, expect_status
from delivery_conformance.checks.schema import expect_schema
from delivery_conformance.evidence.events import NOT_EXERCISED_PREFIX
from delivery_conformance.target.client import DeliveryClient, Response

ROLE = "videos"
VIDEOS = pytest.mark.needs(f"role:{ROLE}", "fixture:playlist_code")
UNKNOWN_KEY = "svc_live_" + "Pp5" * 10 + "Pp"
CLIP_FORMATS = ("hls", "mp4")  # an open set (docs/reading-of-the-spec.md (PLS-015))

DETAIL_FIELDS: dict[str, tuple[str, ...]] = {
    "PLS-005": (
        "code",
        "title",
        "status",
        "description",
        "category",
        "group",
        "updated_at",
        "content_version",
        "metadata_version",
        "granted",
    ),
    "PLS-009": ("images",),
    "PLS-013": ("clips",),
}


def detail(client: DeliveryClient, code: str) -> tuple[Response, dict[str, Any]]:
    response = client.get(f"playlists/{code}", role=ROLE)
    body = json_for("PLS-026", response)
    data = body.get("data") if isinstance(body, dict) else None
    expect_object("PLS-026", response, data, expected=f"200 with data for {code}")
    return response, data


@pytest.fixture(scope="module")
def library(client: DeliveryClient) -> list[listing.Page]:
    return listing.envelope_walk(client, "playlists", ROLE, "PLS-023", limit=7)


@VIDEOS
@pytest.mark.parametrize("fixture", ["playlist_code", "playlist_code_not_granted"])
@pytest.mark.parametrize("requirement_id", each_requirement(DETAIL_FIELDS))
def test_detail_fields_follow_the_playlist_table(
    client: DeliveryClient, fixture_id: Any, requirement_id: str, fixture: str
) -> None:
    response, data = detail(client, fixture_id(fixture))
    expect_schema(
        requirement_id,
        data,
        "Playlist",
        fields=DETAIL_FIELDS[requirement_id],
        where="data",
        response=response,
    )
    if requirement_id == "PLS-005":
        expect_equal("PLS-005", data.get("status"), "active", response=response)


def _expect_granted(data: dict[str, Any], granted: bool, response: Response) -> None:
    """spec: Playlist `granted`: the JSON boolean itself, not a truthy value."""
    expect(
        "PLS-003",
        data.get("granted") is granted,
        expected=f"granted {str(granted).lower()}",
        actual=data.get("granted"),
        response=response,
    )


@VIDEOS
@pytest.mark.requirement("PLS-007", "PLS-003")
def test_granted_playlist_has_media(client: DeliveryClient, fixture_id: Any) -> None:
    response, data = detail(client, fixture_id("playlist_code"))
    _expect_granted(data, True, response)
    expect_schema("PLS-007", data, "Playlist", fields=("media",), where="data", response=response)
    expect(
        "PLS-007",
        isinstance(data.get("media"), dict),
        expected="media object",
        actual=data.get("media"),
        response=response,
    )


@pytest.mark.needs(f"role:{ROLE}", "fixture:playlist_code_not_granted")
@pytest.mark.requirement("PLS-016", "PLS-025", "PLS-003")
def test_ungranted_playlist_reads_without_media_or_videos(
    client: DeliveryClient, fixture_id: Any
) -> None:
    response, data = detail(client, fixture_id("playlist_code_not_granted"))
    _expect_granted(data, False, response)
    expect(
        "PLS-016",
        data.get("media") is None,
        expected="media null",
        actual=type(data.get("media")).__name__,
        response=response,
    )
    bad = [
        c.get("position")
        for c in objs(data.get("clips"))
        if c.get("ready") is not False or c.get("vid") is not None
    ]
    expect(
        "PLS-016",
        not bad,
        expected="every clip not ready and without vid",
        actual=f"clips at {bad[:5]}",
        response=response,
    )


@VIDEOS
@pytest.mark.parametrize("fixture", ["playlist_code", "playlist_code_not_granted"])
@pytest.mark.requirement("PLS-010", "PLS-011")
def test_only_cdn_images_carry_a_link_valid_one_hour(
    client: DeliveryClient, fixture_id: Any, fixture: str
) -> None:
    response, data = detail(client, fixture_id(fixture))
    body = response.json_body()
    now = body.get("server_time") if isinstance(body, dict) else None
    images = objs(data.get("images"))
    images += [c["poster"] for c in objs(data.get("clips")) if isinstance(c.get("poster"), dict)]
    for image in images:
        url, source = image.get("url"), image.get("source")
        expect(
            "PLS-010",
            url is None or source == "wandura_cdn",
            expected="url only with source wandura_cdn",
            actual=source,
            response=response,
        )
        if url is not None and listing.is_int(now):
            expires = image.get("expires_at")
            expect(
                "PLS-011",
                listing.is_int(expires) and abs(expires - (now + 3600)) <= 5,
                expected=f"expires_at {now + 3600} (+-5)",
                actual=expires,
                response=response,
            )


@VIDEOS
@pytest.mark.requirement("PLS-012", "PLS-015")
def test_clips_are_in_order_and_formats_follow_duration(
    client: DeliveryClient, fixture_id: Any
) -> None:
    response, data = detail(client, fixture_id("playlist_code"))
    clips = objs(data.get("clips"))
    positions = [c.get("position") for c in clips]
    listing.expect_increasing(
        "PLS-012", positions, expected="positions increasing", response=response
    )
    for clip in clips:
        duration, fmt = clip.get("duration_ms"), clip.get("format")
        if clip.get("ready") is False:
            good, due = fmt is None, "format null"
        elif clip.get("ready") is not True:
            continue  # `ready` not a boolean: PLS-013's finding
        elif fmt is None:
            good, due = False, "a format (the clip is copied)"
        elif fmt in CLIP_FORMATS and listing.is_int(duration):
            # Open value sets (docs/reading-of-the-spec.md (PLS-015)): a known value follows the
            # duration.
            wanted = "hls" if duration >= 30000 else "mp4"
            good, due = fmt == wanted, f"format {wanted!r}"
        else:
            continue
        expect(
            "PLS-015",
            good,
            expected=due,
            actual=f"{fmt!r} (ready {clip.get('ready')}, {duration} ms)",
            response=response,
        )


@VIDEOS
@pytest.mark.requirement("PLS-014", "PLS-002")
def test_codes_and_clip_ids_are_stable(
    client: DeliveryClient, fixture_id: Any, library: list[listing.Page]
) -> None:
    code = fixture_id("playlist_code")
    seen = settle(
        lambda: (detail(client, code), detail(client, code)),
        lambda pair: _clip_ids(pair[0][1]) == _clip_ids(pair[1][1]),
        CATALOG_AGE,
    )
    (_, first), (response, second) = seen.value
    ids = [_clip_ids(first), _clip_ids(second)]
    expect(
        "PLS-014", ids[0] == ids[1], expected="same clip ids", actual="changed", response=response
    )
    codes = {key(i.get("code")) for i in listing.items_of(library)}
    again = {
        i.get("code")
        for i in listing.items_of(listing.envelope_walk(client, "playlists", ROLE, limit=100))
    }
    expect(
        "PLS-002",
        code in codes and code in again,
        expected=f"{code} in both walks",
        actual="missing",
        response=response,
    )


def _clip_ids(data: dict[str, Any]) -> list[Any]:
    return [c.get("id") for c in objs(data.get("clips"))]


def _walks(client: DeliveryClient, library: list[listing.Page]) -> Iterator[list[listing.Page]]:
    """The module's walk of the library, then fresh ones."""
    yield library
    while True:
        yield listing.envelope_walk(client, "playlists", ROLE, "PLS-023", limit=100)


def _item_matches(code: str) -> Callable[[Any], bool]:
    """Whether a (walk, detail) pair agree on `code`: content_version and clip count. The list
    and the detail may come from caches of different ages (Limits > Freshness): compared for
    the catalog's 30 s before a difference is concluded."""

    def agree(pair: tuple[list[listing.Page], tuple[Response, dict[str, Any]]]) -> bool:
        items = [i for i in listing.items_of(pair[0]) if i.get("code") == code]
        data = pair[1][1]
        return (
            len(items) == 1
            and items[0].get("content_version") == data.get("content_version")
            and items[0].get("clip_count") == len(arr(data.get("clips")))
        )

    return agree


@VIDEOS
@pytest.mark.requirement("PLS-004")
def test_list_item_matches_its_detail(
    client: DeliveryClient, fixture_id: Any, library: list[listing.Page]
) -> None:
    code = fixture_id("playlist_code")
    walks = _walks(client, library)
    seen = settle(lambda: (next(walks), detail(client, code)), _item_matches(code), CATALOG_AGE)
    walked, (response, data) = seen.value
    item = listing.listed_once("PLS-004", walked, code)
    expect(
        "PLS-004",
        item.get("content_version") == data.get("content_version")
        and item.get("clip_count") == len(arr(data.get("clips"))),
        expected=f"{data.get('content_version')} / {len(arr(data.get('clips')))} clips",
        actual=f"{item.get('content_version')} / {item.get('clip_count')}",
        response=response,
    )


# -- list --------------------------------------------------------------------------------------


@VIDEOS
@pytest.mark.requirement("PLS-001", "PLS-023", "PAGE-005", "PAGE-006", "PAGE-007", "PAGE-009")
def test_list_pages_are_envelopes_of_playlist_items(library: list[listing.Page]) -> None:
    listing.expect_list_items(library, "PLS-023", "PLS-001", "PlaylistListItem")


@pytest.mark.needs(f"role:{ROLE}", "fixture:playlist_code", "fixture:playlist_code_not_granted")
@pytest.mark.requirement("PLS-017", "PLS-003")
def test_list_holds_the_whole_library(library: list[listing.Page], fixture_id: Any) -> None:
    by_code = {key(i.get("code")): i for i in listing.items_of(library)}
    for fixture, granted in (("playlist_code", True), ("playlist_code_not_granted", False)):
        code = fixture_id(fixture)
        expect(
            "PLS-017",
            code in by_code,
            expected=f"{code} listed",
            actual="absent",
            response=library[-1].response,
        )
        expect(
            "PLS-003",
            by_code[code].get("granted") is granted,
            expected=f"granted {granted}",
            actual=by_code[code].get("granted"),
            response=library[-1].response,
        )


@VIDEOS
@pytest.mark.requirement("PLS-018", "PAGE-010")
def test_walk_is_oldest_change_first(library: list[listing.Page]) -> None:
    times = [i.get("updated_at") for i in listing.items_of(library)]
    listing.expect_never_decreasing(
        "PLS-018", times, expected="updated_at never decreasing", response=library[-1].response
    )
    for page in library:
        expect(
            "PAGE-010",
            (page.links.get("next") is None) == (page.next_cursor is None),
            expected="links.next null exactly on the last page",
            actual=page.links.get("next"),
            response=page.response,
        )


@VIDEOS
@pytest.mark.requirement("PLS-022")
@pytest.mark.long
def test_full_page_always_carries_a_cursor(
    client: DeliveryClient, library: list[listing.Page]
) -> None:
    """A page holding `limit` items has a cursor; a shorter one may end the walk or not (spec:
    GET /playlists; Paging and envelopes). With limit 1 every page with an item is full, so the
    walk ends on an empty page."""
    total = len(listing.items_of(library))
    for limit in sorted({1, total} | {d for d in (2, 3, 4, 5, 6) if total % d == 0}):
        pages = listing.envelope_walk(client, "playlists", ROLE, "PLS-022", limit=limit)
        for page in pages:
            if len(page.items) == limit:
                expect(
                    "PLS-022",
                    isinstance(page.next_cursor, str),
                    expected=f"a cursor after a full page of {limit}",
                    actual=page.next_cursor,
                    response=page.response,
                )
        if limit not in (1, total):
            return


@pytest.mark.needs(f"role:{ROLE}", "fixture:category_slug")
@pytest.mark.requirement("PLS-019")
def test_category_filter_keeps_only_that_category(
    client: DeliveryClient, fixture_id: Any, library: list[listing.Page]
) -> None:
    slug = fixture_id("category_slug")
    pages = listing.envelope_walk(client, "playlists", ROLE, "PLS-019", category=slug, limit=100)
    items = listing.items_of(pages)
    other = [i.get("code") for i in items if obj(i.get("category")).get("slug") != slug]
    expect(
        "PLS-019",
        bool(items) and not other,
        expected=f"only category {slug}",
        actual=other[:5] or "no items",
        response=pages[0].response,
    )
    every = {str(obj(i.get("category")).get("slug")) for i in listing.items_of(library)}
    expect(
        "PLS-019",
        len(every) > 1,
        expected="every category without the filter",
        actual=sorted(map(str, every)),
        response=library[0].response,
    )


@VIDEOS
@pytest.mark.requirement("PLS-020")
def test_updated_since_leaves_out_older_items(
    client: DeliveryClient, library: list[listing.Page]
) -> None:
    listing.expect_updated_since_leaves_out_older("PLS-020", client, library, "playlists", ROLE)


@VIDEOS
@pytest.mark.requirement("PLS-024")
def test_list_holds_no_playback_link(library: list[listing.Page]) -> None:
    for page in library:
        links = [
            s
            for s in strings_in(page.body.get("data"))
            if s.startswith(("http://", "https://")) or ".m3u8" in s or ".mp4" in s
        ]
        expect(
            "PLS-024",
            not links,
            expected="no media or manifest URL in items",
            actual=f"{len(links)} links",
            response=page.response,
        )


@VIDEOS
@pytest.mark.requirement("PLS-026")
def test_detail_links_itself(client: DeliveryClient, fixture_id: Any, profile: Any) -> None:
    code = fixture_id("playlist_code")
    response, _ = detail(client, code)
    body = obj(response.json_body())
    due = f"{profile.base_url}/api/delivery/v1/playlists/{code}"
    expect(
        "PLS-026",
        obj(body.get("links")).get("self") == due and listing.is_int(body.get("server_time")),
        expected=f"links.self {due}",
        actual=obj(body.get("links")).get("self"),
        response=response,
    )


# -- errors (spec: Errors > Series and playlists) ----------------------------------------------

LIST, DETAIL = "playlists", "playlists/{code}"
# docs/reading-of-the-spec.md (PLS-039): the spec gives no slug grammar. A value with a character a
# URL path segment must escape (a space, `!`) is a slug by no reading: 4220. One of URL-safe
# characters that the sandbox's grammar refuses may be another server's well-formed slug naming no
# Category: 4220 or 404 4040.
NOT_SLUGS = ("Not A Slug!", "not a slug")
PLAUSIBLE_SLUGS = ("-edge", "a--b", "Upper-Case")
ERROR_ROWS: list[listing.ErrorRow] = [
    ("PLS-028", LIST, ROLE, {}, 400, listing.Code.ERROR_CODE, "unsupported_version"),
    ("PLS-028", DETAIL, ROLE, {}, 400, listing.Code.ERROR_CODE, "unsupported_version"),
    ("PLS-029", LIST, None, {}, 401, listing.Code.ENVELOPE, 4010),
    ("PLS-029", DETAIL, None, {}, 401, listing.Code.ENVELOPE, 4010),
    ("PLS-030", LIST, "revoked", {}, 401, listing.Code.ENVELOPE, 4011),
    ("PLS-030", DETAIL, "unknown", {}, 401, listing.Code.ENVELOPE, 4011),
    ("PLS-031", LIST, "limits_videos", {}, 403, listing.Code.ENVELOPE, 4030),
    ("PLS-031", DETAIL, "limits_videos", {}, 403, listing.Code.ENVELOPE, 4030),
    ("PLS-032", LIST, "suspended", {}, 403, listing.Code.ENVELOPE, 4031),
    ("PLS-032", DETAIL, "suspended", {}, 403, listing.Code.ENVELOPE, 4031),
    ("PLS-033", LIST, "films_metadata", {}, 403, listing.Code.ENVELOPE, 4032),
    ("PLS-034", DETAIL, "films_metadata", {}, 403, listing.Code.ENVELOPE, 4032),
    ("PLS-035", LIST, ROLE, {"category": "no-such-category"}, 404, listing.Code.ENVELOPE, 4040),
    *[
        ("PLS-036", LIST, ROLE, {"limit": v}, 422, listing.Code.ENVELOPE, 4220)
        for v in ("0", "101", "abc", "")
    ],
    *[
        ("PLS-037", LIST, ROLE, {"updated_since": v}, 422, listing.Code.ENVELOPE, 4220)
        for v in ("abc", "-1", "1.5")
    ],
    ("PLS-038", LIST, ROLE, {"cursor": "forged"}, 422, listing.Code.ENVELOPE, 4220),
    *[
        ("PLS-039", LIST, ROLE, {"category": v}, 422, listing.Code.ENVELOPE, 4220)
        for v in NOT_SLUGS
    ],
    ("PLS-042", LIST, "unverifiable", {}, 503, listing.Code.ENVELOPE, 5031),
    ("PLS-042", DETAIL, "unverifiable", {}, 503, listing.Code.ENVELOPE, 5031),
]


test_error_rows = listing.error_rows_scenario(
    ERROR_ROWS, "PLS-043", "playlist_code", UNKNOWN_KEY, needs=VIDEOS, retry_after=False
)


@pytest.mark.requirement("PLS-039")
@pytest.mark.needs(f"role:{ROLE}")
@pytest.mark.parametrize("value", PLAUSIBLE_SLUGS)
def test_plausible_slug_naming_no_category_is_4220_or_4040(
    client: DeliveryClient, value: str
) -> None:
    response = client.get(LIST, role=ROLE, params={"category": value})
    code = body_of(response).get("code")
    expect(
        "PLS-039",
        (response.status_code, code) in ((422, 4220), (404, 4040)),
        expected="422 code 4220 (not a slug) or 404 code 4040 (no such Category)",
        actual=f"{response.status_code} code {code!r}",
        response=response,
    )
    listing.expect_error_shapes("PLS-039", response)


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


@pytest.mark.needs("role:videos", "fixture:playlist_code")
@pytest.mark.requirement("PLS-044")
def test_a_ready_clip_names_its_video(client: DeliveryClient, fixture_id: Any) -> None:
    """spec: Resources > Playlist detail: `ready` means copied and playable in `media.space`."""
    response = client.get(f"playlists/{fixture_id('playlist_code')}", role="videos")
    expect_status("PLS-026", response, 200, expected="200 for the playlist")
    body = response.json_body()
    data = body.get("data") if isinstance(body, dict) else None
    clips = data.get("clips") if isinstance(data, dict) else None
    clips = objs(clips)
    bad = [c.get("position") for c in clips if c.get("ready") is True and c.get("vid") is None]
    expect(
        "PLS-044",
        bool(clips) and not bad,
        expected="a vid on every ready clip",
        actual=f"positions without: {bad[:5]}" if clips else "no clips",
        response=response,
    )


def _media_name(code: str, position: int) -> str:
    block = (position - 1) // 100 + 1
    return code if block == 1 else f"{code}-{block}"


@pytest.mark.needs("role:videos")
@pytest.mark.requirement("PLS-008")
def test_a_long_playlist_spreads_over_media_playlists_of_100(client: DeliveryClient) -> None:
    """spec: Resources > Playlist detail (`media.playlists[]`: at most 100 videos each, then
    `<code>-2`...). Needs a granted playlist of more than 100 clips; not exercised without."""
    pages = listing.envelope_walk(client, "playlists", "videos", "PLS-023", limit=100)
    items = listing.items_of(pages)
    long = [
        i
        for i in items
        if i.get("granted") is True
        and isinstance(i.get("clip_count"), int)
        and i["clip_count"] > 100
    ]
    if not long:
        pytest.skip(NOT_EXERCISED_PREFIX + "no granted playlist of more than 100 clips listed")
    code = str(long[0].get("code"))
    detail = client.get(f"playlists/{code}", role="videos")
    expect_status("PLS-026", detail, 200, expected=f"200 for playlist {code}")
    found = detail.json_body()
    playlist = obj(at(found, "data"))
    clips = objs(playlist.get("clips"))
    wrong = [
        (c.get("position"), c.get("playlist_name"))
        for c in clips
        if isinstance(c.get("position"), int)
        and c.get("playlist_name") != _media_name(code, c["position"])
    ]
    media = obj(playlist.get("media"))
    names = [p.get("name") for p in objs(media.get("playlists"))]
    due = [_media_name(code, p) for p in range(1, len(clips) + 1, 100)]
    expect(
        "PLS-008",
        not wrong and names == due,
        expected=f"media playlists {due}, each clip in the one of its hundred",
        actual=f"playlists {names}; clips misplaced {wrong[:3]}",
        response=detail,
    )
