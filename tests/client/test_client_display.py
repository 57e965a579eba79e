"""What the reference client shows or decides (delivery_client.rules) and the state export that
carries it (`delivery-client-state/2`), plus the shape of its requests (key and JSON body)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import httpx
from client_support import KEY, Rig, envelope_ok, json_response

from delivery_client.catalog import FilmRecord
from delivery_client.creatives import sync_creatives
from delivery_client.listings import sync_playlists, sync_series
from delivery_client.playback import play
from delivery_client.rules import (
    age_rating,
    audio_language,
    episode_poster,
    final_size,
    i18n_text,
    licensed,
)
from delivery_client.state import EXPORT_FORMAT, State

FILM = {
    "id": "f1",
    "title": "Film",
    "language": "English",
    "default_lang": "en-GB",
    "poster_url": "https://img.example/f1.jpg",
    "content_rating": "13+",
    "free_until_episode": 1,
}


def test_the_audio_language_is_default_lang_before_language_cli_051() -> None:
    assert audio_language(FILM) == "en-GB"
    assert audio_language({**FILM, "default_lang": None}) == "English"
    assert audio_language({"default_lang": None, "language": None}) is None


def test_an_episode_without_a_poster_shows_the_film_poster_never_poster_uri_cli_052() -> None:
    own = {"poster_url": "https://img.example/e1.jpg", "poster_uri": "store://e1"}
    assert episode_poster(own, FILM) == "https://img.example/e1.jpg"
    assert (
        episode_poster({"poster_url": None, "poster_uri": "store://e2"}, FILM) == FILM["poster_url"]
    )
    assert episode_poster({"poster_url": None}, {"poster_url": None}) is None


def test_the_age_rating_is_content_rating_never_the_tier_cli_053() -> None:
    assert age_rating({"content_rating": "16+", "tier": "S"}) == "16+"
    assert age_rating({"content_rating": None, "tier": "A"}) is None


def test_a_playlist_is_offered_only_on_its_own_granted_cli_054() -> None:
    group = {"code": "yoga", "title": "Yoga"}
    assert licensed({"granted": True, "group": group})
    assert not licensed({"granted": False, "group": group})
    assert not licensed({"group": group})  # missing: not licensed


def test_the_export_carries_what_the_app_shows_cat_077_cli_051_cli_052(tmp_path: Path) -> None:
    state = State(tmp_path / "s.sqlite")
    episodes = tuple(
        {"film_id": "f1", "episode_no": n, "id": f"e{n}", "status": "published",
         "stream_ready": True, "vid_ready": True,
         "poster_url": "https://img.example/e1.jpg" if n == 1 else None}
        for n in (1, 2)
    )  # fmt: skip
    state.replace_films({"f1": FilmRecord("f1", FILM, episodes, True, 0)}, 1)
    view = state.export(0.0)
    assert view["format"] == EXPORT_FORMAT == "delivery-client-state/2"
    film = view["catalog"]["films"][0]
    assert (film["audio_language"], film["age_rating"]) == ("en-GB", "13+")
    assert [(e["free"], e["poster_url"]) for e in film["episodes"]] == [
        (True, "https://img.example/e1.jpg"),
        (False, FILM["poster_url"]),
    ]
    state.close()


def listing_server(
    kind: str, items: list[dict], detail: dict
) -> Callable[[httpx.Request], httpx.Response]:  # type: ignore[type-arg]
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith(f"/{kind}"):
            return envelope_ok({"items": items, "next_cursor": None}, listing=True)
        return envelope_ok({**detail, "code": request.url.path.rsplit("/", 1)[1]})

    return handler


def test_series_and_playlists_export_rating_artwork_tags_and_licence_cli_053_cli_054_cli_036(
    rig: Callable[..., Rig], tmp_path: Path
) -> None:
    state = State(tmp_path / "s.sqlite")
    series = [{"code": "SB000001", "status": "active", "content_version": "v1"}]
    detail = {
        "content_rating": None,
        "tier": "S",
        "images": [{"kind": "poster_3_4", "url": "https://img.example/p.jpg"}, {"kind": "x-new"}],
        "tags": [{"slug": "slow-burn", "name": "Slow burn"}],
    }
    sync_series(rig(listing_server("series", series, detail)).client, state)
    playlists = [
        {"code": f"p{n}", "status": "active", "content_version": "v", "granted": n == 1,
         "group": {"code": "g", "title": "Group"}}
        for n in (1, 2)
    ]  # fmt: skip
    sync_playlists(rig(listing_server("playlists", playlists, {"granted": True})).client, state)
    view = state.export(0.0)
    assert [(i["age_rating"], i["artwork"], i["tags"]) for i in view["series"]["items"]] == [
        (None, ["poster_3_4"], ["slow-burn"])
    ]
    assert [(i["code"], i["licensed"]) for i in view["playlists"]["items"]] == [
        ("p1", True),
        ("p2", False),
    ]
    state.close()


def test_the_sell_decision_is_exported_without_the_ticket_secrets_play_097(
    tmp_path: Path,
) -> None:
    state = State(tmp_path / "s.sqlite")
    state.record_tickets(
        [
            ("e1", 200, "private-encrypted", "2026-01-01T00:30:00Z", True),
            ("e2", 200, "signed-url-only", "2026-01-01T00:15:00Z", False),
        ]
    )
    tickets = state.export(0.0)["playback"]["tickets"]
    assert [(t["episode_id"], t["sellable_as_paid"]) for t in tickets] == [
        ("e1", True),
        ("e2", False),
    ]
    assert set(tickets[0]) == {"episode_id", "status", "protection", "expires_at",
                               "sellable_as_paid"}  # fmt: skip
    state.close()


def test_a_post_is_json_and_the_key_goes_only_in_the_bearer_header_cli_049_cli_050(
    rig: Callable[..., Rig],
) -> None:
    ticket = {"status": 200, "episode_id": "e1", "vid": "v", "play_auth_token": "tok-secret-1",
              "expires_at": "2026-01-01T00:30:00Z", "protection": "private-encrypted"}  # fmt: skip
    setup = rig(lambda request: json_response(200, {"items": [ticket]}))
    play(setup.client, [{"episode_id": "e1"}])
    request = setup.requests[0]
    assert request.method == "POST"
    assert request.headers["content-type"] == "application/json"
    assert json.loads(request.content)["episodes"] == [{"episode_id": "e1"}]
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert "cookie" not in request.headers and KEY not in str(request.url)


def test_a_missing_language_shows_the_en_text_cli_058() -> None:
    film = {"title_i18n": {"en": "The Film", "es": "La Película"}}
    assert i18n_text(film, "title_i18n", "es") == "La Película"
    assert i18n_text(film, "title_i18n", "pt-BR") == "The Film"
    assert i18n_text({"title_i18n": {}}, "title_i18n", "pt-BR") is None


def test_the_final_size_is_final_target_whatever_the_placement_cli_057() -> None:
    record = {"placement": "feed_4x5", "final": {"target": {"width": 1080, "height": 1920}}}
    assert final_size(record) == [1080, 1920]
    assert final_size({"placement": "square_1x1", "final": {}}) is None


def test_a_tap_is_sent_as_play_and_updated_since_as_epoch_seconds_cli_056_cli_055(
    rig: Callable[..., Rig], tmp_path: Path
) -> None:
    ticket = {"status": 200, "episode_id": "e1", "manifest_url": "https://cdn.example/m.m3u8",
              "expires_at": "2026-01-01T00:15:00Z", "protection": "signed-url-only"}  # fmt: skip
    setup = rig(lambda request: json_response(200, {"items": [ticket]}))
    play(setup.client, [{"episode_id": "e1"}])
    assert json.loads(setup.requests[0].content)["intent"] == "play"
    state = State(tmp_path / "s.sqlite")
    with state.transaction() as db:
        State.set_meta(db, "creatives_updated_since", 1_764_000_000)
    feed = rig(lambda request: envelope_ok({"items": [], "next_cursor": None}, listing=True))
    sync_creatives(feed.client, state)
    assert feed.requests[0].url.params["updated_since"] == "1764000000"
    state.close()


def test_device_values_go_together_on_the_first_try_and_on_a_retry_cli_059(
    rig: Callable[..., Rig],
) -> None:
    ticket = {"status": 200, "episode_id": "e1", "vid": "v", "play_auth_token": "tok-secret-2",
              "expires_at": "2026-01-01T00:30:00Z", "protection": "private-encrypted"}  # fmt: skip
    answers = iter([json_response(503, {"error_code": "service_unavailable"}, {"retry-after": "0"}),
                    json_response(200, {"items": [ticket]})])  # fmt: skip
    setup = rig(lambda request: next(answers))
    device = {"union_info": "device-0001", "drm_kek": "kek-0000001"}
    play(setup.client, [{"episode_id": "e1"}], device)
    bodies = [json.loads(r.content) for r in setup.requests]
    assert len(bodies) == 2
    assert all(b["union_info"] == "device-0001" and b["drm_kek"] == "kek-0000001" for b in bodies)
