"""Helpers shared by the resource scenarios: bounded page walks, error rows, response times.

spec: Endpoints > Paging and envelopes (opaque cursors; stop on a null cursor, never because a
page is short or empty); Errors > Formats. A walk forwards `next_cursor` verbatim and stops only
on a null cursor (or, asked to, at the first page that holds what the scenario looks for); it is
bounded by `max_pages` so a target that never ends a walk fails instead of hanging. No scenario
assumes a page holds `limit` items: a page holds at most `limit`, and may be short or empty
while more follow (GET /videos says so outright; GET /playlists only binds a full page to carry
a cursor). docs/reading-of-the-spec.md (PAGE (short pages)).
"""

from __future__ import annotations

import email.utils
import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import Enum
from typing import Any

import pytest
from json_support import garbage_rule
from timing_support import CATALOG_AGE, Settled, settle

from delivery_conformance.checks import CHECKS, ConformanceFailure, Violation, expect, expect_status
from delivery_conformance.checks.schema import expect_schema
from delivery_conformance.evidence.events import NOT_EXERCISED_PREFIX
from delivery_conformance.exceptions import TargetGarbage
from delivery_conformance.target.client import DeliveryClient, Response

MAX_PAGES = 300
# docs/reading-of-the-spec.md (CRE-040, PLS-011, VID-010, STATE-018 (times)): 5 s around the
# response time.
TIME_SLACK = 5.0


class Family(Enum):
    """Where a list keeps its items and its cursor."""

    CATALOG = "catalog"  # flat: films[], next_cursor
    ENVELOPE = "envelope"  # creatives, series, playlists: data.items[], data.next_cursor
    VIDEOS = "videos"  # flat: rows[], next_cursor


@dataclass(frozen=True)
class Page:
    response: Response
    body: dict[str, Any]
    items: list[Any]
    next_cursor: Any

    @property
    def links(self) -> dict[str, Any]:
        links = self.body.get("links")
        return links if isinstance(links, dict) else {}


def page_of(family: Family, response: Response) -> Page:
    body = response.json_body()
    if not isinstance(body, dict):
        body = {}
    if family is Family.ENVELOPE:
        data = body.get("data") if isinstance(body.get("data"), dict) else {}
        items, cursor = data.get("items"), data.get("next_cursor")
    else:
        items = body.get("films" if family is Family.CATALOG else "rows")
        cursor = body.get("next_cursor")
    return Page(response, body, items if isinstance(items, list) else [], cursor)


def page_for(requirement_id: str, family: Family, response: Response) -> Page:
    """`page_of`, a body that is not JSON at all charged to `requirement_id`."""
    try:
        return page_of(family, response)
    except TargetGarbage as error:
        rule = garbage_rule(requirement_id, response)
        expect(rule, False, expected="a JSON page", actual=str(error), response=response)
        raise  # not reached: expect raised


def walk(
    client: DeliveryClient,
    family: Family,
    path: str,
    *,
    role: str,
    params: Mapping[str, str | int] | None = None,
    limit: int | None = None,
    requirement_id: str = "PAGE-002",
    max_pages: int = MAX_PAGES,
    until: Callable[[Page], bool] | None = None,
) -> list[Page]:
    """Every page of a list (`limit` a page, when given), following `next_cursor` unchanged
    until it is null; with `until`, the pages up to the first one for which it holds."""
    pages: list[Page] = []
    query: dict[str, str | int] = dict(params or {})
    if limit is not None:
        query["limit"] = limit
    for _ in range(max_pages):
        response = client.get(path, role=role, params=query)
        expect_status(requirement_id, response, 200, expected=f"200 on every page of {path}")
        page = page_for(requirement_id, family, response)
        pages.append(page)
        if page.next_cursor is None or (until is not None and until(page)):
            return pages
        expect(
            requirement_id,
            isinstance(page.next_cursor, str),
            expected="next_cursor a string or null",
            actual=type(page.next_cursor).__name__,
            response=response,
        )
        query["cursor"] = page.next_cursor
    raise ConformanceFailure(
        [
            Violation(
                requirement_id,
                "walk did not end",
                f"a null cursor within {max_pages} pages",
                "a cursor on every page",
                pages[-1].response.exchange,
            )
        ]
    )


def envelope_walk(
    client: DeliveryClient,
    path: str,
    role: str,
    requirement_id: str = "PAGE-002",
    *,
    limit: int | None = None,
    until: Callable[[Page], bool] | None = None,
    **query: str | int,
) -> list[Page]:
    """`walk` over an envelope list (series, playlists, creatives), `query` its parameters."""
    return walk(
        client,
        Family.ENVELOPE,
        path,
        role=role,
        params=query,
        limit=limit,
        requirement_id=requirement_id,
        until=until,
    )


def items_of(pages: list[Page]) -> list[dict[str, Any]]:
    """The items of a walk that are objects (`page.items` keeps every item as sent, for the
    schema checks that judge each one)."""
    return [item for page in pages for item in page.items if isinstance(item, dict)]


# -- error rows --------------------------------------------------------------------------------


def listed_once(requirement_id: str, pages: list[Page], code: str) -> dict[str, Any]:
    """The one item of a walk whose `code` is `code`; listed more or less than once is a
    finding."""
    items = [i for i in items_of(pages) if i.get("code") == code]
    expect(
        requirement_id,
        len(items) == 1,
        expected=f"{code} listed once",
        actual=len(items),
        response=pages[-1].response,
    )
    return items[0]


class Code(Enum):
    """Where the code of an error answer sits (spec: Errors > Formats)."""

    ERROR_CODE = "error_code"  # flat, `error_code`
    ERROR = "error"  # flat, no `error_code`, the whole `error` is the code
    NONE = "none"  # flat, no `error_code` at all
    ENVELOPE = "envelope"  # envelope `code`


def error_problems(response: Response, status: int, where: Code, code: object) -> list[str]:
    """What is wrong with this answer for the error row (status, code place, code)."""
    problems = []
    if response.status_code != status:
        problems.append(f"status {response.status_code}, not {status}")
    try:
        body = response.json_body()
    except TargetGarbage:
        return [*problems, "body is not JSON"]
    if not isinstance(body, dict):
        return [*problems, "body is not a JSON object"]
    if where is Code.ENVELOPE:
        if body.get("code") != code:
            problems.append(f"envelope code {body.get('code')!r}, not {code}")
    elif where is Code.ERROR_CODE:
        if body.get("error_code") != code:
            problems.append(f"error_code {body.get('error_code')!r}, not {code!r}")
    else:
        if "error_code" in body:
            problems.append(f"has error_code {body['error_code']!r}; the row has none")
        if where is Code.ERROR and body.get("error") != code:
            problems.append(f"error {body.get('error')!r}, not {code!r}")
    return problems


def _row_input(response: Response) -> str:
    """What an error row sent that the others did not: its key role and query names (so two
    rows refused the same way on one path stay two findings, one per rule)."""
    request = response.http.request
    names = sorted({name for name, _ in request.url.params.multi_items()})
    keyed = "yes" if "authorization" in request.headers else "none"
    sent = f"key {response.context.role or keyed}"
    if response.context.version:
        sent += ", Service-Version"
    return sent + (f", query {' '.join(names)}" if names else "")


def expect_error(
    requirement_id: str, response: Response, status: int, where: Code, code: object = None
) -> None:
    problems = error_problems(response, status, where, code)
    expect(
        requirement_id,
        not problems,
        expected=f"{status} with {where.value} {code!r}",
        actual="; ".join(problems),
        response=response,
        title=f"error row not answered as the spec says ({_row_input(response)})",
    )


def error_shape_violations(requirement_id: str, response: Response) -> list[Violation]:
    """The harness's envelope/flat error shape and request_id checks, named for this area."""
    found = []
    for name in ("envelope_error", "flat_error", "error_request_id"):
        for seen in CHECKS[name](response):
            found.append(
                Violation(requirement_id, seen.title, seen.expected, seen.actual, seen.exchange)
            )
    return found


# One error row: (requirement, path template, role or key, query, status, code place, code).
ErrorRow = tuple[str, str, str | None, dict[str, str], int, Code, object]


def row_params(
    rows: Sequence[Any], marks: Callable[[Any], Any], name: Callable[[Any], str], *, whole: bool
) -> list[Any]:
    """One pytest param per table row, with the row's `marks` and test id (`name`); the row
    as one value, or (`whole` False) spread over the test's arguments."""
    return [
        pytest.param(*((row,) if whole else row), marks=marks(row), id=name(row)) for row in rows
    ]


def error_row_params(rows: list[ErrorRow], shape_id: str) -> list[Any]:
    """pytest params (one `row` each) marked with the row's ID and the area's shape ID."""
    return row_params(
        rows,
        lambda row: pytest.mark.requirement(row[0], shape_id),
        lambda row: f"{row[0]}-{row[1]}-{row[2]}-{'-'.join(row[3].values())}",
        whole=True,
    )


def send_error_row(
    client: DeliveryClient,
    key: Any,
    path: str,
    who: str | None,
    query: dict[str, str],
    code: object,
    unknown_key: str,
) -> Response:
    """The request of one error row: a role, `unknown` (a key no one issued) or no key at all.

    A row whose code is `unsupported_version` pins a version the target never had.
    """
    version = "1999-01-01" if code == "unsupported_version" else None
    if who == "unknown":
        return client.get(path, key=unknown_key, params=query, version=version)
    if who is not None:
        key(who)
    return client.get(path, role=who, params=query, version=version)


def check_error_row(
    client: DeliveryClient,
    key: Any,
    row: ErrorRow,
    fill: str,
    shape_id: str,
    unknown_key: str,
    *,
    retry_after: bool = True,
) -> None:
    """Send one error row (`fill` in place of the template's `{id}` or `{code}`) and judge the
    answer by the row (`expect_error_row`)."""
    requirement_id, template, who, query, status, where, code = row
    path = template.replace("{id}", fill).replace("{code}", fill)
    response = send_error_row(client, key, path, who, query, code, unknown_key)
    expect_error_row(
        requirement_id, shape_id, response, status, where, code, retry_after=retry_after
    )


def error_rows_scenario(
    rows: list[ErrorRow],
    shape_id: str,
    fill: str,
    unknown_key: str,
    *,
    needs: Any,
    retry_after: bool = True,
) -> Callable[..., None]:
    """The scenario of an area's error table, for the area's module to bind as `test_error_rows`:
    one test per row (`error_row_params`), the fixture `fill` in place of `{id}` or `{code}`."""

    @needs
    @pytest.mark.parametrize("row", error_row_params(rows, shape_id))
    def scenario(client: DeliveryClient, fixture_id: Any, key: Any, row: ErrorRow) -> None:
        fixture = fixture_id(fill)
        check_error_row(client, key, row, fixture, shape_id, unknown_key, retry_after=retry_after)

    return scenario


def expect_error_shapes(requirement_id: str, response: Response) -> None:
    """Raise every envelope/flat error shape and request_id violation of this answer at once."""
    found = error_shape_violations(requirement_id, response)
    if found:
        raise ConformanceFailure(found)


def expect_retry_after(requirement_id: str, response: Response) -> None:
    expect(
        requirement_id,
        "retry-after" in response.headers,
        expected="Retry-After",
        actual="absent",
        response=response,
    )


def expect_error_row(
    requirement_id: str,
    shape_id: str,
    response: Response,
    status: int,
    where: Code,
    code: object,
    *,
    retry_after: bool = True,
) -> None:
    """The row's status and code, Retry-After on a 503 (unless told not to), then the shapes."""
    expect_error(requirement_id, response, status, where, code)
    if retry_after and status == 503:
        expect_retry_after(requirement_id, response)
    expect_error_shapes(shape_id, response)


def first_refusal(requirement_id: str, answers: list[Response], *, limit: int) -> Response:
    """spec: Limits: some answer past the limit is a 429; the first one."""
    refused = [r for r in answers if r.status_code == 429]
    expect(
        requirement_id,
        bool(refused),
        expected=f"a 429 past a limit of {limit}",
        actual=[r.status_code for r in answers],
        response=answers[-1],
    )
    return refused[0]


def expect_exhausted(requirement_id: str, answers: list[Response], *, expected: str) -> None:
    """The last of a run of answers is a 429: the lowered counter is spent."""
    expect(
        requirement_id,
        answers[-1].status_code == 429,
        expected=expected,
        actual=[r.status_code for r in answers],
        response=answers[-1],
    )


def expect_counter_refused(
    requirement_id: str, answers: list[Response], *, limit: int, flat_only: bool = False
) -> Response:
    """spec: Limits: some answer past the limit is a flat 429 `rate_limited` (returned).

    With `flat_only`, the 429 must also carry no envelope `code` (an envelope family's list).
    """
    refused = first_refusal(requirement_id, answers, limit=limit)
    expect_error(requirement_id, refused, 429, Code.ERROR_CODE, "rate_limited")
    if flat_only:
        expect(
            requirement_id,
            "code" not in refused.json_body(),
            expected="no envelope code",
            actual=refused.json_body().get("code"),
            response=refused,
        )
    return refused


def has_items(page: Page) -> bool:
    """A page that holds at least one item (`walk(until=has_items)`: the first such page)."""
    return bool(page.items)


def expect_limit_caps_the_page(
    requirement_id: str, client: DeliveryClient, path: str, role: str, limit: int | None
) -> None:
    """spec: Paging and envelopes: a page holds at most `limit` items (50 without one). A page
    may be short or empty while more follow, so the walk goes on to the first page with items
    (a list with none cannot show the cap)."""
    pages = walk(
        client,
        Family.ENVELOPE,
        path,
        role=role,
        limit=limit,
        requirement_id=requirement_id,
        until=has_items,
    )
    cap = limit or 50
    for page in pages:
        expect(
            requirement_id,
            len(page.items) <= cap,
            expected=f"at most {cap} items a page",
            actual=len(page.items),
            response=page.response,
        )
    expect(
        requirement_id,
        any(page.items for page in pages),
        expected="a page with items before the walk ends",
        actual=f"{len(pages)} empty pages",
        response=pages[-1].response,
    )


def same_page_by_link_and_cursor(
    client: DeliveryClient, family: Family, path: str, role: str, page: Page, limit: int
) -> Settled[tuple[Page, Page]]:
    """The page after `page` fetched twice, by following `links.next` and by passing
    `next_cursor` (with `limit`), until both list the same items: two reads may meet servers
    with caches of different ages (spec: Limits > Freshness), so they are compared for
    CATALOG_AGE before a difference is concluded."""

    def read() -> tuple[Page, Page]:
        by_link = page_of(family, client.get(link_path(page.links.get("next")), role=role))
        params: dict[str, str | int] = {"limit": limit, "cursor": str(page.next_cursor)}
        return by_link, page_of(family, client.get(path, role=role, params=params))

    return settle(read, lambda pair: item_keys(pair[0]) == item_keys(pair[1]), CATALOG_AGE)


def item_keys(page: Page) -> list[Any]:
    """What names each item of a page, in order (`code`, `id` or `creative_id`)."""
    names = ("id", "creative_id", "code")  # films and video rows, creatives, series/playlists
    return [
        next((item.get(n) for n in names if n in item), None) if isinstance(item, dict) else item
        for item in page.items
    ]


def expect_next_link_is_the_cursor(
    client: DeliveryClient,
    path: str,
    role: str,
    limit: int,
    family: Family = Family.ENVELOPE,
) -> None:
    """PAGE-011: following links.next gives the page that passing next_cursor gives. Pages may
    be empty while more follow, so the walk goes on until a compared page holds items."""
    page = page_of(family, client.get(path, role=role, params={"limit": limit}))
    for _ in range(MAX_PAGES):
        if page.next_cursor is None:
            break
        expect(
            "PAGE-011",
            isinstance(page.links.get("next"), str),
            expected="links.next beside a next_cursor",
            actual=page.links.get("next"),
            response=page.response,
        )
        seen = same_page_by_link_and_cursor(client, family, path, role, page, limit)
        by_link, by_cursor = seen.value
        expect(
            "PAGE-011",
            seen.settled,
            expected=item_keys(by_cursor),
            actual=item_keys(by_link),
            response=by_link.response,
        )
        if by_cursor.items:
            return
        page = by_cursor
    pytest.skip(f"{NOT_EXERCISED_PREFIX}no page after the first of /{path} holds items")


def expect_updated_since_leaves_out_older(
    requirement_id: str, client: DeliveryClient, walked: list[Page], path: str, role: str
) -> None:
    """From the middle item's updated_at on: a non-empty walk with no older item in it."""
    pivot = middle_updated_at(items_of(walked))
    pages = walk(
        client,
        Family.ENVELOPE,
        path,
        role=role,
        params={"updated_since": pivot, "limit": 100},
        requirement_id=requirement_id,
    )
    older = [
        i.get("code")
        for i in items_of(pages)
        if is_int(i.get("updated_at")) and i["updated_at"] < pivot
    ]
    expect(
        requirement_id,
        not older and bool(items_of(pages)),
        expected=f"no item older than {pivot}",
        actual=older[:5],
        response=pages[0].response,
    )


def expect_list_envelope(page: Page, requirement_id: str) -> None:
    """A page of an envelope list is a list envelope (spec: Endpoints > Paging and envelopes).

    A wrong envelope member is charged to its own rule (PAGE-005 to PAGE-009, envelope_support);
    what is left (`data.items`, `data.next_cursor`) to `requirement_id`."""
    from envelope_support import envelope_violations

    members = envelope_violations(page.response, listing=True)
    if members:
        raise ConformanceFailure(members)
    problems = envelope_problems(page, listing=True)
    expect(
        requirement_id,
        not problems,
        expected="list envelope",
        actual=problems,
        response=page.response,
    )


def expect_list_items(pages: list[Page], envelope_id: str, item_id: str, schema: str) -> None:
    """Page by page: the list envelope (envelope_id), then each item against `schema`."""
    for page in pages:
        expect_list_envelope(page, envelope_id)
        for index, item in enumerate(page.items):
            expect_schema(
                item_id, item, schema, where=f"data.items[{index}]", response=page.response
            )


def expect_next_link_ends_with_the_walk(page: Page) -> None:
    """PAGE-010: links.next is null exactly where next_cursor is."""
    link = page.links.get("next")
    expect(
        "PAGE-010",
        (link is None) == (page.next_cursor is None),
        expected="links.next null exactly on the last page",
        actual=link,
        response=page.response,
    )


# -- times -------------------------------------------------------------------------------------


def expect_increasing(
    requirement_id: str, values: list[Any], *, expected: str, response: Response
) -> None:
    """Every value an integer, each greater than the one before (positions)."""
    expect(
        requirement_id,
        all(is_int(v) for v in values) and all(a < b for a, b in itertools.pairwise(values)),
        expected=expected,
        actual=values[:10],
        response=response,
    )


def expect_never_decreasing(
    requirement_id: str, values: list[Any], *, expected: str, response: Response
) -> None:
    """No integer value smaller than the integer just before it (an oldest-first walk)."""
    bad = [
        f"{a} then {b}" for a, b in itertools.pairwise(values) if is_int(a) and is_int(b) and b < a
    ]
    expect(requirement_id, not bad, expected=expected, actual=bad[:3], response=response)


def response_time(response: Response) -> tuple[float, float]:
    """The window in which the target produced the answer (its `Date`, else the exchange)."""
    date = response.headers.get("date")
    if date:
        try:
            moment = email.utils.parsedate_to_datetime(date).timestamp()
            return moment, moment + 1.0
        except (TypeError, ValueError):
            pass
    start = response.exchange.started_at
    return start, start + response.exchange.elapsed


def iso_epoch(value: object) -> float | None:
    """Epoch seconds of an ISO 8601 UTC string (None: not one)."""
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    offset = moment.utcoffset()
    if offset is None or offset.total_seconds() != 0:
        return None
    return moment.timestamp()


def within(value: float | None, low: float, high: float) -> bool:
    return value is not None and low - TIME_SLACK <= value <= high + TIME_SLACK


def is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def middle_updated_at(items: list[Any]) -> int:
    """The `updated_at` of the middle item that has an integer one: the pivot of an
    `updated_since` scenario. A walk with no such item leaves the scenario not exercised (the
    item shape is judged by its own scenarios)."""
    times = [i["updated_at"] for i in items if isinstance(i, dict) and is_int(i.get("updated_at"))]
    if not times:
        pytest.skip(
            f"not exercised: no item of the walk has an integer updated_at ({len(items)} items)"
        )
    return int(times[len(times) // 2])


# -- envelopes ---------------------------------------------------------------------------------


def envelope_problems(page: Page, *, listing: bool) -> list[str]:
    """spec: Endpoints > Paging and envelopes: code 0, message ok, data, server_time, links."""
    body, problems = page.body, []
    missing = [m for m in ("code", "message", "data", "server_time", "links") if m not in body]
    if missing:
        problems.append(f"missing {missing}")
    if body.get("code") != 0 or not is_int(body.get("code")):
        problems.append(f"code {body.get('code')!r}")
    if body.get("message") != "ok":
        problems.append(f"message {body.get('message')!r}")
    if not is_int(body.get("server_time")):
        problems.append(f"server_time {body.get('server_time')!r}")
    if listing:
        data = body.get("data") if isinstance(body.get("data"), dict) else {}
        if not isinstance(data.get("items"), list):
            problems.append("data.items not an array")
        if "next_cursor" not in data or not (
            data["next_cursor"] is None or isinstance(data["next_cursor"], str)
        ):
            problems.append("data.next_cursor not a string or null")
        if "self" not in page.links or "next" not in page.links:
            problems.append(f"links {sorted(page.links)}")
    return problems


def server_time_close(page: Page, tolerance: float = 300.0) -> bool:
    """docs/reading-of-the-spec.md (PAGE-008): server_time within 5 minutes of the response time."""
    low, high = response_time(page.response)
    value = page.body.get("server_time")
    return is_int(value) and low - tolerance <= value <= high + tolerance


def link_path(url: object) -> str:
    """A service link rebased on the target's base_url (path and query kept)."""
    from urllib.parse import urlsplit

    parts = urlsplit(str(url))
    return parts.path + (f"?{parts.query}" if parts.query else "")
