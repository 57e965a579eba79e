"""Scripted answers the referee proxy puts in front of a real server (no I/O, clock passed in).

A scenario lists injections as data (scenarios/*.toml). Each one matches requests by method,
path under the API prefix and flow run (`phase`), skips the first `skip` matches and acts on the
next `times` (0: every one); with `each_new`, only the first time each distinct request comes
(so every page of a walk fails once). Actions:

  respond      an answer made here: status, `Retry-After`, a flat or envelope error body with a
               known or unknown code (spec: Errors > Formats), or an empty body. It looks like
               the server's: the body shape of that endpoint unless `format` says otherwise
               (envelope for creatives, series and playlists, flat for the others and for every
               429), the common response headers (Service-API-Status, Service-Request-Id with
               a fresh `req_` + 26 Crockford characters repeated as the body's `request_id`,
               Cache-Control; the proxy adds Service-Version) and, on a 429, the rate-limit
               headers of that endpoint's counter (spec: Limits);
  reset        the connection dropped after the answer's head (a network error for the client);
  delay        seconds to hold the request before forwarding it (past the attempt timeout);
  unknown      add fields and/or enum values the spec does not name to a real answer (CLI-001,
               CLI-002): `fields`, `enums` or `both`;
  page_limit   forward paged reads with this `limit`, so a walk has many pages;
  wrap_cursors hand out proxy cursors (with a `%2F` in them) and map them back, noting any
               cursor that comes back changed (CLI-026);
  empty_page   answer an empty page whose cursor replays the same page (CLI-027);
  repeat_item  start a page with the previous page's last item, its title marked "later copy"
               (spec: Limits > Freshness, "Catalog paging": pages re-cut to repeat a film);
  drop_item    leave the first film the proxy ever saw out of catalog answers (a catalog change
               between two walks, or a film skipped by a page cut);
  batch_item   turn one item of a 200 batch answer into a failed item (its own retry_after, or
               a not_entitled `reason`);
  null_field   set this field of every catalog episode to null (an episode field a client keeps
               from the previous walk when null, e.g. `vid_ready`; CAT-078);
  opaque_ids   request ids of another shape the spec allows (`req_` and 26 characters, here
               lowercase and outside the Crockford alphabet) on the answers it matches, in the
               Service-Request-Id header and the body's `request_id` alike, injected answers
               included (Common response headers: not to be parsed; CLI-006);
  older_copy   serve every catalog film as an older copy another server's cache still holds:
               `metadata_updated_at` this many seconds earlier, another `metadata_version`
               (Limits > Freshness: calls seconds apart can differ; CLI-047);
  rights_ends  set `rights.ends_at` of the first items of a creatives page to midnights (UTC)
               this many days from today (Resources > Creative record; CLI-034), and note the
               items of that page served with a null `rights.ends_at` (no end on record);
  refresh_in   set `refresh_before` of an open-video answer to this many seconds from now (ISO
               8601 UTC, whole seconds, "Z"), so a scenario watches a refresh the spec puts 45
               minutes after the response (Endpoints > GET /videos; Limits: open video links);
               `expires_at` is kept, or moved up to `refresh_before` when it came earlier, and
               the time served is noted (epoch seconds) for the judge (CLI-040).

`Injector.decide` turns one request into a `Plan`; `Injector.rewrite` applies the plan's body
changes to the upstream answer. Counters live in the injector, so one scenario run is one object.
The clock is the wall clock `rights_ends` and `refresh_in` read (passed in, for tests).
"""

from __future__ import annotations

import fnmatch
import json
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = [
    "ACTIONS", "Injection", "InjectionError", "Injector", "Plan", "endpoint_format",
    "new_request_id", "opaque_request_id", "parse_injection",
]  # fmt: skip

API_PREFIX = "/api/delivery/v1/"
ACTIONS = frozenset(
    {
        "respond", "reset", "delay", "unknown", "page_limit", "wrap_cursors", "empty_page",
        "repeat_item", "drop_item", "batch_item", "rights_ends",
        "null_field", "opaque_ids", "older_copy", "refresh_in",
    }
)  # fmt: skip
_MATCH_KEYS = frozenset({"method", "path", "phase"})
_COMMON_KEYS = frozenset({"match", "skip", "times", "each_new"})
_RESPOND_KEYS = frozenset({"status", "retry_after", "format", "code", "message"})
_BATCH_KEYS = frozenset({"index", "status", "code", "retry_after", "reason"})
UNKNOWN_FIELD = "x_referee_unknown"
UNKNOWN_ENUM = "x-referee-unknown-value"
_ENUM_FIELDS = frozenset({"status", "placement", "aspect", "protection", "kind"})
_MESSAGES = {400: "Bad request", 401: "Unauthorized", 403: "Forbidden", 404: "Not found",
             405: "Method not allowed", 409: "Conflict", 410: "Gone", 422: "Unprocessable",
             429: "Too many requests", 500: "Internal error", 502: "Bad gateway",
             503: "Service unavailable"}  # fmt: skip


CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
ENVELOPE_ENDPOINTS = ("creatives", "series", "playlists")  # spec: Paging and envelopes
# Limits: the counter of each endpoint (first path segment), requests or tickets per 60 s
RATE_LIMITS = {"playback": 10_800, "catalog": 3_000, "series": 3_000, "playlists": 3_000,
               "creatives": 3_000, "videos": 3_000, "config": 600}  # fmt: skip


def new_request_id() -> str:
    """An id of the server's form (Common response headers): `req_` and 26 characters."""
    return "req_" + "".join(secrets.choice(CROCKFORD) for _ in range(26))


OPAQUE = "abcdefghijklmnopqrstuvwxyz0123456789"


def opaque_request_id() -> str:
    """An id the spec allows (`req_` and 26 characters) that no ULID or Crockford reader takes:
    lowercase, with a `u` (outside Crockford's alphabet) first."""
    return "req_u" + "".join(secrets.choice(OPAQUE) for _ in range(25))


def endpoint_format(path: str, status: int, code: Any = None) -> str:
    """The error body shape of the endpoint (Errors > Formats): flat, except envelope on
    creatives, series and playlists; a 429 and a 400 `unsupported_version` are flat
    everywhere."""
    first = path.removeprefix(API_PREFIX).split("/", 1)[0]
    if status == 429 or code == "unsupported_version" or first not in ENVELOPE_ENDPOINTS:
        return "flat"
    return "envelope"


def common_headers(request_id: str) -> dict[str, str]:
    """The common response headers but Service-Version (the proxy knows the version)."""
    return {"service-api-status": "beta", "service-request-id": request_id,
            "cache-control": "no-store"}  # fmt: skip


class InjectionError(ValueError):
    """A scenario's injection that cannot be read (one line)."""


@dataclass(frozen=True)
class Injection:
    action: str
    value: Any
    method: str = "*"
    path: str = "*"
    phase: int = 0  # 0: every run of the flow
    skip: int = 0
    times: int = 1  # 0: every match
    each_new: bool = False  # only the first time each distinct request (path and query) comes

    def matches(self, method: str, path: str, phase: int) -> bool:
        if self.method != "*" and self.method.upper() != method.upper():
            return False
        if self.phase and self.phase != phase:
            return False
        return fnmatch.fnmatchcase(path.removeprefix(API_PREFIX), self.path)

    def label(self) -> str:
        if self.action == "respond":
            value = self.value
            ra = f" Retry-After {value['retry_after']}" if "retry_after" in value else ""
            code = f" {value['code']}" if "code" in value else ""
            return f"respond {value['status']}{code}{ra} ({value.get('format', 'flat')})"
        if self.action in ("reset", "wrap_cursors", "empty_page", "repeat_item", "drop_item"):
            return self.action
        return f"{self.action} {json.dumps(self.value, sort_keys=True)}"


def parse_injection(data: Mapping[str, Any], where: str) -> Injection:
    """One `[[scenario.inject]]` table; unknown keys are refused."""
    actions = [key for key in data if key in ACTIONS]
    unknown = set(data) - ACTIONS - _COMMON_KEYS
    if unknown:
        raise InjectionError(f"{where}: unknown keys {', '.join(sorted(unknown))}")
    if len(actions) != 1:
        raise InjectionError(f"{where}: needs exactly one action of {', '.join(sorted(ACTIONS))}")
    action = actions[0]
    value = data[action]
    match = data.get("match", {})
    if not isinstance(match, Mapping) or set(match) - _MATCH_KEYS:
        raise InjectionError(f"{where}: match takes only {', '.join(sorted(_MATCH_KEYS))}")
    if action == "respond":
        if not isinstance(value, Mapping) or set(value) - _RESPOND_KEYS or "status" not in value:
            raise InjectionError(f"{where}: respond needs status (and {sorted(_RESPOND_KEYS)})")
        if value.get("format", "flat") not in ("flat", "envelope", "empty"):
            raise InjectionError(f"{where}: respond format is flat, envelope or empty")
    elif action == "batch_item":
        if not isinstance(value, Mapping) or set(value) - _BATCH_KEYS:
            raise InjectionError(f"{where}: batch_item takes {sorted(_BATCH_KEYS)}")
    elif action == "rights_ends" and not (
        isinstance(value, list) and value and all(type(v) is int for v in value)
    ):
        raise InjectionError(f"{where}: rights_ends is a list of whole days from today")
    elif action == "opaque_ids" and value is not True:
        raise InjectionError(f"{where}: opaque_ids = true")
    elif action == "unknown" and value not in ("fields", "enums", "both"):
        raise InjectionError(f"{where}: unknown is fields, enums or both")
    elif action == "older_copy" and not (type(value) is int and value > 0):
        raise InjectionError(f"{where}: older_copy is a whole number of seconds")
    elif action in ("delay", "page_limit", "refresh_in") and not (
        isinstance(value, int | float) and not isinstance(value, bool) and value > 0
    ):
        raise InjectionError(f"{where}: {action} needs a positive number")
    try:
        return Injection(
            action,
            dict(value) if isinstance(value, Mapping) else value,
            str(match.get("method", "*")),
            str(match.get("path", "*")),
            int(match.get("phase", 0)),
            int(data.get("skip", 0)),
            int(data.get("times", 1)),
            bool(data.get("each_new", False)),
        )
    except (TypeError, ValueError):
        raise InjectionError(f"{where}: skip, times and phase are integers") from None


@dataclass
class Plan:
    """What to do with one request."""

    respond: tuple[int, dict[str, str], bytes] | None = None
    reset: bool = False
    delay: float = 0.0
    query: dict[str, str] = field(default_factory=dict)  # the query to forward
    rewrites: list[Injection] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)  # set on a forwarded answer


def error_body(
    status: int, fmt: str, code: Any, message: str | None, request_id: str, now: float = 0.0
) -> bytes:
    """An error body in the API's flat or envelope format (spec: Errors > Formats)."""
    text = message or _MESSAGES.get(status, "Error")
    if fmt == "empty":
        return b""
    if fmt == "envelope":
        number = int(code) if isinstance(code, int) or str(code).isdigit() else status * 10
        return json.dumps({"code": number, "message": text, "server_time": int(now),
                           "request_id": request_id}).encode()  # fmt: skip
    body: dict[str, Any] = {"error": text, "request_id": request_id}
    if code is not None:
        body["error_code"] = str(code)
    return json.dumps(body).encode()


class Injector:
    def __init__(
        self, injections: list[Injection], clock: Callable[[], float] = time.time,
        request_id: Callable[[], str] = new_request_id,
    ) -> None:  # fmt: skip
        self.injections = injections
        self.clock = clock
        self.request_id = request_id
        self.seen = [0] * len(injections)
        self.cursors: dict[str, str | None] = {}  # proxy cursor -> real cursor (None: none)
        self.last_items: dict[str, Any] = {}  # path -> last item of the previous page
        self.first_film: str | None = None
        self.applied = 0
        self._requests: set[tuple[int, str, str, tuple[tuple[str, str], ...]]] = set()

    def _fire(self, index: int, key: tuple[str, str, tuple[tuple[str, str], ...]]) -> bool:
        injection = self.injections[index]
        if injection.each_new:
            if (index, *key) in self._requests:
                return False
            self._requests.add((index, *key))
        self.seen[index] += 1
        n = self.seen[index] - injection.skip
        return n >= 1 and (injection.times == 0 or n <= injection.times)

    def fired(self) -> int:
        """How many injections acted at least once."""
        return sum(1 for inj, n in zip(self.injections, self.seen, strict=True) if n > inj.skip)

    def decide(self, method: str, path: str, query: Mapping[str, str], phase: int) -> Plan:
        plan = Plan(query=dict(query))
        wrapping = any(i.action in ("wrap_cursors", "empty_page") for i in self.injections)
        cursor = query.get("cursor")
        if cursor is not None and (wrapping or cursor in self.cursors):
            if cursor in self.cursors:
                real = self.cursors[cursor]
                if real is None:
                    plan.query.pop("cursor")
                else:
                    plan.query["cursor"] = real
            else:
                plan.notes.append("cursor_unknown")
        key = (method, path, tuple(sorted(query.items())))
        # every injection counts every request it matches, even one another answers alone
        firing = [
            injection.matches(method, path, phase) and self._fire(index, key)
            for index, injection in enumerate(self.injections)
        ]
        opaque = any(f and i.action == "opaque_ids" for i, f in zip(self.injections, firing,
                                                                    strict=True))  # fmt: skip
        new_id = opaque_request_id if opaque else self.request_id
        if opaque:
            plan.extra["request_id"] = plan.headers["service-request-id"] = new_id()
        for injection, fire in zip(self.injections, firing, strict=True):
            if not fire:
                continue
            self.applied += 1
            action, value = injection.action, injection.value
            if action == "respond":
                status = int(value["status"])
                rid = new_id()
                headers = {**common_headers(rid), "content-type": "application/json"}
                if "retry_after" in value:
                    headers["retry-after"] = str(value["retry_after"])
                counter = path.removeprefix(API_PREFIX).split("/", 1)[0]
                if status == 429 and counter in RATE_LIMITS:
                    headers["x-ratelimit-limit"] = str(RATE_LIMITS[counter])
                    headers["x-ratelimit-window"] = "60"
                code = value.get("code")
                fmt = str(value.get("format") or endpoint_format(path, status, code))
                body = error_body(status, fmt, code, value.get("message"), rid, self.clock())
                if not body:
                    headers.pop("content-type")
                plan.respond = (status, headers, body)
                plan.labels.append(injection.label())
                return plan
            if action == "reset":
                plan.reset = True
                plan.labels.append("reset")
                return plan
            if action == "empty_page":
                token = self._token(query.get("cursor"), plan.query.get("cursor"))
                page = {"films": [], "episodes": [], "next_cursor": token,
                        "links": {"next": None}}  # fmt: skip
                headers = {**common_headers(new_id()), "content-type": "application/json"}
                plan.respond = (200, headers, json.dumps(page).encode())
                plan.labels.append("empty_page")
                plan.extra["handed_cursor"] = token
                return plan
            if action == "delay":
                plan.delay = float(value)
            elif action == "page_limit":
                if "limit" in plan.query or "cursor" in plan.query:
                    plan.query["limit"] = str(int(value))
            else:
                plan.rewrites.append(injection)
            plan.labels.append(injection.label())
        return plan

    def _token(self, sent: str | None, real: str | None) -> str:
        token = f"ref{len(self.cursors) + 1}%2Fv"
        self.cursors[token] = real
        del sent
        return token

    def rewrite(self, plan: Plan, path: str, status: int, body: Any) -> Any:
        """Apply the plan's body changes to a parsed upstream answer (returns the new body)."""
        short = path.removeprefix(API_PREFIX)
        if short == "catalog" and isinstance(body, dict) and self.first_film is None:
            films = body.get("films")
            if isinstance(films, list) and films and isinstance(films[0], dict):
                self.first_film = films[0].get("id")
        for injection in plan.rewrites:
            action = injection.action
            if action == "unknown":
                body = _add_unknown(body, injection.value)
            elif action == "drop_item" and status == 200:
                body = self._drop(body, plan)
            elif action == "repeat_item" and status == 200:
                body = self._repeat(short, body, plan)
            elif action == "batch_item" and status == 200:
                body = _fail_item(body, injection.value)
            elif action == "rights_ends" and status == 200:
                body = self._rights(body, injection.value, plan)
            elif action == "null_field" and status == 200:
                body = _null_field(body, str(injection.value), plan)
            elif action == "older_copy" and status == 200:
                body = _older_copy(body, int(injection.value), plan)
            elif action == "refresh_in" and status == 200:
                body = _refresh_in(body, self.clock() + float(injection.value), plan)
            elif action == "wrap_cursors" and status == 200:
                body = self._wrap(body, plan)
            elif action == "opaque_ids" and isinstance(body, dict) and "request_id" in body:
                body["request_id"] = plan.extra["request_id"]
        items = _items(body)
        if items:
            self.last_items[short] = items[-1]
        holder = body.get("data") if isinstance(body, dict) else None
        holder = holder if isinstance(holder, dict) else body
        handed = holder.get("next_cursor") if isinstance(holder, dict) else None
        if isinstance(handed, str):  # a cursor the server handed out, passed on as it is
            self.cursors.setdefault(handed, handed)
        return body

    def _wrap(self, body: Any, plan: Plan) -> Any:
        if not isinstance(body, dict):
            return body
        holder = body["data"] if isinstance(body.get("data"), dict) else body
        real = holder.get("next_cursor")
        if isinstance(real, str):
            token = self._token(None, real)
            holder["next_cursor"] = token
            plan.extra["handed_cursor"] = token
            links = body.get("links")
            if isinstance(links, dict) and isinstance(links.get("next"), str):
                links["next"] = _with_cursor(links["next"], token)
        return body

    def _drop(self, body: Any, plan: Plan) -> Any:
        if not isinstance(body, dict) or not isinstance(body.get("films"), list):
            return body
        target = self.first_film
        films = [f for f in body["films"] if not (isinstance(f, dict) and f.get("id") == target)]
        if len(films) != len(body["films"]):
            body["films"] = films
            if isinstance(body.get("episodes"), list):
                body["episodes"] = [
                    e for e in body["episodes"]
                    if not (isinstance(e, dict) and e.get("film_id") == target)
                ]  # fmt: skip
            plan.extra["dropped"] = target
        return body

    def _rights(self, body: Any, days: list[int], plan: Plan) -> Any:
        today = int(self.clock()) // 86_400 * 86_400
        ends: dict[str, int | None] = {}
        items = [i for i in _items(body) or [] if isinstance(i, dict)
                 and isinstance(i.get("creative_id"), str)]  # fmt: skip
        for item, offset in zip(items, days, strict=False):
            rights = item.get("rights")
            kept = rights if isinstance(rights, dict) else {}
            item["rights"] = {**kept, "ends_at": today + offset * 86_400}
            ends[item["creative_id"]] = item["rights"]["ends_at"]
        for item in items[len(days) :]:  # served as they are: no end on record stays usable
            rights = item.get("rights")
            if isinstance(rights, dict) and "ends_at" in rights and rights["ends_at"] is None:
                ends[item["creative_id"]] = None
        if ends:
            plan.extra["rights_ends"] = ends
        return body

    def _repeat(self, short: str, body: Any, plan: Plan) -> Any:
        previous = self.last_items.get(short)
        items = _items(body)
        if previous is None or items is None or not isinstance(previous, dict):
            return body
        copy = json.loads(json.dumps(previous))
        if "title" in copy:
            copy["title"] = f"{copy['title']} (later copy)"
            plan.extra["repeated_title"] = copy["title"]
        plan.extra["repeated_id"] = copy.get("id", copy.get("creative_id"))
        items.insert(0, copy)
        return body


def _items(body: Any) -> list[Any] | None:
    if isinstance(body, dict):
        if isinstance(body.get("films"), list):
            films: list[Any] = body["films"]
            return films
        data = body.get("data")
        if isinstance(data, dict) and isinstance(data.get("items"), list):
            items: list[Any] = data["items"]
            return items
    return None


def _with_cursor(url: str, token: str) -> str:
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "cursor"]
    query.append(("cursor", token))
    return urlunsplit(parts._replace(query=urlencode(query)))


def _add_unknown(body: Any, what: str) -> Any:
    if isinstance(body, dict):
        out = {key: _add_unknown(item, what) for key, item in body.items()}
        if what in ("enums", "both"):
            for name in _ENUM_FIELDS & set(out):
                if isinstance(out[name], str):
                    out[name] = UNKNOWN_ENUM
        if what in ("fields", "both"):
            out[UNKNOWN_FIELD] = {"added_by": "referee", "list": [1, "two"]}
        return out
    if isinstance(body, list):
        return [_add_unknown(item, what) for item in body]
    return body


def _older_copy(body: Any, seconds: int, plan: Plan) -> Any:
    """Each film with a `metadata_updated_at` as an older cache would hold it: that time moved
    `seconds` back and a `metadata_version` of that older copy."""
    films = body.get("films") if isinstance(body, dict) else None
    aged = []
    for film in films or []:
        stamp = film.get("metadata_updated_at") if isinstance(film, dict) else None
        try:
            when = datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
        except ValueError:
            continue
        older = when.astimezone(UTC) - timedelta(seconds=seconds)
        film["metadata_updated_at"] = older.strftime("%Y-%m-%dT%H:%M:%SZ")
        if isinstance(film.get("metadata_version"), str):
            film["metadata_version"] = f"older-{film['metadata_version']}"
        aged.append(film.get("id"))
    if aged:
        plan.extra["older_copy"] = aged
    return body


def _utc(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _refresh_in(body: Any, due: float, plan: Plan) -> Any:
    """`refresh_before` moved to `due` (epoch seconds, cut to whole seconds as served), and
    `expires_at` no earlier than it (a link stays valid until the list is due again)."""
    if not isinstance(body, dict) or "refresh_before" not in body:
        return body
    stamp = int(due)
    body["refresh_before"] = _utc(stamp)
    try:
        expires = datetime.fromisoformat(str(body.get("expires_at")).replace("Z", "+00:00"))
        keep = expires.timestamp() >= stamp
    except ValueError:
        keep = False
    if not keep:
        body["expires_at"] = _utc(stamp)
    plan.extra["refresh_before"] = stamp
    return body


def _null_field(body: Any, name: str, plan: Plan) -> Any:
    episodes = body.get("episodes") if isinstance(body, dict) else None
    touched = [e for e in episodes or [] if isinstance(e, dict) and e.get(name) is not None]
    for episode in touched:
        episode[name] = None
    if touched:
        plan.extra["nulled"] = name
    return body


def _fail_item(body: Any, value: Mapping[str, Any]) -> Any:
    if not isinstance(body, dict) or not isinstance(body.get("items"), list):
        return body
    index = int(value.get("index", 0))
    if index >= len(body["items"]):
        return body
    item = body["items"][index]
    status = int(value.get("status", 503))
    failed = {
        "request": item.get("request") if isinstance(item, dict) else None,
        "status": status,
        "error": _MESSAGES.get(status, "Error"),
        "error_code": str(value.get("code", "service_unavailable")),
    }
    if "reason" in value:  # Errors > Playback: a not_entitled body's `error` is its reason
        failed["error"] = failed["reason"] = str(value["reason"])
    if "retry_after" in value or status in (429, 503):
        failed["retry_after"] = value.get("retry_after", 1)
    body["items"][index] = failed
    return body
