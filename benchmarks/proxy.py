"""Latency the referee proxy adds (goal: median at most 2 ms, keep-alive kept).

    python -m benchmarks.proxy [--rounds 250] [--path config]

Against the embedded sandbox: alternating GETs, one keep-alive client straight to the sandbox
and one through a `RefereeProxy` with a journal file (no injection), the same path and key. The
added latency is the difference of the two medians (and of the 90th percentiles). Keep-alive is
kept when every proxied request arrived on one connection (the journal's connection ids).
Exit 1 when the median added is over 2 ms or a new connection was opened.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

from delivery_conformance.certify.journal import Journal
from delivery_conformance.certify.proxy import RefereeProxy
from delivery_conformance.target.embedded import EmbeddedSandbox
from delivery_conformance.target.profile import load_profile

GOAL_MS = 2.0


def _time(client: httpx.Client, path: str) -> float:
    started = time.perf_counter()
    response = client.get(path)
    response.read()
    assert response.status_code == 200, response.status_code
    return (time.perf_counter() - started) * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--rounds", type=int, default=250, help="requests each way (default 250; config: 600/min)"
    )
    parser.add_argument("--path", default="config", help="API path (default config)")
    args = parser.parse_args(argv)
    path = f"/api/delivery/v1/{args.path}"
    with EmbeddedSandbox() as profile_path, tempfile.TemporaryDirectory() as folder:
        profile = load_profile(profile_path, environ={})
        headers = {"Authorization": f"Bearer {profile.keys['films']}"}
        journal = Journal(Path(folder) / "journal.jsonl")
        with RefereeProxy(profile.base_url, journal=journal) as proxy, \
                httpx.Client(base_url=profile.base_url, headers=headers) as direct, \
                httpx.Client(base_url=proxy.base_url, headers=headers) as proxied:  # fmt: skip
            for _ in range(20):  # warm both paths
                _time(direct, path), _time(proxied, path)
            plain, through = [], []
            for _ in range(args.rounds):
                plain.append(_time(direct, path))
                through.append(_time(proxied, path))
            proxy.settle()
            connections = {e.connection for e in journal.entries()}
    p90 = lambda xs: statistics.quantiles(xs, n=10)[-1]  # noqa: E731
    added = statistics.median(through) - statistics.median(plain)
    result = {
        "rounds": args.rounds,
        "path": path,
        "direct_median_ms": round(statistics.median(plain), 3),
        "proxied_median_ms": round(statistics.median(through), 3),
        "added_median_ms": round(added, 3),
        "added_p90_ms": round(p90(through) - p90(plain), 3),
        "proxied_connections": len(connections),
        "goal_ms": GOAL_MS,
        "ok": added <= GOAL_MS and len(connections) == 1,
    }
    print(json.dumps(result))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
