"""The reference client against the embedded sandbox (one per session, a subprocess): simulated
429, 503 (Retry-After), 500, 502, 503 not_ready; admin outages and lowered limits; a catalog
that changes between walks; creatives sync and a share link that turns 410. Waits are checked
against the spec's window with an injected clock, and with the real clock within 50 ms."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from client_support import FakeClock, Sandbox

from delivery_client import (
    INTERACTIVE,
    DeliveryClient,
    NotNow,
    RequestFailed,
    RetriesExhausted,
    RetryBudget,
)
from delivery_client.creatives import download_final, sync_creatives
from delivery_client.playback import play
from delivery_client.state import State
from delivery_client.sync import read_config, sync_catalog

CATALOG = "/api/delivery/v1/catalog"
PLAYBACK = "/api/delivery/v1/playback"


class Recording(httpx.HTTPTransport):
    def __init__(self) -> None:
        super().__init__()
        self.paths: list[str] = []
        self.bodies: list[bytes] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.paths.append(request.url.path)
        self.bodies.append(request.read())
        return super().handle_request(request)


def client(sandbox: Sandbox, role: str = "films", **kwargs: object) -> DeliveryClient:
    kwargs.setdefault("budget", RetryBudget())
    return DeliveryClient(sandbox.base_url, sandbox.keys[role], **kwargs)  # type: ignore[arg-type]


@pytest.fixture
def fake() -> Iterator[FakeClock]:
    yield FakeClock()


def test_simulated_429_is_retried_after_retry_after_cli_008_cli_013(
    sandbox: Sandbox, fake: FakeClock
) -> None:
    with (
        client(sandbox, simulate="rate_limited", clock=fake, sleep=fake.sleep) as c,
        pytest.raises(RetriesExhausted) as caught,
    ):
        c.request("GET", CATALOG, profile=INTERACTIVE)
    assert caught.value.status == 429 and len(fake.sleeps) == 3
    reply = httpx.get(
        sandbox.base_url + CATALOG,
        headers={
            "Authorization": f"Bearer {sandbox.keys['films']}",
            "Service-Simulate": "rate_limited",
        },
    )
    after = float(reply.headers["retry-after"])
    assert all(after <= wait <= after + 1 for wait in fake.sleeps), fake.sleeps


def test_simulated_503_waits_retry_after_two_plus_jitter_cli_009(
    sandbox: Sandbox, fake: FakeClock
) -> None:
    with (
        client(sandbox, simulate="service_unavailable", clock=fake, sleep=fake.sleep) as c,
        pytest.raises(RetriesExhausted),
    ):
        c.request("GET", "/api/delivery/v1/config", profile=INTERACTIVE)
    assert len(fake.sleeps) == 3 and all(2.0 <= wait <= 3.0 for wait in fake.sleeps)


@pytest.mark.parametrize("scenario", ["internal_error", "stream_error"])
def test_simulated_500_and_502_use_backoff_cli_010(
    sandbox: Sandbox, fake: FakeClock, scenario: str
) -> None:
    with (
        client(sandbox, simulate=scenario, clock=fake, sleep=fake.sleep) as c,
        pytest.raises(RetriesExhausted),
    ):
        play(c, [{"episode_id": sandbox.fixtures["episode_signed"]}])
    assert [wait <= bound for wait, bound in zip(fake.sleeps, (0.5, 1.0, 2.0), strict=True)] == [
        True
    ] * 3


def test_simulated_503_not_ready_is_one_call_cli_011(sandbox: Sandbox, fake: FakeClock) -> None:
    transport = Recording()
    with (
        client(
            sandbox,
            simulate="no_playable_version",
            clock=fake,
            sleep=fake.sleep,
            transport=transport,
        ) as c,
        pytest.raises(NotNow),
    ):
        play(c, [{"episode_id": sandbox.fixtures["episode_signed"]}])
    assert transport.paths == [PLAYBACK] and fake.sleeps == []


def test_per_item_503_not_ready_and_403_are_final_in_a_real_batch_cli_011_play_084(
    sandbox: Sandbox,
) -> None:
    device = {"union_info": "device-0001", "drm_kek": "kek-0000001"}
    episodes = [
        {"episode_id": sandbox.fixtures[name]}
        for name in ("episode_no_playable", "episode_outside_window")
    ]
    with client(sandbox) as c:
        results = play(c, episodes, device)
    assert [(r.status, r.code, r.tries) for r in results] == [
        (503, "not_ready", 1),
        (403, "not_entitled", 1),
    ]


def test_partial_batch_retries_only_the_refused_items_cli_025(
    sandbox: Sandbox, fake: FakeClock
) -> None:
    transport = Recording()
    episodes = [{"episode_id": sandbox.fixtures["episode_signed"]}] * 2
    with client(
        sandbox, simulate="partial_batch", clock=fake, sleep=fake.sleep, transport=transport
    ) as c:
        results = play(c, episodes)
    assert results[0].status == 200 and results[0].tries == 1
    # item 1 came back 429 with its own retry_after and was sent again alone (a batch of one is
    # outside the scenario, so it was issued)
    assert results[1].tries == 2 and results[1].status == 200
    assert [json.loads(body)["episodes"].__len__() for body in transport.bodies] == [2, 1]
    assert len(results[1].waits) == 1 and 0 <= results[1].waits[0] <= 60 + 1


def test_outage_503_is_retried_until_it_ends_cli_009(sandbox: Sandbox) -> None:
    sandbox.admin("POST", "/outages", {"area": "catalog", "on": True})
    fake = FakeClock()

    def sleep(seconds: float) -> None:
        fake.sleep(seconds)
        sandbox.admin("POST", "/outages", {"area": "catalog", "on": False})

    try:
        with client(sandbox, clock=fake, sleep=sleep) as c:
            reply = c.request("GET", CATALOG, params={"limit": 1})
    finally:
        sandbox.admin("POST", "/outages", {"area": "catalog", "on": False})
    assert reply.status == 200 and len(fake.sleeps) == 1 and 1.0 <= fake.sleeps[0] <= 2.0


def test_lowered_limit_429_real_wait_within_50_ms_of_retry_after_window_cli_008_cli_013(
    sandbox: Sandbox,
) -> None:
    sandbox.admin("POST", "/roles/limits/limits", {"counter": "catalog", "limit": 60})
    planned: list[float] = []
    gaps: list[float] = []
    stamps: list[float] = []
    transport = Recording()
    original = transport.handle_request

    def stamped(request: httpx.Request) -> httpx.Response:
        stamps.append(time.monotonic())
        return original(request)

    transport.handle_request = stamped  # type: ignore[method-assign]
    try:
        with client(sandbox, "limits", transport=transport) as c:
            for _ in range(70):
                reply = c.request("GET", CATALOG, params={"limit": 1}, profile=INTERACTIVE)
                if reply.waits:
                    planned = list(reply.waits)
                    gaps = [stamps[-1] - stamps[-2]]
                    break
    finally:
        sandbox.admin("POST", "/roles/limits/limits", {"counter": "catalog", "limit": 3000})
        sandbox.admin("POST", "/roles/limits/reset-limits")
    assert planned, "the lowered limit never answered 429"
    assert 1.0 <= planned[0] <= 3.0 + 1.0  # Retry-After (1 to ceil(60/60)+1) plus 0 to 1 s
    assert abs(gaps[0] - planned[0]) <= 0.05 + 0.05, (gaps, planned)  # + the request itself


def test_catalog_change_between_walks_marks_unavailable_after_two_walks_cli_046_cli_047(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    film_id = sandbox.fixtures["film_id"]
    state = State(tmp_path / "state.sqlite")
    with client(sandbox) as c:
        first = sync_catalog(c, state)
        sandbox.admin("POST", f"/licences/{film_id}/end")
        try:
            sync_catalog(c, state, paged=True)
            once = state.films()[film_id]
            sync_catalog(c, state)
            twice = state.films()[film_id]
        finally:
            sandbox.admin("POST", f"/licences/{film_id}/restore")
        sync_catalog(c, state)
    assert first.films_seen == first.available >= 100
    assert once.available and once.missed == 1
    assert not twice.available and twice.missed == 2
    assert state.films()[film_id].available


def test_paged_and_unpaged_walks_agree_cli_043_cli_044(sandbox: Sandbox, tmp_path: Path) -> None:
    one, paged = State(tmp_path / "a.sqlite"), State(tmp_path / "b.sqlite")
    with client(sandbox) as c:
        sync_catalog(c, one)
        sync_catalog(c, paged, paged=True)
    assert one.export(0)["catalog"]["films"] == paged.export(0)["catalog"]["films"]


def test_creatives_sync_twice_and_a_410_share_link_is_reread_cli_029_cli_030_cli_031(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    state = State(tmp_path / "state.sqlite")
    transport = Recording()
    with client(sandbox, "films_creatives", transport=transport) as c:
        first = sync_creatives(c, state)
        count = len(state.creatives())
        second = sync_creatives(c, state)
        assert len(state.creatives()) == count and second.updated_since == first.next_mark
        ready = [cid for cid, rec in state.creatives().items() if state.file_url(cid)]
        target = ready[0]
        assert download_final(c, state, target, tmp_path / "ok.mp4") == "share link"
        film_code = state.creatives()[target]["film"]["code"]
        film_id = next(
            f["id"]
            for f in httpx.get(
                sandbox.base_url + CATALOG,
                headers={"Authorization": f"Bearer {sandbox.keys['films']}"},
            ).json()["films"]
            if f["code"] == film_code
        )
        sandbox.admin("POST", f"/licences/{film_id}/suspend")
        transport.paths.clear()
        try:
            with pytest.raises(RequestFailed) as caught:
                download_final(c, state, target, tmp_path / "gone.mp4")
        finally:
            sandbox.admin("POST", f"/licences/{film_id}/restore")
    assert f"/api/delivery/v1/creatives/{target}" in transport.paths  # re-read after the 410
    assert caught.value.code == "4032"  # then the file endpoint says rights ended
    assert not (tmp_path / "gone.mp4").exists()


def test_config_is_read_with_unknown_fields_ignored_cfg_027(sandbox: Sandbox) -> None:
    with client(sandbox) as c:
        config = read_config(c)
    assert config["limits"]["catalog"] == 3000 and "playback" in config["scopes"]
