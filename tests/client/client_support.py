"""Helpers shared by the reference client's self-tests (a unique module name, so
`pytest tests/` never mixes it up with another folder's helpers)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from delivery_client import DeliveryClient, RetryBudget
from fake_clock import FakeClock

KEY = "svc_live_" + "k" * 32


def json_response(
    status: int, body: Any = None, headers: dict[str, str] | None = None
) -> httpx.Response:
    content = b"" if body is None else json.dumps(body).encode()
    return httpx.Response(
        status, content=content, headers={"content-type": "application/json", **(headers or {})}
    )


def envelope_ok(data: Any, *, listing: bool = False) -> httpx.Response:
    """A 200 envelope answer (`code` 0) carrying `data`; a list page also carries `links`."""
    body = {"code": 0, "message": "ok", "data": data}
    return json_response(200, {**body, "links": {"next": None}} if listing else body)


Handler = Callable[[httpx.Request], httpx.Response]


@dataclass
class Rig:
    client: DeliveryClient
    clock: FakeClock
    requests: list[httpx.Request]
    budget: RetryBudget


@dataclass(frozen=True)
class Sandbox:
    base_url: str
    keys: dict[str, str]
    fixtures: dict[str, Any]
    admin_url: str
    admin_token: str

    def admin(self, method: str, path: str, body: Any = None) -> Any:
        response = httpx.request(
            method,
            f"{self.admin_url}{path}",
            json=body,
            timeout=10.0,
            headers={"Authorization": f"Bearer {self.admin_token}"},
        )
        assert response.status_code == 200, response.text
        return response.json()


class LocalServer:
    """A tiny threaded HTTP server on 127.0.0.1 for answers the sandbox never gives (garbage,
    HTML, loops, slowness). `respond(method, path_with_query) -> (status, headers, body)`."""

    def __init__(self, respond: Callable[[str, str], tuple[int, dict[str, str], bytes]]) -> None:
        import http.server
        import threading

        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _answer(self) -> None:
                outer.seen.append(self.path)
                status, headers, body = respond(self.command, self.path)
                self.send_response(status)
                for name, value in {"Content-Length": str(len(body)), **headers}.items():
                    self.send_header(name, value)
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(body)

            do_GET = do_POST = _answer

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.seen: list[str] = []
        self._server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> LocalServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


def json_body(value: Any) -> tuple[int, dict[str, str], bytes]:
    return 200, {"Content-Type": "application/json"}, json.dumps(value).encode()


def list_and_detail_server(
    log: list[str], list_path: str, items: list[Any], detail: Callable[[str], Any]
) -> Callable[[httpx.Request], httpx.Response]:
    """A target of one envelope list (one page of `items`) and its detail reads (`detail` of
    the code in the path); every path asked is kept in `log`."""

    def handler(request: httpx.Request) -> httpx.Response:
        log.append(request.url.path)
        if request.url.path.endswith(list_path):
            return envelope_ok({"items": items, "next_cursor": None}, listing=True)
        return envelope_ok(detail(request.url.path.rsplit("/", 1)[1]))

    return handler
