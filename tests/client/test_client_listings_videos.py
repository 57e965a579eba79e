"""Playlists sync keeps no image or poster link (CLI-038) and skips unknown sources (CLI-036);
open videos are used as received and never stored, refreshed before `refresh_before` (CLI-040)."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import httpx
import pytest
from client_support import Rig, Sandbox, list_and_detail_server

from delivery_client import DeliveryClient, RetryBudget, Settings
from delivery_client.listings import sync_playlists
from delivery_client.state import State

CDN = "https://cdn.wandura.test/cover.jpg?exp=1&sig=abc"


def playlist_server(log: list[str]) -> Callable[[httpx.Request], httpx.Response]:
    items = [{"code": "PL1", "status": "active", "content_version": "v1"}]
    return list_and_detail_server(log, "/playlists", items, lambda code: PLAYLIST_DETAIL)


POSTER = {"source": "wandura_cdn", "url": CDN, "expires_at": 9, "space": None, "uri": None}
PLAYLIST_DETAIL = {
    "code": "PL1",
    "images": [
        {"kind": "cover", **POSTER},
        {"kind": "cover", "source": "hologram", "url": CDN},
    ],
    "clips": [
        {"id": "c1", "position": 1, "poster": POSTER},
        {"id": "c2", "position": 2, "poster": {"source": "new_source", "url": CDN}},
    ],
}


def test_playlist_image_and_clip_poster_links_are_not_stored_cli_038_cli_036(
    rig: Callable[..., Rig], tmp_path: Path
) -> None:
    state, log = State(tmp_path / "s.sqlite"), []
    assert sync_playlists(rig(playlist_server(log)).client, state) == (1, 1)
    dump = "\n".join(state._db.iterdump())
    assert "wandura.test" not in dump and "sig=abc" not in dump
    detail = json.loads(state._db.execute("SELECT detail FROM playlists").fetchone()[0])
    assert [i["source"] for i in detail["images"]] == ["wandura_cdn"]  # unknown source skipped
    assert detail["clips"][1]["poster"] is None
    assert sync_playlists(rig(playlist_server(log)).client, state) == (1, 0)  # unchanged


def test_playlists_against_the_sandbox_store_no_cdn_link_cli_038(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    state = State(tmp_path / "s.sqlite")
    with DeliveryClient(sandbox.base_url, sandbox.keys["videos"], budget=RetryBudget()) as client:
        items, details = sync_playlists(client, state)
    assert items >= 70 and details >= 1
    sources = set()
    for (text,) in state._db.execute("SELECT detail FROM playlists WHERE detail IS NOT NULL"):
        assert "http://" not in text and "https://" not in text  # no image or poster link
        detail = json.loads(text)
        sources |= {i["source"] for i in detail["images"]}
        sources |= {c["poster"]["source"] for c in detail["clips"] if c["poster"]}
    assert "wandura_cdn" in sources  # the CDN images were there, their links were dropped


def test_open_video_links_are_used_as_received_never_stored_and_refreshed_in_time_cli_040(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    import logging
    from datetime import timedelta

    from delivery_client.redact import SecretFilter
    from delivery_client.videos import VideoFeed

    with DeliveryClient(sandbox.base_url, sandbox.keys["videos"], budget=RetryBudget()) as client:
        feed = VideoFeed(client, sandbox.fixtures["collection_code"])
        first = feed._list
        assert first is None
        now = datetime.now(UTC)
        rows = feed.rows(now)
        link = rows[0]["mp4"]["p480"]
        assert link.startswith("http") and feed.walks == 1
        refresh = feed._list.refresh_before if feed._list else None
        assert refresh is not None and timedelta(minutes=40) < refresh - now <= timedelta(
            minutes=46
        )
        assert feed.rows(refresh - timedelta(seconds=61)) is rows and feed.walks == 1  # still fresh
        feed.rows(refresh - timedelta(seconds=59))  # within the margin: walked again
        assert feed.walks == 2
    record = logging.LogRecord("x", logging.INFO, "f", 1, "playing %s", (link,), None)
    SecretFilter().filter(record)
    assert link not in record.getMessage()
    with pytest.raises(ValueError, match="video_refresh_margin"):
        Settings(video_refresh_margin=-600)  # a refresh after refresh_before is refused
    assert not list(tmp_path.iterdir())  # nothing was written anywhere


def test_the_videos_command_prints_counts_and_no_link(sandbox: Sandbox, tmp_path: Path) -> None:
    import subprocess
    import sys

    env = {
        "DELIVERY_BASE_URL": sandbox.base_url,
        "DELIVERY_API_KEY": sandbox.keys["videos"],
        "PATH": "/usr/bin:/bin",
    }
    result = subprocess.run(
        [sys.executable, "-m", "delivery_client", "--state", str(tmp_path / "s.sqlite"), "videos"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["rows"] >= 10 and "mp4" not in result.stdout and "http" not in result.stdout
