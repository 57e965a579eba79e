"""The README's GitHub Actions example runs as written (issue 16, "Done when").

The `run:` steps of the workflow between `<!-- ci:github:start -->` and `<!-- ci:github:end -->`
in README.md are executed with GitHub's shell (`bash -e -o pipefail`), in order, with the job's
`env:`, against a sandbox started on its own port: `DELIVERY_TARGET` names the profile the
sandbox wrote and each `${{ secrets.DELIVERY_KEY_<ROLE> }}` is that role's sandbox key, so the
override path is used too. Only the step named "Install the tool" is left out (it installs from
the network; the tool under test is already on PATH from .venv). Scaled down for `make test`:
`PYTEST_ADDOPTS=-k test_config` (read by pytest itself, not by the example) narrows the suite to
the /config scenarios (about 10 s a run). A clean sandbox must end CONFORMING (exit 0) and a
sandbox with a fault VIOLATIONS FOUND (exit 1), each leaving junit.xml and the step summary.
The GitLab example must carry the same commands.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
BIN = Path(sys.executable).parent
EXPRESSION = re.compile(r"\$\{\{\s*(secrets|vars)\.([A-Za-z0-9_]+)\s*\}\}")
STEP_TIMEOUT = 120  # seconds per step; a scaled-down run takes about 10 s


def example(name: str) -> dict[str, Any]:
    text = README.read_text(encoding="utf-8")
    block = text.split(f"<!-- ci:{name}:start -->", 1)[1].split(f"<!-- ci:{name}:end -->", 1)[0]
    body = block.split("```yaml\n", 1)[1].rsplit("```", 1)[0]
    loaded = yaml.safe_load(body)
    assert isinstance(loaded, dict)
    return loaded


def github_job() -> dict[str, Any]:
    jobs = example("github")["jobs"]
    assert len(jobs) == 1
    job: dict[str, Any] = next(iter(jobs.values()))
    return job


def run_steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    steps = [step for step in job["steps"] if "run" in step]
    install = [step for step in steps if step.get("name") == "Install the tool"]
    assert len(install) == 1 and install[0]["run"].startswith("pip install ")
    return [step for step in steps if step is not install[0]]


@pytest.fixture
def sandbox(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    """A sandbox on its own port (any free one); yields the profile it wrote."""
    profile = tmp_path / "sandbox.toml"
    faults = [arg for name in request.param for arg in ("--fault", name)]
    process = subprocess.Popen(
        [str(BIN / "delivery-sandbox"), "--host", "127.0.0.1", "--port", "0",
         "--versions", "extended", "--profile-out", str(profile), *faults],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while not profile.exists():
            assert process.poll() is None, "the sandbox ended before writing its profile"
            assert time.monotonic() < deadline, "the sandbox wrote no profile within 30 s"
            time.sleep(0.1)
        yield profile
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def job_environment(job: dict[str, Any], profile: Path, workspace: Path) -> dict[str, str]:
    keys = tomllib.loads(profile.read_text(encoding="utf-8"))["keys"]

    def value(match: re.Match[str]) -> str:
        kind, name = match.groups()
        if kind == "secrets" and name.startswith("DELIVERY_KEY_"):
            return str(keys[name.removeprefix("DELIVERY_KEY_").lower()])
        return "http://unused.invalid"

    env = {k: v for k, v in os.environ.items() if not k.startswith(("DELIVERY_", "PYTEST_"))}
    env.update({name: EXPRESSION.sub(value, str(text)) for name, text in job["env"].items()})
    assert "DELIVERY_TARGET" in env, "the example must take its target from DELIVERY_TARGET"
    env["DELIVERY_TARGET"] = str(profile)
    env["GITHUB_STEP_SUMMARY"] = str(workspace / "step_summary.md")
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["PYTEST_ADDOPTS"] = "-k test_config"
    return env


@pytest.mark.parametrize(
    ("sandbox", "exit_code", "verdict"),
    [((), 0, "CONFORMING"), (("cors_header_sent",), 1, "VIOLATIONS FOUND")],
    indirect=["sandbox"],
    ids=["clean", "fault"],
)
def test_the_github_example_runs_as_written(
    sandbox: Path, tmp_path: Path, exit_code: int, verdict: str
) -> None:
    job = github_job()
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    env = job_environment(job, sandbox, workspace)
    codes = []
    for step in run_steps(job):
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-e", "-o", "pipefail", "-c", step["run"]],
            check=False, cwd=workspace, env=env, capture_output=True, text=True,
            timeout=STEP_TIMEOUT,
        )  # fmt: skip
        codes.append(done.returncode)
        if done.returncode != 0:
            break  # GitHub stops the job at the first failing step
    assert codes == [0] * (len(codes) - 1) + [exit_code], done.stderr[-2000:]
    assert len(codes) == len(run_steps(job))
    junit = workspace / "reports" / "latest" / "junit.xml"
    assert junit.is_file() and "<testsuite" in junit.read_text(encoding="utf-8")
    summary = (workspace / "step_summary.md").read_text(encoding="utf-8")
    assert f"conformance: {verdict}\n" in summary
    assert not any(
        str(key) in summary for key in tomllib.loads(sandbox.read_text())["keys"].values()
    )


def test_the_gitlab_example_runs_the_same_commands() -> None:
    github = [" ".join(step["run"].split()) for step in run_steps(github_job())]
    script = example("gitlab")["conformance"]["script"]
    assert script[0].startswith("pip install ")
    gitlab = [" ".join(line.split()) for line in script[1:]]
    assert gitlab == [line.replace('"$GITHUB_STEP_SUMMARY"', "summary.md") for line in github]
