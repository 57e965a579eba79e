"""Helpers shared by the reference client's self-tests (a unique module name, so
`pytest tests/` never mixes it up with another folder's helpers)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from delivery_client import DeliveryClient, RetryBudget

KEY = "svc_live_" + "k" * 32


class FakeClock:
    """Monotonic time that moves only when the client sleeps."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


def json_response(
    status: int, body: Any = None, headers: dict[str, str] | None = None
) -> httpx.Response:
    content = b"" if body is None else json.dumps(body).encode()
    return httpx.Response(
        status, content=content, headers={"content-type": "application/json", **(headers or {})}
    )


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
