"""Changes on a server that is not the sandbox: the commands a profile's `[changes]` names.

The change catalogue (spec/changes.yaml) makes each change with the sandbox admin API. A server
team's staging server has none, so its profile says how each change is made there:

    [changes]
    timeout = 60                                       # seconds per command (1 to 600)
    film_retitled = "./ops/retitle-film {film_id} {title}"
    playlist_retitled = "curl -fsS -X PATCH https://ops.test/playlists/{playlist_code} -d t={title}"
    undo = "./ops/restore-staging"                     # after each scenario that made a change

Each command runs through /bin/sh with the scenario's values in place of `{name}` (shell-quoted:
`{title}` is one word to the shell whatever it holds), stdin closed, in the folder of the
profile, killed with its process group at `timeout`. Exit 0 means the change was made; any other
outcome leaves the scenario "not exercised" with the exit status, never passed. A change the
table does not name, on a profile without `[admin]`, is "not exercised" too. The command line is
never written to a report (it may hold a token from `${NAME}`); its exit status and the last
line of its stderr are.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["CHANGE_TIMEOUT", "ChangeCommands", "ChangeOutcome", "run_change"]

CHANGE_TIMEOUT = 60.0
_TAIL = 200  # characters of stderr kept in a reason


@dataclass(frozen=True)
class ChangeCommands:
    """The `[changes]` table of a profile: a command per change name, and an optional undo."""

    commands: Mapping[str, str] = field(default_factory=dict, repr=False)
    undo: str | None = field(default=None, repr=False)
    timeout: float = CHANGE_TIMEOUT
    folder: Path | None = None  # where the commands run: the profile's folder


@dataclass(frozen=True)
class ChangeOutcome:
    made: bool
    reason: str  # why not, in one line (empty when made)


def _filled(command: str, values: Mapping[str, object]) -> str:
    """`{name}` -> the shell-quoted value; an unknown name stays as written (the shell sees it)."""
    out = command
    for name, value in values.items():
        out = out.replace("{" + name + "}", shlex.quote(str(value)))
    return out


def run_change(commands: ChangeCommands, name: str, values: Mapping[str, object]) -> ChangeOutcome:
    """Run the command of change `name` (or `undo`) with `values`; never raises."""
    command = commands.undo if name == "undo" else commands.commands.get(name)
    if not command:
        return ChangeOutcome(False, f"the profile's [changes] names no command for {name}")
    try:
        process = subprocess.Popen(
            ["/bin/sh", "-c", _filled(command, values)],
            cwd=commands.folder,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
    except OSError as error:
        return ChangeOutcome(False, f"the {name} command could not start: {error.strerror}")
    try:
        _, stderr = process.communicate(timeout=commands.timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        return ChangeOutcome(False, f"the {name} command did not end within {commands.timeout:g} s")
    if process.returncode != 0:
        last = (stderr or "").strip().splitlines()[-1:] or [""]
        tail = last[0][:_TAIL]
        return ChangeOutcome(
            False, f"the {name} command exited {process.returncode}" + (f": {tail}" if tail else "")
        )
    return ChangeOutcome(True, "")
