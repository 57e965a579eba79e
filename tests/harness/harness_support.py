"""Shared builders for the harness self-tests: profiles, mock transports, canned responses."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from delivery_conformance.target.client import DeliveryClient, Response
from delivery_conformance.target.profile import AdminEndpoint, TargetProfile

KEY = "svc_live_" + "a1" * 16
OTHER_KEY = "svc_live_" + "b2" * 16
REQUEST_ID = "req_" + "0123456789abcdefghijklmnop"
GOOD_HEADERS = {
    "Service-API-Status": "beta",
    "Service-Version": "2026-10-02",
    "Service-Request-Id": REQUEST_ID,
    "Cache-Control": "no-store",
}

PROFILE_TEXT = f"""
base_url = "http://127.0.0.1:9"
test_organisation = true

[keys]
films = "{KEY}"
videos = "{OTHER_KEY}"

[fixtures]
film_id = "3b9e2c1e-0000-4000-8000-000000000001"
episode_encrypted_no = "3"

[admin]
url = "http://127.0.0.1:9/_sandbox"
token = "admin-token-123456"
"""


def make_profile(**overrides: Any) -> TargetProfile:
    values: dict[str, Any] = {
        "base_url": "http://target.test",
        "keys": {"films": KEY, "videos": OTHER_KEY},
        "fixtures": {"film_id": "f-1"},
        "test_organisation": True,
        "admin": AdminEndpoint("http://target.test/_sandbox", "admin-token-123456"),
    }
    values.update(overrides)
    return TargetProfile(**values)


def write_profile(tmp_path: Path, text: str = PROFILE_TEXT) -> Path:
    path = tmp_path / "target.toml"
    path.write_text(text, encoding="utf-8")
    return path


def answer(
    status: int = 200,
    body: Any = None,
    headers: dict[str, str] | None = None,
    *,
    raw: bytes | None = None,
) -> Callable[[httpx.Request], httpx.Response]:
    """A MockTransport handler answering every request the same way (good headers by default)."""
    merged = {**GOOD_HEADERS, **(headers or {})}
    merged = {k: v for k, v in merged.items() if v is not None}

    def handler(request: httpx.Request) -> httpx.Response:
        if raw is not None:
            return httpx.Response(status, headers=merged, content=raw)
        if body is None:
            return httpx.Response(status, headers=merged)
        content = json.dumps(body).encode()
        return httpx.Response(
            status, headers={"Content-Type": "application/json", **merged}, content=content
        )

    return handler


def client_for(handler: Callable[[httpx.Request], httpx.Response], **kwargs: Any) -> DeliveryClient:
    return DeliveryClient(make_profile(), transport=httpx.MockTransport(handler), **kwargs)


def respond(
    method: str = "GET",
    path: str = "config",
    status: int = 200,
    body: Any = None,
    headers: dict[str, str] | None = None,
    **request: Any,
) -> Response:
    """One response through the real client, from a canned answer."""
    with client_for(answer(status, body, headers)) as client:
        return client.request(method, path, **request)


def run_results(report_dir: Path) -> dict[str, Any]:
    """results.json of the one run written under `report_dir` (not the `latest` pointer)."""
    (found,) = [p for p in report_dir.glob("*/results.json") if p.parent.name != "latest"]
    return dict(json.loads(found.read_text(encoding="utf-8")))


@contextmanager
def served(app: Any) -> Iterator[str]:
    """An ASGI app served on 127.0.0.1 (a free port, a daemon thread); yields its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    # An idle keep-alive connection is closed after `timeout_keep_alive`; a client that reuses
    # it in that instant gets a reset. On a busy machine a scenario can pause past uvicorn's
    # default 5 s between two requests, so the served test apps keep connections longer.
    config = uvicorn.Config(
        app,
        log_level="error",
        lifespan="off",
        access_log=False,
        loop="asyncio",
        timeout_keep_alive=120,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
