"""Faults of POST /playback and of the open video endpoints. Each row breaks one rule of the playback body, of a ticket or of an error
answer, or one rule of the open video rows and their flat errors.

Two hooks: `bend_request_body` (control/front_faults.py, the request-in seam of POST /playback) bends the body a request sent before the
sandbox reads it, and notes what the answer needs to know about it in `Request.extra`;
`bend_reply` (faults/reply.py) bends the answer once it is built. At the step seam
(faults/steps.py: `bend`): `org_suspended` and `bend_items` (endpoints/playback.py: the
organisation step, the items before they are rendered), and the open video handlers' steps
(endpoints/videos.py: `bad_limit`, `video_list`, `videos_listed`, `video_id`, `video_served`).

Spec sections: Endpoints > POST /playback (body table, batch forms, reuse, the two ticket
shapes, subtitles); Errors > Playback; Resources > Open video row; Endpoints > GET /videos;
Errors > Open videos (flat).
"""

# Fault tables hold one row a line, so their long rows are exempt from the line length.
# ruff: noqa: E501

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import orjson

from delivery_sandbox.faults import body_tables as bt
from delivery_sandbox.faults import creatives as creative_faults
from delivery_sandbox.faults.names import FaultName
from delivery_sandbox.faults.switch import declare

if TYPE_CHECKING:
    from delivery_sandbox.faults.seams import Answer, Request, Server
    from delivery_sandbox.faults.switch import FaultSwitch

__all__ = [
    "FAULTS",
    "FAULT_ROWS",
    "bad_limit",
    "bend_items",
    "bend_reply",
    "bend_request_body",
    "org_suspended",
    "video_id",
    "video_list",
    "video_served",
    "videos_listed",
]

Body = dict[str, Any]
UUID = re.compile(r"[0-9a-fA-F]{8}(-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\Z")
REFUSED = b"[]"  # a body that is no JSON object: the whole-request 400 without a code
NOTE = "playback_faults"  # the key of what the request hook notes in Request.extra


# -- the request side: the body as the sandbox will read it ------------------------------------


@dataclass(frozen=True)
class Seen:
    """What a request change may read beside the body: the request headers, the store."""

    headers: dict[str, str]
    store: Any


def _first_episode(body: Body, seen: Seen) -> Body:
    """A single request naming its episode by `episode_id` alone gets its film's episode 1."""
    episode_id = body.get("episode_id")
    if not isinstance(episode_id, str) or "film_ref" in body or "episodes" in body:
        return body
    episode = seen.store.episode(episode_id)
    if episode is not None and episode.episode_no != 1:
        del body["episode_id"]
        body.update(film_ref=episode.film_id, episode_no=1)
    return body


def _no_content_type(body: Body, seen: Seen) -> Body | bytes:
    return b"" if "content-type" not in seen.headers else body


def _pop(*names: str, when: Callable[[Body], bool] = lambda b: True) -> Callable[..., Body]:
    def change(body: Body, seen: Seen) -> Body:
        if when(body):
            for name in names:
                body.pop(name, None)
        return body

    return change


def _next_episode(uuid: bool) -> Callable[..., Body]:
    """A top-level `film_ref` of the given form resolves to the following episode."""

    def change(body: Body, seen: Seen) -> Body:
        ref, number = body.get("film_ref"), body.get("episode_no")
        if "episode_id" in body or not isinstance(ref, str) or type(number) is not int:
            return body
        if bool(UUID.match(ref)) == uuid:
            body["episode_no"] = number + 1
        return body

    return change


def _half_pair_dropped(body: Body, seen: Seen) -> Body:
    if (body.get("union_info") is None) != (body.get("drm_kek") is None):
        body.pop("union_info", None)
        body.pop("drm_kek", None)
    return body


def _device_length(name: str, length: int, value: str) -> Callable[..., Body]:
    """A `name` of exactly `length` characters (no padding) is replaced by `value`."""

    def change(body: Body, seen: Seen) -> Body:
        sent = body.get(name)
        if isinstance(sent, str) and sent == sent.strip() and len(sent) == length:
            body[name] = value
        return body

    return change


# spec: POST /playback, `union_info`: the null-like words (`undefined` is PLAY-016's own row).
NULL_LIKE = frozenset({"(null)", "null", "nil", "nan", "<null>", "none"})


def _padded_null_word(body: Body, seen: Seen) -> Body:
    """A device value that is a null-like word in upper or mixed case, padded with spaces to 8
    characters or more, is replaced by a value that passes (so the request is served)."""
    for name in ("union_info", "drm_kek"):
        sent = body.get(name)
        word = sent.strip() if isinstance(sent, str) else ""
        if word.lower() in NULL_LIKE and word != word.lower() and len(sent or "") >= 8:
            body[name] = f"{name}-accepted"
    return body


def _refuse(when: Callable[[Body], bool]) -> Callable[..., Body | bytes]:
    return lambda body, seen: REFUSED if when(body) else body


def _unknown_intent(body: Body) -> bool:
    return (
        "episodes" not in body and "intent" in body and body["intent"] not in ("play", "prefetch")
    )


def _long_viewer_ref(body: Body) -> bool:
    ref = body.get("viewer_ref")
    return isinstance(ref, str) and len(ref) >= 256


def _items(change: Callable[[list[Any]], list[Any]]) -> Callable[..., Body]:
    def bend(body: Body, seen: Seen) -> Body:
        if isinstance(body.get("episodes"), list):
            body["episodes"] = change(body["episodes"])
        return body

    return bend


def _names_an_episode(item: object) -> bool:
    if not isinstance(item, dict):
        return False
    number = item.get("episode_no")
    whole = type(number) is int and number >= 1
    return isinstance(item.get("episode_id"), str) or (
        isinstance(item.get("film_ref"), str) and whole
    )


def _next_clamped(body: Body, seen: Seen) -> Body:
    count = body.get("next")
    if isinstance(count, int | float | str) and not isinstance(count, bool):
        try:
            body["next"] = min(2, max(0, int(float(count))))
        except ValueError:
            return body
    return body


def _set(name: str, value: object, when: Callable[[Body], bool]) -> Callable[..., Body]:
    def change(body: Body, seen: Seen) -> Body:
        if when(body):
            body[name] = value
        return body

    return change


def _has(name: str) -> Callable[[Body], bool]:
    return lambda body: name in body


def _set_each(values: dict[str, object], when: Callable[[Body], bool]) -> Callable[..., Body]:
    def change(body: Body, seen: Seen) -> Body:
        if when(body):
            body.update(values)
        return body

    return change


def _batch_with_viewer(body: Body) -> bool:
    return ("episodes" in body or "next" in body) and "viewer_ref" in body


def _in_batch(body: Body) -> bool:
    return "episodes" in body


def _batch_without_viewer(body: Body) -> bool:
    return ("episodes" in body or "next" in body) and "viewer_ref" not in body


def _no_anchor(body: Body) -> bool:
    return "next" in body and "episode_id" not in body and "film_ref" not in body


def _prefetch_with_viewer(body: Body) -> bool:
    return "viewer_ref" in body and body.get("intent") == "prefetch"


RequestChange = Callable[[Body, Seen], Body | bytes]
# name -> (rules, summary, change to the request body)
_REQUEST_ROWS: tuple[tuple[str, tuple[str, ...], str, RequestChange], ...] = (
    ("playback_content_type_required", ("PLAY-004",), "a playback body sent without Content-Type is read as empty", _no_content_type),
    ("episode_id_first_episode", ("PLAY-005",), "episode_id alone is read as episode 1 of its film", _first_episode),
    ("film_ref_wins_over_episode_id", ("PLAY-006",), "film_ref + episode_no take precedence over episode_id", _pop("episode_id", when=lambda b: "film_ref" in b and not _in_batch(b))),
    ("film_ref_id_next_episode", ("PLAY-007",), "film_ref given as the film id names the following episode", _next_episode(True)),
    ("film_ref_slug_next_episode", ("PLAY-008",), "film_ref given as the slug names the following episode", _next_episode(False)),
    ("device_half_pair_ignored", ("PLAY-012",), "one device value without the other is ignored, not refused", _half_pair_dropped),
    ("union_info_seven_accepted", ("PLAY-013",), "a union_info of 7 characters is accepted", _device_length("union_info", 7, "union-info-long-enough")),
    ("device_value_eight_refused", ("PLAY-014",), "a union_info of exactly 8 characters is refused as too short", _device_length("union_info", 8, "short")),
    ("null_word_padded_accepted", ("PLAY-017",), "a null-like word in upper or mixed case, padded to 8 characters, is accepted", _padded_null_word),
    ("drm_kek_seven_accepted", ("PLAY-018",), "a drm_kek of 7 characters is accepted (union_info keeps its minimum)", _device_length("drm_kek", 7, "drm-kek-long-enough")),
    ("intent_required", ("PLAY-021",), "a playback body without intent answers 400", _refuse(lambda b: "intent" not in b)),
    ("unknown_intent_refused", ("PLAY-022",), "an intent other than play or prefetch answers 400", _refuse(_unknown_intent)),
    ("viewer_ref_max_255", ("PLAY-024",), "a viewer_ref of 256 characters answers 400", _refuse(_long_viewer_ref)),
    ("episodes_empty_ignored", ("PLAY-028",), "an empty episodes array is read as absent", _pop("episodes", when=lambda b: b.get("episodes") == [])),
    ("episodes_over_three_cut", ("PLAY-029",), "more than 3 episodes are cut to the first 3", _items(lambda items: items[:3])),
    ("batch_item_without_episode_dropped", ("PLAY-030",), "episodes items naming no episode are left out", _items(lambda items: [i for i in items if _names_an_episode(i)] or items)),
    ("batch_top_level_episode_ignored", ("PLAY-031",), "top-level episode fields beside episodes are ignored", _pop("episode_id", "film_ref", "episode_no", when=_in_batch)),
    ("batch_next_ignored", ("PLAY-032",), "next beside episodes is ignored", _pop("next", when=_in_batch)),
    ("next_clamped", ("PLAY-033",), "next outside 0 to 2 is clamped to a whole number in range", _next_clamped),
    ("next_without_anchor_ignored", ("PLAY-034",), "next without an anchor episode is ignored", _pop("next", when=_no_anchor)),
    ("reuse_without_viewer_ref", ("PLAY-059",), "requests without viewer_ref share one reuse key", _set("viewer_ref", "anonymous", lambda b: "viewer_ref" not in b)),
    ("batch_reused_without_viewer_ref", ("PLAY-059",), "batch requests without viewer_ref share one reuse key", _set("viewer_ref", "anonymous-batch", _batch_without_viewer)),
    ("film_ref_reused_without_viewer_ref", ("PLAY-059",), "requests naming the episode by film_ref without viewer_ref share one reuse key", _set("viewer_ref", "anonymous-film", lambda b: "film_ref" in b and "viewer_ref" not in b)),
    ("prefetch_reused_without_viewer_ref", ("PLAY-059",), "prefetch requests without viewer_ref share one reuse key", _set("viewer_ref", "anonymous-prefetch", lambda b: b.get("intent") == "prefetch" and "viewer_ref" not in b)),
    ("reuse_never", ("PLAY-060",), "viewer_ref is ignored: every repeat mints a new ticket", _pop("viewer_ref")),
    ("reuse_ignores_viewer_ref", ("PLAY-061",), "every viewer_ref shares one reuse key", _set("viewer_ref", "everyone", _has("viewer_ref"))),
    ("reuse_ignores_intent_class", ("PLAY-063",), "a prefetch with a viewer_ref reuses the play ticket", _set("intent", "play", _prefetch_with_viewer)),
    ("batch_reuse_ignores_viewer_ref", ("PLAY-061",), "batch requests share one reuse key whatever their viewer_ref", _set("viewer_ref", "everyone-batch", _batch_with_viewer)),
    ("batch_reuse_ignores_device", ("PLAY-002", "PLAY-062"), "batch requests with a viewer_ref reuse tickets issued for other device values", _set_each({"union_info": "batch-union-info", "drm_kek": "batch-drm-kek-0000"}, _batch_with_viewer)),
    ("batch_reuse_ignores_intent_class", ("PLAY-063",), "a batch whose first item is a prefetch reuses its play ticket", _set("intent", "play", lambda b: _batch_with_viewer(b) and b.get("intent") == "prefetch")),
)  # fmt: skip
_REQUEST = {name: change for name, _, _, change in _REQUEST_ROWS}


def bend_request_body(
    read: Callable[[], Awaitable[bytes]], scope: dict[str, Any], sb: Server, exchange: Request
) -> Callable[[], Awaitable[bytes]]:
    """The body reader of POST /playback with the request faults applied; notes in
    `exchange.extra` whether the request sent device values and whether it names a published
    episode that is not ready to stream."""
    on = sb.faults.on & (_REQUEST.keys() | _NOTED)
    if not on:
        return read

    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
    seen = Seen(headers, sb.store)

    async def bent() -> bytes:
        raw = await read()
        body = bt.json_object(raw)
        if body is None:
            return raw
        episode = (
            sb.store.episode(body["episode_id"])
            if isinstance(body.get("episode_id"), str)
            else None
        )
        exchange.extra[NOTE] = {
            "device": body.get("union_info") is not None,
            "not_ready": episode is not None and not episode.stream_ready,
        }
        for name in sorted(on & _REQUEST.keys()):
            changed = _REQUEST[name](body, seen)
            if isinstance(changed, bytes):
                return changed
            body = changed
        return orjson.dumps(body)

    return bent


# -- the answer side ----------------------------------------------------------------------------


def _note(exchange: Request, name: str) -> bool:
    return bool(exchange.extra.get(NOTE, {}).get(name))


def _answers(body: Body) -> list[Body]:
    """The single answer, or the items of a batch."""
    items = body.get("items")
    return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else [body]


def _error(was: int, code: str | None, status: int, **fields: object) -> Callable[..., int | None]:
    """Every answer (single or item) of status `was` with `code` becomes `status` with `fields`."""

    def change(reply: Answer, body: Body, exchange: Request) -> int | None:
        hit = False
        for answer in _answers(body):
            if answer.get("status", reply.status) == was and answer.get("error_code") == code:
                answer.update(fields)
                hit = True
                if "status" in answer:
                    answer["status"] = status
        return status if hit and "items" not in body else None

    return change


def _reason(old: str, new: str) -> Callable[..., int | None]:
    def change(reply: Answer, body: Body, exchange: Request) -> int | None:
        for answer in _answers(body):
            if answer.get("reason") == old:
                answer.update(reason=new, error=new)
        return None

    return change


def _fields_first(reply: Answer, body: Body, exchange: Request) -> int | None:
    if isinstance(body.get("fields"), list):
        body["fields"] = body["fields"][:1]
    return None


def _unencrypted_needs_device(reply: Answer, body: Body, exchange: Request) -> int | None:
    if reply.status != 200 or "manifest_url" not in body or _note(exchange, "device"):
        return None
    body.clear()
    body.update(error="send union_info and drm_kek", error_code="sdk_required")
    body["request_id"] = exchange.request_id
    body["protection"] = "private-encrypted"
    return 409


def _first_failure(reply: Answer, body: Body, exchange: Request) -> int | None:
    items = _answers(body) if "items" in body else []
    failed = [i for i in items if i.get("status") != 200]
    if not failed or len(failed) == len(items):
        return None
    first = {k: v for k, v in failed[0].items() if k not in ("request", "status")}
    body.clear()
    body.update(first, request_id=exchange.request_id)
    return int(failed[0]["status"])


def _single(shape: str, name: str, value: object) -> Callable[..., int | None]:
    """A single 200 ticket holding `shape` gets `name` set to `value`."""

    def change(reply: Answer, body: Body, exchange: Request) -> int | None:
        if reply.status == 200 and "items" not in body and shape in body:
            body[name] = value
        return None

    return change


def _subtitles_per_answer(reply: Answer, body: Body, exchange: Request) -> int | None:
    for answer in _answers(body):
        for track in answer.get("subtitles") or []:
            if isinstance(track, dict) and isinstance(track.get("url"), str):
                sep = "&" if "?" in track["url"] else "?"
                track["url"] += f"{sep}r={exchange.request_id}"
    return None


def _not_ready_503(reply: Answer, body: Body, exchange: Request) -> int | None:
    if (
        reply.status == 404
        and body.get("error_code") == "not_ready"
        and _note(exchange, "not_ready")
    ):
        return 503
    return None


def _item_403_code(reply: Answer, body: Body, exchange: Request) -> int | None:
    for item in _answers(body) if "items" in body else []:
        if item.get("status") == 403:
            item["error_code"] = "forbidden"
    return None


def _whole_429_as_item(reply: Answer, body: Body, exchange: Request) -> int | None:
    """A whole-request 429 of the limiter answered as a 200 holding one refused item."""
    if reply.status != 429 or body.get("reason") is not None:
        return None
    wait = next((int(v) for k, v in reply.headers if k == b"retry-after"), 1)
    dropped = (b"retry-after", b"x-ratelimit-limit", b"x-ratelimit-window")  # 429 headers only
    reply.headers = [(k, v) for k, v in reply.headers if k not in dropped]
    item = {"status": 429, "error": body.get("error"), "error_code": body.get("error_code")}
    body.clear()
    body["items"] = [{**item, "retry_after": wait}]
    return 200


AnswerChange = Callable[["Answer", Body, "Request"], int | None]  # returns a new status or None
_PLAYBACK_ROWS: tuple[tuple[str, tuple[str, ...], str, AnswerChange], ...] = (
    ("sdk_required_as_400", ("PLAY-011",), "an encrypted episode without device values answers 400 invalid_request", _error(409, "sdk_required", 400, error_code="invalid_request")),
    ("whole_429_as_refused_item", ("PLAY-074",), "a request refused whole by the limit answers 200 with one refused item", _whole_429_as_item),
    ("device_fields_first_only", ("PLAY-019",), "invalid_device_info names only the first rejected field", _fields_first),
    ("unencrypted_needs_device", ("PLAY-020",), "an unencrypted episode without device values answers 409 sdk_required", _unencrypted_needs_device),
    ("batch_fails_with_its_first_item", ("PLAY-045",), "a batch with a failed item answers that item's error for the whole request", _first_failure),
    ("play_token_empty", ("PLAY-048",), "an encrypted ticket's play_auth_token is empty", _single("play_auth_token", "play_auth_token", "")),
    ("manifest_ticket_with_vid", ("PLAY-049",), "an unencrypted ticket carries a vid beside manifest_url", _single("manifest_url", "vid", "vid-unencrypted")),
    ("subtitle_url_per_ticket", ("PLAY-058",), "subtitle urls change with every ticket", _subtitles_per_answer),
    ("outside_window_not_found", ("PLAY-078",), "a film outside its window is refused with reason entitlement_not_found", _reason("outside_window", "entitlement_not_found")),
    ("no_licence_outside_window", ("PLAY-079",), "a film without a licence is refused with reason outside_window", _reason("entitlement_not_found", "outside_window")),
    ("suspended_licence_not_found", ("PLAY-080",), "a suspended licence is refused with reason entitlement_not_found", _reason("entitlement_suspended", "entitlement_not_found")),
    ("streaming_disabled_suspended", ("PLAY-081",), "a licence without streaming is refused with reason entitlement_suspended", _reason("streaming_disabled", "entitlement_suspended")),
    ("org_suspended_reason_wrong", ("PLAY-082",), "a suspended organisation is refused with reason entitlement_suspended", _reason("org_suspended", "entitlement_suspended")),
    ("not_ready_episode_503", ("PLAY-088",), "a published episode not ready to stream answers 503 not_ready", _not_ready_503),
    ("stream_502_with_error_code", ("PLAY-091",), "a stream that could not be prepared answers 502 with error_code stream_error", _error(502, None, 502, error_code="stream_error")),
    ("no_playable_404", ("PLAY-092",), "an episode with no playable version answers 404 not_ready", _error(503, "not_ready", 404)),
    ("batch_item_403_forbidden", ("PLAY-096",), "a batch item refused 403 has error_code forbidden (the single answer keeps not_entitled)", _item_403_code),
)  # fmt: skip
_PLAYBACK = {name: change for name, _, _, change in _PLAYBACK_ROWS}
_NOTED = frozenset({"unencrypted_needs_device", "not_ready_episode_503"})


# -- the open videos ----------------------------------------------------------------------------


def _rows(change: Callable[[list[Any], Body], None]) -> Callable[[Answer, Body], None]:
    def bend(reply: Answer, body: Body) -> None:
        rows = body.get("rows")
        if reply.status == 200 and isinstance(rows, list):
            change([r for r in rows if isinstance(r, dict)], body)

    return bend


def _each_row(name: str, value: Callable[[Any], Any]) -> Callable[[Answer, Body], None]:
    """Every row's `name` (`mp4.p480` reaches into `mp4`) replaced by `value` of it; a name the
    row lacks is added."""

    def change(rows: list[Any], body: Body) -> None:
        *outer, last = name.split(".")
        for row in rows:
            holder = row.get(outer[0]) if outer else row
            if isinstance(holder, dict):
                holder[last] = value(holder.get(last))

    return _rows(change)


def _last_row_lost(rows: list[Any], body: Body) -> None:
    if body.get("next_cursor") and isinstance(body.get("rows"), list) and body["rows"]:
        body["rows"].pop()


def _single_row_id(reply: Answer, body: Body) -> None:
    row = body.get("row")
    if reply.status == 200 and isinstance(row, dict) and isinstance(row.get("id"), str):
        row["id"] = row["id"].upper()


def _flat_error(status: int, said: str | None, **fields: object) -> Callable[[Answer, Body], None]:
    def change(reply: Answer, body: Body) -> None:
        if reply.status == status and (said is None or body.get("error") == said):
            body.update(fields)

    return change


def _version_error(reply: Answer, body: Body) -> None:
    if reply.status == 400 and body.get("error_code") == "unsupported_version":
        body.pop("error_code")
        body["error"] = "unsupported_version"


_VIDEO_ROWS: tuple[tuple[str, tuple[str, ...], str, Callable[[Answer, Body], None]], ...] = (
    ("video_position_string", ("VID-001",), "open video rows carry position as a string", _each_row("position", str)),
    ("video_single_id_upper", ("VID-002",), "GET /videos/{id} answers the row's id in upper case", _single_row_id),
    ("video_p480_null", ("VID-005",), "open video rows have mp4.p480 null", _each_row("mp4.p480", lambda v: None)),
    ("videos_page_loses_last_row", ("VID-011",), "a page with a next_cursor leaves out its last row", _rows(_last_row_lost)),
    ("video_rows_extra_field", ("VID-013",), "open video rows carry an undocumented `hls` field", _each_row("hls", lambda v: None)),
    ("videos_version_error_flat", ("VID-021",), "the open videos' unsupported_version is in `error`, without error_code", _version_error),
    ("videos_scope_403_coded", ("VID-023",), "the open videos' 403 for a missing scope carries error_code forbidden", _flat_error(403, "the key lacks the scope this endpoint needs", error_code="forbidden")),
    ("videos_app_not_registered_renamed", ("VID-024",), "the open videos' 403 for an unbound key says app_unregistered", _flat_error(403, "app_not_registered", error="app_unregistered")),
    ("videos_org_suspended_renamed", ("VID-025",), "the open videos' 403 for a suspended organisation says suspended", _flat_error(403, "org_suspended", error="suspended")),
    ("videos_collection_not_found_renamed", ("VID-026",), "GET /videos' 404 for a collection says not_found", _flat_error(404, "collection_not_found", error="not_found")),
    ("videos_500_with_error_code", ("VID-029",), "the open videos' 500 carries error_code internal_error", _flat_error(500, None, error_code="internal_error")),
)  # fmt: skip
_VIDEOS = {name: change for name, _, _, change in _VIDEO_ROWS}

# Faults the playback policies read (faults/limits.py: `bend_policies`): reuse and the `next` items.
_POLICY_ROWS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("reuse_extends_ticket", ("PLAY-003",), "each reuse of a ticket moves its expires_at 5 minutes later"),
    ("reuse_margin_one_minute", ("PLAY-064",), "a ticket is reused until 1 minute before it expires, not 5"),
    ("next_items_play", ("PLAY-038",), "items added by next are recorded as play, not prefetch"),
)  # fmt: skip

# Faults the open video handlers ask about (endpoints/videos.py): what a list holds, a page's
# size, what GET /videos/{id} takes as its id.
_VIDEO_HANDLER_ROWS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("video_listed_under_first_collection", ("VID-004",), "a video in two granted collections is listed only under the first"),
    ("videos_list_not_granted", ("VID-006",), "GET /videos without collection lists the videos of collections not granted too"),
    ("videos_page_one_over_limit", ("VID-008",), "a GET /videos page holds one row more than limit"),
    ("video_slug_as_id", ("VID-016",), "GET /videos/{id} takes a video's slug as its id"),
)  # fmt: skip

Sequence = list[tuple[str, int, str]]  # (collection code, position, video id) in list order


def video_list(
    sb: Server, walk: tuple[Sequence, int], *, wanted: str | None, granted: list[Any]
) -> tuple[Sequence, int]:
    """The rows GET /videos walks and its page size (`walk`), with the list faults applied."""
    sequence, limit = walk
    on = sb.faults.on
    if "videos_list_not_granted" in on and wanted is None:
        others = [c for c in sb.store.collections.values() if c not in granted and not c.broken]
        sequence = sequence + [(c.code, i, v) for c in others for i, v in enumerate(c.videos, 1)]
    if "video_listed_under_first_collection" in on:
        first: dict[str, str] = {}
        for collection in granted:
            for video in collection.videos:
                first.setdefault(video, collection.code)
        sequence = [row for row in sequence if first.get(row[2], row[0]) == row[0]]
    return sequence, limit + 1 if "videos_page_one_over_limit" in on else limit


A = TypeVar("A")  # http/headers.py: Reply


def bad_limit(sb: Server, answer: A, *, coded: Callable[[], A]) -> A:
    """GET /videos's answer to a bad `limit` (the query step): `answer`, or with an error_code
    under videos_bad_limit_coded (a property test's fault)."""
    return coded() if FaultName.videos_bad_limit_coded in sb.faults.on else answer


def videos_listed(sb: Server, shown: Sequence, *, window: Sequence) -> Sequence:
    """The rows of a GET /videos page shown (the rows step): `shown`, those of the page's
    `window` ready to play, in collection order; under videos_not_ready_listed every row of the
    window, under videos_order_broken in reverse."""
    on = sb.faults.on
    shown = window if FaultName.videos_not_ready_listed in on else shown
    return shown[::-1] if FaultName.videos_order_broken in on else shown


def video_served(sb: Server, playable: bool, *, video: Any) -> bool:
    """GET /videos/{id} serves a video ready to play; under video_not_ready_served any video
    not archived (the served step)."""
    bent = FaultName.video_not_ready_served in sb.faults.on and not video.archived
    return playable or bent


def video_id(sb: Server, raw: str) -> str:
    """The id GET /videos/{id} reads: under `video_slug_as_id`, a slug names its video."""
    if "video_slug_as_id" in sb.faults.on:
        return next((v.id for v in sb.store.videos.values() if v.slug == raw), raw)
    return raw


# A fault the playback handler asks about (endpoints/playback.py): where it reads the
# organisation's state. Slow: the suite waits out the 30 s bound before it can see it.
_ORG_ROWS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("org_state_cached_per_key", ("PLAY-067",), "POST /playback reads the organisation's suspension once per key and keeps it 35 s"),
)  # fmt: skip
ORG_CACHE_SECONDS = 35.0  # past the 30 s within which the suite wants a suspension seen


def org_suspended(sb: Server, suspended: bool, *, caller: Any, kept_tickets: int) -> bool:
    """Whether POST /playback sees the caller's organisation suspended (the organisation step):
    read on every request (`suspended`), or under `org_state_cached_per_key` once per key (the
    key's role) and kept 35 s; under `reuse_skips_organisation_check` not read while the sandbox
    keeps tickets for reuse (`kept_tickets`)."""
    on = sb.faults.on
    if FaultName.reuse_skips_organisation_check in on and kept_tickets > 0:
        return False
    if "org_state_cached_per_key" not in on:
        return suspended
    cache: dict[str, tuple[bool, float]] = sb.faults.memo("org_state_cached_per_key", lambda on: {})
    now, kept = sb.now(), cache.get(caller.role)
    if kept is None or now - kept[1] >= ORG_CACHE_SECONDS:
        kept = cache[caller.role] = (bool(caller.suspended), now)
    return kept[0]


FAULT_ROWS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    *(
        (name, rules, summary)
        for name, rules, summary, _ in (*_REQUEST_ROWS, *_PLAYBACK_ROWS, *_VIDEO_ROWS)
    ),
    *_POLICY_ROWS,
    *_VIDEO_HANDLER_ROWS,
    *_ORG_ROWS,
)
FAULTS = declare(
    FAULT_ROWS,
    area="POST /playback; open videos",
    seam="reply",
    seams={
        **dict.fromkeys((row[0] for row in _REQUEST_ROWS), "request"),
        **dict.fromkeys((row[0] for row in (*_POLICY_ROWS, *_VIDEO_HANDLER_ROWS, *_ORG_ROWS)), "step"),
    },
    # Proven only once a Freshness bound has passed (30 s, 60 s).
    slow=(
        "org_state_cached_per_key", "film_ref_slug_next_episode", "film_ref_id_next_episode",
        "episode_id_first_episode", "film_ref_wins_over_episode_id",
    ),
)  # fmt: skip


def bend_reply(reply: Answer, faults: FaultSwitch, path: str, exchange: Request) -> None:
    """Apply the answer faults to a JSON answer of POST /playback or the open videos,
    in place."""
    endpoint = path.rstrip("/").split("/v1/")[-1].split("/")[0]
    table: dict[str, Any] = (
        _PLAYBACK if endpoint == "playback" else _VIDEOS if endpoint == "videos" else {}
    )
    on = faults.on & table.keys()
    body = bt.json_object(reply.body) if on and reply.body else None
    if body is None:
        return
    for name in sorted(on):
        if endpoint == "playback":
            status = table[name](reply, body, exchange)
            reply.status = reply.status if status is None else status
        else:
            table[name](reply, body)
    reply.body = orjson.dumps(body)


# -- the render step of POST /playback: each item's answer before it is rendered ---------------

ITEM_FAULTS = frozenset(
    {
        FaultName.licence_timeout_refused,
        FaultName.withdrawn_episode_not_found,
        FaultName.licence_suspension_reason_other,
        FaultName.sdk_required_without_protection,
        FaultName.not_entitled_error_not_reason,
        FaultName.next_past_end_issued,
        FaultName.batch_items_in_admission_order,
    }
)
NOT_ENTITLED = "not_entitled"


def _item_answer(sb: Server, org_id: str, item: Any, answer: Any, on: frozenset[FaultName]) -> None:
    """One item's answer (endpoints/playback.py: `Outcome`) as the switched-on faults bend it."""
    if FaultName.licence_timeout_refused in on and "licences" in sb.outages:
        # the outage's 503 is read as a licence that is not there
        answer.status, answer.error_code, answer.reason = 403, NOT_ENTITLED, "entitlement_not_found"
        answer.error, answer.retry_after, answer.extra = answer.reason, None, None
    if answer.status == 404 and answer.error_code == "not_ready":  # the episode is not found
        answer.error_code = creative_faults.missing_code(
            sb.store.withdrawn_episodes, item.episode_id, sb.faults
        )
    if answer.error_code == NOT_ENTITLED and answer.episode is not None:
        reason = creative_faults.refusal(
            sb.store, org_id, answer.episode.film_id, answer.reason, sb.faults
        )
        answer.error = reason if answer.error == answer.reason else answer.error
        answer.reason = reason
    if answer.error_code == "sdk_required" and FaultName.sdk_required_without_protection in on:
        answer.extra = None
    if answer.error_code == NOT_ENTITLED and FaultName.not_entitled_error_not_reason in on:
        answer.error = "not entitled"


def bend_items(
    sb: Server,
    pairs: list[tuple[Any, Any]],
    *,
    org_id: str,
    batch: bool,
    admitted: Callable[[], list[int]],
) -> list[tuple[Any, Any]]:
    """The (item, answer) pairs of one POST /playback as the render step shows them: each
    answer bent in place (an outage read as no licence, a withdrawn episode's code, a suspended
    licence's reason, 409 without `protection`, 403 with a message in `error`), and in a batch
    an item `next` ran past the end of left out, or the items in admission order (`admitted`)."""
    on = sb.faults.on & ITEM_FAULTS
    if not on:
        return pairs
    for item, answer in pairs:
        _item_answer(sb, org_id, item, answer, on)
    if not batch:
        return pairs
    if FaultName.batch_items_in_admission_order in on:
        pairs = [pairs[i] for i in admitted()]
    if FaultName.next_past_end_issued in on:
        pairs = [(i, a) for i, a in pairs if not (i.next_offset and a.status == 404)]
    return pairs
