"""Creatives sync and file links, batch playback, secrets (spec: GET /creatives, /creatives/{id},
/creatives/{id}/file; Creative record; POST /playback; Errors > Retry policy (client side))."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from client_support import KEY, Rig, envelope_ok, json_response

from delivery_client import UsageError
from delivery_client.creatives import download_final, sync_creatives
from delivery_client.playback import new_viewer_ref, play
from delivery_client.redact import MARK, Redactor, SecretFilter
from delivery_client.rules import may_sell_paid, usable
from delivery_client.state import State

BASE = "http://127.0.0.1:9"
SHARE = BASE + "/api/c/tok_secret_share.mp4"
SHARE2 = BASE + "/api/c/tok_second_share.mp4"
DOWNLOAD = BASE + "/_files/creatives/c1.mp4?exp=9&sig=deadbeef"


def creative(
    cid: str, updated_at: int, file_url: str | None = None, ends_at: int | None = None
) -> dict:
    return {
        "creative_id": cid,
        "status": "approved",
        "updated_at": updated_at,
        "rights": {"ends_at": ends_at},
        "final": {"ready": file_url is not None, "file_url": file_url},
        "brand_new_field": 1,
    }


def env_page(items: list, cursor: str | None, since: str | None) -> dict:
    link = f"{BASE}/api/delivery/v1/creatives?cursor={cursor}" + (
        f"&updated_since={since}" if since else ""
    )
    return {
        "code": 0,
        "message": "ok",
        "server_time": 1,
        "data": {"items": items, "next_cursor": cursor},
        "links": {"self": "s", "next": link if cursor else None},
    }


def test_creatives_sync_upserts_by_id_and_pins_updated_since_cli_029_cli_030(
    rig: Callable[..., Rig], tmp_path: Path
) -> None:
    seen: list[tuple[str | None, str | None]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        cursor, since = request.url.params.get("cursor"), request.url.params.get("updated_since")
        seen.append((cursor, since))
        if cursor is None:
            return json_response(
                200, env_page([creative("c1", 100), creative("c2", 150)], "p2", since)
            )
        return json_response(200, env_page([creative("c2", 150), creative("c3", 200)], None, since))

    state = State(tmp_path / "s.sqlite")
    r = rig(handler)
    first = sync_creatives(r.client, state)
    assert sorted(state.creatives()) == ["c1", "c2", "c3"] and first.next_mark == 199
    sync_creatives(r.client, state)
    assert seen[2:] == [(None, "199"), ("p2", "199")]  # one updated_since for every page
    assert sorted(state.creatives()) == ["c1", "c2", "c3"]  # records returned again: no duplicate


def test_a_410_share_link_is_reread_and_no_download_link_is_stored_cli_031_cli_033(
    rig: Callable[..., Rig], tmp_path: Path
) -> None:
    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(request.url.path)
        if str(request.url) == SHARE:
            assert "authorization" not in request.headers  # share links need no key
            return json_response(410, {"error": "gone", "error_code": "gone"})
        if str(request.url) == SHARE2:
            return httpx.Response(302, headers={"Location": DOWNLOAD})
        if request.url.path == "/api/delivery/v1/creatives/c1":
            return envelope_ok(creative("c1", 5, SHARE2))
        if request.url.path == "/_files/creatives/c1.mp4":
            return httpx.Response(200, content=b"\x00\x00\x00\x18ftypmp42")
        raise AssertionError(request.url)

    state = State(tmp_path / "s.sqlite")
    with state.transaction() as db:
        State.upsert_creative(db, creative("c1", 1, SHARE))
    out = tmp_path / "c1.mp4"
    assert download_final(rig(handler).client, state, "c1", out) == "re-read share link"
    assert out.read_bytes().endswith(b"ftypmp42")
    assert state.file_url("c1") == SHARE2
    dump = "\n".join(state._db.iterdump())
    assert "deadbeef" not in dump and "_files" not in dump  # CLI-033: never stored
    exported = json.dumps(state.export(0))
    assert "tok_" not in exported and "api/c" not in exported  # CLI-032: never exported


def test_rights_end_includes_the_whole_last_day_cli_034() -> None:
    record = creative("c", 1, ends_at=86_400 * 10)
    assert usable(record, 86_400 * 10) and usable(record, 86_400 * 11 - 1)
    assert not usable(record, 86_400 * 11)
    assert usable(creative("c", 1, ends_at=None), 10**12)


def batch_server(
    script: list[list[dict]],
) -> tuple[Callable[[httpx.Request], httpx.Response], list[list[str]]]:
    asked: list[list[str]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        asked.append([item["episode_id"] for item in body["episodes"]])
        answers = script.pop(0)
        return json_response(200, {"items": [answers[i] for i in range(len(body["episodes"]))]})

    return handler, asked


def ticket(episode: str) -> dict:
    return {
        "status": 200,
        "episode_id": episode,
        "episode_no": 1,
        "vid": "v",
        "protection": "private-encrypted",
        "play_auth_token": f"tok-{episode}-secret",
        "expires_at": "2030-01-01T00:00:00Z",
        "subtitles": [],
    }


def refused(status: int, code: str, error: str | None = None, **extra: Any) -> dict[str, Any]:
    """A refused batch item (spec: Errors > Playback, per ticket); `error` defaults to the code."""
    return {"status": status, "error": error or code, "error_code": code, **extra}


def test_a_batch_retries_only_failed_items_each_after_its_own_retry_after_cli_025(
    rig: Callable[..., Rig],
) -> None:
    limited = refused(429, "rate_limited", retry_after=2)
    later = refused(503, "service_unavailable", "x", retry_after=5)
    not_ready = refused(503, "not_ready", "x")
    handler, asked = batch_server(
        [[ticket("e1"), limited, later, not_ready][:3], [ticket("e2")], [ticket("e3")]]
    )
    r = rig(handler, uniform=lambda a, b: a)
    results = play(r.client, [{"episode_id": e} for e in ("e1", "e2", "e3")], viewer_ref="vr_1")
    assert asked == [["e1", "e2", "e3"], ["e2"], ["e3"]]
    assert r.clock.sleeps == [2.0, 3.0]  # e2 at +2 s, e3 at +5 s
    assert [x.status for x in results] == [200, 200, 200] and [x.tries for x in results] == [
        1,
        2,
        2,
    ]


def test_per_item_not_ready_is_final_and_unknown_reasons_are_accepted_cli_011_play_084(
    rig: Callable[..., Rig],
) -> None:
    odd = refused(403, "not_entitled", "new_reason", reason="new_reason")
    handler, asked = batch_server([[{"status": 503, "error_code": "not_ready"}, odd]])
    results = play(rig(handler).client, [{"episode_id": "a"}, {"episode_id": "b"}])
    assert len(asked) == 1 and [(x.status, x.code) for x in results] == [
        (503, "not_ready"),
        (403, "not_entitled"),
    ]


def test_tickets_hide_their_token_and_only_private_encrypted_sells_paid_play_097_cli_041(
    rig: Callable[..., Rig], caplog: pytest.LogCaptureFixture
) -> None:
    handler, _ = batch_server([[ticket("e1")]])
    result = play(rig(handler).client, [{"episode_id": "e1"}])[0]
    assert result.ticket is not None and "tok-e1-secret" not in repr(result)
    assert result.ticket.sellable and not may_sell_paid({"protection": "signed-url-only"})
    assert not may_sell_paid({"protection": "something-new"})


def test_viewer_ref_is_opaque_and_random_play_025() -> None:
    first, second = new_viewer_ref(b"\x01" * 16), new_viewer_ref(b"\x02" * 16)
    assert first != second and first.startswith("vr_") and "@" not in first
    with pytest.raises(UsageError, match="personal data"):
        play(None, [{"episode_id": "e"}], viewer_ref="ana@example.com")  # type: ignore[arg-type]


def test_one_account_keeps_one_viewer_ref_and_the_account_is_never_stored_play_025(
    tmp_path: Path,
) -> None:
    made = iter(["vr_first", "vr_second", "vr_third"])
    state = State(tmp_path / "client.sqlite")
    try:
        ada = state.viewer_ref("ada@example.org", lambda: next(made))
        assert state.viewer_ref("ada@example.org", lambda: next(made)) == ada == "vr_first"
        assert state.viewer_ref("bob@example.org", lambda: next(made)) == "vr_second"
    finally:
        state.close()
    again = State(tmp_path / "client.sqlite")  # kept across runs of the client
    try:
        assert again.viewer_ref("ada@example.org", lambda: next(made)) == "vr_first"
    finally:
        again.close()
    assert b"example.org" not in (tmp_path / "client.sqlite").read_bytes()


def test_the_logging_filter_redacts_every_secret_kind_cli_032_cli_041(
    caplog: pytest.LogCaptureFixture,
) -> None:
    redact = Redactor()
    redact.add("tok-exact-value-123")
    logger = logging.getLogger("delivery_client.test")
    handler = logging.StreamHandler()
    secret_filter = SecretFilter(redact)
    caplog.handler.addFilter(secret_filter)
    try:
        logger.warning("key %s, %s", KEY, "Authorization: Bearer abc.def")
        logger.warning('ticket {"play_auth_token": "t0k", "manifest_url": "https://m.test/x.m3u8"}')
        logger.warning("links %s %s and tok-exact-value-123", SHARE, DOWNLOAD)
    finally:
        caplog.handler.removeFilter(secret_filter)
    text = caplog.text
    for secret in (
        KEY,
        "abc.def",
        "t0k",
        "m.test",
        "tok_secret_share",
        "deadbeef",
        "tok-exact-value-123",
    ):
        assert secret not in text
    assert text.count(MARK) >= 7
    del handler


def test_a_failing_share_link_never_shows_its_token_in_the_error_cli_032(
    rig: Callable[..., Rig], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="delivery_client")
    r = rig(lambda request: json_response(500, {"error": "x"}))
    with pytest.raises(Exception) as caught:
        r.client.request("GET", SHARE, keyless=True)
    assert "tok_secret_share" not in str(caught.value) and "127.0.0.1" in str(caught.value)
    assert "tok_secret_share" not in caplog.text and "authorization" not in r.requests[0].headers
