"""`certify-client` and `proxy` from the command line: the scaled-down certification (the
reference client and seven broken clients on the quick scenarios) and bad input: a plan with
unknown keys, a missing, hanging, failing or silent flow command, a down upstream. Each ends
with one line and a distinct exit code or a failed requirement, fast, and never a certificate.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from delivery_conformance.certify.certificate import write_certificate
from delivery_conformance.certify.runner import Upstream, embedded_upstream
from delivery_conformance.target.embedded import EmbeddedSandbox
from delivery_conformance.target.profile import load_profile

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent
ENV = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
SYNC = "delivery-client --state {state}/c.sqlite sync-catalog"  # the reference client's flow


def catalog_plan(command: str, head: str = "") -> str:
    """A plan whose one flow, `catalog`, runs `command` (`head`: top-level plan keys)."""
    return f'{head}[flows]\ncatalog = "{command}"\n'


QUICK_VARIANTS = ["retries_4xx", "stops_on_short_page", "resends_whole_batch",
                  "logs_play_token", "crashes_on_unknown_field",
                  "sends_browser_headers", "crashes_on_odd_cursor"]  # fmt: skip


@pytest.fixture(scope="module")
def upstream() -> Iterator[Upstream]:
    with EmbeddedSandbox() as profile_path:
        yield embedded_upstream(load_profile(profile_path, environ={}))


def certify(tmp_path: Path, plan: str, *args: str, upstream: Upstream | None = None,
            timeout: float = 120) -> tuple[subprocess.CompletedProcess[str], float]:  # fmt: skip
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "plan.toml"
    path.write_text(plan, encoding="utf-8")
    env = dict(ENV)
    extra: list[str] = []
    if upstream is not None:
        env["CERT_KEY"] = upstream.keys["catalog"]
        extra = ["--upstream", upstream.base_url, "--key-env", "CERT_KEY"]
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "delivery_conformance.cli", "certify-client", "--plan", str(path),
         "--report-dir", str(tmp_path / "reports"), *extra, *args],
        env=env, capture_output=True, text=True, timeout=timeout,
    )  # fmt: skip
    return done, time.monotonic() - started


def results(tmp_path: Path) -> dict:  # type: ignore[type-arg]
    found = sorted((tmp_path / "reports").glob("*/results.json"))
    return json.loads(found[-1].read_text(encoding="utf-8"))


def no_certificate(tmp_path: Path) -> bool:
    return not list((tmp_path / "reports").glob("*/certificate"))


def test_the_scaled_down_certification_passes_the_reference_and_catches_seven_broken() -> None:
    done = subprocess.run(
        [sys.executable, str(HERE / "broken_clients" / "killrate.py"), "--set", "quick",
         "--jobs", "2", "--clean-runs", "1",
         *[a for v in QUICK_VARIANTS for a in ("--variant", v)]],
        env=ENV, capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "kill rate 7/7 broken clients caught with exact blame" in done.stdout
    assert "| reference (run 1) | none | none (clean) | none | yes |" in done.stdout


def test_a_plan_with_unknown_keys_is_a_usage_error(tmp_path: Path) -> None:
    done, seconds = certify(tmp_path, '[flows]\ncatalog = "x"\n[extras]\n')
    assert done.returncode == 2 and seconds < 15
    assert done.stderr.strip().count("\n") == 0 and "unknown keys extras" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_flow_command_the_shell_cannot_find_is_a_usage_error(
    tmp_path: Path, upstream: Upstream
) -> None:
    plan = catalog_plan("no-such-client-6f3a sync-catalog")
    done, _ = certify(tmp_path, plan, "--scenario", "no-retry-400", upstream=upstream)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "the shell cannot run it (exit 127)" in done.stderr and "Traceback" not in done.stderr


def test_a_hanging_flow_is_killed_at_the_plan_timeout_and_fails(
    tmp_path: Path, upstream: Upstream
) -> None:
    plan = catalog_plan("sleep 30", head="timeout = 2\n")
    done, seconds = certify(tmp_path, plan, "--scenario", "no-retry-400", upstream=upstream)
    assert done.returncode == 1 and seconds < 20, done.stdout + done.stderr
    found = [v["title"] for v in results(tmp_path)["unattributed_findings"]]
    assert found == ["flow catalog did not finish"] and no_certificate(tmp_path)


def test_a_client_that_never_calls_fails(tmp_path: Path, upstream: Upstream) -> None:
    done, _ = certify(tmp_path, '[flows]\ncatalog = "true"\n', "--scenario", "no-retry-400",
                      upstream=upstream)  # fmt: skip
    assert done.returncode == 1
    document = results(tmp_path)
    assert [v["title"] for v in document["unattributed_findings"]] == [
        "flow catalog made no request"]  # fmt: skip
    cli012 = next(r for r in document["requirements"] if r["id"] == "CLI-012")
    assert cli012["status"] == "not exercised"  # never "passed"


def test_a_flow_failing_where_it_must_succeed_fails_the_run(
    tmp_path: Path, upstream: Upstream
) -> None:
    plan = catalog_plan(f"{SYNC}; exit 9")
    done, _ = certify(tmp_path, plan, "--scenario", "retry-connection-reset", upstream=upstream)
    assert done.returncode == 1
    titles = [v["title"] for v in results(tmp_path)["unattributed_findings"]]
    assert titles == ["flow catalog failed"]


def test_the_plans_per_item_failure_exit_is_accepted_only_where_an_item_is_refused(
    tmp_path: Path, upstream: Upstream
) -> None:
    # a client that handles the refused item and says so with exit 1, as its plan declares
    flow = 'playback_batch = "delivery-client play {episode} {episode_2} && exit 1"\n'
    flow += "[vars]\n" + "".join(f'{k} = "{v}"\n' for k, v in upstream.vars.items())
    scenarios = ("--scenario", "batch-unknown-reason", "--scenario", "batch-failed-item")
    declared = f"per_item_failure_exit = 1\n[flows]\n{flow}"
    done, _ = certify(tmp_path / "a", declared, *scenarios, upstream=upstream)
    document = results(tmp_path / "a")
    status = {r["id"]: r["status"] for r in document["requirements"]}
    assert status["PLAY-084"] == "passed", done.stdout
    # where no item is refused, 1 is not success: the flow failed
    assert [v["title"] for v in document["unattributed_findings"]] == [
        "flow playback_batch failed"]  # fmt: skip
    done, _ = certify(tmp_path / "b", f"[flows]\n{flow}", "--scenario", "batch-unknown-reason",
                      upstream=upstream)  # fmt: skip
    document = results(tmp_path / "b")
    # undeclared, 1 is no success: the flow failed (the named reason too, so not PLAY-084's)
    assert done.returncode == 1, done.stdout
    assert {v["title"] for v in document["unattributed_findings"]} == {
        "flow playback_batch failed"}  # fmt: skip


def test_a_reader_that_leaves_early_ends_the_command_quietly(
    tmp_path: Path, upstream: Upstream
) -> None:
    """`certify-client ... | head -1`: no BrokenPipeError traceback, exit 141 (128 + SIGPIPE)."""
    plan = tmp_path / "plan.toml"
    plan.write_text(catalog_plan(SYNC), encoding="utf-8")
    env = {**ENV, "CERT_KEY": upstream.keys["catalog"]}
    process = subprocess.Popen(
        [sys.executable, "-m", "delivery_conformance.cli", "certify-client", "--plan", str(plan),
         "--upstream", upstream.base_url, "--key-env", "CERT_KEY", "--scenario", "no-retry-4*",
         "--report-dir", str(tmp_path / "r")],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    assert process.stdout is not None and process.stderr is not None
    first = process.stdout.readline()
    process.stdout.close()  # as `head -1` does after its line
    code = process.wait(timeout=120)
    with process.stderr:
        stderr = process.stderr.read().decode()
    assert first.startswith(b"certify-client:")
    assert (code, stderr) == (141, ""), stderr


def test_a_down_upstream_is_a_harness_error_in_one_line(tmp_path: Path) -> None:
    env = {**ENV, "CERT_KEY": "svc_live_notakey"}
    plan = tmp_path / "plan.toml"
    plan.write_text('[flows]\ncatalog = "true"\n', encoding="utf-8")
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "delivery_conformance.cli", "certify-client", "--plan", str(plan),
         "--upstream", "http://127.0.0.1:9", "--key-env", "CERT_KEY",
         "--report-dir", str(tmp_path / "r")],
        env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 3 and time.monotonic() - started < 15
    assert "does not answer" in done.stderr and done.stderr.strip().count("\n") == 0


def test_an_expected_failure_is_a_warning_and_fails_when_it_does_not_happen(
    tmp_path: Path, upstream: Upstream
) -> None:
    expected = tmp_path / "expected.toml"
    expected.write_text('[[expected]]\nscenario = "no-retry-400"\nrequirement = "CLI-012"\n'
                        'reason = "known: retries every 4xx until release 2"\n')  # fmt: skip
    broken = f"{sys.executable} {HERE / 'broken_clients' / 'broken_client.py'} retries_4xx"
    plan = catalog_plan(f"{broken} --state {{state}}/c.sqlite sync-catalog")
    done, _ = certify(tmp_path / "a", plan, "--scenario", "no-retry-400",
                      "--expected-failures", str(expected), upstream=upstream)  # fmt: skip
    assert done.returncode == 0 and "CONFORMING WITH WARNINGS" in done.stdout, done.stdout
    clean = catalog_plan(SYNC)
    done, _ = certify(tmp_path / "b", clean, "--scenario", "no-retry-400",
                      "--expected-failures", str(expected), upstream=upstream)  # fmt: skip
    assert done.returncode == 1
    failed = [r for r in results(tmp_path / "b")["requirements"] if r["status"] == "failed"]
    assert [(r["id"], r["violations"][0]["title"]) for r in failed] == [
        ("CLI-012", "an expected failure did not happen")]  # fmt: skip


def test_the_certificate_bundle_hashes_its_files_and_redacts_the_journal(
    tmp_path: Path, upstream: Upstream
) -> None:
    plan = catalog_plan(SYNC)
    done, _ = certify(tmp_path, plan, "--scenario", "no-retry-400", upstream=upstream)
    assert done.returncode == 0
    assert "no certificate: only a run of the whole catalogue" in done.stdout
    run_dir = sorted((tmp_path / "reports").glob("*"))[-1]
    document = results(tmp_path)
    journals = sorted((run_dir / "journal").glob("*.jsonl"))
    key = upstream.keys["catalog"]
    bundle = write_certificate(tmp_path / "cert", document, run_dir / "results.json", plan,
                               "reference client", journals, [key])  # fmt: skip
    certificate = json.loads((bundle / "certificate.json").read_text())
    assert set(certificate["sha256"]) >= {"results.json", "plan.toml",
                                          "journal/no-retry-400.jsonl"}  # fmt: skip
    line = (bundle / "SUMMARY.txt").read_text().strip()
    assert line.startswith("reference client: CONFORMING") and "1 passed, 0 failed" in line
    assert upstream.keys["catalog"] not in (bundle / "journal/no-retry-400.jsonl").read_text()


def test_the_proxy_command_has_help_on_every_option() -> None:
    done = subprocess.run([sys.executable, "-m", "delivery_conformance.cli", "proxy", "--help"],
                          env=ENV, capture_output=True, text=True, timeout=30)  # fmt: skip
    assert done.returncode == 0
    for option in ("--upstream", "--port", "--journal", "--scenario", "--max-duration"):
        assert option in done.stdout
