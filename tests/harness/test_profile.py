from pathlib import Path

import pytest
from harness_support import KEY, PROFILE_TEXT, write_profile

from delivery_conformance.exceptions import ProfileError
from delivery_conformance.profile import load_profile


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
        ('base_url = "http://x"\n[fixtures]\nepisode_no = 3.5\n', "fixture 'episode_no'"),
        ('base_url = "http://x"\n[fixtures]\nflag = true\n', "fixture 'flag'"),
        ('base_url = "http://x"\n[admin]\nurl = "http://x/_sandbox"\n', "needs both"),
        ('base_url = "http://x"\n[admin]\nurl = "x"\ntoken = "t"\n', "http(s) URL"),
        ('base_url = "http://x"\n[admin]\nurl="http://x"\ntoken="t"\nuser="u"\n', "unknown"),
        ('base_url = "http://x"\n[extras]\na = 1\n', "unknown top-level entries: extras"),
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
    path.write_bytes(b"\xff\xfe base_url")
    with pytest.raises(ProfileError, match="cannot be read"):
        load_profile(path)


def test_profile_integer_fixture_is_kept_as_text(tmp_path: Path) -> None:
    text = PROFILE_TEXT.replace('episode_encrypted_no = "3"', "episode_encrypted_no = 3")
    assert load_profile(write_profile(tmp_path, text)).fixtures["episode_encrypted_no"] == "3"
