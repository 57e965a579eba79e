"""The judges of what a partner's app shows or decides (certify/state_judges.py) and of the shape
of its requests (certify/request_judges.py), each proven from both sides on synthetic journals:
a right export or request passes, a wrong one fails, and a missing field is "not exercised"."""

from __future__ import annotations

import json
from typing import Any

import pytest

from delivery_conformance.certify.journal import Entry
from delivery_conformance.certify.judges import JUDGES, FlowRun, Observation
from delivery_conformance.certify.state_judges import served_facts

KEY_SHOWN = "svc_live_ab…"
BEARER = {"Authorization": f"Bearer {KEY_SHOWN}"}


def entry(
    path: str, body: Any = None, *, seq: int = 1, method: str = "GET", status: int = 200,
    query: dict[str, str] | None = None, headers: dict[str, str] | None = None,
    sent: Any = None, injected: str = "", phase: int = 1,
) -> Entry:  # fmt: skip
    full = "/api/delivery/v1/" + path
    return Entry(
        seq=seq, connection=1, started=float(seq), ended=seq + 0.1, wall=1_764_000_000.0,
        method=method, path=full, query=query or {},
        request_headers=BEARER if headers is None else headers,
        request_body="" if sent is None else json.dumps(sent), status=status,
        response_headers={}, response_body="", latency=0.01, injected=injected, phase=phase,
        extra=served_facts(full, body) if body is not None else {},
    )  # fmt: skip


def judge(name: str, entries: list[Entry], export: Any = None) -> str:
    obs = Observation(tuple(entries), (FlowRun(1, 0, 1.0, export),))
    return JUDGES[name](obs, {}).status


FILMS = {
    "films": [
        {"id": "f1", "free_until_episode": 1, "default_lang": "es", "language": "Spanish",
         "poster_url": "https://img/f1.jpg", "content_rating": "13+",
         "title_i18n": {"en": "One", "es": "Uno"}},
        {"id": "f2", "free_until_episode": None, "default_lang": None, "language": "English",
         "poster_url": "https://img/f2.jpg", "content_rating": None, "title_i18n": {"en": "Two"}},
    ],
    "episodes": [
        {"film_id": "f1", "episode_no": 1, "poster_url": None},
        {"film_id": "f1", "episode_no": 2, "poster_url": "https://img/e2.jpg"},
        {"film_id": "f2", "episode_no": 1, "poster_url": None},
    ],
}  # fmt: skip


def films_export(**wrong: Any) -> dict[str, Any]:
    f1 = {
        "id": "f1",
        "audio_language": "es",
        "title_shown": "Uno",
        "episodes": [
            {"episode_no": 1, "free": True, "poster_url": "https://img/f1.jpg"},
            {"episode_no": 2, "free": False, "poster_url": "https://img/e2.jpg"},
        ],
    }
    f2 = {"id": "f2", "audio_language": "English", "title_shown": "Two", "episodes": [
        {"episode_no": 1, "free": False, "poster_url": "https://img/f2.jpg"}]}  # fmt: skip
    for key, value in wrong.items():
        f2[key] = value
    return {"catalog": {"display_lang": "es", "films": [f1, f2]}}


@pytest.mark.parametrize(
    ("name", "wrong"),
    [
        ("free_episodes", {"episodes": [{"episode_no": 1, "free": True, "poster_url": "https://img/f2.jpg"}]}),
        ("audio_language", {"audio_language": "fr"}),
        ("episode_poster", {"episodes": [{"episode_no": 1, "free": False, "poster_url": None}]}),
        ("i18n_fallback", {"title_shown": None}),
    ],
)  # fmt: skip
def test_catalog_display_judges_pass_the_right_export_and_fail_a_wrong_one(
    name: str, wrong: dict[str, Any]
) -> None:
    served = [entry("catalog", FILMS)]
    assert judge(name, served, films_export()) == "passed"
    assert judge(name, served, films_export(**wrong)) == "failed"
    assert judge(name, served, {"catalog": {"films": [{"id": "f1"}]}}) == "not exercised"
    assert judge(name, [], films_export()) == "not exercised"


def test_the_audio_language_judge_fails_language_shown_over_default_lang() -> None:
    export = films_export()
    export["catalog"]["films"][0]["audio_language"] = "Spanish"
    assert judge("audio_language", [entry("catalog", FILMS)], export) == "failed"


def test_age_rating_artwork_licence_and_final_size_judges_from_both_sides() -> None:
    detail = {"code": 0, "data": {"code": "SB1", "content_rating": None, "tier": "S",
              "images": [{"kind": "poster_3_4"}, {"kind": "x-new"}],
              "tags": [{"slug": "love", "name": "Love"}]}}  # fmt: skip
    series = [entry("series/SB1", detail)]
    right = {"code": "SB1", "age_rating": None, "artwork": ["poster_3_4"], "tags": ["love"]}
    assert judge("age_rating", series, {"series": {"items": [right]}}) == "passed"
    tier = {**right, "age_rating": "S"}
    assert judge("age_rating", series, {"series": {"items": [tier]}}) == "failed"
    assert judge("series_artwork_and_tags", series, {"series": {"items": [right]}}) == "passed"
    for wrong in ({"artwork": ["poster_3_4", "x-new"]}, {"tags": ["Love"]}):
        export = {"series": {"items": [{**right, **wrong}]}}
        assert judge("series_artwork_and_tags", series, export) == "failed"
    playlists = {"code": 0, "data": {"items": [{"code": "p1", "granted": True},
                                                {"code": "p2", "granted": False}]}}  # fmt: skip
    listed = [entry("playlists", playlists)]
    rows = [{"code": "p1", "licensed": True}, {"code": "p2", "licensed": False}]
    assert judge("playlist_licensed", listed, {"playlists": {"items": rows}}) == "passed"
    rows[1]["licensed"] = True
    assert judge("playlist_licensed", listed, {"playlists": {"items": rows}}) == "failed"
    feed = {"code": 0, "data": {"items": [{"creative_id": "c1", "placement": "feed_4x5",
            "final": {"target": {"width": 1080, "height": 1920}}}]}}  # fmt: skip
    creatives = [entry("creatives", feed)]
    good = {"creatives": {"items": [{"creative_id": "c1", "final_size": [1080, 1920]}]}}
    bad = {"creatives": {"items": [{"creative_id": "c1", "final_size": [1080, 1350]}]}}
    assert judge("final_size", creatives, good) == "passed"
    assert judge("final_size", creatives, bad) == "failed"


def test_the_sell_decision_judge_allows_selling_only_on_private_encrypted() -> None:
    def tickets(protection: str, sellable: bool) -> tuple[list[Entry], dict[str, Any]]:
        answer = {"items": [{"status": 200, "episode_id": "e1", "protection": protection}]}
        served = [entry("playback", answer, method="POST", sent={"episodes": []})]
        row = {"episode_id": "e1", "status": 200, "sellable_as_paid": sellable}
        return served, {"playback": {"tickets": [row]}}

    assert judge("sellable_only_encrypted", *tickets("private-encrypted", True)) == "passed"
    assert judge("sellable_only_encrypted", *tickets("x-new", False)) == "passed"
    assert judge("sellable_only_encrypted", *tickets("x-new", True)) == "failed"
    assert judge("sellable_only_encrypted", *tickets("signed-url-only", True)) == "failed"
    assert judge("sellable_only_encrypted", tickets("x", True)[0], {}) == "not exercised"


def test_request_judges_from_both_sides() -> None:
    body = {"intent": "play", "episodes": [{"episode_id": "e1"}]}
    json_type = {"Authorization": f"Bearer {KEY_SHOWN}", "Content-Type": "application/json"}
    post = entry("playback", method="POST", sent=body, headers=json_type)
    assert judge("json_on_post", [post]) == "passed"
    bare = entry("playback", method="POST", sent=body)
    assert judge("json_on_post", [bare]) == "failed"
    assert judge("json_on_post", [entry("catalog")]) == "not exercised"
    assert judge("bearer_only", [entry("catalog")]) == "passed"
    for wrong in (
        entry("catalog", query={"api_key": KEY_SHOWN}),
        entry("catalog", headers={"Authorization": f"Bearer  {KEY_SHOWN}"}),
        entry("catalog", headers={"Authorization": f"Bearer {KEY_SHOWN}", "Cookie": "k=v"}),
        entry("catalog", headers={}),
    ):
        assert judge("bearer_only", [wrong]) == "failed"
    assert (
        judge("epoch_updated_since", [entry("creatives", query={"updated_since": "1764000000"})])
        == "passed"
    )
    iso = entry("creatives", query={"updated_since": "2025-11-24T16:00:00Z"})
    assert judge("epoch_updated_since", [iso]) == "failed"
    assert judge("tap_is_play", [post]) == "passed"
    prefetch = entry("playback", method="POST", sent={**body, "intent": "prefetch"})
    assert judge("tap_is_play", [prefetch]) == "failed"


def test_the_code_judge_fails_only_when_the_message_changes_the_branch() -> None:
    def run(*retried: bool) -> str:
        entries, seq = [], 1
        for n, again in enumerate(retried):
            sent = {"try": n}
            entries.append(entry("catalog", seq=seq, sent=sent, status=503, injected="respond 503"))
            seq += 1
            if again:
                entries.append(entry("catalog", seq=seq, sent=sent))
                seq += 1
        return JUDGES["code_not_message"](
            Observation(tuple(entries), ()), {"injected": "503"}
        ).status

    assert run(True, True) == "passed" and run(False, False) == "passed"
    assert run(True, False) == "failed" and run(False, True) == "failed"
    assert run(True) == "not exercised"


def test_the_device_values_judge_wants_both_or_neither() -> None:
    both = {"union_info": "device-0001", "drm_kek": "kek-0000001", "episodes": []}
    one = {"union_info": "device-0001", "episodes": []}
    post = entry("playback", method="POST", sent=both)
    assert judge("device_values_paired", [post]) == "passed"
    retry = entry("playback", seq=2, method="POST", sent=one)
    assert judge("device_values_paired", [post, retry]) == "failed"
    none = entry("playback", method="POST", sent={"episodes": []})
    assert judge("device_values_paired", [none]) == "not exercised"


ACCOUNT = "ada.lovelace.k7f3@example.org"


@pytest.mark.parametrize(
    ("viewer_ref", "status"),
    [
        ("vr_5f0c8e2a9b7d4c1e8f3a6b2d9c0e7f14", "passed"),  # a random id
        ("session-000123-tv", "passed"),
        ("2f1e6a0c-93b4-4c55-a1f0-7be2c3d4e5f6", "passed"),  # a UUID with digits and dots apart
        (ACCOUNT, "failed"),  # the account as given
        ("ada.lovelace.k7f3_at_example.org", "failed"),  # its @ swapped to pass a check
        ("Ada_Lovelace_K7F3-device", "failed"),  # the part before the @, separators changed
        ("someone.else@example.net", "failed"),  # any email address
        ("tv-192.168.10.24", "failed"),  # an IP address
        ("fe80::1c2b:3ff:fe4d:5e6f", "failed"),
    ],
)
def test_the_viewer_ref_judge_refuses_personal_data(viewer_ref: str, status: str) -> None:
    posts = [
        entry("playback", method="POST", sent={"episode_id": "e1", "viewer_ref": viewer_ref}),
        entry("playback", seq=2, method="POST",
              sent={"episodes": [{"episode_id": "e2"}], "viewer_ref": viewer_ref}),
    ]  # fmt: skip
    obs = Observation(tuple(posts), (FlowRun(1, 0, 1.0),), personal=(ACCOUNT,))
    assert JUDGES["opaque_viewer_ref"](obs, {}).status == status


def test_the_viewer_ref_judge_is_not_exercised_without_a_viewer_ref() -> None:
    post = entry("playback", method="POST", sent={"episode_id": "e1"})
    obs = Observation((post,), (FlowRun(1, 0, 1.0),), personal=(ACCOUNT,))
    assert JUDGES["opaque_viewer_ref"](obs, {}).status == "not exercised"
