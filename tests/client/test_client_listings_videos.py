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


def test_following_open_videos_walks_again_only_when_the_list_is_due_cli_040(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from datetime import timedelta
    from types import SimpleNamespace

    from delivery_client import videos

    start = datetime(2026, 1, 1, tzinfo=UTC)
    clock = [start]
    walked: list[datetime] = []

    def walk(client: object, collection: str | None = None) -> videos.VideoList:
        walked.append(clock[0])  # each walk's list is due 120 s after it was served
        return videos.VideoList(({"collection": "C1"},), clock[0] + timedelta(seconds=120))

    def sleep(seconds: float) -> None:
        clock[0] += timedelta(seconds=seconds)

    monkeypatch.setattr(videos, "fetch_videos", walk)
    feed = videos.VideoFeed(SimpleNamespace(settings=Settings()))  # type: ignore[arg-type]
    done = videos.follow_videos(feed, 100, 10, lambda: clock[0], sleep)
    # margin 60 s: the first walk is due at 60 s, the second (served at 60 s) at 120 s
    assert [(t - start).total_seconds() for t in walked] == [0, 60]
    assert (done.polls, done.walks, done.rows, done.collections) == (11, 2, 1, ("C1",))
    assert clock[0] - start == timedelta(seconds=100)  # stopped by itself at the end
    frozen = videos.VideoFeed(SimpleNamespace(settings=Settings()))  # type: ignore[arg-type]
    assert videos.follow_videos(frozen, 30, 10, lambda: start, lambda s: None).polls == 4
    with pytest.raises(ValueError, match="positive"):
        videos.follow_videos(frozen, 0, 10, lambda: start, sleep)


def test_the_videos_follow_option_prints_counts_only_and_stops_by_itself(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    import subprocess
    import sys

    env = {
        "DELIVERY_BASE_URL": sandbox.base_url,
        "DELIVERY_API_KEY": sandbox.keys["videos"],
        "PATH": "/usr/bin:/bin",
    }
    state = ["--state", str(tmp_path / "s.sqlite")]

    def client(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "delivery_client", *state, *args]
        return subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)

    result = client("videos", "--follow", "1", "--every", "0.4")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["polls"] == 3 and out["walks"] == 1 and out["rows"] >= 10  # not due for 45 min
    assert "mp4" not in result.stdout + result.stderr and "http" not in result.stdout
    for bad in (["--follow", "0"], ["--follow", "5", "--every", "0"]):
        assert client("videos", *bad).returncode == 2
    assert client("--deadline", "2", "videos", "--follow", "5").returncode == 2
