"""An in-process sandbox with a fake clock for the playback, limits and simulation tests."""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field
from typing import Any

import httpx
import orjson

from delivery_sandbox.app import build_app
from delivery_sandbox.endpoints import playback
from delivery_sandbox.state.context import Sandbox, Settings, build_sandbox

T0 = 1_800_000_000.0  # a whole UTC minute
PLAYBACK = "/api/delivery/v1/playback"
DEVICE = {"union_info": "device-0001", "drm_kek": "kek-000000001"}


@dataclass
class FakeTime:
    now: float = T0
    slept: list[float] = field(default_factory=list)

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


class Sandboxed:
    """A sandbox, its keys and fixtures, a client, and the fake clock behind both."""

    def __init__(self, faults: tuple[str, ...] = (), scale: float = 1.0) -> None:
        self.time = FakeTime()
        self.sb: Sandbox = build_sandbox(
            Settings(faults=faults, limits_scale=scale), self.time, random.Random(7)
        )
        self.sb.policies()
        self.loop = asyncio.new_event_loop()
        self.client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=build_app(sandbox=self.sb)),
            base_url="http://127.0.0.1",
        )
        self.keys = self.sb.accounts.start_keys()
        self.fx: dict[str, Any] = self.sb.fixtures()

    def post(
        self,
        body: Any,
        role: str = "films",
        headers: dict[str, str] | None = None,
    ) -> Any:
        raw = body if isinstance(body, bytes) else orjson.dumps(body)
        sent = {"Authorization": f"Bearer {self.keys[role]}", **(headers or {})}
        return self.loop.run_until_complete(self.client.post(PLAYBACK, content=raw, headers=sent))

    def client_post_with_key(self, key: str, headers: dict[str, str]) -> Any:
        sent = {"Authorization": f"Bearer {key}", **headers}
        body = orjson.dumps(self.encrypted())
        return self.loop.run_until_complete(self.client.post(PLAYBACK, content=body, headers=sent))

    def get(self, path: str, role: str = "films", headers: dict[str, str] | None = None) -> Any:
        sent = {"Authorization": f"Bearer {self.keys[role]}", **(headers or {})}
        path = f"/api/delivery/v1/{path}"
        return self.loop.run_until_complete(self.client.get(path, headers=sent))

    def close(self) -> None:
        self.loop.run_until_complete(self.client.aclose())
        self.loop.close()

    def level(self, role: str = "films") -> float:
        org = self.sb.accounts.org_of(role)
        return self.sb.limits.bucket(org).level(self.time.now)

    def drain_to(self, tickets: float, role: str = "films") -> None:
        """Leave exactly `tickets` in the role's playback bucket."""
        org = self.sb.accounts.org_of(role)
        bucket = self.sb.limits.bucket(org)
        assert bucket.take(bucket.level(self.time.now) - tickets, self.time.now)

    def encrypted(self, **extra: Any) -> dict[str, Any]:
        return {"episode_id": self.fx["episode_encrypted"], **DEVICE, **extra}

    def batch(self, *fixtures: str) -> dict[str, Any]:
        """A batch body: one item per named episode fixture, in order."""
        return {"episodes": [{"episode_id": self.fx[name]} for name in fixtures], **DEVICE}


def patch_sleep(monkeypatch: Any, env: Sandboxed) -> None:
    monkeypatch.setattr(playback, "sleep", env.time.sleep)
