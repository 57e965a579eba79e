"""The optional [tenants] table of a target profile (the tenants load campaign's organisations)."""

from __future__ import annotations

from pathlib import Path

import pytest

from delivery_conformance.exceptions import ProfileError
from delivery_conformance.target.profile import load_profile


def _key(n: int) -> str:
    return f"svc_live_{n:032d}"


def _profile(tmp_path: Path, tenants: str) -> Path:
    path = tmp_path / "target.toml"
    path.write_text(
        f'base_url = "http://127.0.0.1:8123"\n[keys]\nlimits = "{_key(0)}"\n{tenants}', "utf-8"
    )
    return path


def test_tenant_keys_and_the_idle_key_are_read_in_order(tmp_path: Path) -> None:
    table = f'[tenants]\nkeys = ["{_key(1)}", "{_key(2)}"]\nidle = "{_key(3)}"\n'
    profile = load_profile(_profile(tmp_path, table), environ={})
    assert profile.tenants == (_key(1), _key(2)) and profile.tenant_idle == _key(3)
    assert _key(1) not in repr(profile)


def test_a_profile_without_tenants_has_none(tmp_path: Path) -> None:
    profile = load_profile(_profile(tmp_path, ""), environ={})
    assert profile.tenants == () and profile.tenant_idle is None


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (f'[tenants]\nkeys = ["{_key(1)}"]\n', "needs idle"),
        (f'[tenants]\nkeys = []\nidle = "{_key(3)}"\n', "list of 1 to 200"),
        (f'[tenants]\nkeys = ["nope"]\nidle = "{_key(3)}"\n', r"keys\[0\] is not svc_live_"),
        (f'[tenants]\nkeys = ["{_key(1)}"]\nidle = "{_key(1)}"\n', "differ"),
        (f'[tenants]\nkeys = ["{_key(0)}"]\nidle = "{_key(3)}"\n', "differ"),
        (f'[tenants]\nkeys = ["{_key(1)}"]\nidle = "{_key(3)}"\nspare = 1\n', "unknown entry"),
    ],
)
def test_a_bad_tenants_table_is_one_line_naming_the_mistake(
    tmp_path: Path, table: str, message: str
) -> None:
    with pytest.raises(ProfileError, match=message) as caught:
        load_profile(_profile(tmp_path, table), environ={})
    assert "svc_live_0" not in str(caught.value) and "\n" not in str(caught.value)
