"""Requests per second of the sandbox on one core.

The sandbox runs as a subprocess pinned to core 0 (limits scaled up so the limit check runs but
never refuses); the load generator, a keep-alive HTTP/1.1 client on raw asyncio streams, runs
pinned to core 1. Each scenario runs for a fixed time with a fixed number of connections; every
response must be 200 or the run fails. Results go to reports/bench/sandbox.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import urlsplit

__all__ = ["main"]

SCENARIOS = (
    ("GET /config", "/api/delivery/v1/config"),
    ("GET /catalog (page of 50)", "/api/delivery/v1/catalog?limit=50"),
    ("GET /creatives", "/api/delivery/v1/creatives"),
)
TARGETS = {"GET /config": 12_000, "GET /catalog (page of 50)": 2_000}


@dataclass(frozen=True)
class Result:
    scenario: str
    requests: int
    errors: int
    seconds: float
    rps: float
    server_cpu: float  # share of one core the sandbox used during the run
    rps_per_server_core: float
    target_rps: int | None


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (Linux /proc), 0.0 where unavailable."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _pin(core: int) -> None:
    if hasattr(os, "sched_setaffinity") and core < (os.cpu_count() or 1):
        os.sched_setaffinity(0, {core})


async def _worker(
    host: str, port: int, raw: bytes, stop: float, counts: list[int], depth: int
) -> None:
    """Keep-alive connection; `depth` requests written at once (HTTP/1.1 pipelining)."""
    reader, writer = await asyncio.open_connection(host, port)
    try:
        while time.perf_counter() < stop:
            writer.write(raw * depth)
            for _ in range(depth):
                head = await reader.readuntil(b"\r\n\r\n")
                status = int(head[9:12])
                length = 0
                for line in head.split(b"\r\n"):
                    if line[:15].lower() == b"content-length:":
                        length = int(line[15:])
                if length:
                    await reader.readexactly(length)
                counts[0 if status == 200 else 1] += 1
    finally:
        writer.close()


async def _run(
    base_url: str, path: str, key: str, seconds: float, connections: int, depth: int = 1
) -> tuple[int, int, float]:
    parts = urlsplit(base_url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    raw = (
        f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer {key}\r\n\r\n"
    ).encode()
    counts = [0, 0]
    start = time.perf_counter()
    stop = start + seconds
    await asyncio.gather(
        *(_worker(host, port, raw, stop, counts, depth) for _ in range(connections))
    )
    return counts[0], counts[1], time.perf_counter() - start


def _start_sandbox(profile: Path) -> subprocess.Popen[bytes]:
    command = [
        sys.executable,
        "-m",
        "delivery_sandbox",
        "--port",
        "0",
        "--profile-out",
        str(profile),
        "--limits-scale",
        "1000",
    ]
    process = subprocess.Popen(command, preexec_fn=lambda: _pin(0), stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while not profile.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise SystemExit("benchmark: the sandbox did not start")
        time.sleep(0.05)
    return process


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks")
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--connections", type=int, default=32)
    parser.add_argument("--pipeline", type=int, default=1, help="requests in flight per connection")
    parser.add_argument("--out", type=Path, default=Path("reports/bench/sandbox.json"))
    parser.add_argument(
        "--target", default=None, help="ignored: the benchmark measures the sandbox"
    )
    args = parser.parse_args(argv)
    if not 0 < args.seconds <= 120 or not 0 < args.connections <= 512:
        print("benchmark: --seconds must be 0-120 and --connections 1-512", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        profile = Path(tmp) / "profile.toml"
        process = _start_sandbox(profile)
        try:
            data = tomllib.loads(profile.read_text())
            _pin(1)
            try:
                import uvloop

                runner = asyncio.Runner(loop_factory=uvloop.new_event_loop)
            except ImportError:
                runner = asyncio.Runner()
            results = []
            with runner:
                for name, path in SCENARIOS:
                    runner.run(
                        _run(data["base_url"], path, data["keys"]["films"], 0.5, 4)
                    )  # warm up
                    cpu = _cpu_seconds(process.pid)
                    ok, bad, seconds = runner.run(
                        _run(
                            data["base_url"],
                            path,
                            data["keys"]["films"],
                            args.seconds,
                            args.connections,
                            args.pipeline,
                        )
                    )
                    share = (_cpu_seconds(process.pid) - cpu) / seconds
                    per_core = round(ok / seconds / share) if share > 0 else 0
                    results.append(
                        Result(
                            name,
                            ok,
                            bad,
                            round(seconds, 2),
                            round(ok / seconds),
                            round(share, 2),
                            per_core,
                            TARGETS.get(name),
                        )
                    )
        finally:
            process.terminate()
            process.wait(timeout=10)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    report = {
        "cores": os.cpu_count(),
        "connections": args.connections,
        "pipeline": args.pipeline,
        "results": [asdict(r) for r in results],
    }
    args.out.write_text(json.dumps(report, indent=2))
    failed = False
    for r in results:
        verdict = (
            "" if r.target_rps is None else (" ok" if r.rps >= r.target_rps else " BELOW TARGET")
        )
        print(
            f"{r.scenario:28} {r.rps:>8} rps  server CPU {r.server_cpu:.0%}  "
            f"({r.requests} in {r.seconds}s, {r.errors} non-200){verdict}"
        )
        failed = failed or r.errors > 0
    return 1 if failed else 0
