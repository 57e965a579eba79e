"""The latency self-test, full form (`make latency`): the whole conformance suite against the
embedded sandbox behind a latency proxy (40 ms +- 15 ms by default), paced and unpaced.

Issue 11 item 2: a correct server in another data centre must get 0 failures. Each run starts
its own sandbox (`embedded.py`, a subprocess), puts `LatencyProxy` in front of it, rewrites the
profile and runs `delivery-conformance run --target FILE --no-properties [--no-pacing]` as a
user would. The verdict is read from results.json: 0 failed requirements, 0 failed tests and
0 errored tests, at least one passed test. The exit code of the run is printed but not judged
(a run that leaves requirements unexercised may exit 4, "partial", without any failure).

    python -m benchmarks.latency_suite [--runs 3] [--modes paced,unpaced] [--latency 40ms]
                                       [--jitter 15ms] [--seed 1] [-k EXPR] [--out FILE]

Prints one line per run and writes every figure to reports/bench/latency_suite.json.
Exit 0 when every run had 0 failures, 1 otherwise, 2 on bad arguments, 130 on SIGINT or SIGTERM
(the running suite, proxy and sandbox are stopped first: nothing is left behind).
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from delivery_conformance.target.embedded import EmbeddedSandbox
from delivery_conformance.target.latency import LatencyProxy, parse_duration, write_proxied_profile
from delivery_conformance.target.profile import load_profile

__all__ = ["clean", "main", "run_once"]

RUN_TIMEOUT = 1800.0  # one full paced run takes a few minutes; this bounds a stuck one


def clean(figure: dict[str, Any]) -> bool:
    """0 failed requirements, 0 failed and 0 errored tests, and something passed."""
    return (
        figure.get("requirements_failed") == 0
        and figure.get("tests_failed") == 0
        and figure.get("tests_error") == 0
        and figure.get("tests_passed", 0) > 0
    )


def run_once(
    *,
    paced: bool,
    latency: float,
    jitter: float,
    seed: int,
    keyword: str | None = None,
    timeout: float = RUN_TIMEOUT,
    workers: int | None = None,
    properties: bool = False,
    keep: Path | None = None,
) -> dict[str, Any]:
    """One suite run behind a fresh proxy in front of a fresh sandbox; answer its figures."""
    with tempfile.TemporaryDirectory(prefix="latency-suite-") as tmp, EmbeddedSandbox() as prof:
        upstream = load_profile(prof).base_url
        with LatencyProxy(upstream, latency=latency, jitter=jitter, seed=seed) as url:
            target = write_proxied_profile(prof, Path(tmp) / "proxied.toml", url)
            command = [sys.executable, "-m", "delivery_conformance.cli", "run"]
            command += ["--target", str(target), "--report-dir", tmp]
            command += [] if properties else ["--no-properties"]
            command += [] if paced else ["--no-pacing"]
            command += ["--workers", str(workers)] if workers is not None else []
            command += ["-k", keyword] if keyword else []
            started = time.monotonic()
            try:
                done = subprocess.run(
                    command, capture_output=True, text=True, timeout=timeout, check=False
                )
                code: int | str = done.returncode
                tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or [""]
            except subprocess.TimeoutExpired:
                code, tail = "timeout", [f"no end within {timeout:g} s"]
            wall = time.monotonic() - started
        found = sorted(Path(tmp).glob("*/results.json"))
        results = json.loads(found[0].read_text()) if found else None
        if found and keep is not None:  # the run's results.json, kept for a closer look
            keep.parent.mkdir(parents=True, exist_ok=True)
            keep.write_bytes(found[0].read_bytes())
    figure: dict[str, Any] = {
        "mode": "paced" if paced else "unpaced",
        "latency_ms": round(latency * 1000),
        "jitter_ms": round(jitter * 1000),
        "wall_seconds": round(wall, 1),
        "exit_code": code,
        "workers": workers,
    }
    if results is None:
        return {**figure, "error": f"no results.json ({tail[0][:200]})"}
    run = results["run"]
    figure.update(
        duration_seconds=run.get("duration_seconds"),
        exchanges=run.get("exchanges", {}),
        tests_passed=run["tests"].get("passed"),
        tests_failed=run["tests"].get("failed"),
        tests_error=run["tests"].get("error"),
        tests_not_exercised=run["tests"].get("not exercised"),
        requirements_failed=run["requirements"].get("failed"),
        requirements_passed=run["requirements"].get("passed"),
        failed_tests=[
            t.get("nodeid") for t in results["tests"] if t.get("outcome") in ("failed", "error")
        ],
        findings=[
            f"{v.get('requirement_id')}: expected {v.get('expected')}, got {v.get('actual')}"
            for t in results["tests"]
            if t.get("outcome") in ("failed", "error")
            for v in (t.get("violations") or [{"requirement_id": t.get("reason", "?")}])
        ][:20],
    )
    return figure


def _line(index: int, figure: dict[str, Any]) -> str:
    head = (
        f"run {index} {figure['mode']:>8} ({figure['latency_ms']} ms +- {figure['jitter_ms']} ms):"
        f" {figure['wall_seconds']} s wall"
    )
    if "error" in figure:
        return f"{head}, {figure['error']}: FAILED"
    verdict = "0 failures" if clean(figure) else "FAILED " + ", ".join(figure["failed_tests"][:8])
    return (
        f"{head}, tests {figure['tests_passed']} passed / {figure['tests_failed']} failed / "
        f"{figure['tests_error']} errors / {figure['tests_not_exercised']} not exercised, "
        f"requirements {figure['requirements_passed']} passed / "
        f"{figure['requirements_failed']} failed, exit {figure['exit_code']}: {verdict}"
    )


def _modes(text: str) -> list[bool]:
    names = [m.strip() for m in text.split(",") if m.strip()]
    if not names or any(m not in ("paced", "unpaced") for m in names):
        raise argparse.ArgumentTypeError(f"modes are paced and/or unpaced, not {text!r}")
    return [m == "paced" for m in names]


def _duration(text: str) -> float:
    try:
        return parse_duration(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.latency_suite")
    parser.add_argument("--runs", type=int, default=3, choices=range(1, 11), metavar="1-10")
    parser.add_argument("--modes", type=_modes, default=[True, False], help="paced,unpaced")
    parser.add_argument("--latency", type=_duration, default=0.040)
    parser.add_argument("--jitter", type=_duration, default=0.015)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("-k", dest="keyword", default=None, help="pytest -k expression")
    parser.add_argument("--out", type=Path, default=Path("reports/bench/latency_suite.json"))
    args = parser.parse_args(argv)
    # SIGTERM ends the runs like Ctrl-C, so every with-block stops its suite, proxy and sandbox.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    figures = []
    try:
        for index in range(1, args.runs + 1):
            for paced in args.modes:
                figure = run_once(
                    paced=paced,
                    latency=args.latency,
                    jitter=args.jitter,
                    seed=args.seed + index,
                    keyword=args.keyword,
                )
                figures.append(figure)
                print(_line(index, figure), flush=True)
    except KeyboardInterrupt:
        print(f"latency self-test: interrupted after {len(figures)} runs", file=sys.stderr)
        return 130
    passed = sum(1 for f in figures if clean(f))
    for figure in figures:
        for finding in figure.get("findings", []):
            print(f"  {figure['mode']}: {finding[:300]}")
    print(f"latency self-test: {passed}/{len(figures)} runs with 0 failures")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(figures, indent=2) + "\n")
    return 0 if passed == len(figures) else 1


if __name__ == "__main__":
    sys.exit(main())
