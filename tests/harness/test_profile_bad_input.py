"""Malformed profiles and profile commands (issue 16, Bad input): one clear line, a distinct exit.

Each case runs `delivery-conformance check-profile` (or `init-profile`) in-process and asserts the
exit code (2; 0 for a byte-order mark, which is read), exactly one stderr line naming the mistake,
no traceback, and that no secret of the case (key, password, token) appears anywhere in the
output. The cases that once crashed or leaked also run as a real subprocess.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from delivery_conformance import cli
from delivery_conformance.suite.profile_check import Census
from delivery_conformance.target.profile_names import ROLES

KEY = "svc_live_" + "K" * 32
KEY2 = "svc_live_" + "Q" * 32
PASSWORD = "hunter2-not-for-logs"
GOOD = f'base_url = "http://127.0.0.1:9"\n[keys]\nfilms = "{KEY}"\n'
SECRETS = (KEY, KEY2, PASSWORD, "admin-token-xyz")


@pytest.fixture(autouse=True)
def _no_delivery_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("DELIVERY_"):
            monkeypatch.delenv(name)
    # The census (a 3 s pytest collection) is measured in test_profile; here a small fixed one.
    census = Census(((frozenset({"role:films"}), 2), (frozenset({"role:videos"}), 1)))
    monkeypatch.setattr(cli, "suite_census", lambda: census)


def write(tmp_path: Path, text: str | bytes, name: str = "target.toml") -> Path:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def assert_refused(code: int, out: str, err: str, fragment: str) -> None:
    assert code == 2, (code, out, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("delivery-conformance: ")
    assert fragment in lines[0], lines[0]
    assert "Traceback" not in out + err and "profile OK" not in out
    assert not [secret for secret in SECRETS if secret in out + err]


CASES = {
    "deep_arrays": ("a = " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply"),
    "deep_inline_tables": ("a = " + "{b = " * 3000 + "1" + "}" * 3000 + "\n", "nested too deeply"),
    "deep_dotted_key": (".".join(["a"] * 20000) + " = 1\n", "nested too deeply"),
    "deep_table_header": ("[" + ".".join(["k"] * 5000) + "]\n", "nested too deeply"),
    "url_password": (f'base_url = "http://user:{PASSWORD}@127.0.0.1:9"\n', "user:password@"),
    "url_user_only": ('base_url = "http://user@127.0.0.1:9"\n', "user:password@"),
    "url_password_no_scheme": (f'base_url = "user:{PASSWORD}@host"\n', "user:password@"),
    "admin_url_password": (
        GOOD + f'[admin]\nurl = "http://a:{PASSWORD}@127.0.0.1:9/_sandbox"\ntoken = "t"\n',
        "[admin] url must not carry user:password@",
    ),
    "workers_zero": ('workers = 0\n' + GOOD, "workers must be a whole number from 1 to 32"),
    "workers_text": ('workers = "many"\n' + GOOD, "workers must be a whole number from 1 to 32"),
    "misspelt_role": (GOOD + f'flims = "{KEY2}"\n', "'flims' (did you mean 'films'?)"),
    "misspelt_roles": (
        GOOD + f'vidoes = "{KEY2}"\nzzz = "{KEY2}"\n',
        "unknown roles in [keys]: 'vidoes' (did you mean 'videos'?), 'zzz'",
    ),
    "misspelt_fixture": (GOOD + '[fixtures]\nepisode_encrypted_n = "3"\n',
                         "(did you mean 'episode_encrypted_no'?)"),
    "misspelt_top_level": (GOOD.replace("base_url", "base_ulr"), "did you mean 'base_url'?"),
    "misspelt_top_level_table": (GOOD + "[fixture]\nfilm_id = '1'\n", "did you mean 'fixtures'?"),
    "misspelt_admin_entry": (GOOD + '[admin]\nurl = "http://127.0.0.1:9"\ntoken = "t"\n'
                             'tokn = "t"\n', "did you mean 'token'?"),
    "empty_fixture": (GOOD + '[fixtures]\nfilm_id = ""\n', "fixture 'film_id' is empty"),
    "blank_fixture": (GOOD + '[fixtures]\nfilm_id = "   "\n', "fixture 'film_id' is empty"),
    "one_key_two_roles": (GOOD + f'films_metadata = "{KEY}"\n',
                          "roles 'films' and 'films_metadata' have the same key"),
    "key_wrong_form": (GOOD.replace(KEY, KEY[:-1]), "not svc_live_ followed by 32 characters"),
    "key_other_prefix": (GOOD.replace("svc_live_", "svc_test_"), "role 'films'"),
    "key_with_space": (GOOD.replace(KEY, KEY + " "), "has white space around it"),
    "key_not_a_string": (GOOD.replace(f'"{KEY}"', "12"), "not svc_live_"),
    "keys_not_a_table": ('base_url = "http://x"\nkeys = "films"\n', "[keys] must be a table"),
    "unset_variable": (GOOD.replace(KEY, "${FILMS_SECRET}"), "FILMS_SECRET is not set"),
    "unset_variable_in_url": ('base_url = "http://${TARGET_HOST}"\n', "TARGET_HOST is not set"),
    "utf16": ('base_url = "http://x"\n'.encode("utf-16"), "UTF-16; save it as UTF-8"),
    "not_utf8": (b'base_url = "http://\xe9"\n', "not UTF-8"),
    "oversize": ("# " + "x" * 300_000 + "\n" + GOOD, "the most a profile may be"),
    "invalid_toml": ("base_url = \n", "not valid TOML"),
}  # fmt: skip


def test_a_device_is_not_read(capsys: pytest.CaptureFixture[str]) -> None:
    assert_refused(*run(capsys, "check-profile", "/dev/zero"), "not a regular file")


def test_run_refuses_url_credentials_before_any_report_exists(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, CASES["url_password"][0])
    reports = tmp_path / "reports"
    result = run(capsys, "run", "--target", str(path), "--report-dir", str(reports))
    assert_refused(*result, "user:password@")
    assert not reports.exists()


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_bad_profile_is_one_line_and_exit_2(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, fragment = CASES[case]
    assert_refused(*run(capsys, "check-profile", str(write(tmp_path, text))), fragment)


def test_a_byte_order_mark_is_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, b"\xef\xbb\xbf" + GOOD.encode("utf-8"))
    code, out, err = run(capsys, "check-profile", str(path))
    assert (code, err) == (0, "")
    assert "profile OK" in out and f"roles (1 of {len(ROLES)}): films" in out and KEY not in out


# A key variable the profile check refuses: (variable, value, what the one line says).
BAD_KEY_VARIABLES = {
    "typo": ("DELIVERY_KEY_VIDEO", KEY2,
             "'DELIVERY_KEY_VIDEO' (did you mean 'DELIVERY_KEY_VIDEOS'?)"),
    "empty": ("DELIVERY_KEY_VIDEOS", "", "set but empty"),
    "repeats_a_file_key": ("DELIVERY_KEY_VIDEOS", KEY,
                           "roles 'films' and 'videos' have the same key"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(BAD_KEY_VARIABLES))
def test_a_bad_key_variable_is_refused(
    case: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    name, value, fragment = BAD_KEY_VARIABLES[case]
    monkeypatch.setenv(name, value)
    assert_refused(*run(capsys, "check-profile", str(write(tmp_path, GOOD))), fragment)


def test_a_password_from_a_variable_is_not_printed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TARGET_URL", f"https://ci:{PASSWORD}@api.example.com")
    text = GOOD.replace('"http://127.0.0.1:9"', '"${TARGET_URL}"')
    assert_refused(*run(capsys, "check-profile", str(write(tmp_path, text))), "user:password@")


def test_keys_from_the_environment_are_named_not_shown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DELIVERY_KEY_VIDEOS", KEY2)
    code, out, err = run(capsys, "check-profile", str(write(tmp_path, GOOD)))
    assert (code, err) == (0, "")
    assert "keys from the environment: videos (DELIVERY_KEY_VIDEOS)" in out
    assert "tests: 3 of 3 can run" in out and KEY2 not in out


def test_check_profile_reads_delivery_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert_refused(*run(capsys, "check-profile"), "needs a FILE (or DELIVERY_TARGET")
    monkeypatch.setenv("DELIVERY_TARGET", str(tmp_path / "absent.toml"))
    assert_refused(*run(capsys, "check-profile"), "absent.toml: file not found")
    monkeypatch.setenv("DELIVERY_TARGET", str(write(tmp_path, GOOD)))
    code, out, _ = run(capsys, "check-profile")
    assert code == 0 and "profile OK" in out


def test_init_profile_writes_a_template_check_profile_accepts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "mine.toml"
    code, out, err = run(capsys, "init-profile", str(path))
    assert (code, err) == (0, "") and f"wrote {path}" in out
    code, out, err = run(capsys, "check-profile", str(path))
    assert (code, err) == (0, "") and f"roles (0 of {len(ROLES)}): none" in out
    assert "role films" in out and "role videos" in out


def test_init_profile_never_overwrites(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "mine, not a template\n", "mine.toml")
    assert_refused(*run(capsys, "init-profile", str(path)), "already exists; not overwritten")
    assert path.read_text(encoding="utf-8") == "mine, not a template\n"
    assert_refused(*run(capsys, "init-profile", str(tmp_path)), "already exists")


def test_init_profile_into_a_missing_folder_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    result = run(capsys, "init-profile", str(tmp_path / "no" / "such" / "dir.toml"))
    assert_refused(*result, "cannot write")


def real_check_profile(path: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DELIVERY_")}
    return subprocess.run(
        [sys.executable, "-m", "delivery_conformance.cli", "check-profile", str(path)],
        capture_output=True, text=True, timeout=90, env=env, check=False,
    )  # fmt: skip


@pytest.mark.parametrize("case", ["deep_arrays", "deep_dotted_key", "url_password"])
def test_the_worst_cases_as_a_real_process(case: str, tmp_path: Path) -> None:
    done = real_check_profile(write(tmp_path, CASES[case][0]))
    assert_refused(done.returncode, done.stdout, done.stderr, CASES[case][1])


def test_a_byte_order_mark_as_a_real_process_with_the_real_census(tmp_path: Path) -> None:
    done = real_check_profile(write(tmp_path, b"\xef\xbb\xbf" + GOOD.encode("utf-8")))
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    assert "profile OK" in done.stdout and "role videos" in done.stdout
    assert re.search(r"^tests: \d+ of \d{3,} can run with this profile$", done.stdout, re.M)
    assert KEY not in done.stdout
