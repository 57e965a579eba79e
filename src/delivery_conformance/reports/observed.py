"""What a run saw the server do, beyond pass and fail: `run.observed` of results.json (pure).

Read from the run's exchanges (redacted, bodies capped at `evidence.exchange.BODY_CAP`), only
what the spec makes visible from outside, so two runs of one server can be compared (`compare`):

- rate_limits: per counter (spec: Limits, the counter table), the limit `/config` announces in
  `rate_limits.doors` (the value most of its answers gave: scenarios lower limits on purpose)
  and every value it gave; the `X-RateLimit-Limit` values of the 429 answers and the largest;
  the `Retry-After` seconds of those 429s (spec: Limits > Behaviour at the ceiling).
- retry_after: the `Retry-After` seconds of every 429 and 503 (spec: Errors), min/median/max.
- paging: per list endpoint (spec: Endpoints > Paging and envelopes, Limits > Other constants),
  the default page size (a page asked without `limit` that has a next cursor), the largest
  `limit` answered 200 and the smallest refused, and the largest page that held as many items as
  its `limit` asked.
- deprecation: per route and `Service-Version` of its 200 answers, the `Deprecation`, `Sunset`
  and `Link` values (spec: Common response headers; Versioning 5), and the versions `/config`
  lists with their deprecation and sunset dates.
- service_versions: the `Service-Version` values answered, with how many answers gave each.

Nothing is guessed: a figure no exchange shows is null ("not observed"); a capped body is not
read. Admin calls (`/_sandbox/`) and anything outside the API's paths are left out.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from delivery_conformance.evidence.exchange import BODY_CAP, Exchange
from delivery_conformance.spec.endpoints import API_PREFIX, Endpoint, match_endpoint
from delivery_conformance.spec.limits import SPEC_LIMITS

__all__ = ["LIST_ITEMS", "observe", "route_of"]

# spec: Endpoints: where each list endpoint puts its items and its next cursor.
LIST_ITEMS: Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "GET /catalog": (("films",), ("next_cursor",)),
    "GET /creatives": (("data", "items"), ("data", "next_cursor")),
    "GET /series": (("data", "items"), ("data", "next_cursor")),
    "GET /playlists": (("data", "items"), ("data", "next_cursor")),
    "GET /videos": (("rows",), ("next_cursor",)),
}
DEPRECATION_HEADERS = ("deprecation", "sunset", "link")
RETRY_STATUSES = (429, 503)


def route_of(endpoint: Endpoint) -> str:
    return f"{endpoint.method} {endpoint.template}"


def _header(exchange: Exchange, name: str) -> str | None:
    for key, value in exchange.response_headers.items():
        if key.lower() == name:
            return value
    return None


def _whole_number(text: str | None) -> int | None:
    if text is None or not text.strip().isdigit():
        return None
    return int(text.strip())


def _body(exchange: Exchange) -> Any:
    """The parsed body, or None when it is not JSON or was capped (never read half a body)."""
    text = exchange.response_body
    if not text or len(text) > BODY_CAP:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _at(data: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def _stats(values: list[int]) -> dict[str, Any] | None:
    if not values:
        return None
    return {
        "count": len(values),
        "min": min(values),
        "median": statistics.median_low(sorted(values)),
        "max": max(values),
    }


def _tally(values: Iterable[Any]) -> dict[str, int]:
    """{value as text: times seen}, most often first, then by value."""
    counts = Counter(str(v) for v in values)
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def _most_often(values: list[int]) -> int | None:
    """The value most answers gave; on a tie the largest (a lowered limit is the exception)."""
    if not values:
        return None
    counts = Counter(values)
    return max(counts, key=lambda v: (counts[v], v))


def _local_link(exchange: Exchange, value: str) -> str:
    """A `Link` value with this server's own origin folded to `{base_url}` (the port of an
    embedded sandbox changes from run to run)."""
    parts = urlsplit(exchange.url)
    return value.replace(f"{parts.scheme}://{parts.netloc}", "{base_url}")


class _Observer:
    def __init__(self) -> None:
        self.seen = 0
        self.announced: dict[str, list[int]] = {}
        self.units: dict[str, Counter[str]] = {}
        self.windows: list[int] = []
        self.header_limits: dict[str, list[int]] = {}
        self.refusals: Counter[str] = Counter()
        self.header_windows: list[int] = []
        self.counter_retry: dict[str, list[int]] = {}
        self.retry: dict[int, list[int]] = {status: [] for status in RETRY_STATUSES}
        self.pages: dict[str, dict[str, list[int]]] = {}
        self.deprecation: dict[str, dict[str, dict[str, list[str]]]] = {}
        self.answers_200: Counter[tuple[str, str]] = Counter()
        self.versions: list[str] = []
        self.config_versions: Counter[str] = Counter()

    def add(self, exchange: Exchange) -> None:
        path = urlsplit(exchange.url).path
        if exchange.status is None or not path.startswith(API_PREFIX):
            return
        self.seen += 1
        version = _header(exchange, "service-version")
        if version is not None:
            self.versions.append(version)
        endpoint = match_endpoint(exchange.method, path)
        if endpoint is None:
            return
        if exchange.status in RETRY_STATUSES:
            self._refused(exchange, endpoint)
        if exchange.status == 200:
            self._deprecation(exchange, route_of(endpoint), version or "none")
            if route_of(endpoint) == "GET /config":
                self._config(_body(exchange))
        if route_of(endpoint) in LIST_ITEMS:
            self._page(exchange, route_of(endpoint))

    def _refused(self, exchange: Exchange, endpoint: Endpoint) -> None:
        seconds = _whole_number(_header(exchange, "retry-after"))
        if seconds is not None:
            self.retry[exchange.status or 0].append(seconds)
        if exchange.status != 429:
            return
        counter = endpoint.counter
        self.refusals[counter] += 1
        limit = _whole_number(_header(exchange, "x-ratelimit-limit"))
        self.header_limits.setdefault(counter, [])
        if limit is not None:
            self.header_limits[counter].append(limit)
        window = _whole_number(_header(exchange, "x-ratelimit-window"))
        if window is not None:
            self.header_windows.append(window)
        if seconds is not None:
            self.counter_retry.setdefault(counter, []).append(seconds)

    def _config(self, body: Any) -> None:
        limits = _at(body, ("rate_limits",))
        if isinstance(limits, dict):
            window = limits.get("window_seconds")
            if isinstance(window, int) and not isinstance(window, bool):
                self.windows.append(window)
            doors = limits.get("doors")
            for name, door in doors.items() if isinstance(doors, dict) else ():
                limit = door.get("limit") if isinstance(door, dict) else None
                if isinstance(limit, int) and not isinstance(limit, bool):
                    self.announced.setdefault(name, []).append(limit)
                    unit = door.get("unit")
                    self.units.setdefault(name, Counter())[str(unit)] += 1
        supported = _at(body, ("api", "supported_versions"))
        if isinstance(supported, list):
            rows = [
                {key: row.get(key) for key in ("version", "deprecated_at", "sunset_at")}
                for row in supported
                if isinstance(row, dict)
            ]
            self.config_versions[json.dumps(rows, sort_keys=True)] += 1

    def _deprecation(self, exchange: Exchange, route: str, version: str) -> None:
        self.answers_200[(route, version)] += 1
        headers = self.deprecation.setdefault(route, {}).setdefault(version, {})
        for name in DEPRECATION_HEADERS:
            value = _header(exchange, name)
            values = headers.setdefault(name, [])
            if value is not None:
                values.append(_local_link(exchange, value) if name == "link" else value)

    def _page(self, exchange: Exchange, route: str) -> None:
        query = dict(parse_qsl(urlsplit(exchange.url).query, keep_blank_values=True))
        limit = _whole_number(query.get("limit"))
        facts = self.pages.setdefault(route, {})
        if exchange.status != 200:
            # Refused for the limit alone: no other parameter could be the cause.
            if limit is not None and limit > 0 and set(query) == {"limit"}:
                facts.setdefault("refused", []).append(limit)
            return
        if limit is not None:
            facts.setdefault("accepted", []).append(limit)
        items_path, cursor_path = LIST_ITEMS[route]
        body = _body(exchange)
        items = _at(body, items_path)
        if not isinstance(items, list):
            return
        if "limit" not in query and isinstance(_at(body, cursor_path), str):
            facts.setdefault("default", []).append(len(items))
        if limit is not None and len(items) == limit:
            facts.setdefault("full", []).append(limit)

    def result(self) -> dict[str, Any]:
        return {
            "exchanges": self.seen,
            "rate_limits": self._rate_limits(),
            "retry_after": {str(s): _stats(v) for s, v in self.retry.items()},
            "paging": {route: self._paging(route) for route in sorted(self.pages)},
            "deprecation": self._deprecations(),
            "config_versions": self._config_versions(),
            "service_versions": _tally(self.versions),
        }

    def _rate_limits(self) -> dict[str, Any]:
        names = [n for n in SPEC_LIMITS if n in self.announced or n in self.header_limits]
        names += sorted(set(self.announced) - set(SPEC_LIMITS))
        out: dict[str, Any] = {}
        for name in names:
            announced = self.announced.get(name, [])
            headers = self.header_limits.get(name, [])
            units = self.units.get(name)
            out[name] = {
                "announced": _most_often(announced),
                "announced_values": _tally(announced),
                "unit": units.most_common(1)[0][0] if units else None,
                "refusals": self.refusals[name],
                "header_limits": _tally(headers),
                "header_ceiling": max(headers, default=None),
                "retry_after": _stats(self.counter_retry.get(name, [])),
            }
        return {
            "window_seconds": _most_often(self.windows),
            "header_windows": _tally(self.header_windows),
            "counters": out,
        }

    def _paging(self, route: str) -> dict[str, Any]:
        facts = self.pages[route]
        accepted = facts.get("accepted", [])
        larger = [n for n in facts.get("refused", []) if n > max(accepted, default=0)]
        return {
            "default_page_size": max(facts.get("default", []), default=None),
            "largest_limit_accepted": max(accepted, default=None),
            "smallest_limit_refused": min(larger, default=None),
            "largest_full_page": max(facts.get("full", []), default=None),
        }

    def _deprecations(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for route in sorted(self.deprecation):
            per_version = {}
            for version in sorted(self.deprecation[route]):
                headers = self.deprecation[route][version]
                per_version[version] = {
                    "answers": self.answers_200[(route, version)],
                    **{name: sorted(set(headers.get(name, []))) for name in DEPRECATION_HEADERS},
                }
            out[route] = per_version
        return out

    def _config_versions(self) -> list[dict[str, Any]] | None:
        if not self.config_versions:
            return None
        rows: list[dict[str, Any]] = json.loads(self.config_versions.most_common(1)[0][0])
        return rows


def observe(exchanges: Iterable[Exchange]) -> dict[str, Any]:
    """`run.observed`: the behaviour these exchanges show (see the module docstring)."""
    observer = _Observer()
    for exchange in exchanges:
        observer.add(exchange)
    return observer.result()
