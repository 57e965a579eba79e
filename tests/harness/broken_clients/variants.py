"""Broken clients: the reference client with one rule broken, each with the requirement IDs a
certification must charge it to (and nothing else).

Most flip one knob of `delivery_client.knobs.Policy`; a few are tiny wrappers where the reference
client has no knob (a retry profile figure, a careless log line, a strict parser). `apply(name)`
installs the variant in the current process before `delivery_client.cli.main` runs.
"""

from __future__ import annotations

import json
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import yaml

__all__ = ["VARIANTS", "Variant", "apply"]


@dataclass(frozen=True)
class Variant:
    name: str
    charged: frozenset[str]  # the requirement IDs the certification must fail, exactly
    what: str
    knobs: dict[str, Any] = field(default_factory=dict)
    patch: Callable[[], None] | None = None
    quick: str = ""  # the quick scenario that catches it (the make test form), if any


def _profile(name: str, **values: float) -> Callable[[], None]:
    def patch() -> None:
        from delivery_client import policy

        profile = getattr(policy, name)
        for attr, value in values.items():
            object.__setattr__(profile, attr, value)  # the one shared profile object

    return patch


def _log_play_token() -> None:
    from delivery_client import playback

    original = playback._ticket

    def careless(item: Any) -> Any:
        ticket = original(item)
        if ticket.play_auth_token:  # only an encrypted episode's ticket carries one
            print(f"got play token {ticket.play_auth_token}", file=sys.stderr)
        return ticket

    playback._ticket = careless


def _log_file_url() -> None:
    from delivery_client import creatives

    original = creatives._record

    def careless(item: Any) -> Any:
        final = item.get("final") if isinstance(item, dict) else None
        if isinstance(final, dict) and final.get("file_url"):
            print(f"final file {final['file_url']}", file=sys.stderr)
        return original(item)

    creatives._record = careless


def _keep_links(kind: str) -> Callable[[], None]:
    """A client that keeps the short-lived links of one kind of answer (no knob scopes
    `store_links` to one flow): playlist images and clip posters, or catalog episode posters."""

    def patch() -> None:
        from delivery_client import catalog, listings

        if kind == "playlists":
            original = listings.DETAILS["playlists"]
            listings.DETAILS["playlists"] = lambda data, store_links: original(data, True)
        else:
            catalog.strip_film = lambda film, episodes: (film, episodes)  # type: ignore[assignment,return-value]

    return patch


def _store_download_link() -> None:
    from delivery_client import creatives

    original = creatives._fetch

    def keeping(client: Any, url: Any, out: Path, how: str) -> str:
        if isinstance(url, str):
            out.with_name(out.name + ".link").write_text(url, encoding="utf-8")
        return original(client, url, out, how)

    creatives._fetch = keeping


def _no_rights_grace() -> None:
    from delivery_client import rules, state

    original = rules.usable
    state.usable = lambda creative, now, grace=86_400: original(creative, now, 0)  # type: ignore[attr-defined]


def _browser_headers() -> None:
    from delivery_client import client

    original = client.DeliveryClient.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        self._http.headers.update({"Origin": "https://app.example", "Sec-Fetch-Mode": "cors"})

    client.DeliveryClient.__init__ = init  # type: ignore[method-assign]


def _strict_reasons() -> None:
    """A client that refuses a not_entitled reason outside the five the spec lists today."""
    from delivery_client import client

    known = {"org_suspended", "entitlement_not_found", "entitlement_suspended",
             "streaming_disabled", "outside_window"}  # fmt: skip
    original = client._parse

    def strict(content: bytes) -> Any:
        parsed = original(content)
        items = parsed.get("items") if isinstance(parsed, dict) else None
        for item in items if isinstance(items, list) else []:
            entitled = not isinstance(item, dict) or item.get("error_code") != "not_entitled"
            if not entitled and item.get("reason") not in known:
                raise ValueError(f"unexpected not_entitled reason {item.get('reason')}")
        return parsed

    client._parse = strict


def _shows(name: str, rule: Callable[..., Any]) -> Callable[[], None]:
    """A client whose app shows or decides one thing wrongly (a rule of delivery_client.rules
    replaced where the state export uses it, or where a ticket is judged sellable)."""

    def patch() -> None:
        from delivery_client import playback, state

        setattr(playback if name == "may_sell_paid" else state, name, rule)

    return patch


def _request_hook(hook: Callable[[Any], None]) -> Callable[[], None]:
    """A client whose HTTP layer changes every request it sends (an httpx request hook)."""

    def patch() -> None:
        from delivery_client import client

        original = client.DeliveryClient.__init__

        def init(self: Any, *args: Any, **kwargs: Any) -> None:
            original(self, *args, **kwargs)
            self._http.event_hooks = {"request": [hook], "response": []}

        client.DeliveryClient.__init__ = init  # type: ignore[method-assign]

    return patch


def _no_content_type(request: Any) -> None:
    request.headers.pop("content-type", None)  # the body goes out as bare bytes


def _key_in_query(request: Any) -> None:
    key = request.headers.get("authorization", "").partition(" ")[2]
    request.url = request.url.copy_add_param("api_key", key)  # "for the logs of a gateway"


def _reads_error_text() -> None:
    """A client that takes the code from the `error` message when the message looks like one."""
    from delivery_client import client

    words = {"not_ready", "service_unavailable", "rate_limited", "not_found", "invalid_request"}
    original = client.error_code

    def by_text(body: Any) -> str | None:
        text = body.get("error") if isinstance(body, dict) else None
        return text if text in words else original(body)

    client.error_code = by_text


def _keeps_every_image_kind() -> None:
    from delivery_client import listings

    class Every(frozenset[str]):
        def __contains__(self, item: object) -> bool:
            return True

    listings.IMAGE_KINDS = Every()  # type: ignore[misc]


def _tags_by_name() -> None:
    from delivery_client import listings

    original = listings.DETAILS["series"]

    def by_name(data: dict[str, Any], store_links: bool) -> dict[str, Any]:
        kept = original(data, store_links)
        kept["tags"] = {t.get("name"): t for t in kept["tags"].values()}
        return kept

    listings.DETAILS["series"] = by_name


def _iso_updated_since(request: Any) -> None:
    since = request.url.params.get("updated_since")
    if since is not None and since.isdigit():  # "the same format as every other time field"
        iso = datetime.fromtimestamp(int(since), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        request.url = request.url.copy_set_param("updated_since", iso)


def _taps_as_prefetch() -> None:
    from delivery_client import cli

    original = cli.play

    def prefetching(*args: Any, **kwargs: Any) -> Any:
        return original(*args, **{**kwargs, "intent": "prefetch"})

    cli.play = prefetching


def _drops_kek_on_retry() -> None:
    """A client that rebuilds the body of a retried play and forgets the device key."""
    import httpx

    sent: set[bytes] = set()

    def hook(request: Any) -> None:
        if request.method != "POST" or not request.url.path.endswith("/playback"):
            return
        body = request.read()
        if body in sent:
            data = json.loads(body)
            data.pop("drm_kek", None)
            body = json.dumps(data).encode()
            request.stream = httpx.ByteStream(body)
            request._content = body
            request.headers["content-length"] = str(len(body))
        else:
            sent.add(body)

    _request_hook(hook)()


_PLACED = {"reels_9x16": [1080, 1920], "feed_4x5": [1080, 1350], "square_1x1": [1080, 1080]}


def _openapi_words() -> tuple[set[str], set[str]]:
    spec = Path(__file__).resolve().parents[3] / "spec" / "openapi.yaml"
    names: set[str] = set()
    enums: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            props = node.get("properties")
            if isinstance(props, dict):
                names.update(props)
            for listed in ("enum", "x-known-values"):  # closed sets and open ones' values
                if isinstance(node.get(listed), list):
                    enums.update(str(v) for v in node[listed])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(yaml.safe_load(spec.read_text(encoding="utf-8")))
    return names, enums


def _items(data: Any) -> Any:
    return data.get("items") if isinstance(data, dict) else None


def _strict(kind: str) -> Callable[[], None]:
    """A client that refuses answers with a field (or a status value) it was not built for."""

    def patch() -> None:
        from delivery_client import catalog, client

        names, enums = _openapi_words()
        original = client._parse

        def records(body: Any) -> list[dict[str, Any]]:
            if not isinstance(body, dict):
                return []
            found = [body]
            data = body.get("data")
            for rows in (body.get("films"), body.get("episodes"), _items(data)):
                # the records it was built for: catalog films and episodes, creative records
                found += [r for r in rows or [] if isinstance(r, dict)
                          and (rows is not _items(data) or "creative_id" in r)]  # fmt: skip
            return found

        def check(body: Any) -> None:
            for record in records(body):
                for key, value in record.items():
                    if kind == "fields" and key not in names:
                        raise ValueError(f"unexpected field {key}")
                    if kind == "enums" and key == "status" and isinstance(value, str) and \
                            value not in enums:  # fmt: skip
                        raise ValueError(f"unexpected status {value}")

        def strict(content: bytes) -> Any:
            parsed = original(content)
            check(parsed)
            return parsed

        def strict_loads(text: Any, **kw: Any) -> Any:
            parsed = json.loads(text, **kw)
            check(parsed)
            return parsed

        client._parse = strict
        catalog.json = types.SimpleNamespace(loads=strict_loads)

    return patch


def _odd_cursor_crash() -> None:
    """A client that refuses a cursor with a `%` in it (it "validates" cursors): it crashes on
    the first proxy cursor it is handed, never sending one back."""
    from delivery_client import paging
    from delivery_client.exceptions import BadResponse

    original = paging._next_cursor

    def validating(holder: Any) -> Any:
        cursor = original(holder)
        if isinstance(cursor, str) and "%" in cursor:
            raise BadResponse(f"malformed cursor {cursor!r}")
        return cursor

    paging._next_cursor = validating


def _no_attempt_timeout() -> None:
    """A client that sets no attempt timeout of its own (it waits as long as its call's total
    allows: 15 s interactive, 2 minutes background)."""
    _profile("INTERACTIVE", attempt_timeout=600.0)()
    _profile("BACKGROUND", attempt_timeout=600.0)()


def _own_next_link() -> None:
    """A client that builds the next page's URL itself from `next_cursor` (dropping the other
    values of `links.next`) instead of following the link."""
    from delivery_client import paging

    real = httpx.URL

    def own(link: str) -> httpx.URL:
        url = real(link)
        return url.copy_with(query=None).copy_merge_params({"cursor": url.params["cursor"]})

    paging.httpx = types.SimpleNamespace(URL=own)  # type: ignore[assignment]


def _misses_not_in_a_row() -> None:
    """A client that counts the walks a film missed in all, not in a row: a film that comes
    back keeps its count."""
    from delivery_client import catalog, sync

    original = catalog.apply_walk

    def cumulative(previous: Any, walk: Any, *args: Any) -> Any:
        view = original(previous, walk, *args)
        for film_id in walk:
            old = previous.get(film_id)
            if old is not None and old.missed:
                view[film_id] = replace(view[film_id], missed=old.missed)
        return view

    sync.apply_walk = cumulative


def _v(
    name: str, rules: str, what: str, patch: Callable[[], None] | None = None, quick: str = "",
    **knobs: Any,
) -> Variant:  # fmt: skip
    """One variant on a line or two: `rules` are the charged IDs, space separated."""
    return Variant(name, frozenset(rules.split()), what, knobs, patch, quick)


_MORE = (
    _v("exceeds_background_total", "CLI-022", "background calls may take 150 s",
       _profile("BACKGROUND", total=150.0)),
    _v("rereads_unchanged_series", "CLI-035", "reads every series detail on every sync",
       skip_unchanged_series=False),
    _v("stores_playlist_links", "CLI-038", "keeps playlist image and clip poster links",
       _keep_links("playlists")),
    _v("stores_poster_links", "CLI-039 CAT-078", "keeps episode poster_signed_url links",
       _keep_links("catalog")),
    _v("forgets_vid_ready", "CAT-078", "stores vid_ready null when an answer carries null",
       keep_vid_ready_when_null=False),
    _v("no_reread_on_gone", "CLI-031", "a 410 file link: goes to /file instead of reading "
       "the creative", reread_on_gone=False),
    _v("stores_download_link", "CLI-033", "writes the download link beside the file",
       _store_download_link),
    _v("stops_at_rights_end", "CLI-034", "stops using a creative at rights.ends_at (last day "
       "lost)", _no_rights_grace),
    _v("pages_the_catalog", "CLI-043", "syncs the catalog by pages", prefer_unpaged=False),
    _v("polls_every_few_seconds", "CLI-048", "catalog walks 5 s apart", min_poll_interval=5.0),
    _v("refuses_unknown_reason", "PLAY-084", "refuses a not_entitled reason it does not know",
       _strict_reasons),
    _v("crashes_on_odd_cursor", "CLI-026 PAGE-003", "crashes on a cursor with a % in it "
       "(never sends it back)", _odd_cursor_crash, quick="paging-catalog-empty-page"),
    _v("retries_ten_times_too_fast", "CLI-014", "backoff base a tenth of the spec's",
       backoff_multiplier=0.1),
    _v("no_attempt_timeout", "CLI-016 CLI-020", "no attempt timeout: waits as long as the "
       "call's total allows", _no_attempt_timeout),
    _v("builds_own_next_link", "CLI-028 PAGE-013", "asks the next envelope page with the cursor "
       "alone instead of links.next", _own_next_link),
    _v("counts_misses_not_in_a_row", "CLI-046 CAT-066", "a film that comes back keeps its "
       "missed-walk count", _misses_not_in_a_row),
    _v("sends_browser_headers", "GEN-009", "sends Origin and Sec-Fetch-Mode (a browser's call)",
       _browser_headers, quick="backend-only"),
    _v("null_means_free", "CAT-077", "free_until_episode null read as every episode free",
       _shows("is_free", lambda film, no: (film.get("free_until_episode") or 10**6) >= no)),
    _v("shows_language_field", "CLI-051", "shows `language` as the audio language",
       _shows("audio_language", lambda film: film.get("language"))),
    _v("no_poster_fallback", "CLI-052", "an episode without poster_url shows no poster",
       _shows("episode_poster", lambda episode, film: episode.get("poster_url"))),
    _v("tier_as_age_rating", "CLI-053", "shows a series tier as its age rating",
       _shows("age_rating", lambda r: r.get("tier") or r.get("content_rating"))),
    _v("offers_every_playlist", "CLI-054", "offers every listed playlist, granted or not",
       _shows("licensed", lambda item: item.get("status") == "active")),
    _v("sells_unless_manifest", "PLAY-097", "sells paid episodes on any ticket but a "
       "signed-url-only one", _shows("may_sell_paid",
                                     lambda t: t.get("protection") != "signed-url-only")),
    _v("posts_without_content_type", "CLI-049", "POSTs its JSON body with no Content-Type",
       _request_hook(_no_content_type), quick="requests-playback-post"),
    _v("key_in_query", "CLI-050", "also sends the key as an api_key query parameter",
       _request_hook(_key_in_query)),
    _v("reads_error_text", "CLI-003", "takes the code from the error message when it looks "
       "like one", _reads_error_text),
    _v("keeps_unknown_image_kinds", "CLI-036", "keeps series images of kinds it does not know",
       _keeps_every_image_kind),
    _v("maps_tags_by_name", "CLI-036", "maps series tags by name instead of slug", _tags_by_name),
    _v("iso_updated_since", "CLI-055", "asks creatives updated_since as an ISO 8601 string",
       _request_hook(_iso_updated_since)),
    _v("taps_as_prefetch", "CLI-056", "sends the episode the viewer tapped as a prefetch",
       _taps_as_prefetch),
    _v("size_from_placement", "CLI-057", "takes the final video's size from its placement",
       _shows("final_size", lambda record: _PLACED.get(record.get("placement"), [1080, 1920]))),
    _v("drops_kek_on_retry", "CLI-059", "retries a play with union_info but no drm_kek",
       _drops_kek_on_retry),
    _v("no_en_fallback", "CLI-058", "shows no title when the display language is missing",
       _shows("i18n_text", lambda record, field, lang: (record.get(field) or {}).get(lang))),
)  # fmt: skip

VARIANTS = {
    v.name: v
    for v in (
        Variant(
            "retries_4xx",
            frozenset({"CLI-012", "ERR-018", "CLI-031", "CLI-005", "ERR-010", "GEN-010"}),
            "retries a 400, an unknown 4xx (and a 410 file link, so never reads the creative "
            "again)",
            {"retry_4xx": True},
            quick="no-retry-400",
        ),
        Variant(
            "ignores_retry_after",
            frozenset({"CLI-008", "CLI-009", "CLI-013", "CLI-025"}),
            "ignores Retry-After (429 and 503 retried on backoff)",
            {"honour_retry_after": False},
            quick="retry-429-retry-after",
        ),
        Variant(
            "no_jitter",
            frozenset({"CLI-013"}),
            "no random 0 to 1 s on Retry-After",
            {"retry_after_jitter": 0.0},
        ),
        Variant(
            "retries_too_fast",
            frozenset({"CLI-014"}),
            "backoff 50 x too short",
            {"backoff_multiplier": 0.02},
        ),
        Variant(
            "too_many_retries_interactive",
            frozenset({"CLI-017"}),
            "interactive calls retried 6 times",
            patch=_profile("INTERACTIVE", max_retries=6),
        ),
        Variant(
            "too_many_retries_background",
            frozenset({"CLI-021"}),
            "background calls retried 8 times",
            patch=_profile("BACKGROUND", max_retries=8),
        ),
        Variant(
            "exceeds_total_budget",
            frozenset({"CLI-018"}),
            "interactive calls may take 60 s",
            patch=_profile("INTERACTIVE", total=60.0),
        ),
        Variant(
            "short_attempt_timeout",
            frozenset({"CLI-016"}),
            "interactive attempt timeout 2 s (floor lowered too)",
            {"min_attempt_timeout": 2.0},
            patch=_profile("INTERACTIVE", attempt_timeout=2.0),
        ),
        Variant(
            "no_retry_budget",
            frozenset({"CLI-023"}),
            "no process retry budget",
            {"use_retry_budget": False},
        ),
        Variant(
            "rewrites_cursor",
            frozenset({"CLI-026", "PAGE-003"}),
            "URL-unquotes the cursor",
            {"cursor_verbatim": False},
        ),
        Variant(
            "stops_on_short_page",
            frozenset({"CLI-027", "PAGE-004"}),
            "stops on an empty page",
            {"stop_on_short_page": True},
            quick="paging-catalog-empty-page",
        ),
        Variant(
            "ignores_links_next",
            frozenset({"CLI-028", "PAGE-013"}),
            "stops after page one",
            {"follow_links_next": False},
        ),
        Variant(
            "moves_updated_since",
            frozenset({"CLI-029", "CLI-028", "PAGE-013"}),
            "asks each page from its own last record (so not as links.next gives it)",
            {"keep_updated_since": False},
        ),
        Variant(
            "duplicates_creatives",
            frozenset({"CLI-030"}),
            "appends records returned again",
            {"upsert_creatives": False},
        ),
        Variant(
            "resends_whole_batch",
            frozenset({"CLI-025"}),
            "resends the whole batch",
            {"batch_retry_failed_only": False},
            quick="batch-failed-item",
        ),
        Variant(
            "batch_item_at_once",
            frozenset({"CLI-025"}),
            "retries a failed item at once",
            {"batch_item_retry_after": False},
        ),
        Variant(
            "withdraws_after_incomplete_walk",
            frozenset({"CLI-045", "CAT-066"}),
            "applies a walk that failed half way",
            {"withdraw_only_after_complete_walk": False},
        ),
        Variant(
            "unavailable_after_one_walk",
            frozenset({"CLI-046", "CAT-066"}),
            "marks a film unavailable after one walk",
            {"walks_before_unavailable": 1},
        ),
        Variant(
            "keeps_first_copy",
            frozenset({"CLI-044", "CAT-066"}),
            "keeps the first copy of a film",
            {"dedupe_later_wins": False},
        ),
        Variant(
            "logs_play_token",
            frozenset({"CLI-041"}),
            "prints play_auth_token",
            patch=_log_play_token,
            quick="secrets-play-token",
        ),
        Variant(
            "logs_file_url", frozenset({"CLI-032"}), "prints final.file_url", patch=_log_file_url
        ),
        Variant(
            "retries_not_ready_now",
            frozenset({"CLI-011"}),
            "retries not_ready at once",
            {"retry_not_ready_now": True},
            quick="retry-not-ready",
        ),
        Variant(
            "rotates_key_on_503",
            frozenset({"CLI-042"}),
            "treats 5031 as a revoked key",
            {"treat_key_503_as_revoked": True},
        ),
        Variant(
            "crashes_on_unknown_field",
            frozenset({"CLI-001", "CFG-027", "GEN-010"}),
            "refuses fields it does not know",
            patch=_strict("fields"),
            quick="tolerate-unknown-fields-catalog",
        ),
        Variant(
            "crashes_on_unknown_enum",
            frozenset({"CLI-002", "GEN-010"}),
            "refuses status values it does not know",
            patch=_strict("enums"),
        ),
        Variant(
            "no_retry_on_network_error",
            frozenset({"CLI-007"}),
            "network errors and timeouts not retried",
            {"retry_transport_errors": False},
        ),
        Variant("no_retry_on_429", frozenset({"CLI-008"}), "429 not retried", {"retry_429": False}),
        Variant(
            "no_retry_on_5xx",
            frozenset({"CLI-010", "CLI-005", "ERR-010", "GEN-010"}),
            "500/502/5xx not retried",
            {"retry_5xx": False},
        ),
        Variant(
            "no_retry_on_503_unavailable",
            frozenset({"CLI-009", "CLI-042", "CLI-025"}),
            "503 service_unavailable not retried",
            {"retry_503_unavailable": False},
        ),
        *_MORE,
        Variant(
            "unknown_codes_not_by_class",
            frozenset({"CLI-005", "ERR-010", "GEN-010"}),
            "unknown 5xx codes not retried",
            {"unknown_codes_by_class": False},
        ),
    )
}


def apply(name: str) -> None:
    variant = VARIANTS[name]
    if variant.knobs:
        from delivery_client import cli, knobs

        policy = replace(knobs.DEFAULT_POLICY, **variant.knobs)
        original = cli.DeliveryClient

        def forced(*args: Any, **kwargs: Any) -> Any:
            kwargs["policy"] = policy  # whatever policy the CLI itself would pass
            return original(*args, **kwargs)

        cli.DeliveryClient = forced  # type: ignore[misc,assignment]
    if variant.patch is not None:
        variant.patch()
