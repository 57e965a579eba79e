"""Simulated scenarios: the table, POST /playback through HTTP, and `respond` for GET endpoints."""

from __future__ import annotations

import orjson
import pytest
from sandbox_playback_support import DEVICE, T0, Sandboxed

from delivery_sandbox.http.headers import Exchange
from delivery_sandbox.playback.simulate import (
    SCENARIOS,
    respond,
    scenario_for,
    scenarios_for,
)

PLAYBACK_SCENARIOS = [n for n in scenarios_for("playback") if n != "partial_batch"]


def test_table_covers_every_error_a_partner_must_handle() -> None:
    reasons = {
        f"not_entitled:{r}"
        for r in (
            "org_suspended",
            "entitlement_not_found",
            "entitlement_suspended",
            "streaming_disabled",
            "outside_window",
        )
    }
    assert reasons | {
        "rate_limited",
        "service_unavailable",
        "partial_batch",
        "not_ready",
        "prefetch_shed",
        "no_playable_version",
        "sdk_required",
        "stream_error",
        "internal_error",
    } <= set(SCENARIOS)
    assert (
        set(scenarios_for("catalog"))
        == set(scenarios_for("config"))
        == {"rate_limited", "service_unavailable", "org_suspended"}
    )


def test_every_scenario_answers_a_status_its_endpoints_list() -> None:
    """A simulated answer is a real one: only where the endpoint's error table has it."""
    tables = {
        "catalog": {400, 401, 403, 405, 429, 503},
        "config": {400, 401, 403, 405, 429, 503},
        "playback": {200, 400, 401, 403, 404, 405, 409, 429, 500, 502, 503},
    }
    for scenario in SCENARIOS.values():
        for endpoint in scenario.endpoints:
            assert scenario.status in tables[endpoint], (scenario.name, endpoint)
    assert scenario_for("internal_error", "catalog", True) is None
    assert scenario_for("internal_error", "config", True) is None
    # fault simulated_beyond_error_table: the 500 honoured where no table has it
    assert scenario_for("internal_error", "config", True, beyond_table=True) is not None
    assert scenario_for("partial_batch", "catalog", True, beyond_table=True) is None


def test_scenario_is_ignored_for_production_unknown_and_unsupported() -> None:
    assert scenario_for("rate_limited", "playback", test_organisation=False) is None
    assert scenario_for("no_such_scenario", "playback", True) is None
    assert scenario_for("partial_batch", "catalog", True) is None
    assert scenario_for(" rate_limited ", "catalog", True) is SCENARIOS["rate_limited"]


@pytest.mark.parametrize("name", PLAYBACK_SCENARIOS)
def test_playback_scenario_answers_the_real_shape_and_spends_no_ticket(
    env: Sandboxed, name: str
) -> None:
    scenario = SCENARIOS[name]
    r = env.post(env.encrypted(), headers={"Service-Simulate": name})
    assert r.status_code == scenario.status
    assert r.headers["service-simulated"] == name
    body = r.json()
    assert body.get("error_code") == scenario.error_code and body["request_id"]
    if scenario.reason is not None:
        assert body["reason"] == scenario.reason
    if name.startswith("not_entitled:"):
        assert body["error"] == scenario.reason
    if scenario.status == 429:
        assert r.headers["x-ratelimit-limit"] == "10800" and r.headers["x-ratelimit-window"] == "60"
        assert int(r.headers["retry-after"]) >= 1
    if scenario.status == 503:
        assert ("retry-after" in r.headers) == (name == "service_unavailable")
    if name == "sdk_required":
        assert body["protection"] == "private-encrypted"
    assert env.level() == 10_800


def test_production_organisation_ignores_the_header(env: Sandboxed) -> None:
    r = env.post(env.encrypted(), role="production", headers={"Service-Simulate": "rate_limited"})
    assert "service-simulated" not in r.headers and r.status_code != 429


def test_unknown_scenario_runs_the_request_normally(env: Sandboxed) -> None:
    r = env.post(env.encrypted(), headers={"Service-Simulate": "meteor_strike"})
    assert r.status_code == 200 and "service-simulated" not in r.headers


def test_simulation_never_bypasses_authentication(env: Sandboxed) -> None:
    r = env.client_post_with_key("svc_live_" + "x" * 32, {"Service-Simulate": "rate_limited"})
    assert r.status_code == 401 and "service-simulated" not in r.headers


def test_simulated_limit_is_300_per_utc_minute_then_a_real_429(env: Sandboxed) -> None:
    env.time.now = T0 + 10
    head = {"Service-Simulate": "service_unavailable"}
    for _ in range(300):
        assert env.post(env.encrypted(), headers=head).status_code == 503
    r = env.post(env.encrypted(), headers=head)
    assert r.status_code == 429 and "service-simulated" not in r.headers
    assert r.headers["x-ratelimit-limit"] == "300" and r.headers["retry-after"] == "50"
    env.time.now = T0 + 60
    assert env.post(env.encrypted(), headers=head).status_code == 503


def test_partial_batch_issues_the_first_item_for_real(env: Sandboxed) -> None:
    e = env.fx["episode_encrypted"]
    body = {
        "episodes": [{"episode_id": e}, {"episode_id": e}, {"episode_id": e, "intent": "play"}],
        **DEVICE,
    }
    r = env.post(body, headers={"Service-Simulate": "partial_batch"})
    assert r.status_code == 200 and r.headers["service-simulated"] == "partial_batch"
    items = r.json()["items"]
    assert [i["status"] for i in items] == [200, 429, 429]
    assert items[1]["reason"] == "prefetch_shed" and "reason" not in items[2]
    assert all(isinstance(i["retry_after"], int) for i in items[1:])
    assert env.level() == 10_799


def test_partial_batch_on_a_single_request_is_ignored(env: Sandboxed) -> None:
    r = env.post(env.encrypted(), headers={"Service-Simulate": "partial_batch"})
    assert r.status_code == 200 and "service-simulated" not in r.headers
    assert "items" not in r.json()


@pytest.mark.parametrize("endpoint", ["catalog", "config"])
def test_respond_for_get_endpoints_uses_their_counter_limit(env: Sandboxed, endpoint: str) -> None:
    exchange = Exchange("req_" + "0" * 26, "2026-10-02", "http://127.0.0.1")
    reply = respond(
        exchange,
        env.sb.faults,
        env.sb.limits,
        "org_films",
        SCENARIOS["rate_limited"],
        endpoint,
        T0 + 15,
    )
    headers = dict(reply.headers)
    assert reply.status == 429 and headers[b"service-simulated"] == b"rate_limited"
    expected = b"3000" if endpoint == "catalog" else b"600"
    assert headers[b"x-ratelimit-limit"] == expected
    assert headers[b"retry-after"] == (b"1" if endpoint == "catalog" else b"45")
    assert orjson.loads(reply.body)["error_code"] == "rate_limited"
    snapshot = env.sb.limits.snapshot("org_films", T0 + 15)
    assert snapshot[endpoint]["remaining"] == (3000 if endpoint == "catalog" else 600)
    assert snapshot["simulated"]["remaining"] == 299
