"""A clock per organisation (state/clock.py): `POST /_sandbox/clock` with a role moves the time
that organisation's requests, counters and tickets see, and nobody else's."""

from __future__ import annotations

import pytest
from sandbox_api import START, Api

from delivery_sandbox.state.accounts import LIMITS_TWIN_SUFFIXES


def _spend_config(api: Api, role: str) -> int:
    """A config request of `role`: its status (the config counter counts clock minutes)."""
    return api.get("config", role).status_code


def _lower_config(api: Api, role: str) -> None:
    assert api.admin("POST", f"roles/{role}/limits", {"counter": "config", "limit": 1}).is_success
    assert api.admin("POST", f"roles/{role}/reset-limits").is_success


def test_a_role_clock_moves_that_organisation_alone(api: Api) -> None:
    for role in ("limits", "films"):
        _lower_config(api, role)
        assert [_spend_config(api, role), _spend_config(api, role)] == [200, 429]
    moved = api.admin("POST", "clock", {"advance": 60, "role": "limits"}).json()
    assert moved == {"now": START + 60, "offset": 0.0, "role": "limits"}
    assert _spend_config(api, "limits") == 200  # its minute is over
    assert _spend_config(api, "films") == 429  # still the same minute for everyone else
    clock = api.admin("GET", "state").json()["clock"]
    assert clock["now"] == START and clock["offset"] == 0.0
    assert clock["roles"]["limits"] == START + 60 and clock["roles"]["films"] == START
    assert clock["roles"]["limits_videos"] == START  # another organisation (its own app)


def test_a_ticket_of_a_moved_organisation_is_stamped_on_its_clock(api: Api) -> None:
    body = {"episode_id": api.fx["episode_encrypted"], "intent": "play",
            "union_info": "device-0001-abcd", "drm_kek": "kek-0001-abcdefgh"}  # fmt: skip
    api.admin("POST", "clock", {"set": START + 3600, "role": "limits"})
    late = api.request("POST", "playback", "limits", json=body).json()
    early = api.request("POST", "playback", "films", json=body).json()
    assert late["expires_at"] != early["expires_at"]
    assert api.admin("GET", "state").json()["clock"]["now"] == START  # nothing leaked


def test_restore_and_reset_put_the_clocks_back(api: Api) -> None:
    api.admin("POST", "clock", {"advance": 120, "role": "limits"})
    api.admin("POST", "clock", {"advance": 30, "role": "films"})
    assert api.admin("POST", "roles/limits/restore").is_success
    roles = api.admin("GET", "state").json()["clock"]["roles"]
    assert roles["limits"] == START and roles["films"] == START + 30
    api.admin("POST", "clock", {"advance": 30})
    assert api.admin("POST", "reset", {}).is_success
    clock = api.admin("GET", "state").json()["clock"]
    assert clock["now"] == START and set(clock["roles"].values()) == {START}


def test_an_unknown_role_or_a_bad_one_is_refused(api: Api) -> None:
    assert api.admin("POST", "clock", {"advance": 1, "role": "nobody"}).status_code == 404
    assert api.admin("POST", "clock", {"advance": 1, "role": 7}).status_code == 400


@pytest.mark.parametrize("suffix", LIMITS_TWIN_SUFFIXES)
def test_the_limits_twins_license_and_are_granted_what_the_limits_pair_is(
    api: Api, suffix: str
) -> None:
    """`limits_<x>` / `limits_videos_<x>` stand in for `limits` / `limits_videos` on several
    workers: other organisations (one each) with the same catalog, tickets and videos."""
    body = {"episode_id": api.fx["episode_encrypted"], "intent": "play",
            "union_info": "device-0001-abcd", "drm_kek": "kek-0001-abcdefgh"}  # fmt: skip
    twins = [f"limits_{s}" for s in LIMITS_TWIN_SUFFIXES]
    twins += [f"limits_videos_{s}" for s in LIMITS_TWIN_SUFFIXES]
    others = {api.sb.accounts.org_of(r) for r in ("films", "limits", "limits_videos")}
    for base in ("limits", "limits_videos"):
        twin = f"{base}_{suffix}"
        orgs = [api.sb.accounts.org_of(r) for r in twins if r != twin]
        assert api.sb.accounts.org_of(twin) not in others | set(orgs)
    films = [api.get("catalog", role).json()["films"] for role in ("limits", f"limits_{suffix}")]
    assert films[0] == films[1] and films[0]
    assert api.request("POST", "playback", f"limits_{suffix}", json=body).status_code == 200
    videos = [
        api.get("videos", role, params={"limit": 5}).json()
        for role in ("limits_videos", f"limits_videos_{suffix}")
    ]
    assert videos[0]["rows"] and videos[0]["rows"] == videos[1]["rows"]


def test_a_restore_drops_what_a_fault_holds_back_for_that_organisation(api: Api) -> None:
    """Under `suspension_seen_late` a suspension lands 4 s late; the organisation's restore
    (the clean-up after the scenario that suspended it) leaves nothing to land on the next one."""
    api.admin("POST", "faults", {"enable": ["suspension_seen_late"]})
    for role in ("limits", "films"):
        assert api.admin("POST", f"roles/{role}/suspend").is_success
    assert len(api.sb.pending) == 2
    assert api.admin("POST", "roles/limits/restore").is_success
    api.admin("POST", "clock", {"advance": 5})
    assert api.get("config", "limits").status_code == 200  # never suspended
    assert api.get("config", "films").status_code == 403  # its own late suspension landed
