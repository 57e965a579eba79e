"""Each playback, limits or simulation fault changes what its row claims.

A probe runs the same exchange on a clean sandbox and on one with the fault switched on; the two
observations must differ, and the faulty one must be the one the fault describes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from sandbox_playback_support import DEVICE, T0, Sandboxed, patch_sleep

from delivery_sandbox.faults.playback_rows import PLAYBACK_FAULT_ROWS
from delivery_sandbox.faults.registry import FAULTS

Probe = Callable[[Sandboxed], Any]


def _slow_bucket(env: Sandboxed, left: float) -> None:
    """Playback limit 60 (one ticket per second), with `left` tickets in the bucket."""
    env.sb.limits.set_limit("org_films", "playback", 60, env.time.now)
    env.drain_to(left)


def refill(env: Sandboxed) -> Any:
    env.drain_to(0)
    env.time.now += 1
    return round(env.level())


def capacity(env: Sandboxed) -> Any:
    return round(env.level())


def prefetch_at(left: float) -> Probe:
    def probe(env: Sandboxed) -> Any:
        env.drain_to(left)
        return env.post(env.encrypted(intent="prefetch")).status_code

    return probe


def admission_order(env: Sandboxed) -> Any:
    e = env.fx["episode_encrypted"]
    env.drain_to(2160.5)
    body = {
        "episodes": [{"episode_id": e, "intent": "prefetch"}, {"episode_id": e, "intent": "play"}],
        **DEVICE,
    }
    return [i["status"] for i in env.post(body).json()["items"]]


def play_at(left: float) -> Probe:
    def probe(env: Sandboxed) -> Any:
        _slow_bucket(env, left)
        return env.post(env.encrypted(intent="play")).status_code

    return probe


def batch_of_two_plays(env: Sandboxed) -> Any:
    e = env.fx["episode_encrypted"]
    _slow_bucket(env, 1.2)
    r = env.post({"episodes": [{"episode_id": e, "intent": "play"}] * 2, **DEVICE})
    return r.status_code


def retry_after(env: Sandboxed) -> Any:
    _slow_bucket(env, 0)
    return env.post(env.encrypted(intent="play")).headers["retry-after"]


def advertised_limit(env: Sandboxed) -> Any:
    env.drain_to(0)
    return env.post(b"not json").headers["x-ratelimit-limit"]


def clock_minute(env: Sandboxed) -> Any:
    limits = env.sb.limits
    limits.set_limit("org_films", "config", 1)
    limits.take_request("org_films", "config", T0 + 30)
    return limits.take_request("org_films", "config", T0 + 60) is None


def expires_at(fixture: str) -> Probe:
    def probe(env: Sandboxed) -> Any:
        return env.post({"episode_id": env.fx[fixture], **DEVICE}).json()["expires_at"]

    return probe


def reuse_other_device(env: Sandboxed) -> Any:
    first = env.post(env.encrypted(viewer_ref="v")).json()["play_auth_token"]
    second = env.post({**env.encrypted(viewer_ref="v"), "drm_kek": "kek-999999999"}).json()
    return second["play_auth_token"] == first


def reuse_cost(env: Sandboxed) -> Any:
    env.post(env.encrypted(viewer_ref="v"))
    env.post(env.encrypted(viewer_ref="v"))
    return env.level()


def simulated(
    header: str = "service_unavailable", role: str = "films", observe: str = "level"
) -> Probe:
    def probe(env: Sandboxed) -> Any:
        r = env.post(env.encrypted(), role=role, headers={"Service-Simulate": header})
        if observe == "header":
            return r.headers.get("service-simulated")
        if observe == "status":
            return r.status_code
        return env.level(role)

    return probe


def simulated_past_limit(env: Sandboxed) -> Any:
    env.sb.limits.set_limit("org_films", "simulated", 1)
    head = {"Service-Simulate": "service_unavailable"}
    env.post(env.encrypted(), headers=head)
    return env.post(env.encrypted(), headers=head).status_code


def subtitle_order(env: Sandboxed) -> Any:
    subs = env.post(env.encrypted()).json()["subtitles"]
    return [s["lang"] for s in subs]


def device_value(union_info: str) -> Probe:
    def probe(env: Sandboxed) -> Any:
        body = {
            "episode_id": env.fx["episode_encrypted"],
            "union_info": union_info,
            "drm_kek": DEVICE["drm_kek"],
        }
        return env.post(body).status_code

    return probe


def later_item_intent(env: Sandboxed) -> Any:
    e = env.fx["episode_encrypted"]
    r = env.post({"episodes": [{"episode_id": e}, {"episode_id": e}], "intent": "play", **DEVICE})
    return r.json()["items"][1]["request"]["intent"]


def next_past_end(env: Sandboxed) -> Any:
    fx = env.fx
    body = {
        "film_ref": fx["episode_paged_film"],
        "episode_no": fx["episode_last_no"],
        "next": 2,
        **DEVICE,
    }
    return [i["status"] for i in env.post(body).json()["items"]]


def sdk_required_body(env: Sandboxed) -> Any:
    return "protection" in env.post({"episode_id": env.fx["episode_encrypted"]}).json()


def not_entitled_error(env: Sandboxed) -> Any:
    return env.post({"episode_id": env.fx["episode_outside_window"], **DEVICE}).json()["error"]


def batch_item_order(env: Sandboxed) -> Any:
    fx = env.fx
    body = {
        "episodes": [
            {"episode_id": fx["episode_signed"], "intent": "prefetch"},
            {"episode_id": fx["episode_encrypted"], "intent": "play"},
        ],
        **DEVICE,
    }
    return [i["episode_id"] for i in env.post(body).json()["items"]]


# fault -> (probe, the faulty observation)
PROBES: dict[str, tuple[Probe, Any]] = {
    "bucket_refills_too_fast": (refill, 360),
    "bucket_holds_too_much": (capacity, 16_200),
    "no_prefetch_shedding": (prefetch_at(100), 200),
    "shed_threshold_wrong": (prefetch_at(4_000), 429),
    "prefetch_admitted_first": (admission_order, [200, 200]),
    "no_play_hold": (play_at(0.9), 429),
    "play_hold_too_long": (play_at(0), 200),
    "batch_whole_429_early": (batch_of_two_plays, 429),
    "retry_after_wrong": (retry_after, "31"),
    "ratelimit_limit_wrong": (advertised_limit, "21600"),
    "clock_minute_rolling": (clock_minute, False),
    "play_token_ttl_short": (expires_at("episode_encrypted"), "2027-01-15T08:20:00Z"),
    "manifest_ttl_long": (expires_at("episode_signed"), "2027-01-15T08:30:00Z"),
    "reuse_ignores_device": (reuse_other_device, True),
    "reuse_counted": (reuse_cost, 10_798),
    "simulated_consumes_limit": (simulated(), 10_799),
    "simulated_header_missing": (simulated(observe="header"), None),
    "simulated_counter_not_counted": (simulated_past_limit, 503),
    "production_honours_simulate": (simulated(role="production", observe="status"), 503),
    "subtitles_unsorted": (subtitle_order, ["fr", "es", "en"]),
    "device_value_untrimmed": (device_value("  1234567  "), 200),
    "null_words_case_sensitive": (device_value("UNDEFINED"), 200),
    "batch_item_intent_play": (later_item_intent, "play"),
    "next_past_end_issued": (next_past_end, [200]),
    "sdk_required_without_protection": (sdk_required_body, False),
    "not_entitled_error_not_reason": (not_entitled_error, "not entitled"),
}


def test_every_row_has_a_probe_and_is_in_the_faults_table() -> None:
    names = {row[0] for row in PLAYBACK_FAULT_ROWS}
    assert names <= set(FAULTS)
    assert names - set(PROBES) == {"batch_items_in_admission_order"}
    assert len(names) >= 20
    assert all(FAULTS[n].requirements for n in names)


@pytest.mark.parametrize("fault", sorted(PROBES))
def test_fault_changes_what_it_claims(monkeypatch: pytest.MonkeyPatch, fault: str) -> None:
    probe, faulty = PROBES[fault]
    observed = {}
    for faults in ((), (fault,)):
        env = Sandboxed(faults=faults)
        patch_sleep(monkeypatch, env)
        try:
            observed[faults] = probe(env)
        finally:
            env.close()
    assert observed[(fault,)] == faulty
    assert observed[()] != faulty


def test_batch_items_in_admission_order_reorders_items(monkeypatch: pytest.MonkeyPatch) -> None:
    for faults, expected in (((), "signed"), (("batch_items_in_admission_order",), "encrypted")):
        env = Sandboxed(faults=faults)
        patch_sleep(monkeypatch, env)
        try:
            assert batch_item_order(env)[0] == env.fx[f"episode_{expected}"]
        finally:
            env.close()
