"""Requests per second of the sandbox on one core, measured with `wrk` (a C load generator).

The Python generator of benchmarks/sandbox.py saturates its own core before the sandbox does on
the small answers, so where `wrk` is installed (Debian package `wrk`) this module measures the
same scenarios with it: the sandbox pinned to core 0 (limits scaled up so every check runs but none
refuses), `wrk` pinned to core 1, 32 keep-alive connections, a fixed duration. A scenario with any
non-2xx answer or socket error fails the run. Results go to reports/bench/wrk.json.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import asdict, dataclass
from pathlib import Path

__all__ = ["main"]

TARGETS = {
    "GET /config": 12_000,
    "GET /catalog (page of 50)": 2_000,
    "GET /creatives": None,
    "POST /playback (single)": 8_000,
    "POST /playback (batch of 3)": 5_000,
}
DEVICE = {"union_info": "bench-device-0001", "drm_kek": "bench-kek-000001"}


@dataclass(frozen=True)
class Result:
    scenario: str
    rps: float
    target_rps: int | None
    clean: bool  # no non-2xx answer, no socket error


def _script(key: str, body: dict[str, object] | None) -> str:
    lines = [f'wrk.headers["Authorization"] = "Bearer {key}"']
    if body is not None:
        lines += [
            'wrk.method = "POST"',
            'wrk.headers["Content-Type"] = "application/json"',
            f"wrk.body = {json.dumps(json.dumps(body))}",
        ]
    return "\n".join(lines) + "\n"


def _scenarios(profile: dict[str, object]) -> list[tuple[str, str, str]]:
    keys, fx = profile["keys"], profile["fixtures"]
    assert isinstance(keys, dict) and isinstance(fx, dict)
    key, episode, slug = keys["films"], fx["episode_encrypted"], fx["film_slug"]
    single = {"episode_id": episode, "intent": "play", **DEVICE}
    batch = {
        "episodes": [
            {"episode_id": episode},
            {"film_ref": slug, "episode_no": 1},
            {"film_ref": slug, "episode_no": 3},
        ],
        "intent": "play",
        **DEVICE,
    }
    return [
        ("GET /config", "/api/delivery/v1/config", _script(key, None)),
        ("GET /catalog (page of 50)", "/api/delivery/v1/catalog?limit=50", _script(key, None)),
        ("GET /creatives", "/api/delivery/v1/creatives", _script(key, None)),
        ("POST /playback (single)", "/api/delivery/v1/playback", _script(key, single)),
        ("POST /playback (batch of 3)", "/api/delivery/v1/playback", _script(key, batch)),
    ]


def _wrk(url: str, script: Path, seconds: int) -> tuple[float, bool]:
    out = subprocess.run(
        ["taskset", "-c", "1", "wrk", "-t1", "-c32", f"-d{seconds}s", "-s", str(script), url],
        capture_output=True,
        text=True,
        timeout=seconds + 30,
        check=False,
    ).stdout
    found = re.search(r"Requests/sec:\s+([\d.]+)", out)
    clean = "Non-2xx" not in out and "Socket errors" not in out
    return (float(found.group(1)) if found else 0.0), clean and found is not None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.wrk")
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--out", type=Path, default=Path("reports/bench/wrk.json"))
    args = parser.parse_args(argv)
    if shutil.which("wrk") is None or shutil.which("taskset") is None or os.cpu_count() == 1:
        print("wrk benchmark: skipped (needs `wrk` and `taskset` and two cores)")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        profile_path = Path(tmp) / "profile.toml"
        server = subprocess.Popen(
            [
                "taskset",
                "-c",
                "0",
                sys.executable,
                "-m",
                "delivery_sandbox",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--profile-out",
                str(profile_path),
                "--limits-scale",
                "1000",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            deadline = time.monotonic() + 20
            while not profile_path.exists() and time.monotonic() < deadline:
                time.sleep(0.1)
            if not profile_path.exists():
                print("wrk benchmark: the sandbox did not start")
                return 3
            profile = tomllib.loads(profile_path.read_text())
            results = []
            for name, path, text in _scenarios(profile):
                script = Path(tmp) / "s.lua"
                script.write_text(text)
                rps, clean = _wrk(str(profile["base_url"]) + path, script, args.seconds)
                results.append(Result(name, round(rps), TARGETS[name], clean))
        finally:
            server.terminate()
            server.wait(timeout=10)
    print(f"{'scenario (wrk, sandbox on one core)':<32} {'rps':>8} {'target':>8}  verdict")
    status = 0
    for r in results:
        met = r.clean and (r.target_rps is None or r.rps >= r.target_rps)
        status = status if met else 1
        verdict = "errors" if not r.clean else ("met" if met else "MISSED")
        print(f"{r.scenario:<32} {r.rps:>8} {r.target_rps or '-':>8}  {verdict}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps([asdict(r) for r in results], indent=2) + "\n")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
