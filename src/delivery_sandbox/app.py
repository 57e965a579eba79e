"""The ASGI application: routes table, host rule, auth pipeline, common headers (spec: Endpoints).

A small dispatcher on Starlette's primitives keeps the hot path short: no middleware, one pass
over the request headers, header lists built from bytes. Unknown paths answer 404 `not_found`
(flat), real paths with a wrong method 405 with `Allow` and no body (spec: General rules 8), and
the bare host 308 to the `www` host (spec: General rules 7; docs/reading-of-the-spec.md (GEN (bare
host))).
"""

# The route table holds one route a line, so its long rows are exempt from the line length.
# ruff: noqa: E501

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Any
from urllib.parse import parse_qsl

from starlette.requests import ClientDisconnect

from delivery_sandbox.auth import Endpoint, authenticate
from delivery_sandbox.control import admin, front_faults, outages
from delivery_sandbox.endpoints import (
    catalog,
    config,
    creatives,
    playback,
    playlists,
    series,
    share,
    videos,
)
from delivery_sandbox.http import errors
from delivery_sandbox.http.errors import Family
from delivery_sandbox.http.headers import Call, Exchange, Reply, send_reply
from delivery_sandbox.state.accounts import Caller
from delivery_sandbox.state.context import BARE_HOST, WWW_HOST, Sandbox, Settings, build_sandbox
from delivery_sandbox.variants.methods import allowed, routed_method
from delivery_sandbox.variants.opaque import respell_request_id, unwrap_query
from delivery_sandbox.variants.simulations import kept_simulation

__all__ = ["ROUTES", "Route", "SandboxApp", "build_app"]

Handler = Callable[[Sandbox, Exchange, Caller, Call], Awaitable[Reply]]
API = "/api/delivery/v1"
FLAT, ENVELOPE = Family.FLAT, Family.ENVELOPE


@dataclass(frozen=True)
class Route:
    method: str
    path: str  # segments in braces are path values
    endpoint: Endpoint
    handler: Handler | None  # None: POST /playback, handled by delivery_sandbox.endpoints.playback


# spec: Endpoints (scope per endpoint) and Limits (counter per endpoint).
ROUTES: tuple[Route, ...] = (
    Route("GET", f"{API}/catalog", Endpoint("catalog", "metadata:read", FLAT, "catalog", simulates=True), catalog.handle),
    Route("GET", f"{API}/config", Endpoint("config", None, FLAT, "config", simulates=True), config.handle),
    Route("GET", f"{API}/creatives", Endpoint("creatives", "creatives:export", ENVELOPE, "creatives"), creatives.handle_list),
    Route("GET", f"{API}/creatives/{{id}}", Endpoint("creative", "creatives:export", ENVELOPE, "creatives"), creatives.handle_one),
    Route("GET", f"{API}/creatives/{{id}}/file", Endpoint("creative_file", "creatives:export", ENVELOPE, "creatives"), creatives.handle_file),
    Route("POST", f"{API}/playback", Endpoint("playback", "playback", FLAT, None, checks_org=False), None),
    Route("GET", f"{API}/playlists", Endpoint("playlists", "metadata:read", ENVELOPE, "catalog"), playlists.handle_list),
    Route("GET", f"{API}/playlists/{{code}}", Endpoint("playlist", "metadata:read", ENVELOPE, "catalog"), playlists.handle_one),
    Route("GET", f"{API}/series", Endpoint("series", "metadata:read", ENVELOPE, "catalog"), series.handle_list),
    Route("GET", f"{API}/series/{{code}}", Endpoint("series_one", "metadata:read", ENVELOPE, "catalog"), series.handle_one),
    Route("GET", f"{API}/videos", Endpoint("videos", "videos:read", FLAT, "videos", app_bound=True), videos.handle_list),
    Route("GET", f"{API}/videos/{{id}}", Endpoint("video", "videos:read", FLAT, "video", app_bound=True), videos.handle_one),
)  # fmt: skip


class Router:
    """Exact paths by dict; paths with values by segment count."""

    def __init__(self, routes: tuple[Route, ...]) -> None:
        self.exact: dict[str, list[Route]] = {}
        self.shaped: list[tuple[tuple[str, ...], Route]] = []
        self.direct: dict[tuple[str, str], Route] = {}  # (path, method) of exact paths
        for route in routes:
            if "{" in route.path:
                self.shaped.append((tuple(route.path.split("/")), route))
            else:
                self.exact.setdefault(route.path, []).append(route)
                self.direct.setdefault((route.path, route.method), route)

    def match(self, path: str) -> tuple[list[Route], dict[str, str]]:
        found = self.exact.get(path)
        if found is not None:
            return found, {}
        parts = path.split("/")
        routes: list[Route] = []
        values: dict[str, str] = {}
        for shape, route in self.shaped:
            if len(shape) != len(parts):
                continue
            got: dict[str, str] = {}
            for want, part in zip(shape, parts, strict=True):
                if want.startswith("{"):
                    if not part:
                        break
                    got[want[1:-1]] = part
                elif want != part:
                    break
            else:
                routes.append(route)
                values = got
        return routes, values


def _query(raw: bytes) -> dict[str, str]:
    if not raw:
        return {}
    return dict(_parsed_query(raw))  # a copy: handlers own their dict


@lru_cache(maxsize=512)
def _parsed_query(raw: bytes) -> dict[str, str]:
    return dict(parse_qsl(raw.decode("latin-1"), keep_blank_values=True))


async def _read_body(receive: Any) -> bytes:
    """The whole request body, read from ASGI messages (as Starlette's `Request.body`)."""
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.request":
            body = message.get("body", b"")
            if body:
                chunks.append(body)
            if not message.get("more_body", False):
                return b"".join(chunks)
        elif message["type"] == "http.disconnect":
            raise ClientDisconnect()


def _first_header(scope: dict[str, Any], name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return str(value.decode("latin-1"))
    return None


class SandboxApp:
    """The sandbox as an ASGI application."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        self.router = Router(ROUTES)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        with self.sandbox.clock.caller(None):  # authentication names the caller (its clock)
            await self._http(scope, receive, send)

    async def _http(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        sb = self.sandbox
        sb.run_due()  # changes held back until now (`Sandbox.later`) land before the answer
        host = authorization = version = simulated = accept_encoding = None
        for name, value in scope["headers"]:
            if name == b"host":
                host = value.decode("latin-1")
            elif name == b"authorization":
                authorization = value.decode("latin-1")
            elif name == b"service-version":
                version = value.decode("latin-1")
            elif name == b"service-simulate":
                simulated = value.decode("latin-1")
            elif name == b"accept-encoding":
                accept_encoding = value.decode("latin-1")
        if host is None:
            server = scope.get("server") or ("127.0.0.1", 80)
            host = f"{server[0]}:{server[1]}"
        request_id = sb.request_ids.next()
        if sb.variants:
            request_id = respell_request_id(sb.variants, request_id)
            simulated = kept_simulation(sb.variants, simulated)
        exchange = Exchange(request_id, sb.versions.latest, f"{scope['scheme']}://{host}")
        exchange.accept_encoding = accept_encoding
        exchange.method = scope["method"]
        authorization, read = front_faults.request_in(  # the request seam
            sb, scope, exchange, authorization, simulated, partial(_read_body, receive)
        )
        reply = await self.answer(
            scope, receive, exchange, host, authorization, version, simulated, read
        )
        reply = await front_faults.reply_out(reply, sb, scope, exchange)  # the reply seam
        await send_reply(send, exchange, reply, sb.faults, sb.variants)

    async def answer(
        self,
        scope: dict[str, Any],
        receive: Any,
        exchange: Exchange,
        host: str,
        authorization: str | None,
        version: str | None,
        simulated: str | None,
        read: Callable[[], Awaitable[bytes]],
    ) -> Reply:
        """Bare host, admin API, routing (404 and 405 before any key check), authentication, then
        the handler.

        Requirements: ERR-012, ERR-013, ERR-014, ERR-015, ERR-016, ERR-017, GEN-001, GEN-006,
        GEN-007, HDR-010.
        """
        sb, path, method = self.sandbox, scope["path"], scope["method"]
        hostname, _, port = host.partition(":")
        if hostname.lower() == BARE_HOST:
            port = port or str((scope.get("server") or ("", 80))[1])
            target = f"http://{WWW_HOST}:{port}{path}"
            if scope.get("query_string"):
                target += "?" + scope["query_string"].decode("latin-1")
            return Reply(308, b"", [(b"location", target.encode())], content_type=None)
        if path.startswith("/_sandbox/") or path == "/_sandbox":
            return await admin.handle(sb, scope, receive, exchange, authorization)
        route: Route | None = self.router.direct.get((path, method))
        values: dict[str, str] = {}
        if route is None:
            routes, values = self.router.match(path)
            if not routes:
                if path.startswith(share.PREFIXES):  # docs/reading-of-the-spec.md (CRE-024)
                    return share.handle(sb, exchange, method, path, scope.get("query_string", b""))
                exchange.endpoint = "unknown"
                return errors.flat(exchange, sb.faults, 404, errors.MSG_NOT_FOUND, "not_found")
            offered = {r.method for r in routes}
            wanted = routed_method(sb.variants, method, offered) if sb.variants else method
            route = next((r for r in routes if r.method == wanted), None)
            if route is None:
                exchange.endpoint = routes[0].endpoint.name
                allow = ", ".join(allowed(sb.variants, offered)).encode()
                return Reply(405, b"", [(b"allow", allow)], content_type=None)
        exchange.endpoint = route.endpoint.name
        outcome = authenticate(sb, exchange, route.endpoint, version, authorization, simulated)
        if isinstance(outcome, Reply):
            front_faults.refused(sb, route.endpoint.counter, authorization, outcome)  # a seam
            return outcome
        if route.handler is None:
            # POST /playback reads the first Service-Simulate header, as Starlette's did.
            first = None if simulated is None else _first_header(scope, b"service-simulate")
            if sb.variants:
                first = kept_simulation(sb.variants, first)
            return await playback.answer(
                sb.serving(route.endpoint.name), exchange, outcome, first, read
            )
        if sb.outages:  # a named outage (admin API): the endpoint's retryable 503
            down = outages.reply_for(sb, route.endpoint.name, route.endpoint.family, exchange)
            if down is not None:
                return down
        call = Call(_query(scope.get("query_string", b"")), values)
        if sb.variants:
            unwrap_query(sb.variants, call.query)
        return await route.handler(sb.serving(route.endpoint.name), exchange, outcome, call)


async def _lifespan(receive: Any, send: Any) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


def build_app(settings: Settings | None = None, sandbox: Sandbox | None = None) -> SandboxApp:
    """The ASGI app for `settings` (or for an already built sandbox, in tests)."""
    return SandboxApp(sandbox if sandbox is not None else build_sandbox(settings or Settings()))
