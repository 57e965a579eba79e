import os
import re
from pathlib import Path

import pytest
from harness_support import KEY, OTHER_KEY, PROFILE_TEXT, make_profile, write_profile

from delivery_conformance.exceptions import ProfileError
from delivery_conformance.suite.profile_check import (
    Census,
    render_template,
    report_lines,
    suite_census,
    unlock_counts,
)
from delivery_conformance.target.embedded import EmbeddedSandbox
from delivery_conformance.target.profile import (
    TARGET_ENV,
    AdminEndpoint,
    TargetProfile,
    load_profile,
    target_from_env,
)
from delivery_conformance.target.profile_names import (
    FIXTURE_GROUPS,
    FIXTURES,
    KEY_ENV_PREFIX,
    OWN_ORGANISATION_ROLES,
    ROLES,
    key_env,
)

ROOT = Path(__file__).resolve().parents[2]


def test_profile_loads_every_section(tmp_path: Path) -> None:
    profile = load_profile(write_profile(tmp_path))
    assert profile.base_url == "http://127.0.0.1:9"
    assert profile.test_organisation is True
    assert profile.keys["films"] == KEY
    assert profile.fixtures["episode_encrypted_no"] == "3"
    assert profile.admin is not None and profile.admin.url == "http://127.0.0.1:9/_sandbox"
    assert profile.source == tmp_path / "target.toml"


def test_profile_repr_never_shows_keys_or_admin_token(tmp_path: Path) -> None:
    text = repr(load_profile(write_profile(tmp_path)))
    assert KEY not in text and "admin-token" not in text


def test_profile_trailing_slash_is_accepted(tmp_path: Path) -> None:
    profile = load_profile(write_profile(tmp_path, 'base_url = "https://www.example.com/"\n'))
    assert profile.base_url == "https://www.example.com"
    assert profile.admin is None and dict(profile.keys) == {}


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("base_url = ", "not valid TOML"),
        ("test_organisation = true\n", "base_url is missing"),
        ('base_url = "ftp://x.example"\n', "must start with http"),
        ('base_url = "http://x.example/api"\n', "no path or query"),
        ('base_url = "http://x.example?q=1"\n', "no path or query"),
        ('base_url = "http://x.example:99999"\n', "invalid port"),
        ('base_url = "http://x"\ntest_organisation = "yes"\n', "true or false"),
        ('base_url = "http://x"\n[keys]\nfilms = "svc_live_short"\n', "role 'films'"),
        ('base_url = "http://x"\n[fixtures]\nfilm_id = 3.5\n', "fixture 'film_id'"),
        ('base_url = "http://x"\n[fixtures]\nfilm_id = true\n', "fixture 'film_id'"),
        ('base_url = "http://x"\n[admin]\nurl = "http://x/_sandbox"\n', "needs both"),
        ('base_url = "http://x"\n[admin]\nurl = "x"\ntoken = "t"\n', "http(s) URL"),
        ('base_url = "http://x"\n[admin]\nurl="http://x"\ntoken="t"\nuser="u"\n', "unknown"),
        ('base_url = "http://x"\n[extras]\na = 1\n', "unknown top-level entry in the profile"),
        ('base_url = "http://x"\nbare_host = "a b"\n', "bare_host"),
    ],
)
def test_profile_mistake_gives_one_line_error(tmp_path: Path, text: str, fragment: str) -> None:
    with pytest.raises(ProfileError) as caught:
        load_profile(write_profile(tmp_path, text))
    message = str(caught.value)
    assert fragment in message
    assert "\n" not in message
    assert caught.value.exit_code == 2


def test_profile_bad_toml_names_the_line(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="line 2"):
        load_profile(write_profile(tmp_path, 'base_url = "http://x"\nkeys = = 1\n'))


def test_profile_bad_key_error_never_prints_the_key(tmp_path: Path) -> None:
    secret = "svc_live_" + "x" * 31
    with pytest.raises(ProfileError) as caught:
        load_profile(
            write_profile(tmp_path, f'base_url = "http://x"\n[keys]\nfilms = "{secret}"\n')
        )
    assert secret not in str(caught.value)


def test_profile_missing_file_and_directory_are_profile_errors(tmp_path: Path) -> None:
    with pytest.raises(ProfileError, match="file not found"):
        load_profile(tmp_path / "absent.toml")
    with pytest.raises(ProfileError, match="directory"):
        load_profile(tmp_path)


def test_profile_undecodable_file_is_a_profile_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_bytes(b"\xc3\x28 base_url")
    with pytest.raises(ProfileError, match="cannot be read"):
        load_profile(path)
    path.write_bytes("base_url = 'http://x'".encode("utf-16"))
    with pytest.raises(ProfileError, match="UTF-16; save it as UTF-8"):
        load_profile(path)


def test_profile_integer_fixture_is_kept_as_text(tmp_path: Path) -> None:
    text = PROFILE_TEXT.replace('episode_encrypted_no = "3"', "episode_encrypted_no = 3")
    assert load_profile(write_profile(tmp_path, text)).fixtures["episode_encrypted_no"] == "3"


# -- environment: ${NAME}, DELIVERY_KEY_<ROLE>, DELIVERY_TARGET ------------------------------------

FILMS_KEY = "svc_live_" + "F" * 32
META_KEY = "svc_live_" + "M" * 32


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(KEY_ENV_PREFIX) or name == TARGET_ENV:
            monkeypatch.delenv(name)


def test_variables_are_expanded_in_every_string_value(tmp_path: Path) -> None:
    text = (
        'base_url = "http://${HOST}:8123"\nbare_host = "${BARE}"\n'
        '[keys]\nfilms = "${FILMS}"\n[fixtures]\nfilm_id = "f-${N}"\n'
        '[admin]\nurl = "http://${HOST}:8123/_sandbox"\ntoken = "${TOKEN}"\n'
    )
    environ = {"HOST": "127.0.0.1", "BARE": "example.com", "FILMS": FILMS_KEY, "N": "7",
               "TOKEN": "admin-secret"}  # fmt: skip
    profile = load_profile(write_profile(tmp_path, text), environ=environ)
    assert profile.base_url == "http://127.0.0.1:8123" and profile.bare_host == "example.com"
    assert profile.keys["films"] == FILMS_KEY and profile.fixtures["film_id"] == "f-7"
    assert profile.admin == AdminEndpoint("http://127.0.0.1:8123/_sandbox", "admin-secret")
    assert profile.key_origins["films"] == "file"


def test_a_doubled_dollar_keeps_a_literal_variable(tmp_path: Path) -> None:
    text = 'base_url = "http://x"\n[fixtures]\nfilm_id = "$${NOT_EXPANDED}"\n'
    profile = load_profile(write_profile(tmp_path, text), environ={})
    assert profile.fixtures["film_id"] == "${NOT_EXPANDED}"


def test_an_unset_variable_names_the_variable_and_the_entry(tmp_path: Path) -> None:
    text = 'base_url = "http://x"\n[keys]\nfilms = "${FILMS_KEY}"\n'
    with pytest.raises(ProfileError) as caught:
        load_profile(write_profile(tmp_path, text), environ={"OTHER": "1"})
    assert "[keys] films uses ${FILMS_KEY}, but FILMS_KEY is not set" in str(caught.value)


def test_a_key_variable_gives_or_overrides_a_role(tmp_path: Path) -> None:
    environ = {key_env("films"): FILMS_KEY, key_env("films_metadata"): META_KEY}
    profile = load_profile(write_profile(tmp_path), environ=environ)
    assert profile.keys["films"] == FILMS_KEY  # the file's key is overridden
    assert profile.keys["films_metadata"] == META_KEY  # a role the file does not name
    assert profile.keys["videos"] == OTHER_KEY
    assert profile.key_origins["films"] == "DELIVERY_KEY_FILMS"
    assert profile.key_origins["videos"] == "file"
    assert key_env("films_metadata") == "DELIVERY_KEY_FILMS_METADATA"


def test_the_process_environment_is_read_when_none_is_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DELIVERY_KEY_FILMS", FILMS_KEY)
    assert load_profile(write_profile(tmp_path)).keys["films"] == FILMS_KEY
    assert load_profile(write_profile(tmp_path), environ={}).keys["films"] == KEY


def test_delivery_target_names_the_profile(monkeypatch: pytest.MonkeyPatch) -> None:
    assert target_from_env({}) is None
    assert target_from_env({TARGET_ENV: ""}) is None
    assert target_from_env({TARGET_ENV: "ci/target.toml"}) == Path("ci/target.toml")
    monkeypatch.setenv(TARGET_ENV, "from-env.toml")
    assert target_from_env() == Path("from-env.toml")


def test_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    path = tmp_path / "bom.toml"
    path.write_bytes(b"\xef\xbb\xbf" + PROFILE_TEXT.encode("utf-8"))
    assert load_profile(path, environ={}).keys["films"] == KEY


def test_a_profile_object_can_never_hold_url_credentials() -> None:
    with pytest.raises(ProfileError, match="user:password@"):
        TargetProfile(base_url="http://user:secret-pw@x.example")


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('base_ulr = "http://x"\n', "'base_ulr' (did you mean 'base_url'?)"),
        ('base_url = "http://x"\n[keys]\nflims = "K"\n', "'flims' (did you mean 'films'?)"),
        ('base_url = "http://x"\n[fixtures]\nfilm_di = "1"\n', "(did you mean 'film_id'?)"),
        ('base_url = "http://x"\n[admin]\nurl = "http://x"\ntokn = "t"\n', "mean 'token'?)"),
        ('base_url = "http://x"\n[keys]\nzzzz = "K"\n', "unknown role in [keys]: 'zzzz'"),
    ],
)  # fmt: skip
def test_unknown_names_get_a_did_you_mean(tmp_path: Path, text: str, fragment: str) -> None:
    with pytest.raises(ProfileError) as caught:
        load_profile(write_profile(tmp_path, text), environ={})
    assert fragment in str(caught.value)


def test_a_misspelt_key_variable_gets_a_did_you_mean(tmp_path: Path) -> None:
    with pytest.raises(ProfileError) as caught:
        load_profile(write_profile(tmp_path), environ={"DELIVERY_KEY_FLIMS": FILMS_KEY})
    assert "'DELIVERY_KEY_FLIMS' (did you mean 'DELIVERY_KEY_FILMS'?)" in str(caught.value)
    assert FILMS_KEY not in str(caught.value)


# -- the table of roles and fixtures, the template, the docs ---------------------------------------


def test_the_table_lists_the_documented_roles_and_fixtures() -> None:
    docs = "\n".join(
        (ROOT / name).read_text(encoding="utf-8") for name in ("ARCHITECTURE.md", "docs/profile.md")
    )
    undocumented = [name for name in [*ROLES, *FIXTURES] if f"`{name}`" not in docs]
    assert undocumented == []
    assert len(ROLES) == 24 and len(FIXTURES) == 46
    assert all(role.what and role.unlocks for role in ROLES.values())
    assert all(f.what and f.unlocks and f.group in FIXTURE_GROUPS for f in FIXTURES.values())


def test_the_template_lists_every_role_and_fixture_with_a_comment() -> None:
    text = render_template()
    flat = text.replace("\n#   ", " ")  # comment lines joined back into sentences
    for role in ROLES.values():
        assert f'\n# {role.name} = "svc_live_<32 characters>"\n' in text
        assert f"\n# {role.name}: {role.what}. Unlocks {role.unlocks}." in flat
        assert f"Or set {key_env(role.name)}." in flat
    for fixture in FIXTURES.values():
        assert f'\n# {fixture.name} = ""\n' in text
        assert f"\n# {fixture.name}: {fixture.what}. Unlocks {fixture.unlocks}." in flat
    assert "@ROLES@" not in text and "@FIXTURES@" not in text
    assert max(len(line) for line in text.splitlines()) <= 100


def test_the_template_is_a_valid_profile_as_written_and_uncommented(tmp_path: Path) -> None:
    text = render_template()
    as_written = load_profile(write_profile(tmp_path, text), environ={})
    assert dict(as_written.keys) == {} and dict(as_written.fixtures) == {}
    counter = iter(range(10**6))

    def fill(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in ROLES:
            return f'{name} = "svc_live_{next(counter):032d}"'
        return f'{name} = "id-{next(counter)}"' if name in FIXTURES else match.group(0)

    filled = re.sub(r'^# ([a-z_]+) = ".*"$', fill, text, flags=re.MULTILINE)
    filled = filled.replace("# bare_host =", "bare_host =").replace("# [admin]", "[admin]")
    filled = filled.replace('# url = "', 'url = "')
    filled = filled.replace('# token = "${DELIVERY_ADMIN_TOKEN}"', 'token = "t"')
    profile = load_profile(write_profile(tmp_path, filled), environ={})
    assert set(profile.keys) == set(ROLES) and set(profile.fixtures) == set(FIXTURES)
    assert profile.admin is not None and profile.bare_host == "example.com"


def test_the_embedded_sandbox_profile_uses_exactly_the_table() -> None:
    with EmbeddedSandbox() as path:
        profile = load_profile(path, environ={})
        lines = report_lines(profile, Census(((frozenset({"role:films", "admin"}), 3),)))
    assert set(profile.keys) == set(ROLES) and set(profile.fixtures) == set(FIXTURES)
    assert "tests: 3 of 3 can run with this profile" in lines
    assert lines[-1].startswith("nothing missing")
    assert not any(key in "\n".join(lines) for key in profile.keys.values())


# -- the census: what each missing need would unlock ---------------------------------------------


CENSUS = Census(
    (
        (frozenset(), 5),
        (frozenset({"role:films"}), 10),
        (frozenset({"role:films", "fixture:film_id"}), 4),
        (frozenset({"role:videos", "admin"}), 2),
        (frozenset({"bare_host"}), 1),
    )
)


def test_unlock_counts_say_who_needs_what_and_what_would_then_run() -> None:
    profile = make_profile(keys={"films": KEY}, fixtures={}, admin=None, bare_host=None)
    counts = unlock_counts(profile, CENSUS)
    assert counts == {
        "fixture:film_id": (4, 4),
        "role:videos": (2, 0),
        "admin": (2, 0),
        "bare_host": (1, 1),
    }
    lines = report_lines(profile, CENSUS)
    assert "tests: 15 of 22 can run with this profile" in lines
    body = "\n".join(lines)
    assert re.search(r"fixture film_id +4 / +4  id of a licensed", body)
    assert re.search(r"role videos +2 / +0  video-partner", body)
    assert re.search(r"role films_metadata +0 / +0", body)  # missing, needed by no test
    assert KEY not in body


def test_an_unknown_census_still_lists_what_is_missing() -> None:
    profile = make_profile(keys={"films": KEY})
    lines = report_lines(profile, "collecting the suite failed (pytest exit 4)")
    reason = "collecting the suite failed (pytest exit 4)"
    assert lines[-1] == f"tests each would unlock: unknown ({reason})"
    assert "role videos_unbound" in lines[-2] and "role films," not in lines[-2]


def test_the_real_census_needs_only_names_of_the_table() -> None:
    census = suite_census()
    assert isinstance(census, Census), census
    assert census.total > 900
    known = {f"role:{r}" for r in ROLES} | {f"fixture:{f}" for f in FIXTURES}
    known |= {"admin", "bare_host", "test_organisation"}
    needs = {need for group, _ in census.groups for need in group}
    assert needs - known == set()
    assert {"role:films", "fixture:creative_not_ready", "admin"} <= needs


def test_the_roles_paced_on_a_budget_of_their_own_are_roles_of_an_organisation_of_their_own() -> (
    None
):
    """Each role with a pacing budget of its own is a role of the table whose description
    gives it an organisation no other role uses (spec: Limits counts per organisation)."""
    assert set(ROLES) >= OWN_ORGANISATION_ROLES
    for role in OWN_ORGANISATION_ROLES:
        what = ROLES[role].what
        assert "its own" in what or "another organisation" in what, role
    shared = {"films", "films_metadata", "videos", "videos_unbound", "revoked"}
    assert not shared & OWN_ORGANISATION_ROLES
