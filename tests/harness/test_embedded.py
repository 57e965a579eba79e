import sys
import time
from pathlib import Path

import httpx
import pytest

from delivery_conformance.exceptions import HarnessFailure
from delivery_conformance.target.embedded import EmbeddedSandbox, sandbox_command
from delivery_conformance.target.profile import load_profile

FAKE = str(Path(__file__).with_name("fake_sandbox.py"))


def fake(mode: str) -> list[str]:
    return [sys.executable, FAKE, "--host", "127.0.0.1", "--port", "0",
            "--profile-out", "{profile}", "--mode", mode]  # fmt: skip


def test_launcher_command_runs_the_sandbox_module_on_a_free_loopback_port(tmp_path: Path) -> None:
    command = sandbox_command(tmp_path / "p.toml", ["no_cache_control"])
    assert command[1:3] == ["-m", "delivery_sandbox"]
    assert command[command.index("--port") + 1] == "0"
    assert command[command.index("--host") + 1] == "127.0.0.1"
    assert command[command.index("--versions") + 1] == "extended"
    assert command[-2:] == ["--fault", "no_cache_control"]


def test_launcher_waits_for_the_profile_and_config_then_stops_the_process() -> None:
    sandbox = EmbeddedSandbox(command=fake("good"))
    with sandbox as profile_path:
        profile = load_profile(profile_path)
        assert httpx.get(profile.base_url + "/api/delivery/v1/config").status_code == 200
        process = sandbox._process
        assert process is not None and process.poll() is None
    assert process.poll() is not None
    assert not profile_path.exists()  # temporary directory removed


def test_launcher_reports_a_sandbox_that_exits_with_its_last_line() -> None:
    with pytest.raises(HarnessFailure, match="exited with code 4: fake sandbox: cannot bind"):
        EmbeddedSandbox(command=fake("exit")).start()


def test_launcher_gives_up_after_its_time_limit_and_kills_the_process() -> None:
    sandbox = EmbeddedSandbox(command=fake("mute"), startup_timeout=1.0)
    started = time.monotonic()
    with pytest.raises(HarnessFailure, match="not ready within 1 s"):
        sandbox.start()
    assert time.monotonic() - started < 10
    assert sandbox._process is None


def test_launcher_reports_a_command_that_cannot_start() -> None:
    with pytest.raises(HarnessFailure, match="cannot start"):
        EmbeddedSandbox(command=["/nonexistent/python-xyz"]).start()
