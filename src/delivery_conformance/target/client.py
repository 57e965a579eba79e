"""The HTTP client of the harness: httpx underneath, evidence recorded, paced, never clever.

    client = DeliveryClient(profile)                       # or transport=httpx.MockTransport(...)
    response = client.request("GET", "config", role="films")
    response.status_code, response.headers, response.json_body(), response.exchange

What it sends is what the spec asks of a client (spec: Authentication item 1; General rules
item 4; Versioning item 2; POST /playback > Service-Simulate): `Authorization: Bearer <key>`,
`Content-Type: application/json` with a JSON body, `Service-Version` and `Service-Simulate` when
asked. A path without a leading `/` is relative to `/api/delivery/v1/`.

What it never does: retry, follow a redirect, keep a cookie, print a secret. Network failures
become `TargetUnreachable`, an invalid HTTP answer or a body that is not JSON where JSON is due
becomes `TargetGarbage`; both with one-line messages. Every exchange, including failed ones, is
redacted and handed to `on_exchange` (the pytest plugin attaches them to the current test).
`timeout` (default 10 s) bounds each whole answer, connect to last byte, not each read (see
`transport`): a target that trickles its answer ends in `TargetUnreachable` like a silent one.

Pacing (see `pacing`): before each request the client sleeps (injected `sleep`, injected
monotonic `clock`) until the counter of the endpoint has room under the budget. `pacer=None`
turns pacing off (the embedded sandbox). A timing scenario that must burst says so with
`with client.burst("why"):` — the requests inside are neither delayed nor charged to the
budget. Only scenarios that spend the counters of a dedicated organisation whose limit they
lowered themselves (or its simulated-answer allowance) burst uncharged, and the admin API
resets those counters after the test, so the budget that protects the shared counters stays
true. `burst("why", charged=True)` is not delayed but still charged (a poll on shared counters
whose timing a pacing wait would distort).
"""

from __future__ import annotations

import contextlib
import json as jsonlib
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from delivery_conformance.evidence.exchange import Exchange
from delivery_conformance.evidence.redact import Redactor
from delivery_conformance.exceptions import (
    HarnessFailure,
    RunStopped,
    TargetGarbage,
    TargetUnreachable,
)
from delivery_conformance.spec.endpoints import Endpoint, match_endpoint
from delivery_conformance.spec.operations import Operation
from delivery_conformance.target.pacing import Pacer, limits_from_config
from delivery_conformance.target.profile import API_PREFIX, TargetProfile
from delivery_conformance.target.profile_names import OWN_ORGANISATION_ROLES, TWIN_OF
from delivery_conformance.target.transport import AnswerBudget, bounded_transport

__all__ = ["DEFAULT_TIMEOUT", "SIMULATED_ENDPOINTS", "DeliveryClient", "RequestContext", "Response"]

DEFAULT_TIMEOUT = 10.0
MAX_PACING_WAIT = 60.0
ANNOUNCED_WAIT = 5.0  # a pacing wait this long is announced (`on_wait`): never a silent minute
WAIT_SLICE = 0.5
# Methods whose request may be sent again when a kept-alive connection turned out closed before
# any byte of the answer came (RFC 9110, Idempotent Methods): the server dropped an idle
# connection as the request left, which every HTTP client meets and retries once, on a new one.
RESENDABLE = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})
# docs/reading-of-the-spec.md (SIM (endpoints)): the header is honoured only on these.
SIMULATED_ENDPOINTS = frozenset(
    {Operation.GET_CATALOG, Operation.GET_CONFIG, Operation.POST_PLAYBACK}
)


@dataclass(frozen=True)
class RequestContext:
    """What the harness asked, for the checks: operation, role, requested version..."""

    method: str
    path: str
    endpoint: Endpoint | None
    role: str | None = None
    version: str | None = None
    simulate: str | None = None
    host: str | None = None
    pinned_version: str | None = None  # learnt from GET /config for this role, if known

    @property
    def operation(self) -> str | None:
        return self.endpoint.operation if self.endpoint else None


class Response:
    """An httpx response with the context it was asked in and the redacted exchange."""

    def __init__(self, http: httpx.Response, exchange: Exchange, context: RequestContext) -> None:
        self.http = http
        self.exchange = exchange
        self.context = context

    @property
    def status_code(self) -> int:
        return self.http.status_code

    @property
    def headers(self) -> httpx.Headers:
        return self.http.headers

    @property
    def text(self) -> str:
        return self.http.text

    @property
    def content(self) -> bytes:
        return self.http.content

    def json_body(self) -> Any:
        """The decoded JSON body; `TargetGarbage` (one line) on HTML, empty or broken JSON."""
        where = f"{self.context.method} {self.context.path} answered {self.status_code}"
        kind = self.headers.get("content-type", "no content type")
        if not self.content:
            raise TargetGarbage(f"{where} with an empty body where JSON is due")
        try:
            return jsonlib.loads(self.content)
        except ValueError:
            sample = self.exchange.response_body[:60]
            raise TargetGarbage(f"{where} with {kind}, not JSON: {sample!r}") from None

    def __repr__(self) -> str:
        return f"<Response {self.exchange.summary()}>"


def _playback_cost(body: Any) -> int:
    """spec: Limits (playback unit): a batch of N costs N tickets, anything else 1."""
    if isinstance(body, dict):
        if isinstance(body.get("episodes"), list) and body["episodes"]:
            return min(len(body["episodes"]), 3)
        nxt = body.get("next")
        if isinstance(nxt, int) and not isinstance(nxt, bool):
            return 1 + max(0, min(nxt, 2))
    return 1


def _slowness(error: httpx.TimeoutException) -> str:
    if isinstance(error, httpx.ConnectTimeout):
        return "no connection"
    if isinstance(error, httpx.WriteTimeout):
        return "the request could not be sent"
    return "the target is too slow: silent, or sending its answer a few bytes at a time"


def _closed_without_answer(error: httpx.RemoteProtocolError) -> bool:
    """h11 reads a connection the server dropped before any byte as this protocol error."""
    return "without sending a response" in str(error)


class DeliveryClient:
    def __init__(
        self,
        profile: TargetProfile,
        *,
        transport: httpx.BaseTransport | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        connect_timeout: float | None = None,
        pacer: Pacer | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        on_exchange: Callable[[Exchange], None] | None = None,
    ) -> None:
        self.profile = profile
        self.pacer = pacer
        self.on_exchange = on_exchange
        self.timeout = timeout
        self.pins: dict[str, str] = {}  # role -> dated version pinned to its key
        self.bursting: str | None = None  # why pacing is suspended, inside `burst()`
        self._burst_charged = False
        # Asked before each request: a reason to stop the run (time bound, signal) or None.
        self.stop_check: Callable[[], str | None] | None = None
        # Told of a pacing wait of ANNOUNCED_WAIT seconds or more: (counter, seconds).
        self.on_wait: Callable[[str, float], None] | None = None
        self._sleep, self._clock, self._wall_clock = sleep, clock, wall_clock
        secrets = list(profile.keys.values())
        if profile.admin:
            secrets.append(profile.admin.token)
        # A twin's key reads as the role it stands in for: the same evidence whichever it was.
        names = {key: TWIN_OF.get(role, role) for role, key in profile.keys.items()}
        # key -> the pacing budget it spends: its role's own where no other role shares its
        # organisation (spec: Limits counts per organisation), "" (all the others) otherwise.
        self._budget_of_key = {
            key: role for role, key in profile.keys.items() if role in OWN_ORGANISATION_ROLES
        }
        self.redactor = Redactor(secrets, names)
        # role -> the role whose key is sent instead (several workers: the twin organisation a
        # limit scenario holds, suite/exclusive.py); requests still name the role asked for.
        self.role_aliases: Mapping[str, str] = {}
        self._budget = AnswerBudget()
        self._http = httpx.Client(
            base_url=profile.base_url,
            transport=transport if transport is not None else bounded_transport(self._budget),
            timeout=httpx.Timeout(timeout, connect=connect_timeout or timeout),
            follow_redirects=False,
        )

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> DeliveryClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def burst(self, reason: str, *, charged: bool = False) -> Iterator[None]:
        """Send the requests of this block without pacing waits (see the module docstring).

        `charged=True`: still count them in the budget (a scenario on shared counters that
        must not be paused, e.g. a freshness poll whose timing a pacing wait would distort).
        """
        if not reason.strip():
            raise HarnessFailure("a burst must say why it is exempt from pacing")
        outer = (self.bursting, self._burst_charged)
        self.bursting, self._burst_charged = reason, charged
        try:
            yield
        finally:
            self.bursting, self._burst_charged = outer

    def key_for(self, role: str) -> str:
        role = self.role_aliases.get(role, role)
        try:
            return self.profile.keys[role]
        except KeyError:
            raise HarnessFailure(f"the profile has no key for role {role!r}") from None

    def url_path(self, path: str) -> str:
        return path if path.startswith("/") else API_PREFIX + path

    def get(self, path: str, **kwargs: Any) -> Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> Response:
        return self.request("POST", path, **kwargs)

    def request(
        self,
        method: str,
        path: str,
        *,
        role: str | None = None,
        key: str | None = None,
        json: Any = None,
        content: bytes | str | None = None,
        headers: Mapping[str, str | None] | None = None,
        params: Mapping[str, str | int] | None = None,
        version: str | None = None,
        simulate: str | None = None,
        host: str | None = None,
    ) -> Response:
        """Send one request; `headers` entries set to None remove a header the client would add."""
        method = method.upper()
        full_path = self.url_path(path)
        endpoint = match_endpoint(method, full_path)
        pinned = self.pins.get(role) if role and key is None else None
        context = RequestContext(
            method, full_path, endpoint, role, version, simulate, host, pinned_version=pinned
        )
        sent: dict[str, str | None] = {}
        credential = key if key is not None else (self.key_for(role) if role else None)
        if credential is not None:
            sent["Authorization"] = f"Bearer {credential}"
        if json is not None:
            content = jsonlib.dumps(json)
            sent["Content-Type"] = "application/json"
        if version is not None:
            sent["Service-Version"] = version
        if simulate is not None:
            sent["Service-Simulate"] = simulate
        if host is not None:
            sent["Host"] = host
        sent.update(headers or {})
        request = self._http.build_request(method, full_path, content=content, params=params)
        for name, value in sent.items():
            if value is None:
                request.headers.pop(name, None)
            else:
                request.headers[name] = value
        organisation = self._budget_of_key.get(credential, "") if credential else ""
        self._pace(endpoint, simulate, json, organisation)
        stop = self.stop_check() if self.stop_check is not None else None
        if stop is not None:
            raise RunStopped(f"{stop} before {method} {full_path}")
        return self._send(request, context)

    def _counter(self, endpoint: Endpoint | None, simulate: str | None) -> str | None:
        if endpoint is None:
            return None
        simulated = simulate is not None and self.profile.test_organisation
        if simulated and endpoint.operation in SIMULATED_ENDPOINTS:
            return "simulated"
        return endpoint.counter

    def _pace(
        self, endpoint: Endpoint | None, simulate: str | None, body: Any, organisation: str
    ) -> None:
        counter = self._counter(endpoint, simulate)
        if self.pacer is None or counter is None:
            return
        cost = _playback_cost(body) if counter == "playback" else 1
        if self.bursting is not None:
            if self._burst_charged:
                self.pacer.record(counter, cost, self._clock(), organisation=organisation)
            return
        # On the record at the moment it will go: no other worker spends the budget meanwhile.
        now = self._clock()
        wait = self.pacer.reserve(
            counter, cost, now, organisation=organisation, max_wait=MAX_PACING_WAIT
        )
        if wait >= ANNOUNCED_WAIT and self.on_wait is not None:
            self.on_wait(counter, wait)
        end = now + wait
        while wait > 0:  # in slices when a stop can be asked, so it is honoured within one
            if self.stop_check is None:
                self._sleep(wait)
                break
            if self.stop_check() is not None:
                break
            self._sleep(min(wait, WAIT_SLICE))
            wait = end - self._clock()

    def _send(self, request: httpx.Request, context: RequestContext) -> Response:
        started_at, start = self._wall_clock(), self._clock()
        body = request.content.decode("utf-8", "replace") if request.content else ""
        base: dict[str, Any] = {
            "method": request.method,
            "url": str(request.url),
            "request_headers": dict(request.headers),
            "request_body": body,
            "started_at": started_at,
        }
        try:
            http = self._send_once_more_if_dropped(request)
        except httpx.TimeoutException as error:
            self._record_failure(base, start, f"timeout: {type(error).__name__}")
            raise TargetUnreachable(
                f"{context.method} {request.url} got no complete answer within {self.timeout:g} s"
                f" ({_slowness(error)})"
            ) from None
        except httpx.RemoteProtocolError as error:
            if _closed_without_answer(error):  # a reset read as EOF: the same as a reset
                self._record_failure(base, start, str(error))
                raise TargetUnreachable(
                    f"cannot reach {self.profile.base_url}: connection closed without an answer"
                ) from None
            self._record_failure(base, start, f"invalid HTTP: {error}")
            raise TargetGarbage(
                f"{context.method} {request.url}: invalid HTTP response ({error})"
            ) from None
        except httpx.TransportError as error:
            reason = str(error) or type(error).__name__
            self._record_failure(base, start, reason)
            if isinstance(error, httpx.ReadError | httpx.WriteError):  # reached, then reset
                reason = f"connection closed without a complete answer ({reason})"
            raise TargetUnreachable(f"cannot reach {self.profile.base_url}: {reason}") from None
        finally:
            self._http.cookies.clear()  # spec: General rules item 2 (no cookies are used)
        exchange = Exchange.capture(
            self.redactor,
            **base,
            status=http.status_code,
            response_headers=http.headers.multi_items(),
            response_body=http.text,
            elapsed=self._clock() - start,
        )
        self._emit(exchange)
        return Response(http, exchange, context)

    def _send_once_more_if_dropped(self, request: httpx.Request) -> httpx.Response:
        """Send `request`; send it once more (the pool has dropped that connection) when the
        first answer was a connection closed or reset before any byte, and the method may be
        resent. A target that drops every connection fails the second send too: unreachable."""
        for attempt in (1, 2):
            headers_came = False
            try:
                with self._budget.bound(self.timeout):  # the whole answer, not each read
                    http = self._http.send(request, stream=True)
                    headers_came = True
                    try:
                        http.read()
                    finally:
                        http.close()
                return http
            except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as error:
                dropped = not headers_came and (
                    not isinstance(error, httpx.RemoteProtocolError)
                    or _closed_without_answer(error)
                )
                if attempt == 2 or not dropped or request.method not in RESENDABLE:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _record_failure(self, base: dict[str, Any], start: float, error: str) -> None:
        self._emit(
            Exchange.capture(
                self.redactor,
                **base,
                status=None,
                response_headers={},
                response_body="",
                elapsed=self._clock() - start,
                error=error,
            )
        )

    def _emit(self, exchange: Exchange) -> None:
        if self.on_exchange is not None:
            self.on_exchange(exchange)

    def learn_config(self, role: str) -> dict[str, int]:
        """Read `GET /config` with `role`'s key: apply its counter limits, remember its pin."""
        response = self.request("GET", "config", role=role)
        if response.status_code != 200:
            return {}
        try:
            body = response.json_body()
        except TargetGarbage:  # judged by the CFG scenarios; no pin or limit to learn here
            return {}
        api = body.get("api") if isinstance(body, dict) else None
        if isinstance(api, dict) and isinstance(api.get("pinned_version"), str):
            self.pins[role] = api["pinned_version"]
        limits = limits_from_config(body)
        if self.pacer is not None:
            self.pacer.update_limits(limits)
        return limits
