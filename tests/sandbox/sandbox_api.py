"""The sandbox in-process for self-tests: its ASGI app behind httpx.ASGITransport, no sockets."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import httpx

from delivery_sandbox.app import SandboxApp
from delivery_sandbox.state.context import Sandbox, Settings, build_sandbox

API = "/api/delivery/v1"


def plays(name: str) -> Any:
    """Parametrise the `variant` fixture (conftest.py) with one legal variant."""
    import pytest

    return pytest.mark.parametrize("variant", [name], indirect=True)


START = 1_795_000_000.0  # a fixed wall clock: 2026-11-18


class Api:
    """A synchronous face over an async httpx client bound to one sandbox."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sb = sandbox
        self.loop = asyncio.new_event_loop()
        self.client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=SandboxApp(sandbox)), base_url="http://127.0.0.1:8123"
        )

    def key(self, role: str) -> str:
        return self.sb.accounts.key_of(role)

    @property
    def fx(self) -> dict[str, Any]:
        return self.sb.fixtures()

    def request(
        self,
        method: str,
        path: str,
        role: str | None = None,
        headers: dict[str, str] | None = None,
        **kwargs: Any,
    ) -> httpx.Response:
        sent = dict(headers or {})
        if role is not None:
            sent["Authorization"] = f"Bearer {self.key(role)}"
        url = path if path.startswith(("/", "http")) else f"{API}/{path}"
        return self.loop.run_until_complete(
            self.client.request(method, url, headers=sent, **kwargs)
        )

    def get(self, path: str, role: str | None = None, **kwargs: Any) -> httpx.Response:
        return self.request("GET", path, role, **kwargs)

    def admin(self, method: str, path: str, body: Any = None) -> httpx.Response:
        headers = {"Authorization": f"Bearer {self.sb.admin_token}"}
        return self.request(method, f"/_sandbox/{path}", headers=headers, json=body)

    def close(self) -> None:
        self.loop.run_until_complete(self.client.aclose())
        self.loop.close()


def make_api(**settings: Any) -> Api:
    sandbox = build_sandbox(Settings(**settings), time_source=lambda: START, rng=random.Random(7))
    return Api(sandbox)


def _walk(api: Api, path: str, role: str, params: dict[str, Any], *, envelope: bool) -> list[Any]:
    """Every item of a list, page after page by `next_cursor` (at most 200 pages)."""
    items: list[Any] = []
    for _ in range(200):
        body = api.get(path, role, params=params).json()
        page = body["data"] if envelope else body
        items += page["items" if envelope else "rows"]
        if page["next_cursor"] is None:
            return items
        params = {**params, "cursor": page["next_cursor"]}
    raise AssertionError("walk did not end")


def walk_envelope(api: Api, path: str, role: str, **params: Any) -> list[dict[str, Any]]:
    """The items of an envelope list (creatives, series, playlists)."""
    return _walk(api, path, role, params, envelope=True)


def walk_videos(api: Api, role: str, **params: Any) -> list[dict[str, Any]]:
    """The rows of the open videos list (200 a page unless `limit` says otherwise)."""
    return _walk(api, "videos", role, {"limit": 200, **params}, envelope=False)
