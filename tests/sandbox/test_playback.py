"""POST /playback through HTTP, in-process, with a fake clock (spec: POST /playback; Limits)."""

from __future__ import annotations

from typing import Any

import pytest
from sandbox_playback_support import DEVICE, T0, Sandboxed

from delivery_sandbox.playback.tickets import iso_utc


def statuses(response: Any) -> list[int]:
    return [item["status"] for item in response.json()["items"]]


# -- single form ---------------------------------------------------------------------------------


def test_encrypted_episode_gets_vid_and_token_for_thirty_minutes(env: Sandboxed) -> None:
    r = env.post(env.encrypted())
    assert r.status_code == 200
    body = r.json()
    assert set(body) == {"vid", "play_auth_token", "expires_at", "protection", "subtitles"}
    assert body["expires_at"] == iso_utc(T0 + 1800)
    assert body["protection"] == "private-encrypted"
    langs = [s["lang"] for s in body["subtitles"]]
    assert langs == sorted(langs) and len(langs) >= 2
    assert {s["format"] for s in body["subtitles"]} == {"webvtt"}


def test_signed_url_episode_gets_a_manifest_link_without_device_values(env: Sandboxed) -> None:
    body = env.post({"episode_id": env.fx["episode_signed"]}).json()
    assert "manifest_url" in body and "vid" not in body and "play_auth_token" not in body
    assert body["expires_at"] == iso_utc(T0 + 900)
    assert body["protection"] == "signed-url-only"


def test_film_ref_accepts_id_and_slug_with_episode_no(env: Sandboxed) -> None:
    for ref in (env.fx["film_id"], env.fx["film_slug"]):
        r = env.post({"film_ref": ref, "episode_no": env.fx["episode_encrypted_no"], **DEVICE})
        assert r.status_code == 200, r.text


def test_episode_id_takes_precedence_over_film_ref(env: Sandboxed) -> None:
    r = env.post(env.encrypted(film_ref="no-such-film", episode_no=99))
    assert r.status_code == 200


def test_encrypted_episode_without_device_values_is_409_with_protection(env: Sandboxed) -> None:
    r = env.post({"episode_id": env.fx["episode_encrypted"]})
    assert r.status_code == 409
    assert r.json()["error_code"] == "sdk_required"
    assert r.json()["protection"] == "private-encrypted"


@pytest.mark.parametrize(
    "body",
    [b"not json", b"[1, 2]", b"{}", b'{"film_ref": "x"}'],
    ids=["not-json", "array", "empty", "film-ref-alone"],
)
def test_body_without_an_episode_is_400_without_code(env: Sandboxed, body: bytes) -> None:
    r = env.post(body)
    assert r.status_code == 400
    assert "error_code" not in r.json() and r.json()["request_id"]


@pytest.mark.parametrize("episode_no", ["2", 0, -1, 2.5, True])
def test_episode_no_must_be_a_whole_json_number(env: Sandboxed, episode_no: Any) -> None:
    r = env.post({"film_ref": env.fx["film_slug"], "episode_no": episode_no, **DEVICE})
    assert r.status_code == 400 and "error_code" not in r.json()


@pytest.mark.parametrize(
    "body",
    [
        {"union_info": "device-0001"},
        {"drm_kek": "kek-000000001"},
        {"episodes": []},
        {"episodes": [{}, {}, {}, {}]},
        {"episodes": [{"film_ref": "x"}]},
        {"episodes": [{"film_ref": "x", "episode_no": "1"}]},
        {"episodes": [{"episode_id": "x"}], "episode_id": "y"},
        {"episodes": [{"episode_id": "x"}], "next": 1},
        {"next": 3, "episode_id": "x"},
        {"next": -1, "episode_id": "x"},
        {"next": 1},
    ],
)
def test_malformed_requests_are_400_invalid_request(env: Sandboxed, body: dict[str, Any]) -> None:
    if "episodes" not in body and "next" not in body:
        body = {"episode_id": env.fx["episode_encrypted"], **body}
    r = env.post(body)
    assert r.status_code == 400
    assert r.json()["error_code"] == "invalid_request"


@pytest.mark.parametrize(
    ("union_info", "drm_kek", "fields"),
    [
        ("short", "kek-000000001", ["union_info"]),
        ("device-0001", "  1234567  ", ["drm_kek"]),
        ("UNDEFINED", "NuLL", ["union_info", "drm_kek"]),
        ("  (Null)  ", "kek-000000001", ["union_info"]),
        ("<NULL>", "None", ["union_info", "drm_kek"]),
        ("nil", "NaN", ["union_info", "drm_kek"]),
        (12345678, "kek-000000001", ["union_info"]),
    ],
)
def test_device_values_that_look_empty_are_400_with_fields(
    env: Sandboxed, union_info: Any, drm_kek: Any, fields: list[str]
) -> None:
    r = env.post(
        {"episode_id": env.fx["episode_encrypted"], "union_info": union_info, "drm_kek": drm_kek}
    )
    assert r.status_code == 400
    assert r.json()["error_code"] == "invalid_device_info"
    assert r.json()["fields"] == fields


def test_device_values_of_eight_characters_after_trimming_pass(env: Sandboxed) -> None:
    r = env.post(
        {
            "episode_id": env.fx["episode_encrypted"],
            "union_info": "  12345678 ",
            "drm_kek": "abcdefgh",
        }
    )
    assert r.status_code == 200


@pytest.mark.parametrize("intent", [None, "play", "prefetch", "PLAY", 7, "watch"])
def test_any_intent_is_served(env: Sandboxed, intent: Any) -> None:
    assert env.post(env.encrypted(intent=intent)).status_code == 200


# -- per-ticket errors ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fixture", "status", "code", "retry_after"),
    [
        ("episode_not_ready", 404, "not_ready", None),
        ("episode_no_playable", 503, "not_ready", None),
        ("episode_provider_timeout", 503, "service_unavailable", "2"),
        ("episode_stream_error", 502, None, None),
        ("episode_internal_error", 500, None, None),
    ],
)
def test_episode_failures_answer_their_status(
    env: Sandboxed, fixture: str, status: int, code: str | None, retry_after: str | None
) -> None:
    r = env.post({"episode_id": env.fx[fixture], **DEVICE})
    assert r.status_code == status
    assert r.json().get("error_code") == code
    assert r.headers.get("retry-after") == retry_after


@pytest.mark.parametrize(
    "reason",
    ["outside_window", "entitlement_not_found", "entitlement_suspended", "streaming_disabled"],
)
def test_licence_refusals_are_403_with_the_reason_as_error(env: Sandboxed, reason: str) -> None:
    r = env.post({"episode_id": env.fx[f"episode_{reason}"], **DEVICE})
    assert r.status_code == 403
    assert r.json()["error"] == reason == r.json()["reason"]
    assert r.json()["error_code"] == "not_entitled"


def test_unknown_and_planned_episodes_are_404_not_ready(env: Sandboxed) -> None:
    fx = env.fx
    for body in (
        {"episode_id": "not-a-uuid"},
        {"film_ref": "no-such-film", "episode_no": 1},
        {"film_ref": fx["episode_paged_film"], "episode_no": fx["placeholder_episode_no"]},
    ):
        r = env.post({**body, **DEVICE})
        assert (r.status_code, r.json()["error_code"]) == (404, "not_ready")


def test_unlicensed_organisation_is_403_not_entitled(env: Sandboxed) -> None:
    r = env.post(env.encrypted(), role="unlicensed")
    assert r.status_code == 403 and r.json()["error_code"] == "not_entitled"


def test_suspended_organisation_is_refused_whole_before_the_body(env: Sandboxed) -> None:
    r = env.post(b"not json", role="suspended")
    assert r.status_code == 403
    assert r.json()["error"] == "org_suspended" == r.json()["reason"]
    assert r.json()["error_code"] == "not_entitled"


def test_key_without_playback_scope_is_403_without_code(env: Sandboxed) -> None:
    r = env.post(env.encrypted(), role="films_metadata")
    assert r.status_code == 403 and "error_code" not in r.json()


# -- batches -------------------------------------------------------------------------------------


def test_batch_form_a_answers_items_in_request_order(env: Sandboxed) -> None:
    fx = env.fx
    r = env.post(env.batch("episode_not_ready", "episode_encrypted", "episode_outside_window"))
    assert r.status_code == 200
    items = r.json()["items"]
    assert statuses(r) == [404, 200, 403]
    assert items[1]["episode_id"] == fx["episode_encrypted"] and "play_auth_token" in items[1]
    assert items[1]["episode_no"] == fx["episode_encrypted_no"]
    assert items[2]["reason"] == "outside_window" and "episode_id" not in items[2]
    assert items[0]["request"]["episode_id"] == fx["episode_not_ready"]


def test_batch_item_zero_takes_top_intent_and_later_items_default_to_prefetch(
    env: Sandboxed,
) -> None:
    e = env.fx["episode_encrypted"]
    r = env.post(
        {
            "episodes": [{"episode_id": e}, {"episode_id": e}, {"episode_id": e, "intent": "play"}],
            "intent": "play",
            **DEVICE,
        }
    )
    assert [i["request"]["intent"] for i in r.json()["items"]] == ["play", "prefetch", "play"]


def test_next_adds_following_episodes_as_prefetch_and_404_past_the_end(env: Sandboxed) -> None:
    fx = env.fx
    r = env.post(
        {
            "film_ref": fx["episode_paged_film"],
            "episode_no": fx["episode_last_no"] - 1,
            "next": 2,
            "intent": "play",
            **DEVICE,
        }
    )
    items = r.json()["items"]
    assert statuses(r) == [200, 200, 404]
    assert [i["request"]["intent"] for i in items] == ["play", "prefetch", "prefetch"]
    assert items[1]["episode_no"] == fx["episode_last_no"]
    assert items[2]["error_code"] == "not_ready"


def test_next_zero_switches_to_the_batch_shape(env: Sandboxed) -> None:
    r = env.post(env.encrypted(next=0))
    assert statuses(r) == [200]


def test_batch_with_an_internal_error_is_500_whole(env: Sandboxed) -> None:
    r = env.post(env.batch("episode_encrypted", "episode_internal_error"))
    assert r.status_code == 500 and "error_code" not in r.json()


def test_batch_item_503_carries_retry_after(env: Sandboxed) -> None:
    r = env.post(env.batch("episode_provider_timeout", "episode_no_playable"))
    first, second = r.json()["items"]
    assert first["status"] == 503 and first["retry_after"] == 2
    assert second["status"] == 503 and second["error_code"] == "not_ready"


# -- reuse ---------------------------------------------------------------------------------------


def test_reuse_returns_the_same_ticket_and_costs_nothing(env: Sandboxed) -> None:
    first = env.post(env.encrypted(viewer_ref="viewer-1", intent="play")).json()
    level = env.level()
    env.time.now += 60
    second = env.post(env.encrypted(viewer_ref="viewer-1")).json()  # unknown counts as play
    assert second == first
    assert env.level() == pytest.approx(min(10_800, level + 60 * 180))


def test_reuse_needs_same_device_values_episode_form_and_intent(env: Sandboxed) -> None:
    fx = env.fx
    first = env.post(env.encrypted(viewer_ref="v"))
    token = first.json()["play_auth_token"]
    others = [
        env.encrypted(viewer_ref="w"),
        {**env.encrypted(viewer_ref="v"), "union_info": "device-9999"},
        env.encrypted(viewer_ref="v", intent="prefetch"),
        {
            "film_ref": fx["film_slug"],
            "episode_no": fx["episode_encrypted_no"],
            "viewer_ref": "v",
            **DEVICE,
        },
        env.encrypted(),
    ]
    for body in others:
        assert env.post(body).json()["play_auth_token"] != token


def test_reuse_stops_with_less_than_five_minutes_left(env: Sandboxed) -> None:
    token = env.post(env.encrypted(viewer_ref="v")).json()["play_auth_token"]
    env.time.now += 1500
    assert env.post(env.encrypted(viewer_ref="v")).json()["play_auth_token"] == token
    env.time.now += 1
    assert env.post(env.encrypted(viewer_ref="v")).json()["play_auth_token"] != token


def test_reuse_rechecks_the_organisation(env: Sandboxed) -> None:
    env.post(env.encrypted(viewer_ref="v"))
    env.sb.accounts.suspended.add("org_films")
    assert env.post(env.encrypted(viewer_ref="v")).status_code == 403


def test_long_viewer_ref_is_served_without_reuse(env: Sandboxed) -> None:
    long = "v" * 257
    first = env.post(env.encrypted(viewer_ref=long)).json()["play_auth_token"]
    assert env.post(env.encrypted(viewer_ref=long)).json()["play_auth_token"] != first
    exact = "v" * 256
    first = env.post(env.encrypted(viewer_ref=exact)).json()["play_auth_token"]
    assert env.post(env.encrypted(viewer_ref=exact)).json()["play_auth_token"] == first


# -- units and the limit -------------------------------------------------------------------------


def test_units_batch_three_malformed_one_refused_zero(env: Sandboxed) -> None:
    fx = env.fx
    e = fx["episode_encrypted"]
    env.post({"episodes": [{"episode_id": e}] * 3, **DEVICE})
    assert env.level() == 10_797
    env.post(b"{broken")
    assert env.level() == 10_796
    env.post({"episode_id": fx["episode_not_ready"], **DEVICE})
    env.post({"episode_id": e})  # 409
    assert env.level() == 10_796


def test_whole_request_429_before_the_body_with_headers(env: Sandboxed) -> None:
    env.drain_to(0)
    r = env.post(b"not json")
    assert r.status_code == 429
    assert r.json()["error_code"] == "rate_limited"
    assert r.headers["x-ratelimit-limit"] == "10800"
    assert r.headers["x-ratelimit-window"] == "60"
    assert r.headers["retry-after"] == "1"


def test_prefetch_is_shed_under_twenty_percent_while_play_is_issued(env: Sandboxed) -> None:
    env.drain_to(2_159)
    r = env.post(env.encrypted(intent="prefetch"))
    assert r.status_code == 429 and r.json()["reason"] == "prefetch_shed"
    assert int(r.headers["retry-after"]) >= 1
    assert env.post(env.encrypted(intent="play")).status_code == 200
    env.drain_to(2_161)
    assert env.post(env.encrypted(intent="prefetch")).status_code == 200


def test_play_is_held_until_room_then_issued(env: Sandboxed) -> None:
    env.drain_to(0.95)  # a token in 0.05/180... well under 0.5 s
    r = env.post(env.encrypted(intent="play"))
    assert r.status_code == 200
    assert env.time.slept and sum(env.time.slept) <= 0.5


def test_prefetch_is_never_held(env: Sandboxed) -> None:
    env.sb.limits.set_limit("org_films", "playback", 60, env.time.now)  # 1 ticket per second
    env.drain_to(0.9)
    r = env.post(env.encrypted(intent="prefetch"))
    assert r.status_code == 429 and not env.time.slept


def test_play_is_refused_when_room_is_further_than_the_hold(env: Sandboxed) -> None:
    env.sb.limits.set_limit("org_films", "playback", 60, env.time.now)
    env.drain_to(0.2)
    r = env.post(env.encrypted(intent="play"))
    assert r.status_code == 429 and r.headers["retry-after"] == "1"
    assert r.headers["x-ratelimit-limit"] == "60"


def test_batch_admits_play_first_and_sheds_prefetch_items(env: Sandboxed) -> None:
    e = env.fx["episode_encrypted"]
    env.drain_to(2_161)
    r = env.post(
        {
            "episodes": [
                {"episode_id": e, "intent": "prefetch"},
                {"episode_id": e, "intent": "prefetch"},
                {"episode_id": e, "intent": "play"},
            ],
            **DEVICE,
        }
    )
    assert r.status_code == 200
    items = r.json()["items"]
    assert statuses(r) == [200, 429, 200]
    assert items[1]["reason"] == "prefetch_shed" and isinstance(items[1]["retry_after"], int)
    assert items[1]["error_code"] == "rate_limited"


def test_batch_is_429_whole_only_when_no_item_is_issued(env: Sandboxed) -> None:
    e = env.fx["episode_encrypted"]
    env.drain_to(100)
    r = env.post({"episodes": [{"episode_id": e, "intent": "prefetch"}] * 2, **DEVICE})
    assert r.status_code == 429 and r.json()["reason"] == "prefetch_shed"
    assert "retry-after" in r.headers


def test_counters_belong_to_the_organisation_not_the_key(env: Sandboxed) -> None:
    env.post(env.encrypted(), role="films_playback")
    env.post(env.encrypted(), role="films")
    assert env.level("films") == 10_798
    assert env.level("limits") == 10_800
