import importlib
import socket
import subprocess
import sys
from argparse import ArgumentParser
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from harness_support import PROFILE_TEXT, run_results, write_profile

from cli_help import undocumented
from delivery_conformance import cli
from delivery_conformance.target.embedded import EmbeddedSandbox
from delivery_conformance.target.profile import load_profile

FAKE = str(Path(__file__).with_name("fake_sandbox.py"))
ROOT = Path(__file__).resolve().parents[2]


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def fake_target(mode: str) -> EmbeddedSandbox:
    return EmbeddedSandbox(
        command=[sys.executable, FAKE, "--profile-out", "{profile}", "--mode", mode]
    )


@pytest.fixture
def html_target() -> Iterator[Path]:
    with fake_target("html") as profile_path:
        yield profile_path


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1, text
    assert "Traceback" not in text
    return lines[0]


def test_check_profile_accepts_a_good_profile(tmp_path: Path, capsys) -> None:
    assert cli.main(["check-profile", str(write_profile(tmp_path))]) == 0
    out = capsys.readouterr().out
    assert "profile OK" in out and "films, videos" in out and "svc_live_" not in out


def test_check_profile_refuses_a_broken_profile_with_exit_2(tmp_path: Path, capsys) -> None:
    path = write_profile(tmp_path, 'base_url = "http://x/api"\n')
    assert cli.main(["check-profile", str(path)]) == 2
    assert "no path or query" in one_line(capsys.readouterr().err)


def test_run_with_a_broken_profile_exits_2(tmp_path: Path, capsys) -> None:
    path = write_profile(tmp_path, "[keys\n")
    assert cli.main(["run", "--target", str(path), "--report-dir", str(tmp_path)]) == 2
    assert "not valid TOML" in one_line(capsys.readouterr().err)


def test_advance_clock_runs_one_scenario_at_a_time(tmp_path: Path, capsys) -> None:
    argv = ["run", "--advance-clock", "--workers", "2", "--report-dir", str(tmp_path)]
    assert cli.main(argv) == 2
    assert "one scenario at a time" in one_line(capsys.readouterr().err)


def test_advance_clock_needs_a_target_with_an_admin_api(tmp_path: Path, capsys) -> None:
    path = write_profile(tmp_path, PROFILE_TEXT.split("[admin]")[0])
    argv = ["run", "--advance-clock", "--target", str(path), "--report-dir", str(tmp_path)]
    assert cli.main(argv) == 2
    assert "[admin]" in one_line(capsys.readouterr().err)
    assert not list(tmp_path.rglob("results.json"))


def test_run_against_a_closed_port_exits_3_and_reports_nothing(tmp_path: Path, capsys) -> None:
    text = PROFILE_TEXT.replace("127.0.0.1:9", f"127.0.0.1:{closed_port()}")
    path = write_profile(tmp_path, text)
    assert cli.main(["run", "--target", str(path), "--report-dir", str(tmp_path / "r")]) == 3
    assert "cannot reach" in one_line(capsys.readouterr().err)
    assert not list((tmp_path / "r").rglob("results.json"))


def test_run_against_an_html_server_exits_3(html_target: Path, tmp_path: Path, capsys) -> None:
    assert cli.main(["run", "--target", str(html_target), "--report-dir", str(tmp_path)]) == 3
    assert "not JSON" in one_line(capsys.readouterr().err)


def test_bad_arguments_exit_2_in_one_line(capsys) -> None:
    with pytest.raises(SystemExit) as caught:
        cli.main(["run", "--seed", "abc"])
    assert caught.value.code == 2
    assert "not a whole number" in one_line(capsys.readouterr().err)


@pytest.mark.parametrize("value", ["0", "33", "two"])
def test_a_bad_worker_count_exits_2_in_one_line(value: str, capsys) -> None:
    with pytest.raises(SystemExit) as caught:
        cli.main(["run", "--workers", value])
    assert caught.value.code == 2
    line = one_line(capsys.readouterr().err)
    assert "workers" in line or "whole number" in line


def test_run_with_no_suite_installed_is_a_harness_error_not_a_pass(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    monkeypatch.setattr(cli, "suite_paths", lambda options: [])
    path = write_profile(tmp_path)
    assert cli.main(["run", "--target", str(path)]) == 3
    assert "no conformance suite found" in one_line(capsys.readouterr().err)


@pytest.mark.parametrize(
    ("selector", "said"),
    [("PLAY-0120", "did you mean PLAY-020"), ("CAT-9*", "matches no requirement ID")],
)
def test_a_selector_matching_nothing_exits_2_before_any_target(
    tmp_path: Path, capsys, selector: str, said: str
) -> None:
    path = write_profile(tmp_path)
    assert cli.main(["run", "--target", str(path), "--requirement", selector]) == 2
    assert said in one_line(capsys.readouterr().err)


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "delivery_conformance.cli", *args],
        capture_output=True, text=True, timeout=240, cwd=ROOT, check=False,
    )  # fmt: skip


@pytest.mark.slow
def test_run_against_a_server_without_the_common_headers_exits_1(tmp_path: Path) -> None:
    with fake_target("good") as profile_path:
        done = run_cli("run", "--target", str(profile_path), "--report-dir", str(tmp_path),
                       "--requirement", "AUTH-031", "--no-properties", "--no-pacing")  # fmt: skip
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    assert "VIOLATIONS FOUND" in done.stdout
    results = run_results(tmp_path)
    by_id = {r["id"]: r for r in results["requirements"]}
    failed = by_id["HDR-003"]  # no Service-Version from the fake server
    assert failed["status"] == "failed"
    assert failed["violations"][0]["exchange"]["request_headers"]["authorization"].endswith(
        "…[redacted]"
    )
    (run_dir,) = [p for p in tmp_path.iterdir() if p.name != "latest"]
    assert (run_dir / "junit.xml").exists() and (run_dir / "report.html").exists()


@pytest.mark.slow
def test_run_against_the_embedded_sandbox_ends_with_a_verdict(tmp_path: Path) -> None:
    done = run_cli("run", "--report-dir", str(tmp_path), "--requirement", "AUTH-031",
                   "--no-properties")  # fmt: skip
    assert done.returncode in (0, 1), done.stdout[-2000:] + done.stderr[-2000:]
    assert "report:" in done.stdout
    data = run_results(tmp_path)
    assert data["run"]["tests"]["passed"] + data["run"]["tests"]["failed"] >= 1
    assert data["run"]["pacing"] is False


def test_run_uses_the_fixed_default_seed_unless_told_otherwise() -> None:
    from delivery_conformance.suite.runner import DEFAULT_SEED

    assert cli.parser().parse_args(["run"]).seed == DEFAULT_SEED
    assert cli.parser().parse_args(["run", "--seed", "7"]).seed == 7


def test_run_without_target_reads_delivery_target(tmp_path: Path, capsys, monkeypatch) -> None:
    text = PROFILE_TEXT.replace("127.0.0.1:9", f"127.0.0.1:{closed_port()}")
    monkeypatch.setenv("DELIVERY_TARGET", str(write_profile(tmp_path, text)))
    assert cli.main(["run", "--report-dir", str(tmp_path / "r")]) == 3
    assert "cannot reach" in one_line(capsys.readouterr().err)


@pytest.mark.slow
def test_key_variables_of_the_user_never_replace_the_embedded_sandbox_keys(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("DELIVERY_KEY_FILMS", "svc_live_" + "Zz" * 16)
    done = run_cli("run", "--report-dir", str(tmp_path), "--requirement", "CFG-001",
                   "--no-properties")  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert run_results(tmp_path)["run"]["verdict_word"] == "CONFORMING"


@pytest.mark.slow
@pytest.mark.parametrize("keys", [{"films": True}, {}], ids=["films key only", "no key"])
def test_a_minimal_profile_is_partial_never_conforming(tmp_path: Path, keys: dict) -> None:
    """base_url and one key (or none): most requirements cannot be exercised -> PARTIAL, exit 4,
    with what was missing; never CONFORMING, never exit 0."""
    with EmbeddedSandbox() as full:
        data = load_profile(full, environ={})
        text = f'base_url = "{data.base_url}"\n'
        if keys:
            text += f'[keys]\nfilms = "{data.keys["films"]}"\n'
        minimal = write_profile(tmp_path, text)
        done = run_cli("run", "--target", str(minimal), "--no-properties", "--no-pacing",
                       "--report-dir", str(tmp_path / "r"))  # fmt: skip
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    assert "PARTIAL:" in done.stdout and "CONFORMING" not in done.stdout
    assert "not exercised for lack of (requirements):" in done.stdout
    run = run_results(tmp_path / "r")["run"]
    assert run["verdict_word"] == "PARTIAL" and run["coverage"]["percent"] < 50
    assert run["coverage"]["not_exercised"]


def test_latency_proxy_is_a_subcommand_with_its_own_options(capsys) -> None:
    assert cli.main(["latency-proxy", "--upstream", "http://10.0.0.1:80"]) == 2
    assert "loopback" in one_line(capsys.readouterr().err)


@pytest.mark.parametrize(
    "module, name",
    [
        ("delivery_conformance.cli", "parser"),
        ("delivery_conformance.target.latency", "_parser"),
        ("loadtests.run", "parser"),
        ("loadtests.compare", "parser"),
    ],
)
def test_every_option_of_every_command_has_help_text(
    monkeypatch: pytest.MonkeyPatch, module: str, name: str
) -> None:
    monkeypatch.syspath_prepend(str(ROOT))  # loadtests/ is a folder of the checkout
    parser: Callable[[], ArgumentParser] = getattr(importlib.import_module(module), name)
    assert list(undocumented(parser())) == []
