"""What a profile lets the suite do: the census of needs, `check-profile`'s report, the template.

    census = suite_census()               # the suites' @pytest.mark.needs, counted (subprocess)
    print("\n".join(report_lines(profile, census)))
    write_template(Path("target.toml"))   # `init-profile`: refuses an existing file

The census collects tests/conformance and tests/properties with `pytest --collect-only` in a
subprocess (about 3 s, bounded by CENSUS_TIMEOUT) with this module loaded as a plugin: its
`pytest_collection_finish` hook writes each test's needs to a JSON file. Nothing runs, no target is
called. Counts are exact per collected test (parametrised cases included), read from the same
markers the plugin uses to decide "not exercised".
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from delivery_conformance.exceptions import HarnessError, UsageError
from delivery_conformance.target.profile import TargetProfile
from delivery_conformance.target.profile_names import FIXTURE_GROUPS, FIXTURES, ROLES, key_env

__all__ = [
    "CENSUS_TIMEOUT",
    "Census",
    "missing_needs",
    "render_template",
    "report_lines",
    "suite_census",
    "write_template",
]

CENSUS_TIMEOUT = 60.0
_OUT_ENV = "DELIVERY_CENSUS_OUT"
_LABELS = {"admin": "admin API", "bare_host": "bare_host", "test_organisation": "test org"}


@dataclass(frozen=True)
class Census:
    """How many collected tests need each combination of needs (a combination may be empty)."""

    groups: tuple[tuple[frozenset[str], int], ...]

    @property
    def total(self) -> int:
        return sum(count for _, count in self.groups)


def _has(profile: TargetProfile, need: str) -> bool:
    kind, _, name = need.partition(":")
    if kind == "role":
        return name in profile.keys
    if kind == "fixture":
        return name in profile.fixtures
    if need == "admin":
        return profile.admin is not None
    if need == "bare_host":
        return profile.bare_host is not None
    if need == "test_organisation":
        return profile.test_organisation
    return False  # an unknown need is never met (the plugin refuses it at collection)


def missing_needs(profile: TargetProfile) -> list[str]:
    """Every need of the table (roles, fixtures, admin, bare_host, test org) the profile lacks."""
    wanted = [f"role:{r}" for r in ROLES] + [f"fixture:{f}" for f in FIXTURES]
    wanted += ["admin", "bare_host", "test_organisation"]
    return [need for need in wanted if not _has(profile, need)]


def unlock_counts(profile: TargetProfile, census: Census) -> dict[str, tuple[int, int]]:
    """need -> (tests that need it, tests that would then run: it was their only lack)."""
    needed: Counter[str] = Counter()
    alone: Counter[str] = Counter()
    for needs, count in census.groups:
        lacking = [n for n in needs if not _has(profile, n)]
        for need in lacking:
            needed[need] += count
        if len(lacking) == 1:
            alone[lacking[0]] += count
    return {need: (needed[need], alone[need]) for need in needed}


def _describe(need: str) -> str:
    kind, _, name = need.partition(":")
    if kind == "role" and name in ROLES:
        return ROLES[name].what
    if kind == "fixture" and name in FIXTURES:
        return FIXTURES[name].what
    return {"admin": "[admin] url and token", "bare_host": "bare_host = ...",
            "test_organisation": "test_organisation = true"}.get(need, "")  # fmt: skip


def _label(need: str) -> str:
    kind, _, name = need.partition(":")
    return f"{kind} {name}" if name else _LABELS.get(need, need)


def report_lines(profile: TargetProfile, census: Census | str) -> list[str]:
    """`check-profile`'s output for a valid profile; `census` is a reason when it is unknown."""
    roles = [r for r in ROLES if r in profile.keys]
    from_env = [f"{r} ({profile.key_origins[r]})" for r in roles
                if profile.key_origins.get(r, "file") != "file"]  # fmt: skip
    lines = [
        f"profile OK: {profile.source} -> {profile.base_url}",
        f"roles ({len(roles)} of {len(ROLES)}): {', '.join(roles) or 'none'}",
    ]
    if from_env:
        lines.append(f"keys from the environment: {', '.join(from_env)}")
    lines.append(
        f"fixtures: {len(profile.fixtures)} of {len(FIXTURES)}; "
        f"admin API: {'yes' if profile.admin else 'no'}; "
        f"bare_host: {profile.bare_host or 'no'}; "
        f"test organisation: {'yes' if profile.test_organisation else 'no'}"
    )
    missing = missing_needs(profile)
    if isinstance(census, str):
        if missing:
            lines.append(f"missing ({len(missing)}): {', '.join(_label(n) for n in missing)}")
        lines.append(f"tests each would unlock: unknown ({census})")
        return lines
    counts = unlock_counts(profile, census)
    extra = sorted(set(counts) - set(missing))  # needs outside the table (should be none)
    blocked = sum(c for needs, c in census.groups if any(n in counts for n in needs))
    runnable = census.total - blocked
    lines.append(f"tests: {runnable} of {census.total} can run with this profile")
    if not missing and not extra:
        lines.append("nothing missing: every role, fixture and option the suite knows is given")
        return lines
    lines.append(f"missing ({len(missing) + len(extra)}): tests that need it / that would run "
                 "once it alone is added / what it is")  # fmt: skip
    order = sorted(missing + extra, key=lambda n: (-counts.get(n, (0, 0))[0], n))
    for need in order:
        needed, alone = counts.get(need, (0, 0))
        lines.append(f"  {_label(need):<38} {needed:>4} / {alone:>4}  {_describe(need)}")
    lines.append(
        f"a key may also come from the environment: {key_env('<role>')} (e.g. "
        f"{key_env('films')}); init-profile writes a template that explains every entry"
    )
    return lines


# -- census ---------------------------------------------------------------------------------------


def pytest_collection_finish(session: Any) -> None:
    """Hook, when this module is loaded with `-p`: write the collected tests' needs as JSON."""
    out = os.environ.get(_OUT_ENV)
    if not out:
        return
    needs: Counter[tuple[str, ...]] = Counter()
    for item in session.items:
        found = {str(n) for mark in item.iter_markers("needs") for n in mark.args}
        callspec = getattr(item, "callspec", None)
        if callspec is not None:  # a row naming a fixture the test body asks `fixture_id` for
            found |= {f"fixture:{name}" for name in _strings(callspec.params) if name in FIXTURES}
        needs[tuple(sorted(found))] += 1
    Path(out).write_text(json.dumps([[list(k), v] for k, v in needs.items()]), encoding="utf-8")


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, (tuple, list)):
        for part in value:
            yield from _strings(part)
    elif isinstance(value, dict):
        for part in value.values():
            yield from _strings(part)


def _suite() -> tuple[list[Path], list[str]]:
    """The suite folders a run would collect, and the pytest arguments that collect them."""
    from delivery_conformance.suite.runner import RunOptions, suite_paths

    options = RunOptions(target=Path("census"), run_dir=Path("census"))
    base = options.tests_root.parent
    try:
        from delivery_conformance.resources import suite_pytest_args
    except ImportError:  # a checkout from before the suites were bundled
        return suite_paths(options), ["--rootdir", str(base), "-p", "no:cacheprovider"]
    return suite_paths(options), suite_pytest_args(base)


def suite_census(timeout: float = CENSUS_TIMEOUT) -> Census | str:
    """The needs of every test of the suites, or a one-line reason why they could not be read."""
    try:
        paths, args = _suite()
    except HarnessError as error:
        return str(error)
    if not paths:
        return "no suite found"
    with tempfile.TemporaryDirectory(prefix="delivery-census-") as tmp:
        out = Path(tmp) / "needs.json"
        command = [sys.executable, "-m", "pytest", "--collect-only", "-q", *map(str, paths),
                   *args, "-p", "delivery_conformance.suite.plugin", "-p", __name__,
                   "-W", "ignore::pytest.PytestAssertRewriteWarning"]  # fmt: skip
        env = {**os.environ, _OUT_ENV: str(out)}
        try:
            done = subprocess.run(command, env=env, capture_output=True, timeout=timeout,
                                  stdin=subprocess.DEVNULL, check=False)  # fmt: skip
        except subprocess.TimeoutExpired:
            return f"collecting the suite took more than {timeout:.0f} s"
        if done.returncode != 0 or not out.exists():
            return f"collecting the suite failed (pytest exit {done.returncode})"
        rows = json.loads(out.read_text(encoding="utf-8"))
    return Census(tuple((frozenset(needs), int(count)) for needs, count in rows))


# -- template -------------------------------------------------------------------------------------


def _comment(*sentences: str) -> list[str]:
    text = " ".join(sentences)
    return textwrap.wrap(text, width=99, initial_indent="# ", subsequent_indent="#   ",
                         break_on_hyphens=False, break_long_words=False)  # fmt: skip


def render_template() -> str:
    """The commented profile `init-profile` writes: every role and fixture of the table."""
    skeleton = resources.files("delivery_conformance.target").joinpath("profile_template.toml")
    role_lines: list[str] = []
    for role in ROLES.values():
        role_lines += _comment(f"{role.name}: {role.what}.", f"Unlocks {role.unlocks}.",
                               f"Or set {key_env(role.name)}.")  # fmt: skip
        role_lines += [f'# {role.name} = "svc_live_<32 characters>"', ""]
    fixture_lines: list[str] = []
    for group in FIXTURE_GROUPS:
        fixture_lines += [f"# --- {group} ---"]
        for fixture in (f for f in FIXTURES.values() if f.group == group):
            fixture_lines += _comment(f"{fixture.name}: {fixture.what}.",
                                      f"Unlocks {fixture.unlocks}.")  # fmt: skip
            fixture_lines += [f'# {fixture.name} = ""']
        fixture_lines.append("")
    text = skeleton.read_text(encoding="utf-8")
    text = text.replace("@ROLES@", "\n".join(role_lines).rstrip())
    return text.replace("@FIXTURES@", "\n".join(fixture_lines).rstrip())


def write_template(path: Path) -> None:
    """Write the template to `path`; an existing file (or a bad place) is a one-line UsageError."""
    if path.exists() or path.is_symlink():
        raise UsageError(f"{path} already exists; not overwritten (choose another name)")
    try:
        with path.open("x", encoding="utf-8") as handle:
            handle.write(render_template())
    except FileExistsError:
        raise UsageError(f"{path} already exists; not overwritten (choose another name)") from None
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise UsageError(f"cannot write {path}: {reason}") from None
