"""Throughput of POST /playback on the sandbox: single tickets and batches of 3.

Starts the sandbox as a subprocess pinned to one core (`--limits-scale 100`, so the bench measures
issuing, not refusing), and drives it from this process, pinned to another core, with a small raw
HTTP/1.1 keep-alive client on asyncio. Every loop is bounded in time. Loopback only.

    python -m benchmarks.playback [--seconds 4] [--connections 32]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import orjson

__all__ = ["Figure", "main", "run"]

SERVER_CORE, CLIENT_CORE = 0, 1
PATH = "/api/delivery/v1/playback"
TARGETS = {"single": 8_000, "batch3": 5_000}


@dataclass(frozen=True)
class Figure:
    name: str
    requests: int
    ok: int
    seconds: float
    target: int
    server_cpu: float = 0.0  # share of one core the sandbox used during the run

    @property
    def rps(self) -> float:
        return self.ok / self.seconds if self.seconds else 0.0

    @property
    def per_core(self) -> float:
        return self.rps / self.server_cpu if self.server_cpu else 0.0

    def line(self) -> str:
        verdict = "meets" if self.rps >= self.target else "below"
        return (
            f"POST /playback {self.name:<7} {self.rps:>9,.0f} req/s  "
            f"server CPU {self.server_cpu:.0%}, {self.per_core:,.0f}/s per server core  "
            f"({self.ok}/{self.requests} 200 in {self.seconds:.1f} s; target {self.target:,}: "
            f"{verdict})"
        )


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (Linux /proc), 0.0 where unavailable."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _pin(core: int) -> None:
    with contextlib.suppress(AttributeError, OSError):
        if core < (os.cpu_count() or 1):
            os.sched_setaffinity(0, {core})


def _start_sandbox(profile: Path) -> subprocess.Popen[bytes]:
    cmd = [
        sys.executable,
        "-m",
        "delivery_sandbox",
        "--port",
        "0",
        "--profile-out",
        str(profile),
        "--limits-scale",
        "100",
    ]
    return subprocess.Popen(
        cmd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: _pin(SERVER_CORE),
    )


def _wait_profile(profile: Path, proc: subprocess.Popen[bytes], timeout: float = 20) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            err = proc.stderr.read().decode() if proc.stderr else ""
            raise RuntimeError(f"sandbox exited: {err.strip()[:300]}")
        if profile.exists() and profile.stat().st_size:
            with contextlib.suppress(tomllib.TOMLDecodeError):
                return tomllib.loads(profile.read_text())
        time.sleep(0.05)
    raise RuntimeError("sandbox did not write its profile in time")


def _request(host: str, key: str, body: dict) -> bytes:
    raw = orjson.dumps(body)
    head = (
        f"POST {PATH} HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {key}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(raw)}\r\n\r\n"
    )
    return head.encode() + raw


async def _worker(host: str, port: int, payload: bytes, stop: float, counts: list[int]) -> None:
    reader, writer = await asyncio.open_connection(host, port)
    try:
        while time.monotonic() < stop:
            writer.write(payload)
            head = await reader.readuntil(b"\r\n\r\n")
            status = int(head[9:12])
            length = 0
            for line in head.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            await reader.readexactly(length)
            counts[0] += 1
            counts[1] += status == 200
    finally:
        writer.close()
        with contextlib.suppress(Exception):
            await writer.wait_closed()


async def _measure(
    host: str,
    port: int,
    payload: bytes,
    seconds: float,
    connections: int,
    pid: int,
    cpu: list[float],
) -> tuple[int, int, float]:
    """Counts and seconds of the measured run; appends the sandbox's CPU seconds to `cpu`."""
    await _drive(host, port, payload, 0.5, connections)  # warm-up
    before = _cpu_seconds(pid)
    start = time.monotonic()
    counts = await _drive(host, port, payload, seconds, connections)
    took = time.monotonic() - start
    cpu.append(_cpu_seconds(pid) - before)
    return counts[0], counts[1], took


async def _drive(
    host: str, port: int, payload: bytes, seconds: float, connections: int
) -> list[int]:
    counts = [0, 0]
    stop = time.monotonic() + seconds
    await asyncio.gather(*(_worker(host, port, payload, stop, counts) for _ in range(connections)))
    return counts


def run(seconds: float = 4.0, connections: int = 32) -> list[Figure]:
    """Start a sandbox, measure both shapes, stop it."""
    with tempfile.TemporaryDirectory() as tmp:
        profile_path = Path(tmp) / "sandbox.toml"
        proc = _start_sandbox(profile_path)
        try:
            profile = _wait_profile(profile_path, proc)
            url = urlsplit(profile["base_url"])
            host, port = url.hostname or "127.0.0.1", url.port or 80
            key, fx = profile["keys"]["films"], profile["fixtures"]
            device = {"union_info": "bench-device-01", "drm_kek": "bench-kek-0001"}
            single = {"episode_id": fx["episode_encrypted"], "intent": "play", **device}
            batch = {
                "film_ref": fx["episode_paged_film"],
                "episode_no": 1,
                "next": 2,
                "intent": "play",
                **device,
            }
            _pin(CLIENT_CORE)
            figures = []
            for name, body in (("single", single), ("batch3", batch)):
                payload = _request(f"{host}:{port}", key, body)
                cpu: list[float] = []
                total, ok, took = asyncio.run(
                    _measure(host, port, payload, seconds, connections, proc.pid, cpu)
                )
                share = cpu[0] / took if took else 0.0
                figures.append(Figure(name, total, ok, took, TARGETS[name], round(share, 2)))
            return figures
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="benchmarks.playback")
    parser.add_argument("--seconds", type=float, default=4.0)
    parser.add_argument("--connections", type=int, default=32)
    args = parser.parse_args(argv)
    if not 0 < args.seconds <= 60 or not 1 <= args.connections <= 256:
        print("benchmarks.playback: --seconds 0..60, --connections 1..256", file=sys.stderr)
        return 2
    try:
        figures = run(args.seconds, args.connections)
    except RuntimeError as exc:
        print(f"benchmarks.playback: {exc}", file=sys.stderr)
        return 3
    for figure in figures:
        print(figure.line())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
