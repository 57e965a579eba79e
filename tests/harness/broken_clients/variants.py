"""Broken clients: the reference client with one rule broken, each with the requirement IDs a
certification must charge it to (and nothing else).

The reference client has no switch to break a rule: each variant is a patch installed in the
test process before `delivery_client.cli.main` runs (`apply(name)`). It replaces or wraps one
named function of the client (the retry table `policy.classify`, a walk of `paging`, a rule of
`rules`, a constant such as `catalog.WALKS_BEFORE_UNAVAILABLE`...), in every module that
imported it by name.
"""

from __future__ import annotations

import json
import sys
import types
from collections.abc import Callable, Generator
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import httpx
import yaml

__all__ = ["VARIANTS", "Variant", "apply"]


@dataclass(frozen=True)
class Variant:
    name: str
    charged: frozenset[str]  # the requirement IDs the certification must fail, exactly
    what: str
    patch: Callable[[], None]
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
    """A client that keeps the short-lived links of one kind of answer: playlist images and clip
    posters, or catalog episode posters."""

    def patch() -> None:
        from delivery_client import catalog, listings

        if kind == "playlists":

            def keeping(item: Any) -> Any:
                known = isinstance(item, dict) and item.get("source") in listings.POSTER_SOURCES
                return item if known else None

            listings._media = keeping
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
    state.usable = lambda creative, now: original(creative, now + rules.RIGHTS_GRACE)


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


def _response_hook(hook: Callable[[Any], None]) -> Callable[[], None]:
    """A client whose HTTP layer reads every answer it gets (an httpx response hook)."""

    def patch() -> None:
        from delivery_client import client

        original = client.DeliveryClient.__init__

        def init(self: Any, *args: Any, **kwargs: Any) -> None:
            original(self, *args, **kwargs)
            self._http.event_hooks = {"request": [], "response": [hook]}

        client.DeliveryClient.__init__ = init  # type: ignore[method-assign]

    return patch


_ULID = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def _request_time(response: Any) -> None:
    """Decodes the ULID time of the Service-Request-Id ("when the server saw it"), so an id of
    another shape, which the spec allows, stops the client."""
    rid = response.headers.get("service-request-id", "")
    stamp = 0
    for char in rid.removeprefix("req_")[:10]:
        stamp = stamp * 32 + _ULID.index(char)  # ValueError on a character outside Crockford


def _rejects_older_copy() -> None:
    """A catalog sync that refuses a walk in which a film's metadata is older than the copy it
    stored ("the server went back in time"), though answers seconds apart may differ."""
    from delivery_client import sync

    original = sync.apply_walk

    def apply(previous: Any, walk: Any) -> Any:
        for film_id, (film, _) in walk.items():
            old = previous.get(film_id)
            was = old.film.get("metadata_updated_at") if old is not None else None
            now = film.get("metadata_updated_at")
            if isinstance(was, str) and isinstance(now, str) and now < was:
                raise RuntimeError(f"film {film_id}: the catalog went back in time")
        return original(previous, walk)

    sync.apply_walk = apply


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

    def by_name(data: dict[str, Any]) -> dict[str, Any]:
        kept = original(data)
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


def _account_as_viewer_ref() -> None:
    """A client that sends the viewer's account as `viewer_ref`, its @ swapped to get past the
    client's own check ("the server should know who watches")."""
    from delivery_client.state import State

    State.viewer_ref = lambda self, account, new_ref: account.replace("@", "_at_")  # type: ignore[method-assign]


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


# -- the retry policy ----------------------------------------------------------------------------


def _classify(change: Callable[[Any, Any], Any]) -> Callable[[], None]:
    """A client whose retry table decides one row wrongly: `change(answer, decision)` gives the
    decision instead of the table's (plan_retry and the batch retries both read it)."""

    def patch() -> None:
        from delivery_client import playback, policy

        original = policy.classify

        def broken(answer: Any) -> Any:
            return change(answer, original(answer))

        policy.classify = broken
        playback.classify = broken

    return patch


def _decision(name: str) -> Any:
    from delivery_client.policy import Decision

    return Decision[name]


def _retries_4xx(answer: Any, decision: Any) -> Any:
    status = answer.status
    if status is not None and 400 <= status < 500 and status != 429:
        return _decision("BACKOFF")
    return decision


def _retries_not_ready(answer: Any, decision: Any) -> Any:
    return _decision("BACKOFF") if decision is _decision("NOT_NOW") else decision


def _no_retry_when(test: Callable[[Any], bool]) -> Callable[[Any, Any], Any]:
    def change(answer: Any, decision: Any) -> Any:
        retried = decision in (_decision("BACKOFF"), _decision("AFTER"))
        return _decision("NO_RETRY") if retried and test(answer) else decision

    return change


def _retryable_503(answer: Any) -> bool:
    from delivery_client.policy import RETRYABLE_503_CODES

    return answer.status == 503 and answer.code in RETRYABLE_503_CODES


def _other_5xx(answer: Any) -> bool:
    """500, 502 and unknown 5xx (not a 503 the table names)."""
    return answer.status is not None and answer.status >= 500 and not _retryable_503(answer)


def _unknown_5xx(answer: Any) -> bool:
    known = answer.status in (500, 502, 503) and answer.code is None
    return _other_5xx(answer) and not known


def _key_503_as_revoked() -> None:
    """A client that takes a 503 5031 (key verification failed) for a revoked key: not retried,
    and reported as a refused key (a 401)."""
    from delivery_client import client
    from delivery_client.exceptions import RequestFailed
    from delivery_client.policy import Answer, Decision

    _classify(lambda answer, decision: Decision.NO_RETRY
              if answer.status == 503 and answer.code == "5031" else decision)()  # fmt: skip
    original = client._ending

    def ending(decision: Any, method: str, where: str, answer: Any, why: str,
               waits: Any) -> Exception:  # fmt: skip
        if decision is Decision.NO_RETRY and answer.code == "5031":
            return client._failure(RequestFailed, method, where, Answer(401), "key refused", waits)
        return original(decision, method, where, answer, why, waits)

    client._ending = ending


def _wait(change: Callable[..., float]) -> Callable[[], None]:
    """A client whose wait before a retry is computed wrongly: `change(original, decision,
    attempt, retry_after, profile, uniform)` (plan_retry and the batch retries both read it)."""

    def patch() -> None:
        from delivery_client import playback, policy

        original = policy.wait_for

        def broken(decision: Any, attempt: int, retry_after: float | None, profile: Any,
                   uniform: Any) -> float:  # fmt: skip
            return change(original, decision, attempt, retry_after, profile, uniform)

        policy.wait_for = broken
        playback.wait_for = broken

    return patch


def _ignore_retry_after(original: Any, decision: Any, attempt: int, retry_after: Any,
                        profile: Any, uniform: Any) -> float:  # fmt: skip
    return original(decision, attempt, None, profile, uniform)  # backoff, as if none was sent


def _no_jitter(original: Any, decision: Any, attempt: int, retry_after: Any, profile: Any,
               uniform: Any) -> float:  # fmt: skip
    if decision is _decision("AFTER") and retry_after is not None:
        return retry_after + uniform(0.0, 0.0)  # Retry-After to the millisecond
    return original(decision, attempt, retry_after, profile, uniform)


def _backoff_scaled(factor: float) -> Callable[[], None]:
    """A client whose backoff bound is `factor` times the spec's min(cap, base x 2^attempt)."""

    def patch() -> None:
        from delivery_client import policy

        original = policy.backoff_bound
        policy.backoff_bound = lambda attempt, profile: original(attempt, profile) * factor

    return patch


def _short_attempt_timeout() -> None:
    from delivery_client import policy

    policy.MIN_ATTEMPT_TIMEOUT = 2.0  # the 5 s floor lowered too
    _profile("INTERACTIVE", attempt_timeout=2.0)()


def _no_retry_budget() -> None:
    """A client without the process retry budget: every retry the profile allows is sent."""
    from delivery_client import budget, client

    class Unlimited(budget.RetryBudget):
        def try_acquire(self) -> bool:
            return True

    shared = Unlimited()
    client.process_budget = lambda: shared


# -- paging --------------------------------------------------------------------------------------


def _walks(flat: Callable[..., Any] | None = None,
           envelope: Callable[..., Any] | None = None) -> None:  # fmt: skip
    """Install a wrapper of `paging.walk_flat` or `walk_envelope` in every module that walks."""
    from delivery_client import catalog, creatives, listings, paging, videos

    for module in (catalog, videos):
        if flat is not None:
            module.walk_flat = flat(paging.walk_flat)  # type: ignore[attr-defined]
    for module in (creatives, listings):
        if envelope is not None:
            module.walk_envelope = envelope(paging.walk_envelope)  # type: ignore[attr-defined]


def _stop_on_empty_page() -> None:
    """A walk (flat or envelope) that stops on an empty page, whatever its next cursor."""

    def flat(original: Callable[..., Any]) -> Callable[..., Any]:
        def walk(*args: Any, **kwargs: Any) -> Generator[dict[str, Any], None, None]:
            items_key = args[2] if len(args) > 2 else kwargs["items_key"]
            for page in original(*args, **kwargs):
                yield page
                if not page[items_key]:
                    return

        return walk

    def envelope(original: Callable[..., Any]) -> Callable[..., Any]:
        def walk(*args: Any, **kwargs: Any) -> Generator[dict[str, Any], None, None]:
            for data in original(*args, **kwargs):
                yield data
                if not data["items"]:
                    return

        return walk

    _walks(flat, envelope)


def _first_envelope_page_only() -> None:
    def envelope(original: Callable[..., Any]) -> Callable[..., Any]:
        def walk(*args: Any, **kwargs: Any) -> Generator[dict[str, Any], None, None]:
            for data in original(*args, **kwargs):
                yield data
                return

        return walk

    _walks(envelope=envelope)


def _unquoted_cursor() -> None:
    """A client that URL-unquotes the cursor before sending it back (flat lists)."""
    from delivery_client import client

    original = client.DeliveryClient.request

    def request(self: Any, method: str, path_or_url: str, **kwargs: Any) -> Any:
        params = kwargs.get("params")
        if params and isinstance(params.get("cursor"), str):
            kwargs["params"] = {**params, "cursor": unquote(params["cursor"])}
        return original(self, method, path_or_url, **kwargs)

    client.DeliveryClient.request = request  # type: ignore[method-assign]


def _moves_updated_since() -> None:
    """A creatives sync that asks each page from the last record of the page before (a new
    walk pinned to that `updated_since`), instead of keeping one value for the whole sync."""
    from delivery_client import creatives
    from delivery_client.policy import BACKGROUND

    original = creatives.walk_envelope

    def walk(client: Any, path: str, params: Any = None, profile: Any = BACKGROUND,
             pinned: Any = None) -> Generator[dict[str, Any], None, None]:  # fmt: skip
        pages = 0
        inner = original(client, path, params, profile, pinned=pinned)
        while (data := next(inner, None)) is not None:
            pages += 1
            yield data
            stamps = [r["updated_at"] for r in data["items"]
                      if isinstance(r, dict) and isinstance(r.get("updated_at"), int)]  # fmt: skip
            if stamps and pages < client.settings.max_pages:
                inner.close()
                inner = original(client, path, params, profile,
                                 pinned={"updated_since": max(stamps)})  # fmt: skip

    creatives.walk_envelope = walk


# -- safe catalog sync ---------------------------------------------------------------------------


def _first_copy_wins() -> None:
    """A paged catalog walk that keeps the first copy of a film listed twice."""
    from delivery_client import catalog, sync

    original = catalog.merge_pages

    def first_wins(pages: Any) -> Any:
        pages = list(pages)
        later = original(pages)  # checks the pages; its order is the first sighting of each film
        backwards = [{**page, "films": list(page["films"])[::-1]} for page in reversed(pages)]
        earlier = original(backwards)
        return {film_id: earlier[film_id] for film_id in later}

    catalog.merge_pages = first_wins
    sync.merge_pages = first_wins


def _applies_incomplete_walk() -> None:
    """A catalog sync that applies the pages that answered before a failure as if the walk
    were complete (the films it did not reach count as missed)."""
    from delivery_client import catalog, cli, paging, sync
    from delivery_client.exceptions import ClientError

    def partial(client: Any, state: Any, *, paged: bool = False) -> Any:
        walks = int(state.meta("catalog_walks", "0") or 0) + 1
        path = catalog.API_PREFIX + "catalog"
        pages: list[dict[str, Any]] = []
        complete = True
        try:
            if not paged:
                pages.append(client.request("GET", path).object())
            else:
                limit = {"limit": client.settings.page_size}
                pages.extend(paging.walk_flat(client, path, "films", limit))
        except ClientError:
            complete = False
        walk = catalog.merge_pages(pages)
        view = catalog.apply_walk(state.films(), walk)
        state.replace_films(view, walks, None)
        available = sum(record.available for record in view.values())
        return sync.CatalogSync(len(walk), available, len(view) - available, complete)

    sync.sync_catalog = partial
    cli.sync_catalog = partial


def _unavailable_after_one_walk() -> None:
    from delivery_client import catalog, sync

    catalog.WALKS_BEFORE_UNAVAILABLE = 1  # type: ignore[misc]
    sync.WALKS_BEFORE_UNAVAILABLE = 1  # type: ignore[misc]


def _forgets_vid_ready() -> None:
    from delivery_client import catalog

    catalog.keep_vid_ready = lambda new, old: new


def _pages_the_catalog() -> None:
    from delivery_client import catalog, sync

    original = catalog.fetch_catalog

    def paging(client: Any, *, paged: bool = False) -> Any:
        return original(client, paged=True)

    catalog.fetch_catalog = paging
    sync.fetch_catalog = paging


def _polls_every(seconds: float) -> Callable[[], None]:
    def patch() -> None:
        from delivery_client import sync

        sync.MIN_POLL_INTERVAL = seconds  # type: ignore[misc]

    return patch


def _rereads_unchanged() -> None:
    from delivery_client import listings

    listings.needs_detail = lambda item, stored: item.get("status") == "active"


# -- creatives and playback ----------------------------------------------------------------------


def _appends_creatives() -> None:
    """A creatives sync that stores a record returned again as a new row (a new row key)."""
    from delivery_client import creatives, state

    def appending(db: Any, records: list[dict[str, Any]]) -> None:
        for record in records:
            final = record.get("final") if isinstance(record.get("final"), dict) else {}
            file_url = final.get("file_url") if isinstance(final, dict) else None
            kept = {**record, "final": {k: v for k, v in (final or {}).items()
                                        if k != "file_url"}}  # fmt: skip
            key = str(record["creative_id"])
            if db.execute("SELECT 1 FROM creatives WHERE creative_id = ?", (key,)).fetchone():
                key = f"{key}#{db.execute('SELECT COUNT(*) FROM creatives').fetchone()[0]}"
            db.execute("INSERT OR REPLACE INTO creatives VALUES (?, ?, ?, ?)",
                       (key, state._dump(kept), file_url, record.get("updated_at")))  # fmt: skip

    creatives.store_walk = appending


def _no_reread_on_gone() -> None:
    """A client that, when a stored file link answers 410, does not read the creative again
    (it goes to the /file endpoint)."""
    from delivery_client import creatives

    creatives._reread = lambda client, state, creative_id: None


def _resends_whole_batch() -> None:
    from delivery_client import playback

    playback.due_items = lambda pending, now: sorted(pending)


def _keeps_video_list() -> None:
    """A player that walks the open-video list once and keeps showing it."""
    from delivery_client import videos

    videos.VideoList.refresh_due = lambda self, now, margin: False  # type: ignore[method-assign]


def _own_video_timer() -> None:
    """A player that refreshes 45 minutes after it received the list (the spec's figure) by its
    own timer, whatever `refresh_before` says."""
    from delivery_client import videos

    original = videos.fetch_videos

    def own_timer(client: Any, collection: str | None = None) -> Any:
        listed = original(client, collection)
        return replace(listed, refresh_before=datetime.now(UTC) + timedelta(minutes=45))

    videos.fetch_videos = own_timer


def _caches_video_links() -> None:
    """A player that keeps the MP4 links of the last walk in a cache file of its working
    folder (the flow's state folder), to play them later."""
    from delivery_client import videos

    original = videos.fetch_videos

    def caching(client: Any, collection: str | None = None) -> Any:
        listed = original(client, collection)
        links = {str(r.get("id")): r.get("mp4") for r in listed.rows}
        Path("video-links.json").write_text(json.dumps(links), encoding="utf-8")
        return listed

    videos.fetch_videos = caching


def _batch_item_at_once() -> None:
    """A batch whose failed items ignore their own `retry_after` (0 s, plus the jitter)."""
    from delivery_client import playback

    playback.item_retry_after = lambda item: 0.0


def _v(name: str, rules: str, what: str, patch: Callable[[], None], quick: str = "") -> Variant:
    """One variant on a line or two: `rules` are the charged IDs, space separated."""
    return Variant(name, frozenset(rules.split()), what, patch, quick)


_MORE = (
    _v("exceeds_background_total", "CLI-022", "background calls may take 150 s",
       _profile("BACKGROUND", total=150.0)),
    _v("rereads_unchanged_series", "CLI-035", "reads every series detail on every sync",
       _rereads_unchanged),
    _v("stores_playlist_links", "CLI-038", "keeps playlist image and clip poster links",
       _keep_links("playlists")),
    _v("stores_poster_links", "CLI-039 CAT-078", "keeps episode poster_signed_url links",
       _keep_links("catalog")),
    _v("forgets_vid_ready", "CAT-078", "stores vid_ready null when an answer carries null",
       _forgets_vid_ready),
    _v("no_reread_on_gone", "CLI-031", "a 410 file link: goes to /file instead of reading "
       "the creative", _no_reread_on_gone),
    _v("keeps_video_list", "CLI-040", "walks the open-video list once and keeps it",
       _keeps_video_list),
    _v("own_45_minute_video_timer", "CLI-040", "refreshes open videos 45 minutes after receipt, "
       "ignoring refresh_before", _own_video_timer),
    _v("caches_video_links", "CLI-040", "keeps the open videos' MP4 links in a cache file",
       _caches_video_links),
    _v("stores_download_link", "CLI-033", "writes the download link beside the file",
       _store_download_link),
    _v("stops_at_rights_end", "CLI-034", "stops using a creative at rights.ends_at (last day "
       "lost)", _no_rights_grace),
    _v("pages_the_catalog", "CLI-043", "syncs the catalog by pages", _pages_the_catalog),
    _v("polls_every_few_seconds", "CLI-048", "catalog walks 5 s apart", _polls_every(5.0)),
    _v("refuses_unknown_reason", "PLAY-084", "refuses a not_entitled reason it does not know",
       _strict_reasons),
    _v("crashes_on_odd_cursor", "CLI-026 PAGE-003", "crashes on a cursor with a % in it "
       "(never sends it back)", _odd_cursor_crash, quick="paging-catalog-empty-page"),
    _v("retries_ten_times_too_fast", "CLI-014", "backoff base a tenth of the spec's",
       _backoff_scaled(0.1)),
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
    _v("reads_error_text", "CLI-003 ERR-011", "takes the code from the error message when it looks "
       "like one", _reads_error_text),
    _v("keeps_unknown_image_kinds", "CLI-036", "keeps series images of kinds it does not know",
       _keeps_every_image_kind),
    _v("maps_tags_by_name", "CLI-036", "maps series tags by name instead of slug", _tags_by_name),
    _v("parses_request_id", "CLI-006", "decodes the ULID time of each Service-Request-Id",
       _response_hook(_request_time)),
    _v("rejects_older_copy", "CLI-047", "refuses a catalog walk with a film older than stored",
       _rejects_older_copy, quick="tolerate-older-copy"),
    _v("iso_updated_since", "CLI-055", "asks creatives updated_since as an ISO 8601 string",
       _request_hook(_iso_updated_since)),
    _v("taps_as_prefetch", "CLI-056", "sends the episode the viewer tapped as a prefetch",
       _taps_as_prefetch),
    _v("account_as_viewer_ref", "PLAY-025", "sends the viewer's account as viewer_ref",
       _account_as_viewer_ref, quick="requests-playback-post"),
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
        _v("retries_4xx", "CLI-012 ERR-018 CLI-031 CLI-005 ERR-010 GEN-010", "retries a 400, an "
           "unknown 4xx (and a 410 file link, so never reads the creative again)",
           _classify(_retries_4xx), quick="no-retry-400"),
        _v("ignores_retry_after", "CLI-008 CLI-009 CLI-013 CLI-025", "ignores Retry-After (429 "
           "and 503 retried on backoff)", _wait(_ignore_retry_after),
           quick="retry-429-retry-after"),
        _v("no_jitter", "CLI-013", "no random 0 to 1 s on Retry-After", _wait(_no_jitter)),
        _v("retries_too_fast", "CLI-014", "backoff 50 x too short", _backoff_scaled(0.02)),
        _v("too_many_retries_interactive", "CLI-017", "interactive calls retried 6 times",
           _profile("INTERACTIVE", max_retries=6)),
        _v("too_many_retries_background", "CLI-021", "background calls retried 8 times",
           _profile("BACKGROUND", max_retries=8)),
        _v("exceeds_total_budget", "CLI-018", "interactive calls may take 60 s",
           _profile("INTERACTIVE", total=60.0)),
        _v("short_attempt_timeout", "CLI-016", "interactive attempt timeout 2 s (floor lowered "
           "too)", _short_attempt_timeout),
        _v("no_retry_budget", "CLI-023", "no process retry budget", _no_retry_budget),
        _v("rewrites_cursor", "CLI-026 PAGE-003", "URL-unquotes the cursor", _unquoted_cursor),
        _v("stops_on_short_page", "CLI-027 PAGE-004", "stops on an empty page",
           _stop_on_empty_page, quick="paging-catalog-empty-page"),
        _v("ignores_links_next", "CLI-028 PAGE-013", "stops after page one",
           _first_envelope_page_only),
        _v("moves_updated_since", "CLI-029 CLI-028 PAGE-013", "asks each page from its own last "
           "record (so not as links.next gives it)", _moves_updated_since),
        _v("duplicates_creatives", "CLI-030", "appends records returned again",
           _appends_creatives),
        _v("resends_whole_batch", "CLI-025", "resends the whole batch", _resends_whole_batch,
           quick="batch-failed-item"),
        _v("batch_item_at_once", "CLI-025", "retries a failed item at once",
           _batch_item_at_once),
        _v("withdraws_after_incomplete_walk", "CLI-045 CAT-066", "applies a walk that failed "
           "half way", _applies_incomplete_walk),
        _v("unavailable_after_one_walk", "CLI-046 CAT-066", "marks a film unavailable after "
           "one walk", _unavailable_after_one_walk),
        _v("keeps_first_copy", "CLI-044 CAT-066", "keeps the first copy of a film",
           _first_copy_wins),
        _v("logs_play_token", "CLI-041", "prints play_auth_token", _log_play_token,
           quick="secrets-play-token"),
        _v("logs_file_url", "CLI-032", "prints final.file_url", _log_file_url),
        _v("retries_not_ready_now", "CLI-011", "retries not_ready at once",
           _classify(_retries_not_ready), quick="retry-not-ready"),
        _v("rotates_key_on_503", "CLI-042", "treats 5031 as a revoked key", _key_503_as_revoked),
        _v("crashes_on_unknown_field", "CLI-001 CFG-027 GEN-010", "refuses fields it does not "
           "know", _strict("fields"), quick="tolerate-unknown-fields-catalog"),
        _v("crashes_on_unknown_enum", "CLI-002 GEN-010", "refuses status values it does not "
           "know", _strict("enums")),
        _v("no_retry_on_network_error", "CLI-007", "network errors and timeouts not retried",
           _classify(_no_retry_when(lambda answer: answer.status is None))),
        _v("no_retry_on_429", "CLI-008", "429 not retried",
           _classify(_no_retry_when(lambda answer: answer.status == 429))),
        _v("no_retry_on_5xx", "CLI-010 CLI-005 ERR-010 GEN-010", "500/502/5xx not retried",
           _classify(_no_retry_when(_other_5xx))),
        _v("no_retry_on_503_unavailable", "CLI-009 CLI-042 CLI-025", "503 service_unavailable "
           "not retried", _classify(_no_retry_when(_retryable_503))),
        *_MORE,
        _v("unknown_codes_not_by_class", "CLI-005 ERR-010 GEN-010", "unknown 5xx codes not "
           "retried", _classify(_no_retry_when(_unknown_5xx))),
    )
}  # fmt: skip


def apply(name: str) -> None:
    VARIANTS[name].patch()
