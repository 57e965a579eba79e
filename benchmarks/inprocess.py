"""In-process cost of one request: the sandbox's ASGI app called directly, no HTTP, no sockets.

Builds a sandbox with limits scaled up (every header, auth and limit check still runs, none
refuses) and calls the app with a minimal scope, `receive` and `send`, many times inside one event
loop; the figure is the CPU time of this process per request (time.process_time, so time lost to
other processes on a shared machine does not count; best of a few rounds), so it is the
application's own cost, apart from uvicorn and the network (which, on the development machine,
add several tens of µs per request). Every answer must be 200.

    python -m benchmarks.inprocess [--requests 5000] [--rounds 5] [--profile NAME]
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson

from delivery_sandbox.app import SandboxApp, build_app
from delivery_sandbox.state.context import Settings

__all__ = ["Case", "cases", "main", "measure"]

API = "/api/delivery/v1"
HOST = b"127.0.0.1:8123"


@dataclass(frozen=True)
class Case:
    name: str
    method: str
    path: str
    query: bytes
    body: bytes
    target: int | None  # requests/s on one core asked for (HTTP included)


def cases(app: SandboxApp) -> tuple[list[Case], str]:
    """The benchmarked requests (the same as benchmarks/sandbox.py and playback.py) and the key."""
    sb = app.sandbox
    key = sb.accounts.start_keys()["films"]
    fx = sb.fixtures()
    device = {"union_info": "bench-device-01", "drm_kek": "bench-kek-0001"}
    single = {"episode_id": fx["episode_encrypted"], "intent": "play", **device}
    batch = {
        "film_ref": fx["episode_paged_film"],
        "episode_no": 1,
        "next": 2,
        "intent": "play",
        **device,
    }
    return [
        Case("GET /config", "GET", f"{API}/config", b"", b"", 12_000),
        Case("GET /catalog?limit=50", "GET", f"{API}/catalog", b"limit=50", b"", 2_000),
        Case("GET /creatives", "GET", f"{API}/creatives", b"", b"", None),
        Case("POST /playback single", "POST", f"{API}/playback", b"", orjson.dumps(single), 8_000),
        Case("POST /playback batch3", "POST", f"{API}/playback", b"", orjson.dumps(batch), 5_000),
    ], key


def _scope(case: Case, key: str) -> dict[str, Any]:
    headers = [(b"host", HOST), (b"authorization", f"Bearer {key}".encode())]
    if case.body:
        headers += [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(case.body)).encode()),
        ]
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": case.method,
        "scheme": "http",
        "path": case.path,
        "raw_path": case.path.encode(),
        "query_string": case.query,
        "root_path": "",
        "headers": headers,
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8123),
    }


async def _run(app: SandboxApp, case: Case, key: str, count: int) -> float:
    """CPU seconds for `count` requests of `case`; raises when one answer is not 200."""
    statuses: list[int] = []
    message = {"type": "http.request", "body": case.body, "more_body": False}

    async def receive() -> dict[str, Any]:
        return message

    async def send(event: dict[str, Any]) -> None:
        if event["type"] == "http.response.start":
            statuses.append(event["status"])

    start = time.process_time()
    for _ in range(count):
        await app(_scope(case, key), receive, send)
    took = time.process_time() - start
    bad = [s for s in statuses if s != 200]
    if bad or len(statuses) != count:
        raise RuntimeError(f"{case.name}: {len(bad)} answers were not 200 (first {bad[:1]})")
    return took


def measure(count: int = 5_000, rounds: int = 5) -> list[tuple[Case, float]]:
    """(case, best µs per request) for every case, each on a fresh sandbox."""
    out = []
    for case in cases(build_app(Settings(limits_scale=1000)))[0]:
        app = build_app(Settings(limits_scale=1000))
        key = app.sandbox.accounts.start_keys()["films"]
        best = min(asyncio.run(_run(app, case, key, count)) for _ in range(rounds))
        out.append((case, best / count * 1e6))
    return out


def _profile(name: str, count: int) -> None:
    app = build_app(Settings(limits_scale=1000))
    found, key = cases(app)
    case = next((c for c in found if name.lower() in c.name.lower()), None)
    if case is None:
        print(f"benchmarks.inprocess: no case matches {name!r}", file=sys.stderr)
        raise SystemExit(2)
    runner: Callable[[], float] = lambda: asyncio.run(_run(app, case, key, count))  # noqa: E731
    profiler = cProfile.Profile()
    profiler.runcall(runner)
    pstats.Stats(profiler).sort_stats("tottime").print_stats(25)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="benchmarks.inprocess")
    parser.add_argument("--requests", type=int, default=5_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--profile", default=None, help="cProfile one case (name substring)")
    args = parser.parse_args(argv)
    if not 1 <= args.requests <= 200_000 or not 1 <= args.rounds <= 50:
        print("benchmarks.inprocess: --requests 1..200000, --rounds 1..50", file=sys.stderr)
        return 2
    if args.profile:
        _profile(args.profile, args.requests)
        return 0
    try:
        figures = measure(args.requests, args.rounds)
    except RuntimeError as exc:
        print(f"benchmarks.inprocess: {exc}", file=sys.stderr)
        return 3
    print("in-process cost (app only: uvicorn, httptools and the socket come on top)")
    for case, micro in figures:
        target = "" if case.target is None else f"; target with HTTP {case.target:,}/s"
        print(
            f"  {case.name:<24} {micro:>7.1f} µs/request  "
            f"(app-only ceiling {1e6 / micro:>8,.0f}/s{target})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
