"""Fixtures of the reference client's self-tests: MockTransport rigs with a fake clock and one
embedded sandbox per session (started as a subprocess, like the harness does; never imported)."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from client_support import KEY, FakeClock, Handler, Rig, Sandbox

from delivery_client import DEFAULT_SETTINGS, DeliveryClient, RetryBudget, Settings


@pytest.fixture
def rig() -> Callable[..., Rig]:
    """rig(handler, settings=..., uniform=...): a client on a MockTransport with a fake clock."""
    made: list[DeliveryClient] = []

    def build(
        handler: Handler,
        *,
        settings: Settings = DEFAULT_SETTINGS,
        uniform: Callable[[float, float], float] = lambda low, high: high,
        budget: RetryBudget | None = None,
    ) -> Rig:
        clock = FakeClock()
        seen: list[httpx.Request] = []

        def record(request: httpx.Request) -> httpx.Response:
            seen.append(request)
            return handler(request)

        budget = budget or RetryBudget(clock=clock)
        client = DeliveryClient(
            "http://127.0.0.1:9",
            KEY,
            transport=httpx.MockTransport(record),
            settings=settings,
            budget=budget,
            clock=clock,
            sleep=clock.sleep,
            uniform=uniform,
        )
        made.append(client)
        return Rig(client, clock, seen, budget)

    yield build
    for client in made:
        client.close()


@pytest.fixture(scope="session")
def sandbox() -> Iterator[Sandbox]:
    folder = Path(tempfile.mkdtemp(prefix="client-sandbox-"))
    profile_path = folder / "target.toml"
    command = [
        sys.executable,
        "-m",
        "delivery_sandbox",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--profile-out",
        str(profile_path),
        "--versions",
        "extended",
    ]
    with (folder / "sandbox.log").open("wb") as log:
        process = subprocess.Popen(
            command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
        )
    try:
        deadline = time.monotonic() + 30
        profile: dict[str, Any] = {}
        while time.monotonic() < deadline:
            assert process.poll() is None, (folder / "sandbox.log").read_text()
            if profile_path.exists():
                try:
                    profile = tomllib.loads(profile_path.read_text())
                    httpx.get(profile["base_url"] + "/api/delivery/v1/config", timeout=2)
                    break
                except (tomllib.TOMLDecodeError, KeyError, httpx.HTTPError):
                    pass
            time.sleep(0.1)
        else:
            pytest.fail("the sandbox did not start within 30 s")
        yield Sandbox(
            profile["base_url"],
            dict(profile["keys"]),
            dict(profile["fixtures"]),
            profile["admin"]["url"],
            profile["admin"]["token"],
        )
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
