"""The README's release-gate example runs as written (issue 28, "Done when").

The `run:` steps of the workflow between `<!-- ci:gate:start -->` and `<!-- ci:gate:end -->` run
as GitHub runs them (`bash -e -o pipefail`, in order, with the job's `env:`; after a failed step
only the steps marked `if: always()` or `if: failure()`), in a workspace holding what
README.md > A release gate tells a team to commit: the last release's OpenAPI document and
results.json, and a known-failures file. The install step is left out (it installs from the
network; the tool under test is on PATH, installed from the same lock by `make install`:
tests/harness/test_lock.py). Scaled down like the CI example (tests/harness/test_readme_ci.py):
`PYTEST_ADDOPTS=-k test_config`.

Three servers: one with a known violation (the gate opens: every step exit 0), one that adds a
new violation (the run and the comparison close it, exit 1), and a contract change that removes
an operation (contract-diff closes it before the suite runs).
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import subprocess
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_readme_ci import BIN, ROOT, STEP_TIMEOUT, example, job_environment, run_steps

from delivery_conformance.target.embedded import EmbeddedSandbox

KNOWN = "cors_header_sent"  # GEN-002, listed in the known-failures file
NEW = "config_docs_link_missing"  # a violation the last release did not have


def gate_job() -> dict[str, Any]:
    jobs = example("gate")["jobs"]
    assert len(jobs) == 1
    job: dict[str, Any] = next(iter(jobs.values()))
    return job


def known_failures(today: dt.date) -> str:
    until = today + dt.timedelta(days=365)
    return (
        '[[expected]]\nrequirement = "GEN-002"\n'
        'reason = "the CDN adds CORS headers; removal tracked as OPS-7"\n'
        f"expires = {until.isoformat()}\n"
    )


def committed(workspace: Path, last_results: Path, openapi: dict[str, Any]) -> None:
    """What a team commits (README.md > A release gate), laid out in `workspace`."""
    release = workspace / "conformance" / "last-release"
    release.mkdir(parents=True)
    shutil.copy(ROOT / "spec" / "openapi.yaml", release / "openapi.yaml")
    shutil.copy(last_results, release / "results.json")
    (workspace / "openapi.yaml").write_text(yaml.safe_dump(openapi, sort_keys=False))
    (workspace / "conformance" / "known-failures.toml").write_text(
        known_failures(dt.datetime.now(dt.UTC).date())
    )


def run_job(job: dict[str, Any], env: dict[str, str], workspace: Path) -> list[tuple[str, int]]:
    """(step name, exit code) of each `run:` step that ran, with GitHub's `if:` rules."""
    ran: list[tuple[str, int]] = []
    failed = False
    for step in run_steps(job):
        condition = str(step.get("if", "success()"))
        if not (condition == "always()" or (condition == "failure()") == failed):
            continue
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-e", "-o", "pipefail", "-c", step["run"]],
            check=False, cwd=workspace, env=env, capture_output=True, text=True,
            timeout=STEP_TIMEOUT,
        )  # fmt: skip
        ran.append((str(step["name"]), done.returncode))
        failed = failed or done.returncode != 0
    return ran


@pytest.fixture(scope="module")
def last_release(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """results.json of the last release: the server with the known violation, gated the same
    way."""
    where = tmp_path_factory.mktemp("last-release")
    known = where / "known-failures.toml"
    known.write_text(known_failures(dt.datetime.now(dt.UTC).date()))
    with EmbeddedSandbox(faults=[KNOWN]) as profile:
        done = subprocess.run(
            [str(BIN / "delivery-conformance"), "run", "--target", str(profile), "-k",
             "test_config", "--no-properties", "--expected-failures", str(known),
             "--report-dir", str(where / "reports")],
            check=False, capture_output=True, text=True, timeout=STEP_TIMEOUT,
        )  # fmt: skip
    assert done.returncode == 0, done.stdout[-1500:] + done.stderr[-500:]
    yield where / "reports" / "latest" / "results.json"


def spec() -> dict[str, Any]:
    loaded = yaml.safe_load((ROOT / "spec" / "openapi.yaml").read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def without_an_operation(document: dict[str, Any]) -> dict[str, Any]:
    path = next(p for p in document["paths"] if p.endswith("/creatives"))
    del document["paths"][path]
    return document


@pytest.mark.parametrize(
    ("faults", "openapi", "due"),
    [
        ((KNOWN,), spec, {"The contract stays additive": 0,
                          "Run the suite, known failures accepted until their date": 0,
                          "Compare with the last release": 0}),
        ((KNOWN, NEW), spec, {"The contract stays additive": 0,
                              "Run the suite, known failures accepted until their date": 1,
                              "Compare with the last release": 1}),
        ((KNOWN,), lambda: without_an_operation(spec()),
         {"The contract stays additive": 1, "Compare with the last release": 2}),
    ],
    ids=["known-violation-passes", "new-violation-closes", "breaking-contract-closes"],
)  # fmt: skip
def test_the_release_gate_example_runs_as_written(
    faults: tuple[str, ...], openapi: Any, due: dict[str, int], last_release: Path,
    tmp_path: Path,
) -> None:  # fmt: skip
    job = gate_job()
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    committed(workspace, last_release, openapi())
    with EmbeddedSandbox(faults=list(faults)) as profile:
        keys = [str(k) for k in tomllib.loads(profile.read_text(encoding="utf-8"))["keys"].values()]
        env = job_environment(job, profile, workspace)
        ran = run_job(job, env, workspace)
    assert dict(ran) == due, ran
    summary = (workspace / "step_summary.md").read_text(encoding="utf-8")
    assert keys and not any(key in summary for key in keys)
    if "Run the suite, known failures accepted until their date" not in due:
        return
    latest = workspace / "reports" / "latest"
    results = json.loads((latest / "results.json").read_text(encoding="utf-8"))
    gen = next(r for r in results["requirements"] if r["id"] == "GEN-002")
    assert gen["status"] == "warning" and gen["expected"]["state"] == "held"
    assert "conformance: CONFORMING WITH WARNINGS" in summary or len(faults) > 1
    har = json.loads((workspace / "reports" / "latest-exchanges.har").read_text())
    assert len(har["log"]["entries"]) == results["run"]["exchanges"]["total"] > 0
    assert not any(key in json.dumps(har) for key in keys)
    assert (latest / "compare.html").is_file()
    if len(faults) > 1:
        assert "curl " in summary, "a new finding carries its curl line in the step summary"
