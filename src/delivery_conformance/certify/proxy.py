"""The referee proxy: an HTTP/1.1 reverse proxy that records, injects and forwards.

    with RefereeProxy("http://127.0.0.1:8123", journal=Journal(path)) as proxy:
        run_client(base_url=proxy.base_url)      # then judge journal.entries()

A raw ASGI app served by uvicorn in a thread (its own event loop; keep-alive as uvicorn gives
it), forwarding with one pooled `httpx.AsyncClient` (ARCHITECTURE.md: "Certify layer" says why
this stack). For each request it asks the `Injector` for a plan (answer alone, drop the
connection, hold, rewrite the query), forwards when the plan says so, rewrites the answer's
body when asked, replaces the upstream origin in bodies and `Location` by its own (so links
lead back through the proxy), learns the secrets the answer carries, and writes one redacted
journal entry. It never retries and never follows redirects: the client sees what the server
(or the scenario) said.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import re
import socket
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx
import uvicorn

from delivery_conformance.certify.injections import API_PREFIX, Injector, Plan
from delivery_conformance.certify.journal import Entry, Journal, SecretBook
from delivery_conformance.certify.state_judges import served_facts
from delivery_conformance.exceptions import HarnessFailure

__all__ = ["UPSTREAM_TIMEOUT", "RefereeProxy"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

UPSTREAM_TIMEOUT = 30.0  # seconds for one upstream answer; past it the client gets a 502
START_TIMEOUT = 10.0
SETTLE_TIMEOUT = 30.0  # longer than any held request of the catalogue (17 s)
BODY_CAP = 8_000
REDACT_MARGIN = 2_000
_HOP = frozenset(
    {
        "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
        "transfer-encoding", "upgrade", "host", "content-length", "accept-encoding",
        "content-encoding",
    }
)  # fmt: skip
PARSE_LIMIT = 64_000  # bytes; larger untouched answers are read by pattern only
_SECRET_PATTERN = re.compile(
    rb'"(play_auth_token|manifest_url|file_url|poster_signed_url|url|p480|p720)"\s*:\s*'
    rb'"([^"\\]{8,})"'
)
_CURSOR_PATTERN = re.compile(rb'"next_cursor"\s*:\s*(null|"[^"\\]*")')


class _Reset(Exception):
    """Raised after an answer's head: uvicorn then closes the connection (a reset for the
    client: the body it was promised never comes)."""


def _key_id(authorization: str | None) -> str:
    if not authorization:
        return ""
    return hashlib.sha256(authorization.encode()).hexdigest()[:10]


def _capped_body(raw: bytes, redact: Callable[[str], str]) -> str:
    """Redact, then cap. Only a window a little wider than the cap is redacted (exact secret
    values are searched one by one, so a whole 800 kB catalog would cost most of a second); the
    cut comes after redaction, so a secret that straddles the window's end is dropped whole."""
    text = raw.decode("utf-8", "replace")
    if len(text) <= BODY_CAP:
        return redact(text)
    end = BODY_CAP + REDACT_MARGIN
    while True:  # bounded: `end` doubles until it covers the text
        window = redact(text[:end])
        if end >= len(text) and len(window) <= BODY_CAP:
            return window  # whole once redacted: a complete body, judged as one
        if end >= len(text) or len(window) >= BODY_CAP + REDACT_MARGIN // 2:
            # a cut body is always longer than the cap, so checks know it is cut
            more = len(window) if end >= len(text) else len(text)
            return window[:BODY_CAP] + f"…[{more - BODY_CAP} more]"
        end *= 2


class RefereeProxy:
    def __init__(
        self,
        upstream: str,
        *,
        journal: Journal | None = None,
        injector: Injector | None = None,
        secrets: SecretBook | None = None,
        port: int = 0,
        host: str = "127.0.0.1",
    ) -> None:
        self.upstream = upstream.rstrip("/")
        self.journal = journal if journal is not None else Journal(None)
        self.injector = injector if injector is not None else Injector([])
        self.secrets = secrets if secrets is not None else SecretBook()
        self.phase = 1
        self._host, self._port = host, port
        self._connections: dict[tuple[str, int], int] = {}
        self._counter = itertools.count(1)
        self._lock = threading.Lock()
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._http: httpx.AsyncClient | None = None
        self._active = 0
        self._versions: dict[str, str] = {}  # authorization -> Service-Version announced
        self.base_url = ""

    # -- life cycle -------------------------------------------------------------------------
    def start(self) -> str:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self._host, self._port))
        except OSError as error:
            sock.close()
            raise HarnessFailure(f"proxy: cannot listen on {self._host}:{self._port} "
                                 f"({error.strerror})") from None  # fmt: skip
        port = sock.getsockname()[1]
        self.base_url = f"http://{self._host}:{port}"
        config = uvicorn.Config(
            self._app, lifespan="on", log_level="critical", interface="asgi3",
            proxy_headers=False, access_log=False, timeout_keep_alive=30, http="h11",
        )  # fmt: skip
        self._server = uvicorn.Server(config)
        server = self._server
        self._thread = threading.Thread(
            target=server.run, kwargs={"sockets": [sock]}, name="referee-proxy", daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + START_TIMEOUT
        while not server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                self.stop()
                raise HarnessFailure("proxy: did not start within 10 s")
            time.sleep(0.01)
        return self.base_url

    def stop(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._server, self._thread = None, None
        self.journal.close()

    def settle(self, timeout: float = SETTLE_TIMEOUT) -> bool:
        """Wait (bounded) until no exchange is in flight, so the journal holds every exchange
        of a client that has exited (an entry is written after its answer is sent)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if self._active == 0:
                    return True
            time.sleep(0.01)
        return False

    def __enter__(self) -> RefereeProxy:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- the app ----------------------------------------------------------------------------
    async def _app(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            with self._lock:
                self._active += 1
            try:
                await self._exchange(scope, receive, send)
            finally:
                with self._lock:
                    self._active -= 1

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                limits = httpx.Limits(max_keepalive_connections=32, keepalive_expiry=30)
                self._http = httpx.AsyncClient(
                    timeout=UPSTREAM_TIMEOUT, limits=limits, follow_redirects=False
                )
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self._http is not None:
                    await self._http.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    def _connection(self, scope: Scope) -> int:
        client = scope.get("client") or ("", 0)
        with self._lock:
            key = (str(client[0]), int(client[1]))
            if key not in self._connections:
                self._connections[key] = next(self._counter)
            return self._connections[key]

    async def _exchange(self, scope: Scope, receive: Receive, send: Send) -> None:
        started, wall = time.monotonic(), time.time()
        phase = self.phase
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        method = scope["method"]
        path = scope.get("raw_path", scope["path"].encode()).decode("latin-1").split("?")[0]
        raw_query = scope.get("query_string", b"").decode("latin-1")
        query = dict(parse_qsl(raw_query, keep_blank_values=True))
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in scope["headers"]]
        sent = {k.lower(): v for k, v in headers}
        self.secrets.add_key(sent.get("authorization"))
        with self._lock:
            plan = self.injector.decide(method, path, query, phase)
        status: int | None = None
        out_headers: dict[str, str] = {}
        content = b""
        error: str | None = None
        latency = 0.0
        gave_up = await self._hold(receive, plan.delay) if plan.delay else None
        if gave_up is not None:
            plan.extra["gave_up_after"] = round(gave_up, 3)
            status, error = None, f"the client gave up after {gave_up:.2f} s (held)"
        elif plan.respond is not None:
            status, out_headers, content = plan.respond
            version = await self._service_version(sent)
            if version is not None:  # on every answer, as the server's (Common headers)
                out_headers = {**out_headers, "service-version": version}
        elif plan.reset:
            status, error = None, "reset by the proxy (injected)"
        else:
            status, out_headers, content, latency, error = await self._forward(
                method, path, plan, headers, body
            )
            if status is not None:
                content = self._rewrite(plan, path, status, out_headers, content)
                out_headers = {**out_headers, **plan.headers}
        if gave_up is not None:
            self._record(scope, started, wall, method, path, query, headers, body, None, {},
                         b"", 0.0, plan, phase, sent, error)  # fmt: skip
            return  # nobody is left to answer
        if status is None and not plan.reset:
            status, out_headers = 502, {"content-type": "application/json"}
            content = json.dumps({"error": f"referee proxy: upstream failed ({error})"}).encode()
        try:
            await self._answer(send, status, out_headers, content, plan.reset)
        finally:
            self._record(scope, started, wall, method, path, query, headers, body, status,
                         out_headers, content, latency, plan, phase, sent, error)  # fmt: skip

    async def _hold(self, receive: Receive, seconds: float) -> float | None:
        """Hold the request `seconds`; return how long until the client closed the connection
        if it did so first (it gave the attempt up), else None."""
        began = time.monotonic()
        while (left := seconds - (time.monotonic() - began)) > 0:
            try:
                message = await asyncio.wait_for(receive(), timeout=left)
            except TimeoutError:
                return None
            if message.get("type") == "http.disconnect":
                return time.monotonic() - began
        return None

    async def _service_version(self, sent: dict[str, str]) -> str | None:
        """The Service-Version a real answer to this request would carry: the version the
        request asked for, else the one the server announced to this key (learnt from the
        answers forwarded, or asked once with GET /config)."""
        if sent.get("service-version"):
            return sent["service-version"]
        key = sent.get("authorization", "")
        if key not in self._versions and self._http is not None:
            headers = {"authorization": key} if key else {}
            try:
                answer = await self._http.get(f"{self.upstream}{API_PREFIX}config", headers=headers)
                if answer.headers.get("service-version"):
                    self._versions[key] = answer.headers["service-version"]
            except httpx.HTTPError:
                return None
        return self._versions.get(key)

    async def _forward(
        self, method: str, path: str, plan: Plan, headers: list[tuple[str, str]], body: bytes
    ) -> tuple[int | None, dict[str, str], bytes, float, str | None]:
        assert self._http is not None
        forward = [(k, v) for k, v in headers if k.lower() not in _HOP]
        forward.append(("accept-encoding", "identity"))
        began = time.monotonic()
        try:
            response = await self._http.request(
                method, self.upstream + path, params=plan.query or None, headers=forward,
                content=body or None,
            )  # fmt: skip
        except httpx.HTTPError as exc:
            return None, {}, b"", time.monotonic() - began, type(exc).__name__
        latency = time.monotonic() - began
        out = {k: v for k, v in response.headers.multi_items() if k.lower() not in _HOP}
        sent = {k.lower(): v for k, v in headers}
        if response.headers.get("service-version") and "service-version" not in sent:
            self._versions[sent.get("authorization", "")] = response.headers["service-version"]
        if "location" in out:
            out["location"] = out["location"].replace(self.upstream, self.base_url)
            if not urlsplit(out["location"]).path.startswith(API_PREFIX):
                self.secrets.add(out["location"], "download_link")  # a file link's redirect
        return response.status_code, out, response.content, latency, None

    def _rewrite(
        self, plan: Plan, path: str, status: int, headers: dict[str, str], content: bytes
    ) -> bytes:
        upstream = self.upstream.encode()
        if upstream in content:
            content = content.replace(upstream, self.base_url.encode())
        if "json" not in headers.get("content-type", ""):
            return content
        if not self.injector.injections and len(content) > PARSE_LIMIT:
            # a plain proxy (no scenario) leaves a large answer (the unpaged catalog) unparsed:
            # facts and secrets by pattern, so it adds milliseconds, not the cost of 800 kB of
            # JSON. With a scenario every answer is parsed: rewrites depend on earlier pages.
            for name, value in _SECRET_PATTERN.findall(content):
                self.secrets.add_body({name.decode(): value.decode("utf-8", "replace")})
            cursor = _CURSOR_PATTERN.search(content)
            if cursor is not None:
                raw = cursor.group(1)
                plan.extra["next_cursor"] = None if raw == b"null" else raw[1:-1].decode()
            return content
        try:
            parsed = json.loads(content)
        except ValueError:
            return content
        with self._lock:
            changed = self.injector.rewrite(plan, path, status, parsed)
        data = changed.get("data") if isinstance(changed, dict) else None
        if path.endswith("/file") and isinstance(data, dict):
            self.secrets.add(data.get("url"), "download_link")  # GET /creatives/{id}/file
        self.secrets.add_body(changed)
        _facts(changed, plan)
        if status == 200:  # what the app was shown, for the state judges
            plan.extra.update(served_facts(path, changed))
        if plan.rewrites:
            return json.dumps(changed).encode()
        return content

    async def _answer(
        self, send: Send, status: int | None, headers: dict[str, str], content: bytes, reset: bool
    ) -> None:
        if reset:
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"application/json"),
                                    (b"content-length", b"4096")]})  # fmt: skip
            raise _Reset()
        raw = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
        raw.append((b"content-length", str(len(content)).encode()))
        await send({"type": "http.response.start", "status": status or 502, "headers": raw})
        await send({"type": "http.response.body", "body": content})

    def _record(
        self, scope: Scope, started: float, wall: float, method: str, path: str,
        query: dict[str, str], headers: list[tuple[str, str]], body: bytes, status: int | None,
        out_headers: dict[str, str], content: bytes, latency: float, plan: Plan, phase: int,
        sent: dict[str, str], error: str | None,
    ) -> None:  # fmt: skip
        redactor = self.secrets.redactor()
        extra = dict(plan.extra)
        if method == "POST" and path.endswith("/playback"):
            try:
                request = json.loads(body)
                extra["episodes"] = [
                    e.get("episode_id") for e in request.get("episodes", []) if isinstance(e, dict)
                ]
            except (ValueError, AttributeError):
                pass
        entry = Entry(
            seq=self.journal.next_seq(),
            connection=self._connection(scope),
            started=started,
            ended=time.monotonic(),
            wall=wall,
            method=method,
            path=path,
            query={k: redactor.text(v) for k, v in query.items()},
            request_headers=redactor.headers(headers),
            request_body=_capped_body(body, redactor.body) if body else "",
            status=status,
            response_headers=redactor.headers(out_headers),
            response_body=_capped_body(content, redactor.body) if content else "",
            latency=round(latency, 6),
            injected="; ".join(plan.labels),
            phase=phase,
            notes=tuple(plan.notes),
            key_id=_key_id(sent.get("authorization")),
            error=error,
            extra=extra,
        )
        self.journal.write(entry)


def _facts(body: Any, plan: Plan) -> None:
    """What judges need from an answer, kept beside the (capped) body."""
    if not isinstance(body, dict):
        return
    holder = body["data"] if isinstance(body.get("data"), dict) else body
    if "next_cursor" in holder:
        plan.extra.setdefault("next_cursor", holder.get("next_cursor"))
        links = body.get("links")
        if isinstance(links, dict):
            plan.extra.setdefault("links_next", links.get("next"))
    listed = holder.get("items") if holder is not body else None
    if isinstance(listed, list):  # envelope list pages: the ids served, for CLI-030
        plan.extra["item_ids"] = [
            i.get("creative_id", i.get("id")) for i in listed if isinstance(i, dict)
        ]
        versions = {str(i["code"]): i.get("content_version") for i in listed
                    if isinstance(i, dict) and "code" in i}  # fmt: skip
        if versions:  # series and playlists list pages, for CLI-035
            plan.extra["item_versions"] = versions
    items = body.get("items")
    if isinstance(items, list):
        plan.extra["item_status"] = [i.get("status") for i in items if isinstance(i, dict)]
        plan.extra["item_retry_after"] = [
            i.get("retry_after") for i in items if isinstance(i, dict)
        ]
        plan.extra["item_reason"] = [i.get("reason") for i in items if isinstance(i, dict)]
