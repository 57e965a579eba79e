"""GET /catalog, unpaged: film and episode fields, sort orders, placeholders, inclusion, errors.

spec: Resources and their fields > Film, Episode; Endpoints > GET /catalog; Errors > Catalog.
Field types and nullability are judged against spec/openapi.yaml (checks.schema); the rules the
schema cannot express (orders, couplings, inclusion) are written here.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import pytest
from expect_support import each_requirement, expect_rows_follow
from json_support import arr, json_for, key, objs
from listing_support import Code, expect_counter_refused, expect_error, is_int, iso_epoch

from delivery_conformance.checks import expect, expect_status
from delivery_conformance.suite.exclusive import LIMITS_ORGANISATION
from delivery_conformance.target.client import DeliveryClient, Response

FILMS = pytest.mark.needs("role:films")
UNKNOWN_KEY = "svc_live_" + "Zz9" * 10 + "Zz"

# Requirement -> the Film fields whose schema it proves (spec: Resources > Film).
FILM_FIELDS: dict[str, tuple[str, ...]] = {
    "CAT-001": ("id",),
    "CAT-003": ("title",),
    "CAT-004": ("slug",),
    "CAT-006": ("synopsis_short", "synopsis_full", "language", "poster_url", "default_lang"),
    "CAT-007": ("genres",),
    "CAT-008": ("status",),
    "CAT-009": ("display_order",),
    "CAT-011": ("planned_episodes", "free_until_episode"),
    "CAT-012": ("free_until_episode",),
    "CAT-013": ("audience", "form", "setting"),
    "CAT-014": ("code",),
    "CAT-016": ("title_i18n", "synopsis_short_i18n", "synopsis_i18n"),
    "CAT-017": ("content_rating",),
    "CAT-018": ("is_completed",),
    "CAT-021": ("release_date",),
    "CAT-022": ("tags",),
    "CAT-024": ("people",),
    "CAT-026": ("trailer",),
    "CAT-027": ("metadata_version",),
    "CAT-028": ("metadata_updated_at",),
    "CAT-030": ("images",),
    "CAT-032": ("materials",),
}

# Requirement -> the Episode fields whose schema it proves (spec: Resources > Episode).
EPISODE_FIELDS: dict[str, tuple[str, ...]] = {
    "CAT-037": ("film_id",),
    "CAT-038": ("episode_no",),
    "CAT-039": ("title", "synopsis", "poster_uri", "poster_store_uri", "vid"),
    "CAT-040": ("duration_ms",),
    "CAT-041": ("poster_url",),
    "CAT-042": ("poster_signed_url", "poster_expires_at"),
    "CAT-045": ("vid_ready",),
    "CAT-046": ("status",),
    "CAT-047": ("stream_ready",),
    "CAT-048": ("title_i18n",),
    "CAT-049": ("subtitles",),
}


class Catalog:
    def __init__(self, response: Response) -> None:
        self.response = response
        body = json_for("CAT-055", response)
        self.body: dict[str, Any] = body if isinstance(body, dict) else {}
        # Every item as sent (the schema scenarios judge each, objects or not) and the objects
        # among them (what the other scenarios read).
        self.all_films: list[Any] = arr(self.body.get("films"))
        self.all_episodes: list[Any] = arr(self.body.get("episodes"))
        self.films: list[dict[str, Any]] = objs(self.all_films)
        self.episodes: list[dict[str, Any]] = objs(self.all_episodes)

    def rows_of(self, film_id: str) -> list[dict[str, Any]]:
        return [row for row in self.episodes if row.get("film_id") == film_id]

    def has_placeholders(self, film: dict[str, Any]) -> bool:
        """Some row of the film is a placeholder (`status: planned`)."""
        return any(r.get("status") == "planned" for r in self.rows_of(film.get("id", "")))

    def slugs_where(self, breaks: Callable[[dict[str, Any]], bool]) -> list[str]:
        """The slugs of the films for which `breaks` holds (a rule's offenders)."""
        return [str(f.get("slug")) for f in self.films if breaks(f)]

    def episode_ids(self) -> set[str]:
        return {row["id"] for row in self.episodes if isinstance(row.get("id"), str)}


def read_catalog(client: DeliveryClient, role: str = "films") -> Catalog:
    response = client.get("catalog", role=role)
    expect_status("CAT-055", response, 200, expected="200")
    return Catalog(response)


@pytest.fixture(scope="module")
def catalog(client: DeliveryClient) -> Catalog:
    return read_catalog(client)


def fail(requirement_id: str, title: str, bad: list[str], response: Response) -> None:
    expect(
        requirement_id,
        not bad,
        expected="none",
        actual="; ".join(bad[:5]),
        response=response,
        title=title,
    )


# -- field types (schema) ----------------------------------------------------------------------


@FILMS
@pytest.mark.parametrize("requirement_id", each_requirement(FILM_FIELDS))
def test_film_fields_follow_the_film_table(catalog: Catalog, requirement_id: str) -> None:
    expect(
        "CAT-055",
        bool(catalog.all_films),
        expected="films",
        actual="none",
        response=catalog.response,
    )
    expect_rows_follow(
        requirement_id,
        catalog.all_films,
        "Film",
        FILM_FIELDS[requirement_id],
        where="films",
        response=catalog.response,
    )


@FILMS
@pytest.mark.parametrize("requirement_id", each_requirement(EPISODE_FIELDS))
def test_episode_fields_follow_the_episode_table(catalog: Catalog, requirement_id: str) -> None:
    expect(
        "CAT-055",
        bool(catalog.all_episodes),
        expected="episodes",
        actual="none",
        response=catalog.response,
    )
    expect_rows_follow(
        requirement_id,
        catalog.all_episodes,
        "Episode",
        EPISODE_FIELDS[requirement_id],
        where="episodes",
        response=catalog.response,
    )


@FILMS
@pytest.mark.requirement("CAT-028")
def test_metadata_updated_at_is_utc(catalog: Catalog) -> None:
    bad = [
        f"{film.get('slug')}: {film['metadata_updated_at']!r}"
        for film in catalog.films
        if film.get("metadata_updated_at") is not None
        and iso_epoch(film["metadata_updated_at"]) is None
    ]
    fail("CAT-028", "metadata_updated_at is not ISO 8601 UTC", bad, catalog.response)


# -- rules across fields -----------------------------------------------------------------------


@FILMS
@pytest.mark.requirement("CAT-005")
def test_film_slugs_are_unique(catalog: Catalog) -> None:
    counts = Counter(key(film.get("slug")) for film in catalog.films)
    fail(
        "CAT-005", "slug shared by films", [s for s, n in counts.items() if n > 1], catalog.response
    )


@FILMS
@pytest.mark.requirement("CAT-010")
def test_films_are_sorted_by_display_order(catalog: Catalog) -> None:
    orders = [film.get("display_order") for film in catalog.films]
    bad = [
        f"{a} before {b}"
        for a, b in itertools.pairwise(orders)
        if is_int(a) and is_int(b) and a > b
    ]
    fail("CAT-010", "films not sorted by display_order", bad, catalog.response)


@FILMS
@pytest.mark.requirement("CAT-019")
def test_unknown_planned_count_leaves_is_completed_null(catalog: Catalog) -> None:
    bad = catalog.slugs_where(
        lambda f: f.get("planned_episodes") is None and f.get("is_completed") is not None
    )
    fail("CAT-019", "is_completed set while planned_episodes is null", bad, catalog.response)


@FILMS
@pytest.mark.requirement("CAT-020")
def test_completed_film_has_no_placeholders(catalog: Catalog) -> None:
    bad = catalog.slugs_where(
        lambda f: f.get("is_completed") is True and catalog.has_placeholders(f)
    )
    fail("CAT-020", "completed film with placeholder rows", bad, catalog.response)


def _main_tags(film: dict[str, Any]) -> list[dict[str, Any]]:
    return [t for t in objs(film.get("tags")) if t.get("is_main") is True]


@FILMS
@pytest.mark.requirement("CAT-023")
def test_at_most_one_main_tag(catalog: Catalog) -> None:
    bad = catalog.slugs_where(lambda f: len(_main_tags(f)) > 1)
    fail("CAT-023", "film with two main tags", bad, catalog.response)


@FILMS
@pytest.mark.requirement("CAT-025")
def test_leads_come_before_support(catalog: Catalog) -> None:
    bad = []
    for film in catalog.films:
        roles = [p.get("role") for p in arr(film.get("people")) if isinstance(p, dict)]
        if "support" in roles and "lead" in roles[roles.index("support") :]:
            bad.append(str(film.get("slug")))
    fail("CAT-025", "lead listed after support", bad, catalog.response)


@FILMS
@pytest.mark.requirement("CAT-031")
def test_one_image_per_kind_and_language(catalog: Catalog) -> None:
    bad = []
    for film in catalog.films:
        pairs = Counter((key(i.get("kind")), key(i.get("lang"))) for i in objs(film.get("images")))
        bad += [f"{film.get('slug')}: {pair}" for pair, n in pairs.items() if n > 1]
    fail("CAT-031", "two images of one kind and language", bad, catalog.response)


@FILMS
@pytest.mark.requirement("CAT-033", "CAT-037")
def test_episodes_are_grouped_by_a_listed_film(catalog: Catalog) -> None:
    film_ids = {key(f.get("id")) for f in catalog.films}
    seen: list[str] = []
    for row in catalog.episodes:
        fid = key(row.get("film_id"))
        expect(
            "CAT-037",
            fid in film_ids,
            expected="film_id of a listed film",
            actual=fid,
            response=catalog.response,
        )
        if not seen or seen[-1] != fid:
            expect(
                "CAT-033",
                fid not in seen,
                expected="rows of one film contiguous",
                actual=f"film {fid} appears in two runs",
                response=catalog.response,
            )
            seen.append(fid)


@FILMS
@pytest.mark.requirement("CAT-034", "CAT-035")
def test_episodes_are_sorted_and_unique_within_a_film(catalog: Catalog) -> None:
    for film in catalog.films:
        numbers = [r.get("episode_no") for r in catalog.rows_of(film.get("id", ""))]
        expect(
            "CAT-035",
            len(numbers) == len(set(map(key, numbers))),
            expected="unique episode_no",
            actual=f"{film.get('slug')}: {numbers}",
            response=catalog.response,
        )
        ints = [n for n in numbers if is_int(n)]
        expect(
            "CAT-034",
            ints == sorted(ints),
            expected="episode_no ascending",
            actual=f"{film.get('slug')}: {numbers}",
            response=catalog.response,
        )


@FILMS
@pytest.mark.requirement("CAT-036")
def test_published_rows_have_an_id_and_placeholders_none(catalog: Catalog) -> None:
    bad = [
        f"{r.get('film_id')}#{r.get('episode_no')}: {r.get('status')} id={r.get('id')!r}"
        for r in catalog.episodes
        if (r.get("status") == "planned" and r.get("id") is not None)
        or (r.get("status") == "published" and r.get("id") is None)
    ]
    fail("CAT-036", "id presence does not follow status", bad, catalog.response)


@FILMS
@pytest.mark.requirement("CAT-043")
def test_poster_expiry_is_null_exactly_when_the_signed_link_is(catalog: Catalog) -> None:
    bad = [
        f"{r.get('film_id')}#{r.get('episode_no')}"
        for r in catalog.episodes
        if (r.get("poster_signed_url") is None) != (r.get("poster_expires_at") is None)
    ]
    fail("CAT-043", "poster_expires_at and poster_signed_url disagree", bad, catalog.response)


@FILMS
@pytest.mark.requirement("CAT-044")
def test_signed_posters_expire_within_15_minutes(client: DeliveryClient) -> None:
    response = client.get("catalog", role="films")
    body = Catalog(response)
    start = response.exchange.started_at
    end = start + response.exchange.elapsed
    date = response.headers.get("date")
    if date:  # judge against the target's own clock when it says it
        import email.utils

        start = end = email.utils.parsedate_to_datetime(date).timestamp()
    bad = [
        f"{r.get('film_id')}#{r.get('episode_no')}: {r['poster_expires_at']}"
        for r in body.episodes
        if is_int(r.get("poster_expires_at"))
        and not (start - 5 < r["poster_expires_at"] <= end + 900 + 5)
    ]
    fail("CAT-044", "poster_expires_at not within 15 minutes ahead", bad, response)


@FILMS
@pytest.mark.requirement("CAT-050")
def test_placeholder_rows_carry_no_video(catalog: Catalog) -> None:
    bad = [
        f"{r.get('film_id')}#{r.get('episode_no')}"
        for r in catalog.episodes
        if r.get("status") == "planned"
        and (
            r.get("vid") is not None
            or r.get("vid_ready") is not False
            or r.get("stream_ready") is not False
            or r.get("subtitles") != []
        )
    ]
    fail("CAT-050", "placeholder row with video data", bad, catalog.response)


@FILMS
@pytest.mark.needs("fixture:episode_paged_film", "fixture:placeholder_episode_no")
@pytest.mark.requirement("CAT-050")
def test_the_known_placeholder_is_listed_as_planned(catalog: Catalog, fixture_id: Any) -> None:
    film, number = fixture_id("episode_paged_film"), int(fixture_id("placeholder_episode_no"))
    rows = [r for r in catalog.rows_of(film) if r.get("episode_no") == number]
    expect(
        "CAT-050",
        len(rows) == 1 and rows[0].get("status") == "planned",
        expected=f"one planned row #{number}",
        actual=rows,
        response=catalog.response,
    )


@FILMS
@pytest.mark.requirement("CAT-051")
def test_unknown_planned_count_means_no_placeholders(catalog: Catalog) -> None:
    bad = catalog.slugs_where(
        lambda f: f.get("planned_episodes") is None and catalog.has_placeholders(f)
    )
    fail("CAT-051", "placeholders without a planned count", bad, catalog.response)


@FILMS
@pytest.mark.requirement("CAT-052")
def test_every_planned_number_has_a_row(catalog: Catalog) -> None:
    bad = []
    for film in catalog.films:
        planned = film.get("planned_episodes")
        if is_int(planned):
            numbers = {key(r.get("episode_no")) for r in catalog.rows_of(film.get("id", ""))}
            missing = sorted(set(range(1, planned + 1)) - numbers)
            if missing:
                bad.append(f"{film.get('slug')}: no row for {missing[:5]}")
    fail("CAT-052", "planned episode number without a row", bad, catalog.response)


@FILMS
@pytest.mark.needs("fixture:episode_not_ready")
@pytest.mark.requirement("CAT-053")
def test_unplayable_episode_is_not_stream_ready(catalog: Catalog, fixture_id: Any) -> None:
    target = fixture_id("episode_not_ready")
    rows = [r for r in catalog.episodes if r.get("id") == target]
    expect(
        "CAT-053",
        len(rows) == 1 and rows[0].get("stream_ready") is False,
        expected="the row listed with stream_ready false",
        actual=[r.get("stream_ready") for r in rows],
        response=catalog.response,
    )


def _keys(tree: Any) -> set[str]:
    if isinstance(tree, dict):
        return set(tree) | {k for v in tree.values() for k in _keys(v)}
    if isinstance(tree, list):
        return {k for v in tree for k in _keys(v)}
    return set()


@FILMS
@pytest.mark.requirement("CAT-054")
def test_catalog_holds_no_playback_link(catalog: Catalog) -> None:
    found = _keys(catalog.body) & {"play_auth_token", "manifest_url", "mp4"}
    fail("CAT-054", "playback link in the catalog", sorted(found), catalog.response)


@FILMS
@pytest.mark.needs("fixture:film_id", "fixture:episode_encrypted")
@pytest.mark.requirement("CAT-055")
def test_licensed_film_is_listed_with_its_episodes(catalog: Catalog, fixture_id: Any) -> None:
    film = fixture_id("film_id")
    expect(
        "CAT-055",
        film in {key(f.get("id")) for f in catalog.films},
        expected=f"film {film}",
        actual="absent",
        response=catalog.response,
    )
    episode = fixture_id("episode_encrypted")
    expect(
        "CAT-055",
        episode in catalog.episode_ids(),
        expected=f"episode {episode}",
        actual="absent",
        response=catalog.response,
    )


@FILMS
@pytest.mark.parametrize(
    ("requirement_id", "fixture"),
    [
        pytest.param("CAT-056", "episode_outside_window", marks=pytest.mark.requirement("CAT-056")),
        *[
            pytest.param("CAT-057", name, marks=pytest.mark.requirement("CAT-057"))
            for name in (
                "episode_entitlement_suspended",
                "episode_streaming_disabled",
                "episode_entitlement_not_found",
            )
        ],
    ],
)
def test_unlicensed_films_are_left_out(
    catalog: Catalog, fixture_id: Any, requirement_id: str, fixture: str
) -> None:
    episode = fixture_id(fixture)
    expect(
        requirement_id,
        episode not in catalog.episode_ids(),
        expected=f"{fixture} absent",
        actual="listed",
        response=catalog.response,
    )


@pytest.mark.needs("role:unlicensed")
@pytest.mark.requirement("CAT-058")
def test_no_current_licence_gives_empty_arrays(client: DeliveryClient) -> None:
    response = client.get("catalog", role="unlicensed")
    body = response.json_body()
    expect(
        "CAT-058",
        response.status_code == 200
        and isinstance(body, dict)
        and body.get("films") == []
        and body.get("episodes") == [],
        expected="200 with films [] and episodes []",
        actual=f"{response.status_code} {sorted(body) if isinstance(body, dict) else body}",
        response=response,
    )


@FILMS
@pytest.mark.requirement("CAT-059")
def test_unpaged_catalog_has_only_films_and_episodes(catalog: Catalog) -> None:
    """docs/reading-of-the-spec.md (CAT-059): the unpaged answer is the whole catalog; a null
    `next_cursor` or `links.next` is an additive member (Versioning 3), one that points further is
    not."""
    links = catalog.body.get("links")
    further = {
        "next_cursor": catalog.body.get("next_cursor"),
        "links.next": links.get("next") if isinstance(links, dict) else None,
    }
    pointing = sorted(name for name, value in further.items() if value is not None)
    expect(
        "CAT-059",
        isinstance(catalog.body.get("films"), list)
        and isinstance(catalog.body.get("episodes"), list)
        and not pointing,
        expected="films and episodes in one answer, nothing pointing to a next page",
        actual=pointing or "arrays missing",
        response=catalog.response,
    )


@FILMS
@pytest.mark.requirement("CAT-002", "CAT-029")
def test_ids_slugs_and_metadata_versions_hold_between_reads(
    client: DeliveryClient, catalog: Catalog
) -> None:
    again = read_catalog(client)
    first = {key(f.get("slug")): f for f in catalog.films}
    for film in again.films:
        before = first.get(key(film.get("slug")))
        if before is None:
            continue
        expect(
            "CAT-002",
            before.get("id") == film.get("id"),
            expected=before.get("id"),
            actual=film.get("id"),
            response=again.response,
            title="film id changed",
        )
        expect(
            "CAT-029",
            before.get("metadata_version") == film.get("metadata_version"),
            expected=before.get("metadata_version"),
            actual=film.get("metadata_version"),
            response=again.response,
            title="metadata_version changed with no change",
        )


@FILMS
@pytest.mark.requirement("CAT-015")
def test_film_code_opens_its_series(client: DeliveryClient, catalog: Catalog) -> None:
    coded = [f for f in catalog.films if isinstance(f.get("code"), str)][:3]
    if not coded:
        pytest.skip("not exercised: no licensed film carries a series code")
    for film in coded:
        response = client.get(f"series/{film['code']}", role="films")
        body = response.json_body()
        data = body.get("data") if isinstance(body, dict) else None
        expect(
            "CAT-015",
            response.status_code == 200
            and isinstance(data, dict)
            and data.get("code") == film["code"],
            expected=f"200 for series {film['code']}",
            actual=response.status_code,
            response=response,
        )


# -- errors (spec: Errors > Catalog) -----------------------------------------------------------


@FILMS
@pytest.mark.requirement("CAT-067")
@pytest.mark.parametrize("limit", ["0", "201", "-1", "1.5", "abc", ""])
def test_bad_limit_is_invalid_request(client: DeliveryClient, limit: str) -> None:
    response = client.get("catalog", role="films", params={"limit": limit})
    expect_error("CAT-067", response, 400, Code.ERROR_CODE, "invalid_request")


@FILMS
@pytest.mark.requirement("CAT-068")
def test_foreign_or_altered_cursor_is_invalid_request(client: DeliveryClient) -> None:
    first = client.get("catalog", role="films", params={"limit": 1}).json_body()
    real = first.get("next_cursor") if isinstance(first, dict) else None
    cursors = ["forged"]
    if isinstance(real, str) and real:
        cursors.append(real[:-1] + ("A" if real[-1] != "A" else "B"))
    for cursor in cursors:
        response = client.get("catalog", role="films", params={"cursor": cursor})
        expect_error("CAT-068", response, 400, Code.ERROR_CODE, "invalid_request")


@FILMS
@pytest.mark.requirement("CAT-069")
def test_unknown_version_header_is_unsupported(client: DeliveryClient) -> None:
    response = client.get("catalog", role="films", version="1999-01-01")
    expect_error("CAT-069", response, 400, Code.ERROR_CODE, "unsupported_version")


@pytest.mark.needs("role:retired_pin")
@pytest.mark.requirement("CAT-069")
def test_retired_pin_is_unsupported(client: DeliveryClient) -> None:
    response = client.get("catalog", role="retired_pin")
    expect_error("CAT-069", response, 400, Code.ERROR_CODE, "unsupported_version")


@pytest.mark.requirement("CAT-070")
def test_missing_key_is_401_without_code(client: DeliveryClient) -> None:
    expect_error("CAT-070", client.get("catalog"), 401, Code.NONE)


@pytest.mark.requirement("CAT-071")
def test_unknown_key_is_401_without_code(client: DeliveryClient) -> None:
    expect_error("CAT-071", client.get("catalog", key=UNKNOWN_KEY), 401, Code.NONE)


@pytest.mark.needs("role:revoked")
@pytest.mark.requirement("CAT-071")
def test_revoked_key_is_401_without_code(client: DeliveryClient) -> None:
    expect_error("CAT-071", client.get("catalog", role="revoked"), 401, Code.NONE)


@pytest.mark.needs("role:films_playback")
@pytest.mark.requirement("CAT-072")
def test_key_without_metadata_scope_is_plain_403(client: DeliveryClient) -> None:
    response = client.get("catalog", role="films_playback")
    expect_error("CAT-072", response, 403, Code.NONE)
    body = response.json_body()
    expect(
        "CAT-072",
        body.get("error") != "org_suspended",
        expected="not org_suspended",
        actual=body.get("error"),
        response=response,
    )


@pytest.mark.needs("role:suspended")
@pytest.mark.requirement("CAT-073")
def test_suspended_organisation_is_403_org_suspended(client: DeliveryClient) -> None:
    response = client.get("catalog", role="suspended")
    expect_error("CAT-073", response, 403, Code.ERROR, "org_suspended")


@pytest.mark.exclusive(LIMITS_ORGANISATION)
@pytest.mark.needs("role:limits", "admin")
@pytest.mark.requirement("CAT-074")
def test_catalog_counter_reached_is_429(client: DeliveryClient, admin: Any) -> None:
    admin.set_limit("limits", "catalog", 2)
    answers = [client.get("catalog", role="limits", params={"limit": 1}) for _ in range(4)]
    expect_counter_refused("CAT-074", answers, limit=2)


@pytest.mark.needs("role:unverifiable")
@pytest.mark.requirement("CAT-075")
def test_unverifiable_key_is_503_with_retry_after(client: DeliveryClient) -> None:
    response = client.get("catalog", role="unverifiable")
    expect_error("CAT-075", response, 503, Code.ERROR_CODE, "service_unavailable")
    expect(
        "CAT-075",
        response.headers.get("retry-after", "").isdigit(),
        expected="Retry-After seconds",
        actual=response.headers.get("retry-after"),
        response=response,
    )


@pytest.mark.needs("role:films", "fixture:film_id_unpublished")
@pytest.mark.requirement("CAT-081")
def test_a_licensed_film_not_published_is_never_in_the_catalog(
    client: DeliveryClient, fixture_id: Any
) -> None:
    """spec: Endpoints > GET /catalog: films with a current licence and published status are
    listed; a draft one is not, even with its licence current."""
    draft = fixture_id("film_id_unpublished")
    response = client.get("catalog", role="films")
    expect_status("CAT-001", response, 200, expected="200 for GET /catalog")
    body = response.json_body()
    body = body if isinstance(body, dict) else {}
    films = [f.get("id") for f in body.get("films") or [] if isinstance(f, dict)]
    rows = [e.get("film_id") for e in body.get("episodes") or [] if isinstance(e, dict)]
    expect(
        "CAT-081",
        bool(films) and draft not in films and draft not in rows,
        expected=f"film {draft} absent from films[] and episodes[]",
        actual=f"{films.count(draft)} films, {rows.count(draft)} episode rows",
        response=response,
    )


def _catalog_rows(client: DeliveryClient) -> tuple[Response, list[dict[str, Any]]]:
    response = client.get("catalog", role="films")
    expect_status("CAT-001", response, 200, expected="200 for GET /catalog")
    body = response.json_body()
    rows = body.get("episodes") if isinstance(body, dict) else None
    return response, objs(rows)


@pytest.mark.needs("role:films")
@pytest.mark.requirement("CAT-079")
def test_a_row_ready_in_its_space_names_its_video(client: DeliveryClient) -> None:
    """spec: Resources > Episode: `vid` is null until ready; `vid_ready` true means playable."""
    response, rows = _catalog_rows(client)
    bad = [r.get("id") for r in rows if r.get("vid_ready") is True and r.get("vid") is None]
    expect(
        "CAT-079",
        not bad,
        expected="a vid on every row with vid_ready true",
        actual=f"{len(bad)} rows without: {bad[:3]}",
        response=response,
    )


def _within(host: str, domains: list[str]) -> bool:
    return any(host == d or host.endswith("." + d) for d in domains)


@pytest.mark.needs("role:films")
@pytest.mark.requirement("CAT-080")
def test_poster_links_live_on_a_playback_domain(client: DeliveryClient) -> None:
    """spec: Resources > Episode (`poster_signed_url` on the caller's playback domain);
    GET /config (`playback.domains`). Hosts only are shown: the links are secrets."""
    config = client.get("config", role="films")
    expect_status("CFG-001", config, 200, expected="200 for GET /config")
    body = config.json_body()
    playback = body.get("playback") if isinstance(body, dict) else None
    domains = playback.get("domains") if isinstance(playback, dict) else None
    domains = [d for d in arr(domains) if isinstance(d, str)]
    response, rows = _catalog_rows(client)
    hosts = {
        urlsplit(r["poster_signed_url"]).hostname or ""
        for r in rows
        if isinstance(r.get("poster_signed_url"), str)
    }
    outside = sorted(h for h in hosts if not _within(h, domains))
    expect(
        "CAT-080",
        bool(domains) and not outside,
        expected=f"poster hosts within {domains}",
        actual=f"outside: {outside}" if domains else "no playback.domains",
        response=response,
    )
