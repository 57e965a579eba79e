"""The admin action on subtitles and the faults that hold its change back (spec: Limits >
Freshness, a subtitle attached or replaced and the subtitle languages of `/config`;
docs/sandbox.md: Admin API; faults/freshness.py)."""

from __future__ import annotations

from typing import Any

from sandbox_api import Api

FILE = "https://files.example/subtitles/ep-nl.vtt"


def ticket_subtitles(api: Api) -> dict[str, str]:
    body = {"episode_id": api.fx["episode_signed"]}
    response = api.request("POST", "playback", "films", json=body)
    assert response.status_code == 200, response.text
    return {s["lang"]: s["url"] for s in response.json()["subtitles"]}


def config_languages(api: Api) -> list[str]:
    languages: list[str] = api.get("config", "films").json()["subtitles"]["languages"]
    return languages


def attach(api: Api, lang: str, url: str = FILE) -> Any:
    return api.admin(
        "POST", f"episodes/{api.fx['episode_signed']}/subtitles", {"lang": lang, "url": url}
    )


def test_attached_subtitle_shows_in_tickets_config_and_metadata_until_the_reset(api: Api) -> None:
    film_id = api.sb.store.episodes[api.fx["episode_signed"]].film_id
    version = api.sb.store.films[film_id].metadata_version
    assert "nl" not in ticket_subtitles(api) and "nl" not in config_languages(api)
    answer = attach(api, "nl")
    assert answer.status_code == 200
    assert answer.json() == {"episode_id": api.fx["episode_signed"], "lang": "nl", "url": FILE}
    assert ticket_subtitles(api)["nl"] == FILE
    assert "nl" in config_languages(api)
    assert api.sb.store.films[film_id].metadata_version != version
    api.admin("POST", "reset")
    assert "nl" not in ticket_subtitles(api) and "nl" not in config_languages(api)
    assert api.sb.store.films[film_id].metadata_version == version


def test_replaced_subtitle_file_shows_in_tickets(api: Api) -> None:
    lang = next(iter(ticket_subtitles(api)))
    assert attach(api, lang).status_code == 200
    assert ticket_subtitles(api)[lang] == FILE


def test_subtitle_action_refuses_bad_bodies_and_unknown_episodes(api: Api) -> None:
    assert attach(api, "not a tag").status_code == 400
    assert attach(api, "nl", "http://files.example/nl.vtt").status_code == 400
    missing = api.admin("POST", "episodes/ep_none/subtitles", {"lang": "nl", "url": FILE})
    assert missing.status_code == 404


def test_ticket_fault_holds_tickets_back_and_config_not(api: Api) -> None:
    api.admin("POST", "faults", {"only": ["subtitle_ticket_after_305_s"]})
    attach(api, "nl")
    assert "nl" not in ticket_subtitles(api)
    assert "nl" in config_languages(api)
    assert len(api.sb.pending) == 1  # the late landing, which the reset cancels
    api.admin("POST", "reset")
    assert not api.sb.pending


def test_config_fault_holds_config_back_and_tickets_not(api: Api) -> None:
    api.admin("POST", "faults", {"only": ["config_languages_after_305_s"]})
    attach(api, "nl")
    assert ticket_subtitles(api)["nl"] == FILE
    assert "nl" not in config_languages(api)
    assert len(api.sb.pending) == 1
    api.admin("POST", "clock", {"advance": 304})
    assert "nl" not in config_languages(api)  # 304 s on the sandbox clock: not yet
    api.admin("POST", "clock", {"advance": 2})  # the delay elapsed
    assert "nl" in config_languages(api) and ticket_subtitles(api)["nl"] == FILE
    assert not api.sb.pending
