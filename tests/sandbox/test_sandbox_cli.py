"""The command line: profile written once listening, clean exit, one-line errors (exit 2)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import tomllib
import urllib.request
from pathlib import Path

import pytest

from cli_help import undocumented
from delivery_sandbox.cli import parser


def test_cli_serves_and_writes_the_profile(tmp_path: Path) -> None:
    profile = tmp_path / "sandbox.toml"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "delivery_sandbox",
            "--port",
            "0",
            "--profile-out",
            str(profile),
            "--versions",
            "extended",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while not profile.exists() and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        data = tomllib.loads(profile.read_text())
        assert data["base_url"].startswith("http://127.0.0.1:")
        assert data["test_organisation"] is True and data["bare_host"] == "delivery.sandbox"
        assert all(k.startswith("svc_live_") and len(k) == 41 for k in data["keys"].values())
        assert {"retired_pin", "deprecated_pin", "unverifiable"} <= set(data["keys"])
        assert data["fixtures"]["retired_version"] == "2026-05-01"
        request = urllib.request.Request(
            data["base_url"] + "/api/delivery/v1/config",
            headers={"Authorization": f"Bearer {data['keys']['films']}"},
        )
        with urllib.request.urlopen(request, timeout=5) as response:  # loopback only
            assert response.status == 200
            assert response.headers["Service-API-Status"] == "beta"
        assert oct(os.stat(profile).st_mode & 0o777) == "0o600"
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0


@pytest.mark.parametrize(
    "args",
    [
        ["--fault", "no_such_fault"],
        ["--versions", "old"],
        ["--limits-scale", "0"],
        ["--port", "http"],
    ],
)
def test_bad_arguments_give_one_line_and_exit_2(args: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "delivery_sandbox", *args],
        capture_output=True,
        text=True,
        timeout=20,
    )
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_the_banner_says_where_to_call_and_where_the_profile_is(tmp_path: Path) -> None:
    profile = tmp_path / "sandbox.toml"
    with subprocess.Popen(
        [sys.executable, "-m", "delivery_sandbox", "--port", "0", "--profile-out", str(profile),
         "--fault", "cookie_set"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    ) as process:  # fmt: skip
        try:
            lines = [process.stdout.readline() for _ in range(5)]
        finally:
            process.terminate()
            process.wait(timeout=10)
    text = "".join(lines)
    data = tomllib.loads(profile.read_text())
    assert f"Delivery API v1 at {data['base_url']}/api/delivery/v1/" in text
    assert f"{data['base_url']}/_sandbox/" in text and str(profile) in text
    assert "faults: cookie_set" in text
    assert data["admin"]["token"] not in text
    assert not any(key in text for key in data["keys"].values())


def test_every_option_has_help_text() -> None:
    assert list(undocumented(parser())) == []
