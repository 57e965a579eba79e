"""The embedded target: the sandbox started as a subprocess, never imported.

    with EmbeddedSandbox(faults=["no_cache_control"]) as profile_path:
        ...   # a target profile written by the sandbox, ready to load

Start: `python -m delivery_sandbox --host 127.0.0.1 --port 0 --profile-out <tmp> --versions
extended [--fault NAME ...]`, then wait (bounded) until the profile file parses and
`GET /api/delivery/v1/config` answers over HTTP. Stop: SIGTERM, then kill after a grace period.
Any failure to start is a one-line `HarnessFailure` carrying the last line the sandbox printed.
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import httpx

from delivery_conformance.exceptions import HarnessFailure, ProfileError
from delivery_conformance.target.profile import API_PREFIX, TargetProfile, load_profile
from delivery_conformance.target.service import Service

__all__ = ["EmbeddedSandbox", "sandbox_command"]

STARTUP_TIMEOUT = 20.0
STOP_GRACE = 5.0
POLL = 0.1


def sandbox_command(
    profile_out: Path,
    faults: Sequence[str] = (),
    options: Sequence[str] = (),
    *,
    versions: str | None = "extended",
) -> list[str]:
    """`python -m delivery_sandbox` on a free loopback port, writing its profile to
    `profile_out`; `options` are more sandbox options (`--limits-scale 0.05`); `versions` the
    sandbox's version set (None: its own default). The one place the command is written: the
    load campaigns and the benchmarks start their sandboxes with it too."""
    command = [
        sys.executable,
        "-m",
        "delivery_sandbox",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--profile-out",
        str(profile_out),
    ]
    if versions is not None:
        command += ["--versions", versions]
    for fault in faults:
        command += ["--fault", fault]
    return command + list(options)


class EmbeddedSandbox(Service[Path]):
    def __init__(
        self,
        faults: Sequence[str] = (),
        *,
        startup_timeout: float = STARTUP_TIMEOUT,
        command: Sequence[str] | None = None,
        options: Sequence[str] = (),
    ) -> None:
        """`command` replaces the sandbox command (self-tests); `{profile}` is substituted.
        `options` are more sandbox options (`--limits-scale 0.05`)."""
        self.faults = tuple(faults)
        self.options = tuple(options)
        self.startup_timeout = startup_timeout
        self._command = command
        self._dir: Path | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self.profile_path: Path | None = None

    def start(self) -> Path:
        self._dir = Path(tempfile.mkdtemp(prefix="delivery-sandbox-"))
        profile_path = self._dir / "target.toml"
        log_path = self._dir / "sandbox.log"
        if self._command is None:
            command = sandbox_command(profile_path, self.faults, self.options)
        else:
            command = [part.replace("{profile}", str(profile_path)) for part in self._command]
        with log_path.open("wb") as log:
            try:
                self._process = subprocess.Popen(
                    command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
                )
            except OSError as error:
                self.stop()
                raise HarnessFailure(f"cannot start the embedded sandbox: {error}") from None
        try:
            self._wait_ready(profile_path, log_path)
        except BaseException:
            self.stop()
            raise
        self.profile_path = profile_path
        return profile_path

    def _wait_ready(self, profile_path: Path, log_path: Path) -> None:
        assert self._process is not None
        deadline = time.monotonic() + self.startup_timeout
        problem = ""
        while time.monotonic() < deadline:
            code = self._process.poll()
            if code is not None:
                raise HarnessFailure(
                    f"the embedded sandbox exited with code {code}: {_last_line(log_path)}"
                )
            if profile_path.exists():
                try:
                    if _answers(load_profile(profile_path, environ={})):
                        return
                except ProfileError as error:
                    problem = str(error)  # perhaps still being written: try again
            time.sleep(POLL)
        raise HarnessFailure(
            f"the embedded sandbox was not ready within {self.startup_timeout:g} s: "
            f"{problem or _last_line(log_path)}"
        )

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=STOP_GRACE)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=STOP_GRACE)
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None


def _answers(profile: TargetProfile) -> bool:
    """GET /config answers anything over HTTP."""
    headers = {}
    if profile.keys:
        headers["Authorization"] = f"Bearer {next(iter(profile.keys.values()))}"
    with contextlib.suppress(httpx.HTTPError):
        httpx.get(f"{profile.base_url}{API_PREFIX}config", headers=headers, timeout=2.0)
        return True
    return False


def _last_line(log_path: Path) -> str:
    try:
        lines = log_path.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return "no output"
    return lines[-1][:300] if lines else "no output"
