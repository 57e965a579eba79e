"""Faults of the creatives endpoints and their share links. Record fields are bent in every record of a list page and of a single read alike (so
the two reads still agree); error codes are bent after the error is built; a few choices the
handlers make go through the small hooks at the bottom, at the step seam (faults/steps.py:
`bend`), one call at each step: the record (`bend_record`), the list's limit (`limit_read`,
`limit_fails`), `since`, rows (`listed`), a miss (`miss`), the file (`file_as_json`), a share
link (`share_link`: endpoints/share.py; its rows are in coverage_rows.py); and a ticket's
refusal on POST /playback (`missing_code`, `refusal`, through faults/playback.py: `bend_items`).

Spec sections: Resources and their fields > Creative record; Endpoints > GET /creatives,
GET /creatives/{id}, GET /creatives/{id}/file; Errors > Creatives list, single read and file;
Paging and envelopes (the walk's end).
"""

# Fault tables hold one row a line, so their long rows are exempt from the line length.
# ruff: noqa: E501

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

import orjson

from delivery_sandbox.faults import body_tables as bt
from delivery_sandbox.faults.names import FaultName
from delivery_sandbox.faults.rows import FaultRow, fault_rows
from delivery_sandbox.faults.switch import declare

if TYPE_CHECKING:
    from delivery_sandbox.faults.seams import Answer, Request, Server
    from delivery_sandbox.faults.switch import FaultSwitch

__all__ = [
    "FAULTS",
    "FAULT_ROWS",
    "ShareLink",
    "bend_record",
    "bend_reply",
    "default_limit",
    "file_as_json",
    "limit_fails",
    "limit_read",
    "listed",
    "miss",
    "missing_code",
    "refusal",
    "share_link",
    "since",
    "walk_rows",
]  # fmt: skip

Body = dict[str, Any]
SIGNED_PREVIEW = "https://cdn.sandbox.test/preview/{}.mp4?signature=sandbox&expires=1"
OTHER_ASPECT = {"reels_9x16": "1:1", "feed_4x5": "9:16", "square_1x1": "4:5"}


def _unready(change: Callable[[Body], None]) -> Callable[[Body], None]:
    """`change` on records whose final file is not ready (none of them the fixtures' ready
    creative, which other scenarios read and open)."""

    def bend(record: Body) -> None:
        if bt.member(record, "final").get("ready") is False:
            change(record)

    return bend


def _set(**values: Any) -> Callable[[Body], None]:
    return lambda record: record.update(values)


def _inner(name: str, **values: Any) -> Callable[[Body], None]:
    return lambda record: bt.member(record, name).update(values)


def _episode_twice(record: Body) -> None:
    episodes = record.get("episodes")
    if isinstance(episodes, list) and episodes:
        episodes.append(episodes[0])


def _scene_reversed(record: Body) -> None:
    scenes = record.get("scenes")
    if isinstance(scenes, list) and scenes and isinstance(scenes[0], dict):
        first = scenes[0]
        first["start_ms"], first["end_ms"] = first.get("end_ms"), first.get("start_ms")


def _hook_null(record: Body) -> None:
    if record.get("scenes"):
        record["hook"] = None


def _formula_string(record: Body) -> None:
    formula = record.get("formula")
    if isinstance(formula, dict):
        record["formula"] = formula.get("name")


def _ends_midday(record: Body) -> None:
    rights = bt.member(record, "rights")
    if isinstance(rights.get("ends_at"), int):
        rights["ends_at"] += 43_200


def _aspect_other(record: Body) -> None:
    placement = record.get("placement")
    if isinstance(placement, str) and placement in OTHER_ASPECT:
        record["aspect"] = OTHER_ASPECT[placement]


def _pushed_unready(record: Body) -> None:
    if record.get("status") == "pushed":
        bt.member(record, "final").update(ready=False, file_url=None)


def _record_bend(field: str, make: Callable[[Any], Any]) -> Callable[[Body], None]:
    """Replace `field` by `make(old value)`."""
    return lambda record: record.update({field: make(record.get(field))})


# name -> (rule, summary, change to one creative record)
RECORD_ROWS: tuple[tuple[str, str, str, Callable[[Body], None]], ...] = (
    ("creative_signed_preview", "CRE-001", "records carry a signed preview_url",
     lambda r: r.update(preview_url=SIGNED_PREVIEW.format(r.get("creative_id")))),
    ("creative_schema_version_text", "CRE-003", "schema_version is the string \"1\"",
     _set(schema_version="1")),
    ("creative_id_prefixed", "CRE-004", "records not ready carry creative_id cr_<uuid>",
     _unready(_record_bend("creative_id", lambda v: f"cr_{v}"))),
    ("creative_code_number", "CRE-005", "creative_code is a number",
     _record_bend("creative_code", lambda v: len(str(v)))),
    ("creative_name_number", "CRE-006", "name is a number",
     _record_bend("name", lambda v: len(str(v)))),
    ("creative_status_null", "CRE-007", "approved records have status null",
     lambda r: r.update(status=None) if r.get("status") == "approved" else None),
    ("creative_org_slug_null", "CRE-009", "org.slug is null", _inner("org", slug=None)),
    ("creative_created_by_email_number", "CRE-010", "created_by.email is a number",
     _inner("created_by", email=0)),
    ("creative_film_genres_null", "CRE-011", "film.genres is null", _inner("film", genres=None)),
    ("creative_episode_twice", "CRE-012", "a record's first episode listed twice",
     _episode_twice),
    ("creative_placement_number", "CRE-013", "placement is a number",
     _record_bend("placement", lambda v: 916 if v is not None else None)),
    ("creative_aspect_mismatch", "CRE-014", "aspect belongs to another placement",
     _aspect_other),
    ("creative_duration_fraction", "CRE-015", "duration_ms has a fraction",
     _record_bend("duration_ms", lambda v: v + 0.5 if isinstance(v, int) else v)),
    ("creative_scene_reversed", "CRE-016", "the first scene ends before it starts",
     _scene_reversed),
    ("creative_hook_null", "CRE-017", "hook null although scenes are listed", _hook_null),
    ("creative_formula_string", "CRE-018", "formula is its name as a string", _formula_string),
    ("creative_rights_midday", "CRE-019", "rights.ends_at falls at 12:00 UTC", _ends_midday),
    ("creative_parent_not_uuid", "CRE-020", "lineage.parent_creative_id is no UUID",
     _inner("lineage", parent_creative_id="CR-00001")),
    ("creative_pushed_unready", "CRE-021", "pushed records have final.ready false",
     _pushed_unready),
    ("creative_file_url_unready", "CRE-022", "records not ready carry a file_url",
     _unready(_inner("final", file_url="http://127.0.0.1/api/c/pending.mp4"))),
    ("creative_target_25fps", "CRE-025", "final.target.fps is 25",
     lambda r: bt.member(bt.member(r, "final"), "target").update(fps=25)),
)  # fmt: skip
_RECORDS = {name: change for name, _, _, change in RECORD_ROWS}

# name -> (rule, summary, (status, code) bent, new code): envelope errors of the creatives paths.
CODE_ROWS: tuple[tuple[str, str, str, tuple[int, int], int], ...] = (
    ("creatives_no_key_4011", "CRE-045", "a missing key answers 4011", (401, 4010), 4011),
    ("creatives_scope_4034", "CRE-047", "a key without creatives:export answers 4034",
     (403, 4030), 4034),
    ("creatives_suspended_4030", "CRE-048", "a suspended organisation answers 4030",
     (403, 4031), 4030),
    ("creatives_limit_4221", "CRE-054", "a bad limit answers 4221", (422, 4220), 4221),
    ("creatives_since_4220", "CRE-056", "a bad updated_since answers 4220", (422, 4221), 4220),
    ("creative_file_409_4091", "CRE-053", "a final still being made answers 4091", (409, 4090),
     4091),
    ("creative_file_503_5030", "CRE-061", "a link that could not be prepared answers 5030",
     (503, 5032), 5030),
)  # fmt: skip
_CODES = {name: (status_code, new) for name, _, _, status_code, new in CODE_ROWS}

# Rows whose change is made by a hook below or by a branch of `mangle_creatives_11`.
HOOK_ROWS: tuple[FaultRow, ...] = fault_rows("""
creatives_version_code_other    | CRE-044   | a bad version answers error_code bad_version
creatives_walk_never_ends       | CRE-033   | the last page's next_cursor is "end" (refused)
creatives_foreign_listed        | CRE-026   | GET /creatives lists other organisations' too
creatives_since_10_digits       | CRE-029   | an 11-digit updated_since answers 4221
creatives_default_limit_60      | CRE-031   | without limit a page holds 60 creatives
creative_foreign_403            | CRE-036   | another organisation's creative answers 403 4030
creative_unknown_410            | CRE-050   | an unknown creative id answers 410 4100
creative_malformed_404_4041     | CRE-051   | an id that is no UUID answers 404 4041
creative_file_json_by_default   | CRE-037   | the file answers 200 JSON without redirect
creative_file_json_any_redirect | CRE-041   | redirect=1 or false answers the file as JSON
share_link_ignores_rights       | CRE-024   | final.file_url opens after the rights ended
creatives_small_page_skips      | FRESH-021 | a page of one after a cursor skips a record
licence_suspension_reason_other | FRESH-004 | a licence suspended while running refuses tickets with reason entitlement_not_found
withdrawn_episode_not_found     | FRESH-002 | a ticket for an episode withdrawn while running answers 404 not_found
suspension_seen_as_forbidden    | FRESH-005 | an organisation suspended while running is refused on the catalog with error forbidden
""")
FAULT_ROWS: tuple[FaultRow, ...] = (
    *((name, (rid,), summary) for name, rid, summary, _ in RECORD_ROWS),
    *((name, (rid,), summary) for name, rid, summary, _, _ in CODE_ROWS),
    *HOOK_ROWS,
)
FAULTS = declare(
    FAULT_ROWS,
    area="Creatives; share links",
    seam="reply",
    seams=dict.fromkeys((name for name, _, _ in HOOK_ROWS), "step"),
    slow=("licence_suspension_reason_other",),  # seen only once the 30 s bound has passed
)
_NAMES = frozenset(row[0] for row in FAULT_ROWS)


def _bend_body(body: Body, status: int, parts: list[str], on: set[str]) -> None:
    if status == 200 and parts[-1] != "file":
        data = bt.data(body)
        items = data.get("items") if parts[-1] == "creatives" else [data]
        for name in sorted(on & _RECORDS.keys()):
            for record in items if isinstance(items, list) else []:
                if isinstance(record, dict):
                    _RECORDS[name](record)
        last = parts[-1] == "creatives" and data.get("next_cursor", "") is None
        if "creatives_walk_never_ends" in on and last:
            data["next_cursor"] = "end"
    for name in sorted(on & _CODES.keys()):
        (status_due, code), new = _CODES[name]
        if status == status_due and body.get("code") == code:
            body["code"] = new
    if "creatives_version_code_other" in on and body.get("error_code") == "unsupported_version":
        body["error_code"] = "bad_version"


def bend_reply(reply: Answer, faults: FaultSwitch, path: str, exchange: Request) -> None:
    """Apply the switched-on body and code faults to an answer of a creatives path,
    and `suspension_seen_as_forbidden` to the catalog."""
    parts = path.rstrip("/").split("/")
    on: set[str] = set(faults.on & _NAMES)
    if "suspension_seen_as_forbidden" in on and parts[-1] == "catalog":
        _suspension_forbidden(reply, exchange)
    if not on or "creatives" not in parts[-3:] or not reply.body:
        return
    try:
        body: Any = orjson.loads(reply.body)
    except orjson.JSONDecodeError:
        return
    if isinstance(body, dict):
        _bend_body(body, reply.status, parts, on)
        reply.body = orjson.dumps(body)


def _suspension_forbidden(reply: Answer, exchange: Request) -> None:
    """A catalog refusal of an organisation suspended after start (by the admin API) names
    `forbidden` instead of `org_suspended` (spec: Limits > Freshness, FRESH-005)."""
    caller = exchange.caller
    if reply.status != 403 or caller is None or caller.suspended_at_start:
        return
    body = orjson.loads(reply.body) if reply.body else None
    if isinstance(body, dict) and body.get("error") == "org_suspended":
        body["error"] = "forbidden"
        reply.body = orjson.dumps(body)


# -- hooks of the creatives handlers and of the share link --------------------------------------


def limit_read(sb: Server, query: tuple[str | None, int]) -> tuple[str | None, int]:
    """GET /creatives's raw `limit` and its default as the limit step reads them: an empty
    `limit=` read as none (creatives_empty_limit_accepted), a default of 60
    (creatives_default_limit_60)."""
    raw, default = query
    if raw == "" and sb.faults.enabled(FaultName.creatives_empty_limit_accepted):
        raw = None
    return raw, default_limit(default, sb.faults)


def limit_fails(sb: Server, fails: bool, *, limit: int, highest: int) -> bool:
    """The highest limit answers 500 (creatives_limit_max_500, a property test's fault)."""
    return fails or (limit == highest and sb.faults.enabled(FaultName.creatives_limit_max_500))


def bend_record(sb: Server, record: dict[str, Any], *, link: str | None) -> dict[str, Any]:
    """A creative record as built (the record step): `updated_at` a string under
    creative_updated_at_iso; its share `link` (None: none to show) listed although revoked
    under revoked_link_still_listed."""
    on = sb.faults.on
    if FaultName.creative_updated_at_iso in on:
        record["updated_at"] = f"{record['updated_at']}"
    if FaultName.revoked_link_still_listed in on:
        record["final"]["file_url"] = link
    return record


_LIST_FAULTS = frozenset(
    {
        FaultName.creatives_foreign_listed,
        FaultName.creatives_updated_since_inclusive,
        FaultName.creatives_order_broken,
        FaultName.creatives_small_page_skips,
    }
)


def listed(
    sb: Server,
    rows: list[Any],
    *,
    org_id: str,
    since: int | None,
    after: list[Any] | None,
    limit: int,
) -> list[Any]:
    """The creatives a page of GET /creatives is cut from (the rows step): `rows` (the caller's
    visible creatives after `since`, by updated_at then id), or as the faults choose them from
    every creative of the store: of every organisation (creatives_foreign_listed), from `since`
    itself on (creatives_updated_since_inclusive), newest first (creatives_order_broken), one
    skipped (`walk_rows`)."""
    on = sb.faults.on & _LIST_FAULTS
    if not on:
        return rows
    foreign = FaultName.creatives_foreign_listed in on
    inclusive = FaultName.creatives_updated_since_inclusive in on
    if foreign or inclusive:
        rows = [
            c
            for c in sb.store.creatives.values()
            if (c.org_id == org_id or foreign)
            and c.visible
            and (since is None or c.updated_at > since or (inclusive and c.updated_at == since))
        ]
        rows.sort(key=lambda c: (c.updated_at, c.id))
    if FaultName.creatives_order_broken in on:
        rows.sort(key=lambda c: (-c.updated_at, c.id))
    return walk_rows(rows, after, limit, sb.faults)


def walk_rows(
    rows: list[Any], after: list[Any] | None, limit: int, faults: FaultSwitch
) -> list[Any]:
    """The creatives a page is cut from (sorted by updated_at then id); under
    creatives_small_page_skips a page of one after a cursor loses the record due first."""
    if after is None or limit != 1 or not faults.enabled(FaultName.creatives_small_page_skips):
        return rows
    return [c for c in rows if [c.updated_at, c.id] > after][1:]


def since(sb: Server, since: int | bool | None) -> int | bool | None:
    """The parsed `updated_since`; False (refused) for 11 digits under creatives_since_10_digits."""
    if isinstance(since, int) and not isinstance(since, bool) and since >= 10**10:
        return False if sb.faults.enabled(FaultName.creatives_since_10_digits) else since
    return since


def default_limit(limit: int, faults: FaultSwitch) -> int:
    return 60 if faults.enabled(FaultName.creatives_default_limit_60) else limit


def miss(sb: Server, answer: tuple[int, int], *, org_id: str, raw: str) -> tuple[int, int]:
    """(status, envelope code) for a creative id the single read does not find: `answer` (404
    4040) for all, bent by creative_foreign_403, creative_unknown_410 or
    creative_malformed_404_4041."""
    faults, found = sb.faults, sb.store.creatives.get(raw.lower())
    if found is not None and found.org_id != org_id:
        return (403, 4030) if faults.enabled(FaultName.creative_foreign_403) else answer
    if found is None and len(raw) == 36 and raw.count("-") == 4:
        return (410, 4100) if faults.enabled(FaultName.creative_unknown_410) else answer
    if found is None:
        return (404, 4041) if faults.enabled(FaultName.creative_malformed_404_4041) else answer
    return answer


def file_as_json(sb: Server, as_json: bool, *, redirect: str | None) -> bool:
    """The file is answered as JSON (`as_json`: `redirect=0`), or for any value or none under
    the faults."""
    if redirect is None:
        return as_json or sb.faults.enabled(FaultName.creative_file_json_by_default)
    return as_json or sb.faults.enabled(FaultName.creative_file_json_any_redirect)


def missing_code(withdrawn: set[str], episode_id: str | None, faults: FaultSwitch) -> str:
    """The error_code of a ticket's 404 for an episode not found: `not_ready`, or `not_found`
    for one the admin API withdrew under withdrawn_episode_not_found."""
    bent = faults.enabled(FaultName.withdrawn_episode_not_found) and episode_id in withdrawn
    return "not_found" if bent else "not_ready"


def refusal(
    store: Any, org_id: str, film_id: str, refusal: str | None, faults: FaultSwitch
) -> str | None:
    """The `not_entitled` reason of a ticket; under licence_suspension_reason_other a licence
    the admin API suspended reads entitlement_not_found."""
    bent = faults.enabled(FaultName.licence_suspension_reason_other)
    if refusal != "entitlement_suspended" or not bent:
        return refusal
    changed = f"{org_id}/{film_id}" in store.changed_licences()
    return "entitlement_not_found" if changed else refusal


# -- share links (rows: coverage_rows.py) -------------------------------------------------------


class ShareLink(NamedTuple):
    """What one open of a share link weighs (endpoints/share.py, the share-link step)."""

    revoked: bool  # the link was revoked
    rights_open: bool  # the export rights hold
    ttl: int  # seconds the download link it redirects to is valid


def share_link(sb: Server, link: tuple[bool, bool, int]) -> ShareLink:
    """`link` (revoked, rights open, ttl) as the share-link faults bend it: a revoked link
    still opens (revoked_link_still_opens), after the rights ended too
    (share_link_ignores_rights), and its download link lives twice as long
    (share_download_link_30_minutes)."""
    revoked, rights_open, ttl = link
    on = sb.faults.on
    return ShareLink(
        revoked and FaultName.revoked_link_still_opens not in on,
        rights_open or FaultName.share_link_ignores_rights in on,
        2 * ttl if FaultName.share_download_link_30_minutes in on else ttl,
    )
