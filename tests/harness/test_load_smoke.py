"""Smoke of every load campaign against a sandbox with limits scaled to 5 %, and the proof that
each limiter fault of the sandbox makes its campaign fail (the clean sandbox passes).

`make test` runs the scaled-down form: every campaign clean, every load-only fault (proven
nowhere else) but the second tenant fault (`LOAD_FULL_SUBTLE`), one limiter fault per campaign no
load-only fault covers, the bad inputs and one interrupt. The limiter faults the conformance
kill rate already proves, run again through their campaigns, the tenants campaign over two
workers and the SIGINT twin of the interrupt test are marked `load_full`: `make load-smoke` runs
them all. The module's sandbox has 3 tenant organisations (`--tenants 3`) for `tenants`.

One sandbox subprocess serves the whole module; faults are switched through its admin API
(`POST /_sandbox/faults {"only": [...]}`); each campaign runs as `python -m loadtests.run`.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from delivery_conformance.target.embedded import EmbeddedSandbox

ROOT = Path(__file__).resolve().parents[2]
SCALE = "0.05"
CAMPAIGNS = (
    "burst",
    "refill",
    "shedding",
    "admission",
    "hold",
    "catalog",
    "minute",
    "simulated",
    "mixed",
    "soak",
    "tenants",
)
# Timed campaigns run scaled down here (make load runs them at their default length).
DURATIONS = {"mixed": "6s", "soak": "8s", "tenants": "8s"}
# The endpoints whose latency each timed campaign tables per time bucket.
TABLED = {
    "mixed": {"playback", "catalog", "config", "creatives", "videos", "video"},
    "soak": {"playback", "catalog", "config", "creatives", "videos", "video"},
    "tenants": {"playback", "catalog", "series"},
}
TENANTS = "3"  # organisations of the module's sandbox (`--tenants`), for the tenants campaign

# Each limiter fault of the sandbox and the campaign that must catch it.
FAULT_PROOFS = {
    "bucket_holds_too_much": "burst",
    "retry_after_wrong": "burst",
    "ratelimit_limit_wrong": "burst",
    "bucket_refills_too_fast": "refill",
    "no_prefetch_shedding": "shedding",
    "shed_threshold_wrong": "shedding",
    "prefetch_admitted_first": "admission",
    "batch_whole_429_early": "admission",
    "no_play_hold": "hold",
    "play_hold_too_long": "hold",
    "clock_minute_rolling": "minute",
    "simulated_consumes_limit": "simulated",
    "simulated_header_missing": "simulated",
    "simulated_counter_not_counted": "simulated",
}
# The subtle faults (load_only: the conformance kill rate leaves them to these proofs) and the
# campaign that must catch each; the simulated limit needs the real scale (285 of 300 is inside
# one unit of rounding at 5 %), so that proof runs against a sandbox at scale 1.
SUBTLE_PROOFS = {
    "bucket_capacity_5pc_low": "burst",
    "bucket_capacity_5pc_high": "burst",
    "bucket_refill_5pc_slow": "refill",
    "bucket_refill_5pc_fast": "refill",
    "shed_at_15pc": "shedding",
    "shed_at_25pc": "shedding",
    "play_hold_1s": "hold",
    "minute_counter_5pc_low": "minute",
    "config_spends_catalog": "mixed",
    "tenant_buckets_pooled": "tenants",
    "tenant_refusals_drain_others": "tenants",
}
# `make test` proves one tenant fault; `make load-smoke` adds the other.
LOAD_FULL_SUBTLE = {"tenant_refusals_drain_others"}
REAL_SCALE_PROOFS = {"simulated_limit_285": "simulated"}

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


def _sandbox(scale: str) -> Iterator[Path]:
    with EmbeddedSandbox(options=("--limits-scale", scale, "--tenants", TENANTS)) as profile:
        yield profile


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Path]:
    yield from _sandbox(SCALE)


@pytest.fixture(scope="module")
def real_sandbox() -> Iterator[Path]:
    yield from _sandbox("1")


def _admin(profile: Path, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
    admin = tomllib.loads(profile.read_text())["admin"]
    answer = httpx.request(
        method,
        f"{admin['url']}/{path}",
        json=body,
        timeout=10,
        headers={"Authorization": f"Bearer {admin['token']}"},
    )
    answer.raise_for_status()
    return answer.json()


def _run(
    profile: Path, campaign: str, reports: Path, scale: str = SCALE, *extra: str
) -> tuple[int, dict[str, Any]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "loadtests.run",
            campaign,
            "--target",
            str(profile),
            "--scale",
            scale,
            "--report-dir",
            str(reports),
            *extra,
            *(("--duration", DURATIONS[campaign]) if campaign in DURATIONS else ()),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    verdicts = sorted(reports.glob(f"load/{campaign}-*/verdict.json"))
    assert verdicts, f"no verdict written; stderr: {done.stderr[-400:]}"
    return done.returncode, json.loads(verdicts[-1].read_text())


@pytest.mark.parametrize("campaign", CAMPAIGNS)
def test_campaign_passes_on_the_clean_sandbox(sandbox: Path, tmp_path: Path, campaign: str) -> None:
    _admin(sandbox, "POST", "faults", {"only": []})
    code, verdict = _run(sandbox, campaign, tmp_path)
    failed = [f for f in verdict["figures"] if not f["passed"]]
    assert (code, verdict["outcome"]) == (0, "pass"), (
        verdict["generator"],
        verdict["target_failure"],
        failed,
    )
    assert verdict["generator"]["valid"]
    report = next(tmp_path.glob(f"load/{campaign}-*"))
    for name in (
        "records.jsonl",
        "admitted.png",
        "refusals.png",
        "latency.png",
        "locust.html",
        "locust_stats.csv",
    ):
        assert (report / name).exists(), name
    if campaign in DURATIONS:
        assert (report / "latency_by_endpoint.png").exists()
        table = verdict["details"]["latency"]
        assert TABLED[campaign] <= set(table)
        assert all(
            {"p50_ms", "p95_ms", "p99_ms"} <= set(row) for rows in table.values() for row in rows
        )
    for figure in verdict["figures"]:
        assert "derivation" in figure


def test_distributed_run_with_local_workers_merges_every_record(
    sandbox: Path, tmp_path: Path
) -> None:
    """Locust master + 2 worker processes: each sends its share, the master judges them all."""
    _admin(sandbox, "POST", "faults", {"only": []})
    code, verdict = _run(sandbox, "burst", tmp_path, SCALE, "--workers", "2")
    assert (code, verdict["outcome"]) == (0, "pass"), verdict["generator"]
    records = (next(tmp_path.glob("load/burst-*")) / "records.jsonl").read_text().splitlines()
    workers = {json.loads(line)["worker"] for line in records}
    assert workers == {"w0", "w1"}
    assert verdict["generator"]["requests"] == len(records) == verdict["details"]["requests"]


@pytest.mark.load_full
def test_tenants_over_two_workers_judges_each_organisation_and_each_worker(
    sandbox: Path, tmp_path: Path
) -> None:
    """The distributed form of the tenants campaign: a row per organisation, and each worker's
    lateness and dropped requests in verdict.json (a worker behind makes the run invalid)."""
    _admin(sandbox, "POST", "faults", {"only": []})
    code, verdict = _run(sandbox, "tenants", tmp_path, SCALE, "--workers", "2")
    assert (code, verdict["outcome"]) == (0, "pass"), verdict["generator"]
    rows = verdict["details"]["organisations"]
    assert [row["organisation"] for row in rows] == ["tenant_01", "tenant_02", "tenant_03", "idle"]
    assert all(row["passed"] for row in rows)
    workers = verdict["generator"]["workers"]
    assert [w["worker"] for w in workers] == ["w0", "w1"]
    assert all(w["valid"] and w["dropped"] == 0 for w in workers)
    assert sum(w["requests"] for w in workers) == verdict["generator"]["requests"]


# Note: the sandbox switches its limiter quirks on lazily, inside POST /playback; the earlier
# tests of this module have sent playback requests, so every fault below is in effect.
# `make test` keeps the proofs of campaigns no load-only fault exercises (admission); the kill
# rate of `make test` proves every one of these faults through the conformance suite already.
QUICK_PROOFS = {"prefetch_admitted_first"}
PROOFS = [
    pytest.param(fault, campaign, marks=() if fault in QUICK_PROOFS else pytest.mark.load_full)
    for fault, campaign in sorted(FAULT_PROOFS.items())
]


@pytest.mark.parametrize(("fault", "campaign"), PROOFS)
def test_limiter_fault_fails_its_campaign(
    sandbox: Path, tmp_path: Path, fault: str, campaign: str
) -> None:
    catalogue = {f["name"]: f for f in _admin(sandbox, "GET", "faults")}
    assert fault in catalogue, f"the sandbox has no fault {fault}"
    _admin(sandbox, "POST", "faults", {"only": [fault]})
    try:
        code, verdict = _run(sandbox, campaign, tmp_path)
    finally:
        _admin(sandbox, "POST", "faults", {"only": []})
    failed = [f for f in verdict["figures"] if not f["passed"]]
    assert (code, verdict["outcome"]) == (1, "fail"), [f["name"] for f in failed]
    broken = set(catalogue[fault]["requirements"])
    assert any(broken & set(f["requirements"]) for f in failed), (broken, failed)


def _fails_with(profile: Path, tmp_path: Path, fault: str, campaign: str, scale: str) -> None:
    catalogue = {f["name"]: f for f in _admin(profile, "GET", "faults")}
    assert fault in catalogue, f"the sandbox has no fault {fault}"
    _admin(profile, "POST", "faults", {"only": [fault]})
    try:
        code, verdict = _run(profile, campaign, tmp_path, scale)
    finally:
        _admin(profile, "POST", "faults", {"only": []})
    failed = [f for f in verdict["figures"] if not f["passed"]]
    assert (code, verdict["outcome"]) == (1, "fail"), (
        verdict["generator"],
        verdict["target_failure"],
        [f["name"] for f in failed],
    )
    broken = set(catalogue[fault]["requirements"])
    # charged to the fault's rule and nothing else
    assert failed and all(broken & set(f["requirements"]) for f in failed), (broken, failed)
    # and to every requirement it declares: this run is the proof of each (the conformance kill
    # rate leaves load-only faults out; test_sandbox_kill_rate.py counts them from here)
    charged = {rid for f in failed for rid in f["requirements"]}
    assert broken <= charged, f"declared but charged by no failed figure: {broken - charged}"


@pytest.mark.parametrize(
    ("fault", "campaign"),
    [
        pytest.param(fault, campaign, marks=pytest.mark.load_full)
        if fault in LOAD_FULL_SUBTLE
        else (fault, campaign)
        for fault, campaign in sorted(SUBTLE_PROOFS.items())
    ],
)
def test_subtle_fault_fails_its_campaign(
    sandbox: Path, tmp_path: Path, fault: str, campaign: str
) -> None:
    _fails_with(sandbox, tmp_path, fault, campaign, SCALE)


def test_simulated_campaign_passes_clean_at_the_real_scale(
    real_sandbox: Path, tmp_path: Path
) -> None:
    code, verdict = _run(real_sandbox, "simulated", tmp_path, "1")
    assert (code, verdict["outcome"]) == (0, "pass"), [
        f for f in verdict["figures"] if not f["passed"]
    ]


@pytest.mark.parametrize(("fault", "campaign"), sorted(REAL_SCALE_PROOFS.items()))
def test_subtle_fault_fails_its_campaign_at_the_real_scale(
    real_sandbox: Path, tmp_path: Path, fault: str, campaign: str
) -> None:
    _fails_with(real_sandbox, tmp_path, fault, campaign, "1")


def test_every_load_only_fault_has_a_campaign_and_every_other_proof_a_known_fault(
    sandbox: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A load-only fault is proven here and nowhere else, so each needs its campaign; every other
    limiter fault is proven by the conformance kill rate (test_sandbox_kill_rate.py judges every
    fault that is not load-only), and the ones this module runs through campaigns too must
    exist."""
    catalogue = {f["name"]: f for f in _admin(sandbox, "GET", "faults")}
    load_only = {name for name, f in catalogue.items() if f.get("load_only")}
    assert load_only == set(SUBTLE_PROOFS) | set(REAL_SCALE_PROOFS)
    monkeypatch.syspath_prepend(str(ROOT))
    from loadtests.sensitivity import SUBTLE  # the same table, with campaigns and IDs

    declared = {name: set(catalogue[name]["requirements"]) for name in load_only}
    assert declared == {name: set(ids) for name, (_, ids) in SUBTLE.items()}
    assert {name: campaign for name, (campaign, _) in SUBTLE.items()} == {
        **SUBTLE_PROOFS,
        **REAL_SCALE_PROOFS,
    }
    conformance_proven = set(catalogue) - load_only
    assert set(FAULT_PROOFS) <= conformance_proven, set(FAULT_PROOFS) - conformance_proven


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "loadtests.run", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_unknown_profile_or_missing_target_is_a_one_line_usage_error(tmp_path: Path) -> None:
    for args in (("nope",), ("burst", "--target", str(tmp_path / "missing.toml"))):
        done = _cli(*args)
        assert done.returncode == 2, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_production_organisation_is_refused_without_allow_production(
    sandbox: Path, tmp_path: Path
) -> None:
    text = sandbox.read_text()
    keys = tomllib.loads(text)["keys"]
    production = tmp_path / "production.toml"
    swapped = text.replace(keys["limits"], "@limits@").replace(keys["production"], keys["limits"])
    production.write_text(swapped.replace("@limits@", keys["production"]))
    done = _cli("burst", "--target", str(production), "--report-dir", str(tmp_path))
    assert done.returncode == 2
    assert "not a test organisation" in done.stderr and "svc_live_" not in done.stderr
    assert not list(tmp_path.glob("load/*"))


class _FailingTarget(http.server.BaseHTTPRequestHandler):
    """Forwards GET /config to the sandbox (so the campaign starts) and answers 500 otherwise."""

    upstream = ""

    def do_GET(self) -> None:
        if self.path.startswith("/api/delivery/v1/config"):
            answer = httpx.get(
                self.upstream + self.path,
                timeout=10,
                headers={"Authorization": self.headers.get("Authorization", "")},
            )
            body, status = answer.content, answer.status_code
        else:
            body, status = b'{"error": "boom"}', 500
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET

    def log_message(self, *args: Any) -> None:
        pass


def test_a_failing_target_stops_the_campaign_early_with_exit_3(
    sandbox: Path, tmp_path: Path
) -> None:
    upstream = tomllib.loads(sandbox.read_text())["base_url"]
    handler = type("Failing", (_FailingTarget,), {"upstream": upstream})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        failing = tmp_path / "failing.toml"
        url = f"http://127.0.0.1:{server.server_address[1]}"
        failing.write_text(
            re.sub(r'(?m)^base_url = ".*"$', f'base_url = "{url}"', sandbox.read_text())
        )
        started = time.monotonic()
        code, verdict = _run(failing, "soak", tmp_path, SCALE)
        took = time.monotonic() - started
    finally:
        server.shutdown()
        server.server_close()
    assert (code, verdict["outcome"]) == (3, "invalid")
    assert "target failing" in verdict["target_failure"]
    progress = verdict["details"]["progress"]
    assert 0 < progress["answered"] < progress["planned"]
    assert took < 40, took  # the 10 s soak did not run its course


def _alive(marker: str) -> list[int]:
    """Processes whose command line names `marker` (read from /proc; nothing is killed)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "cmdline").read_bytes().decode(errors="replace"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


@pytest.mark.parametrize(
    "sig", [pytest.param(signal.SIGINT, marks=pytest.mark.load_full), signal.SIGTERM]
)
def test_an_interrupted_campaign_writes_a_partial_report_and_leaves_no_locust(
    sandbox: Path, tmp_path: Path, sig: signal.Signals
) -> None:
    reports = tmp_path / "reports"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "loadtests.run",
            "soak",
            "--target",
            str(sandbox),
            "--scale",
            SCALE,
            "--report-dir",
            str(reports),
            "--duration",
            "60s",
            "--workers",
            "2",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not list(reports.glob("load/soak-*")):
            time.sleep(0.2)
        time.sleep(9)  # Locust master and workers are sending
        assert _alive(str(reports)), "no Locust process was running"
        process.send_signal(sig)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
    assert process.returncode == 3, err
    assert "partial report" in err and "Traceback" not in err
    verdict = json.loads(next(reports.glob("load/soak-*/verdict.json")).read_text())
    assert verdict["outcome"] == "invalid"
    progress = verdict["details"]["progress"]  # how far it got: the records of both workers
    assert 0 < progress["answered"] < progress["planned"], progress
    time.sleep(0.5)
    assert not _alive(str(reports)), "a Locust process outlived the campaign"


def test_a_worker_that_cannot_read_its_profile_stops_and_the_run_is_invalid(
    sandbox: Path, tmp_path: Path
) -> None:
    """A worker on another host whose profile is missing or unreadable says so in one line,
    sends nothing when handed the plan and leaves (exit 2) instead of failing every request of
    its share; the master's run is invalid and says no record came, never a pass."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    locust = [sys.executable, "-m", "locust", "-f", "loadtests/burst.py"]
    master = subprocess.Popen(
        [*locust, "--master", "--headless", "--expect-workers", "1",
         "--expect-workers-max-wait", "30", "-u", "2", "-r", "2", "--run-time", "10s",
         "--master-bind-host", "127.0.0.1", "--master-bind-port", str(port),
         "--target-profile", str(sandbox), "--declared-scale", SCALE,
         "--report-dir", str(tmp_path / "report")],
        cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        worker = subprocess.run(
            [*locust, "--worker", "--master-host", "127.0.0.1", "--master-port", str(port),
             "--target-profile", str(tmp_path / "missing.toml")],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        master.wait(timeout=60)
    finally:
        if master.poll() is None:
            master.kill()
            master.wait(10)
    ours = [line for line in worker.stderr.splitlines() if line.startswith("load: ")]
    assert worker.returncode == 2, worker.stderr[-1500:]
    assert len(ours) == 1 and "missing.toml" in ours[0] and "Traceback" not in worker.stderr
    assert master.returncode == 3
    verdict = json.loads((tmp_path / "report" / "verdict.json").read_text())
    assert verdict["outcome"] == "invalid"
    assert not verdict["generator"]["valid"]
    assert "reached" in verdict["generator"]["reason"]
