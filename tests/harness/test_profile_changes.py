"""Changes on a server that is not the sandbox: the profile's `[changes]` commands.

The profile format (target/profile.py), the runner (target/changes.py), and a whole run of the
generated change scenarios against the sandbox with its admin API left out of the profile, each
change made by a shell command the profile names, as a server team's staging server would.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from harness_support import run_results

from delivery_conformance.exceptions import ProfileError
from delivery_conformance.target.changes import ChangeCommands, run_change
from delivery_conformance.target.embedded import EmbeddedSandbox
from delivery_conformance.target.profile import load_profile

BASE = 'base_url = "http://127.0.0.1:9"\n'


def _profile(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "target.toml"
    path.write_text(BASE + text)
    return path


def test_the_changes_table_is_read_with_the_environment_and_its_undo(tmp_path: Path) -> None:
    path = _profile(
        tmp_path, '[changes]\nfilm_retitled = "ops retitle ${TOKEN}"\nundo = "ops reset"\n'
    )
    changes = load_profile(path, environ={"TOKEN": "t0k"}).changes
    assert changes is not None and changes.commands == {"film_retitled": "ops retitle t0k"}
    assert changes.undo == "ops reset" and changes.folder == tmp_path
    assert "t0k" not in repr(changes)  # a token from the environment stays out of reprs


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ('film_retitle = "x"', "[changes]: 'film_retitle' (did you mean 'film_retitled'?)"),
        ('film_retitled = ""', "[changes] film_retitled must be a non-empty command string"),
        ("timeout = 0", "[changes] timeout is 1 to 600 seconds"),
        ('timeout = "60"', "[changes] timeout is 1 to 600 seconds"),
    ],
)  # fmt: skip
def test_a_broken_changes_table_is_one_line(tmp_path: Path, table: str, message: str) -> None:
    with pytest.raises(ProfileError) as refused:
        load_profile(_profile(tmp_path, f"[changes]\n{table}\n"), environ={})
    assert message in str(refused.value) and "\n" not in str(refused.value)


def test_values_reach_the_command_as_single_words_and_failures_give_the_reason(
    tmp_path: Path,
) -> None:
    out = tmp_path / "args.json"
    script = f"import json, sys; json.dump(sys.argv[1:], open({str(out)!r}, 'w'))"
    command = f"{shlex.quote(sys.executable)} -c {shlex.quote(script)} {{title}} {{film_id}}"
    commands = ChangeCommands(
        {"film_retitled": command, "playlist_retitled": "echo nope >&2; exit 3"},
        undo=None,
        timeout=5,
        folder=tmp_path,
    )
    title = 'It\'s a "title"; rm -rf $HOME'
    assert run_change(commands, "film_retitled", {"title": title, "film_id": "f-1"}).made
    assert json.loads(out.read_text()) == [title, "f-1"]
    failed = run_change(commands, "playlist_retitled", {})
    assert not failed.made and failed.reason == "the playlist_retitled command exited 3: nope"
    assert not run_change(commands, "creative_renamed", {}).made  # no command for it


def test_a_hanging_change_command_is_killed_at_its_timeout(tmp_path: Path) -> None:
    commands = ChangeCommands({"film_retitled": "sleep 30 & sleep 30"}, timeout=1, folder=tmp_path)
    outcome = run_change(commands, "film_retitled", {})
    assert not outcome.made and outcome.reason.endswith("did not end within 1 s")


ADMIN_CALL = (
    "import sys, httpx; "
    "r = httpx.post(sys.argv[1] + '/' + sys.argv[2], json={'title': sys.argv[3]}, "
    "headers={'Authorization': 'Bearer ' + sys.argv[4]}); sys.exit(r.status_code != 200)"
)


def _without_admin(sandbox_profile: Path, tmp_path: Path, changes: str) -> Path:
    """The embedded sandbox's profile with its [admin] table replaced by `changes`."""
    text = sandbox_profile.read_text()
    admin = re.search(r"\[admin\]\n(?:[^\[\n][^\n]*\n?)*", text)
    assert admin is not None
    url = re.search(r'url = "([^"]+)"', admin.group(0))
    token = re.search(r'token = "([^"]+)"', admin.group(0))
    assert url and token
    call = f"{shlex.quote(sys.executable)} -c {shlex.quote(ADMIN_CALL)}"
    table = changes.format(call=call, url=url.group(1), token=token.group(1))
    path = tmp_path / "staging.toml"
    path.write_text(text.replace(admin.group(0), "") + "\n" + table)
    return path


def _run(profile: Path, report: Path) -> dict:
    subprocess.run(
        [str(Path(sys.executable).parent / "delivery-conformance"), "run", "--target", str(profile),
         "--no-properties", "--report-dir", str(report), "-k", "test_changes and retitled"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    return run_results(report)


def test_a_profile_without_admin_makes_its_changes_with_its_commands(tmp_path: Path) -> None:
    with EmbeddedSandbox() as sandbox_profile:
        changes = (
            "[changes]\n"
            "film_retitled = '''{call} {url} films/{{film_id}}/retitle {{title}} {token}'''\n"
            "playlist_retitled = '''{call} {url} playlists/{{playlist_code}}/retitle {{title}} "
            "{token}'''\n"
            "undo = '''{call} {url} reset x {token}'''\n"
        )
        made = _run(_without_admin(sandbox_profile, tmp_path, changes), tmp_path / "made")
        neither = _run(_without_admin(sandbox_profile, tmp_path, ""), tmp_path / "neither")
    tests = [t for t in made["tests"] if "test_changes" in t["nodeid"]]
    assert len(tests) >= 12 and {t["outcome"] for t in tests} == {"passed"}, [
        (t["nodeid"], t["outcome"], t.get("reason")) for t in tests if t["outcome"] != "passed"
    ]
    skipped = [t for t in neither["tests"] if "test_changes" in t["nodeid"]]
    assert skipped and {t["outcome"] for t in skipped} == {"not exercised"}
    assert all("[changes] command or [admin]" in str(t.get("reason")) for t in skipped)
