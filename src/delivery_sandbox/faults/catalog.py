"""Faults of GET /catalog and of the simulated answers. Each row bends one field of every film
or episode row, one inclusion or paging rule, or one trait of a simulated answer, so the one
rule that names it fails; the clean sandbox is unchanged.

Spec sections: Resources and their fields > Film, Episode (the field tables); Endpoints > GET
/catalog (inclusion, paging); Errors > Catalog; POST /playback, GET /catalog, GET /config (the
`Service-Simulate` header and its scenarios).

Hooks: `bend_reply` (faults/reply.py, after an answer is built; app.py keeps the
request's `Service-Simulate` in `exchange.extra`); the steps of endpoints/catalog.py at the
step seam (faults/steps.py: `bend`): `films` (which films, in which order), `film_row`,
`episode_rows`, `bad_cursor_refused` (a cursor read), `page_size`, `next_cursor` (the cursor
written); `simulation_rules` (the simulation step: playback/simulate.py `respond`, and
endpoints/playback.py through the step seam, `bent_rules`: how a simulated answer is counted
and marked).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

import orjson

from delivery_sandbox.faults import body_tables as bt
from delivery_sandbox.faults.names import FaultName
from delivery_sandbox.faults.switch import declare

if TYPE_CHECKING:
    from delivery_sandbox.faults.seams import Answer, Record, Request, Server
    from delivery_sandbox.faults.switch import FaultSwitch

__all__ = ["DEFAULT_RULES", "FAULTS", "FAULT_ROWS", "SimulationRules", "bad_cursor_refused",
           "bend_reply", "bent_rules", "episode_rows", "film_row", "films", "next_cursor",
           "page_size", "simulation_rules", "with_refused"]  # fmt: skip

Body = dict[str, Any]
When = Callable[[int, list[str], Body], bool]  # status, path parts, body
Change = Callable[[Body, "FaultSwitch"], None]


def _field(table: str, name: str, value: Any) -> Change:
    """Set `name` of every row of `films` or `episodes` to `value` (a callable bends the old)."""

    def change(body: Body, _: FaultSwitch) -> None:
        for row in bt.rows(body, table):
            row[name] = value(row.get(name)) if callable(value) else value

    return change


def _published(body: Body) -> list[Body]:
    return [r for r in bt.rows(body, "episodes") if r.get("status") == "published"]


def _not_ready_streams(body: Body, _: FaultSwitch) -> None:
    for row in _published(body):
        if row.get("stream_ready") is False:
            row["stream_ready"] = True


def _published_left_out(body: Body, _: FaultSwitch) -> None:
    body["episodes"] = [r for r in bt.rows(body, "episodes") if r.get("status") != "published"]


def _id_per_read(body: Body, faults: FaultSwitch) -> None:
    """A new film id on every read: the read count is kept with the switched-on faults."""
    reads: list[int] = faults.memo("catalog_film_id_per_read", lambda _: [0])
    reads[0] += 1
    for film in bt.rows(body, "films"):
        if isinstance(film.get("id"), str):
            film["id"] = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{film['id']}/{reads[0]}"))


def _catalog(status: int = 200) -> When:
    return lambda s, p, b: s == status and p[-1] == "catalog"


def _error(status: int, key: str, code: str) -> When:
    return lambda s, p, b: _catalog(status)(s, p, b) and b.get(key) == code


def _list_items(body: Body) -> list[Body]:
    data = body.get("data")
    return bt.rows(data, "items") if isinstance(data, dict) else []


def _list(name: str) -> When:
    return lambda s, p, b: s == 200 and p[-1] == name


def _active_withdrawn_at(body: Body, _: FaultSwitch) -> None:
    for item in _list_items(body):
        if item.get("status") != "withdrawn":
            item["withdrawn_at"] = body.get("server_time")


def _dropped_at_29_days(body: Body, _: FaultSwitch) -> None:
    """Withdrawn items leave the list a day early (29 days after their withdrawal)."""
    data, now = body.get("data"), body.get("server_time")
    if not isinstance(data, dict) or not isinstance(now, int):
        return
    data["items"] = [i for i in _list_items(body) if not isinstance(i.get("withdrawn_at"), int)
                     or now - i["withdrawn_at"] < 29 * 86_400]  # fmt: skip


_HTTP_IMAGE = {"kind": "poster", "lang": None, "url": "http://img.delivery.sandbox/p.jpg",
               "width": 1, "height": 1}  # fmt: skip
_MATERIAL = {"kind": "cover_9_16", "title": "t", "mid": "m", "url": "https://m.delivery.sandbox/m",
             "expires_at": "soon", "store_uri": "store://m", "width": 1, "height": 1}  # fmt: skip
_PERSON = {"name": "A", "role": None, "description": None, "avatar_url": None}

# name -> (rules, summary, when, change)
_ROWS: tuple[tuple[str, tuple[str, ...], str, When, Change], ...] = (
    ("catalog_film_id_not_uuid", ("CAT-001",), "film id without its dashes", _catalog(),
     _field("films", "id", lambda v: str(v).replace("-", ""))),
    ("catalog_film_id_per_read", ("CAT-002",), "film ids change on every read", _catalog(),
     _id_per_read),
    ("catalog_film_title_null", ("CAT-003",), "film title null", _catalog(),
     _field("films", "title", None)),
    ("catalog_film_slug_unsafe", ("CAT-004",), "film slug with a space and a slash", _catalog(),
     _field("films", "slug", lambda v: f"{v} /x")),
    ("catalog_film_synopsis_number", ("CAT-006",), "film synopsis_short a number", _catalog(),
     _field("films", "synopsis_short", 42)),
    ("catalog_film_genres_string", ("CAT-007",), "film genres a string", _catalog(),
     _field("films", "genres", "drama")),
    ("catalog_film_status_draft", ("CAT-008",), "film status draft", _catalog(),
     _field("films", "status", "draft")),
    ("catalog_film_planned_string", ("CAT-011",), "film planned_episodes a string", _catalog(),
     _field("films", "planned_episodes", "12")),
    ("catalog_film_free_negative", ("CAT-012",), "film free_until_episode -1", _catalog(),
     _field("films", "free_until_episode", -1)),
    ("catalog_film_audience_number", ("CAT-013",), "film audience a number", _catalog(),
     _field("films", "audience", 7)),
    ("catalog_film_code_short", ("CAT-014",), "film code AB12", _catalog(),
     _field("films", "code", "AB12")),
    ("catalog_film_title_i18n_null", ("CAT-016",), "film title_i18n null", _catalog(),
     _field("films", "title_i18n", None)),
    ("catalog_film_rating_number", ("CAT-017",), "film content_rating a number", _catalog(),
     _field("films", "content_rating", 13)),
    ("catalog_film_completed_string", ("CAT-018",), "film is_completed 'yes'", _catalog(),
     _field("films", "is_completed", "yes")),
    ("catalog_film_release_date_bad", ("CAT-021",), "film release_date 2024-13-45",
     _catalog(), _field("films", "release_date", "2024-13-45")),
    ("catalog_film_tags_strings", ("CAT-022",), "film tags as plain strings", _catalog(),
     _field("films", "tags", ["drama"])),
    ("catalog_film_person_role_null", ("CAT-024",), "film people with role null", _catalog(),
     _field("films", "people", [_PERSON])),
    ("catalog_film_trailer_vid_number", ("CAT-026",), "film trailer.vid a number", _catalog(),
     _field("films", "trailer", {"vid": 7})),
    ("catalog_film_metadata_version_number", ("CAT-027",), "film metadata_version a number",
     _catalog(), _field("films", "metadata_version", 3)),
    ("catalog_film_image_http", ("CAT-030",), "film images on plain http", _catalog(),
     _field("films", "images", [_HTTP_IMAGE])),
    ("catalog_film_material_expiry_string", ("CAT-032",), "film materials' expires_at a "
     "string", _catalog(), _field("films", "materials", [_MATERIAL])),
    ("catalog_episode_no_string", ("CAT-038",), "episode_no a string", _catalog(),
     _field("episodes", "episode_no", lambda v: str(v))),
    ("catalog_episode_title_number", ("CAT-039",), "episode title a number", _catalog(),
     _field("episodes", "title", 5)),
    ("catalog_episode_duration_string", ("CAT-040",), "episode duration_ms a string",
     _catalog(), _field("episodes", "duration_ms", "60000")),
    ("catalog_episode_poster_http", ("CAT-041",), "episode poster_url on plain http",
     _catalog(), _field("episodes", "poster_url", "http://img.delivery.sandbox/e.jpg")),
    ("catalog_episode_poster_expiry_string", ("CAT-042",), "episode poster_expires_at a "
     "string", _catalog(), _field("episodes", "poster_expires_at", "soon")),
    ("catalog_episode_vid_ready_string", ("CAT-045",), "episode vid_ready 'yes'", _catalog(),
     _field("episodes", "vid_ready", "yes")),
    ("catalog_episode_status_null", ("CAT-046",), "episode status null", _catalog(),
     _field("episodes", "status", None)),
    ("catalog_episode_stream_ready_null", ("CAT-047",), "episode stream_ready null",
     _catalog(), _field("episodes", "stream_ready", None)),
    ("catalog_episode_title_i18n_list", ("CAT-048",), "episode title_i18n an array",
     _catalog(), _field("episodes", "title_i18n", [])),
    ("catalog_episode_subtitle_lang_number", ("CAT-049",), "episode subtitles with a numeric "
     "lang", _catalog(), _field("episodes", "subtitles", [{"lang": 1}])),
    ("catalog_not_ready_streams", ("CAT-053",), "published rows that cannot play say "
     "stream_ready true", _catalog(), _not_ready_streams),
    ("catalog_published_rows_left_out", ("CAT-055",), "the catalog lists no published episode "
     "row", _catalog(), _published_left_out),
    ("catalog_outside_window_listed", ("CAT-056",), "films outside their licence window are "
     "listed", lambda s, p, b: False, lambda b, f: None),
    ("catalog_refused_licence_listed", ("CAT-057",), "films with a suspended, switched-off or "
     "missing licence are listed", lambda s, p, b: False, lambda b, f: None),
    ("catalog_empty_without_episodes", ("CAT-058",), "with no current licence the catalog has "
     "no episodes array", lambda s, p, b: _catalog()(s, p, b) and b.get("films") == [],
     lambda b, f: b.pop("episodes", None)),
    ("catalog_limit_plus_one", ("CAT-060",), "limit n answers n + 1 films",
     lambda s, p, b: False, lambda b, f: None),
    ("catalog_cursor_page_one", ("CAT-061",), "a cursor without limit answers pages of one "
     "film", lambda s, p, b: False, lambda b, f: None),
    ("catalog_page_links_missing", ("CAT-062",), "catalog pages have no links member",
     lambda s, p, b: _catalog()(s, p, b) and "next_cursor" in b,
     lambda b, f: b.pop("links", None)),
    ("catalog_suspended_error_other", ("CAT-073",), "the catalog's 403 for a suspended "
     "organisation says error suspended", _error(403, "error", "org_suspended"),
     lambda b, f: b.update(error="suspended")),
    ("series_active_withdrawn_at", ("STATE-003",), "active series list items carry "
     "withdrawn_at", _list("series"), _active_withdrawn_at),
    ("playlists_active_withdrawn_at", ("STATE-011",), "active playlist list items carry "
     "withdrawn_at", _list("playlists"), _active_withdrawn_at),
    ("series_withdrawn_gone_at_29_days", ("STATE-005",), "withdrawn series leave GET /series "
     "after 29 days", _list("series"), _dropped_at_29_days),
    ("playlists_withdrawn_gone_at_29_days", ("STATE-013",), "withdrawn playlists leave GET "
     "/playlists after 29 days", _list("playlists"), _dropped_at_29_days),
    ("catalog_outage_code_other", ("CAT-076",), "the catalog's outage 503 has error_code "
     "unavailable", _error(503, "error_code", "service_unavailable"),
     lambda b, f: b.update(error_code="unavailable")),
)  # fmt: skip
_BY_NAME = {row[0]: row[3:] for row in _ROWS}

# -- simulated answers (Service-Simulate) ------------------------------------------------------

SIMULATED = b"service-simulated"
Bend = Callable[["Answer", "Request", list[str]], None]  # reply, exchange, path parts


def _scenario(reply: Answer) -> str | None:
    return next((v.decode() for k, v in reply.headers if k == SIMULATED), None)


def _json(reply: Answer) -> Body:
    try:
        body = orjson.loads(reply.body) if reply.body else None
    except orjson.JSONDecodeError:
        body = None
    return body if isinstance(body, dict) else {}


def _header(name: bytes, value: bytes | None) -> Callable[[Answer], None]:
    def change(reply: Answer) -> None:
        reply.headers = [(k, v) for k, v in reply.headers if k != name]
        if value is not None:
            reply.headers.append((name, value))

    return change


def _body(change: Callable[[Body], None]) -> Callable[[Answer], None]:
    def bend(reply: Answer) -> None:
        body = _json(reply)
        if body:
            change(body)
            reply.body = orjson.dumps(body)

    return bend


def _simulated(scenario: str | None, status: int | None, change: Callable[[Answer], None]) -> Bend:
    """Bend an answer that says it is simulated (`scenario` None: any scenario but a 200)."""

    def bend(reply: Answer, exchange: Request, parts: list[str]) -> None:
        found = _scenario(reply)
        if found is None or (scenario is not None and found != scenario):
            return
        if (status is None and reply.status != 200) or reply.status == status:
            change(reply)

    return bend


def _asked(when: Callable[[Answer, list[str]], bool]) -> Bend:
    """Mark as simulated an answer to a request that asked for a scenario, where `when`."""

    def bend(reply: Answer, exchange: Request, parts: list[str]) -> None:
        asked = exchange.extra.get("service_simulate")
        if asked and _scenario(reply) is None and when(reply, parts):
            reply.headers.append((SIMULATED, str(asked).encode("latin-1")))

    return bend


def _past_simulated_limit(reply: Answer, exchange: Request, parts: list[str]) -> None:
    """The real 429 past the 300 simulated answers reports another limit."""
    limit = (b"x-ratelimit-limit", str(SIMULATED_LIMIT).encode())
    if exchange.extra.get("service_simulate") and reply.status == 429 and limit in reply.headers:
        _header(limit[0], b"1000")(reply)


def _items_uncoded(body: Body) -> None:
    for item in (body.get("items") or [])[1:]:
        if isinstance(item, dict):
            item.pop("error_code", None)


_OWN_ENDPOINTS = {"catalog", "config", "playback"}
SIMULATED_LIMIT = 300  # spec: Limits > Behaviour at the ceiling (simulated answers)

# name -> (rules, summary, bend)
_SIMULATION_ROWS: tuple[tuple[str, tuple[str, ...], str, Bend], ...] = (
    ("simulated_429_extra_member", ("SIM-001",), "a simulated 429 carries a member the real one "
     "has not", _simulated("rate_limited", 429, _body(lambda b: b.update(simulated=True)))),
    ("simulated_error_with_vid", ("SIM-003",), "simulated error answers carry a vid",
     _simulated(None, None, _body(lambda b: b.update(vid="v_simulated")))),
    ("simulated_on_other_endpoints", ("SIM-009",), "answers of every endpoint say "
     "Service-Simulated when asked", _asked(lambda r, p: r.status == 200
     and not _OWN_ENDPOINTS & set(p[-2:]))),
    ("simulated_429_limit_other", ("SIM-010",), "a simulated 429 says X-RateLimit-Limit 1000",
     _simulated("rate_limited", 429, _header(b"x-ratelimit-limit", b"1000"))),
    ("simulated_503_code_other", ("SIM-011",), "a simulated 503 has error_code unavailable",
     _simulated("service_unavailable", 503, _body(lambda b: b.update(error_code="unavailable")))),
    ("simulated_not_entitled_error_other", ("SIM-012",), "simulated not_entitled answers have "
     "error not_entitled", _simulated("not_entitled:outside_window", 403,
                                      _body(lambda b: b.update(error="not_entitled")))),
    ("simulated_partial_items_uncoded", ("SIM-013",), "partial_batch's refused items carry no "
     "error_code", _simulated("partial_batch", 200, _body(_items_uncoded))),
    ("simulated_limit_header_other", ("SIM-006",), "past the simulated-answer limit the 429 "
     "says X-RateLimit-Limit 1000", _past_simulated_limit),
    ("simulated_before_authentication", ("SIM-015",), "a 401 to a request asking for a "
     "scenario says Service-Simulated", _asked(lambda r, p: r.status == 401)),
)  # fmt: skip
_BENDS = {row[0]: row[3] for row in _SIMULATION_ROWS}
_PARTIAL_BATCH_TWO = (("simulated_partial_batch_spends_two", ("SIM-014",),
                       "a partial_batch spends two tickets of the playback counter"),)  # fmt: skip

FAULT_ROWS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    tuple((name, rules, summary) for name, rules, summary, _, _ in _ROWS)
    + tuple((name, rules, summary) for name, rules, summary, _ in _SIMULATION_ROWS)
    + _PARTIAL_BATCH_TWO
)
FAULTS = declare(
    FAULT_ROWS,
    area="GET /catalog; simulated answers (Service-Simulate)",
    seam="reply",
    seams=dict.fromkeys(  # at the steps of endpoints/catalog.py and endpoints/playback.py
        (
            "catalog_outside_window_listed", "catalog_refused_licence_listed",
            "catalog_limit_plus_one", "catalog_cursor_page_one",
            "simulated_partial_batch_spends_two",
        ),
        "step",
    ),
    # Proven only once a Freshness bound has passed (30 s, 60 s).
    slow=(
        "catalog_cursor_page_one", "series_withdrawn_gone_at_29_days",
        "playlists_withdrawn_gone_at_29_days",
    ),
)  # fmt: skip

# Licence refusals (store.licence_refusal) a fault lets into the catalog (CAT-056, CAT-057).
_REFUSALS = {
    FaultName.catalog_outside_window_listed: {"outside_window"},
    FaultName.catalog_refused_licence_listed: {
        "entitlement_suspended", "streaming_disabled", "entitlement_not_found"},
}  # fmt: skip


def with_refused(films: list[Record], store: Any, org_id: str, now: float, faults: FaultSwitch
                 ) -> list[Record]:  # fmt: skip
    """`films` plus the published films whose licence refusal a switched-on fault lets in."""
    let_in = set().union(*(why for name, why in _REFUSALS.items() if faults.enabled(name)))
    if not let_in:
        return films
    extra = [f for f in store.films.values()
             if f.published and store.licence_refusal(org_id, f.id, now) in let_in]  # fmt: skip
    return sorted(films + extra, key=lambda f: (f.display_order, f.id))


def films(sb: Server, films: list[Record], *, org_id: str, now: float) -> list[Record]:
    """The films GET /catalog lists (the films step): `films` plus the refused ones a fault lets
    in (`with_refused`), the unpublished licensed ones (catalog_lists_unpublished), sorted by
    title descending (catalog_sort_broken)."""
    faults, store = sb.faults, sb.store
    films = with_refused(films, store, org_id, now, faults)
    if faults.enabled(FaultName.catalog_lists_unpublished):
        films += unpublished_licensed(store, org_id, now)
    if faults.enabled(FaultName.catalog_sort_broken):
        films.sort(key=lambda f: f.title, reverse=True)
    return films


def film_row(sb: Server, row: Body) -> Body:
    """One film row as built (the film row step); display_order a string under
    catalog_display_order_string."""
    if sb.faults.enabled(FaultName.catalog_display_order_string):
        row["display_order"] = str(row["display_order"])
    return row


def episode_rows(sb: Server, rows: list[Body]) -> list[Body]:
    """One film's episode rows in `episode_no` order (the episode rows step): without the
    placeholders (catalog_placeholders_missing), in descending order
    (catalog_episode_order_broken)."""
    if sb.faults.enabled(FaultName.catalog_placeholders_missing):
        rows = [row for row in rows if row.get("status") != "planned"]
    if sb.faults.enabled(FaultName.catalog_episode_order_broken):
        rows.reverse()
    return rows


def bad_cursor_refused(sb: Server, refused: bool) -> bool:
    """A cursor the catalog did not issue is refused (the cursor step); read as none under
    catalog_bad_cursor_accepted."""
    return refused and not sb.faults.enabled(FaultName.catalog_bad_cursor_accepted)


def next_cursor(sb: Server, cursor: str | None) -> str | None:
    """The page's next_cursor (the cursor-out step); none under catalog_cursor_missing."""
    return None if sb.faults.enabled(FaultName.catalog_cursor_missing) else cursor


def page_size(sb: Server, size: int, *, limit: int | None) -> int:
    """The films of one catalog page: `limit`, or the default `size` without one (CAT-060,
    CAT-061 under their faults)."""
    if limit is not None:
        return size + 1 if sb.faults.enabled(FaultName.catalog_limit_plus_one) else size
    return 1 if sb.faults.enabled(FaultName.catalog_cursor_page_one) else size


class SimulationRules(NamedTuple):
    """How a simulated answer is counted and marked (spec: Simulated responses), as the
    simulation step reads it (playback/simulate.py: `respond`, endpoints/playback.py)."""

    counted: bool = True  # spends the organisation's simulated counter
    spends_endpoint: bool = False  # spends the endpoint's own counter too
    header: bool = True  # carries Service-Simulated
    production_honoured: bool = False  # a production organisation gets the scenario too
    partial_batch_extra: int = 0  # tickets a simulated partial_batch costs beyond its own


DEFAULT_RULES = SimulationRules()


def simulation_rules(
    faults: FaultSwitch, rules: SimulationRules = DEFAULT_RULES
) -> SimulationRules:
    """The rules of a simulated answer as the switched-on faults bend them (the simulation step):
    simulated_counter_not_counted, simulated_consumes_limit, simulated_header_missing,
    production_honours_simulate, simulated_partial_batch_spends_two."""
    on = faults.on
    return SimulationRules(
        counted=rules.counted and FaultName.simulated_counter_not_counted not in on,
        spends_endpoint=rules.spends_endpoint or FaultName.simulated_consumes_limit in on,
        header=rules.header and FaultName.simulated_header_missing not in on,
        production_honoured=rules.production_honoured
        or FaultName.production_honours_simulate in on,
        partial_batch_extra=rules.partial_batch_extra
        + (1 if FaultName.simulated_partial_batch_spends_two in on else 0),
    )


def bent_rules(sb: Server, rules: SimulationRules) -> SimulationRules:
    """`simulation_rules` at the step seam (faults/steps.py: POST /playback's simulation step)."""
    return simulation_rules(sb.faults, rules)


def bend_reply(reply: Answer, faults: FaultSwitch, path: str, exchange: Request) -> None:
    """Apply the switched-on faults of these rows to the answer of `path`, in place."""
    parts = path.rstrip("/").split("/")
    for name in sorted(faults.on & _BENDS.keys()):
        _BENDS[name](reply, exchange, parts)
    bent = _bend_body(reply.status, reply.body, faults, parts)
    if bent is not None:
        reply.body = bent


def _bend_body(status: int, body: bytes, faults: FaultSwitch, parts: list[str]) -> bytes | None:
    """The JSON answer with the switched-on body faults applied, or None when none
    applies."""
    on = faults.on & _BY_NAME.keys()
    if not on or not body:
        return None
    try:
        decoded: Any = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(decoded, dict):
        return None
    chosen = [_BY_NAME[name][1] for name in sorted(on) if _BY_NAME[name][0](status, parts, decoded)]
    if not chosen:
        return None
    for change in chosen:
        change(decoded, faults)
    return orjson.dumps(decoded)


def unpublished_licensed(store: Any, org_id: str, now: float) -> list[Any]:
    """Films with a current licence that are not published (fault catalog_lists_unpublished)."""
    return [
        f
        for f in store.films.values()
        if not f.published and store.licence_refusal(org_id, f.id, now) is None
    ]
