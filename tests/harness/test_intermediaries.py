"""Something between the suite and the server: a proxy that does not pass the Host through.

The bare-host scenarios (GEN-006, GEN-007 and the headers of the 308) need the bare `Host` to
reach the server (docs/running.md > Intermediaries). Behind a proxy that forwards to its upstream by
name (so the upstream sees its own host, as most reverse proxies do by default), the sandbox never
sees the bare host and serves the request: the scenarios must report that precondition as not
exercised, never a failure, while straight to the sandbox they pass.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from harness_support import served
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from delivery_conformance.target.embedded import EmbeddedSandbox

ROOT = Path(__file__).resolve().parents[2]
DROPPED = {"host", "content-length", "transfer-encoding", "connection"}


def proxy_app(upstream: str) -> Starlette:
    """Forwards every request to `upstream`; the Host becomes the upstream's own."""

    async def forward(request: Request) -> Response:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in DROPPED}
        async with httpx.AsyncClient(base_url=upstream, timeout=10) as client:
            answer = await client.request(
                request.method,
                request.url.path,
                params=request.url.query or None,
                headers=headers,
                content=await request.body(),
            )
        kept = {
            k: v
            for k, v in answer.headers.items()
            if k.lower() not in DROPPED and k.lower() != "content-encoding"
        }
        return Response(answer.content, status_code=answer.status_code, headers=kept)

    return Starlette(
        routes=[
            Route(
                "/{path:path}",
                forward,
                methods=["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"],
            )
        ]
    )


@contextmanager
def proxy(upstream: str) -> Iterator[str]:
    with served(proxy_app(upstream)) as url:
        yield url


def bare_host_run(profile: Path, report_dir: Path) -> tuple[int, dict]:
    command = [
        sys.executable,
        "-m",
        "delivery_conformance.cli",
        "run",
        "--target",
        str(profile),
        "--no-pacing",
        "--no-properties",
        "--workers",  # a handful of tests: the workers a proxy's round trip would choose cost more
        "1",
        "-k",
        "bare_host",
        "--report-dir",
        str(report_dir),
    ]
    done = subprocess.run(
        command, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )
    (found,) = [p for p in report_dir.glob("*/results.json") if p.parent.name != "latest"]
    return done.returncode, json.loads(found.read_text())


@pytest.fixture(scope="module")
def sandbox_profile() -> Iterator[Path]:
    with EmbeddedSandbox() as path:
        yield path


def test_bare_host_scenarios_pass_straight_to_the_sandbox(
    sandbox_profile: Path, tmp_path: Path
) -> None:
    code, results = bare_host_run(sandbox_profile, tmp_path)
    outcomes = {t["nodeid"]: t["outcome"] for t in results["tests"]}
    assert len(outcomes) >= 8 and set(outcomes.values()) == {"passed"}, outcomes
    assert code == 0


def test_a_proxy_replacing_the_host_is_a_precondition_not_a_failure(
    sandbox_profile: Path, tmp_path: Path
) -> None:
    text = sandbox_profile.read_text()
    upstream = re.search(r'^base_url = "([^"]+)"', text, re.MULTILINE)
    assert upstream is not None
    with proxy(upstream.group(1)) as front:
        proxied = tmp_path / "proxied.toml"
        proxied.write_text(text.replace(upstream.group(0), f'base_url = "{front}"'))
        code, results = bare_host_run(proxied, tmp_path / "reports")
    tests = results["tests"]
    assert [t["nodeid"] for t in tests if t["outcome"] in ("failed", "error")] == []
    skipped = [t for t in tests if t["outcome"] == "not exercised"]
    assert len(skipped) >= 8
    assert all(
        "bare Host did not reach the server" in t["reason"] or "GEN-006" in t["reason"]
        for t in skipped
    ), [t["reason"] for t in skipped]
    assert code != 1
