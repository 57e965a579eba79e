import json

import httpx
import pytest
from harness_support import KEY, answer, client_for, make_profile

from delivery_conformance.evidence.exchange import BODY_CAP, Exchange
from delivery_conformance.exceptions import HarnessFailure, TargetGarbage, TargetUnreachable
from delivery_conformance.target.client import DeliveryClient
from delivery_conformance.target.pacing import Pacer
from fake_clock import FakeClock


def test_client_sends_bearer_key_version_and_simulate_headers() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return answer(200, {"ok": True})(request)

    with client_for(handler) as client:
        client.request("GET", "config", role="films", version="2026-10-02", simulate="x")
    request = seen[0]
    assert request.url.path == "/api/delivery/v1/config"
    assert request.headers["Authorization"] == f"Bearer {KEY}"
    assert request.headers["Service-Version"] == "2026-10-02"
    assert request.headers["Service-Simulate"] == "x"


def test_client_posts_json_with_content_type_and_can_drop_a_header() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return answer(200, {})(request)

    with client_for(handler) as client:
        client.post("playback", role="films", json={"episode_id": "e"})
        client.post("playback", json={"a": 1}, headers={"Content-Type": None})
    assert seen[0].headers["Content-Type"] == "application/json"
    assert json.loads(seen[0].content) == {"episode_id": "e"}
    assert "Authorization" not in seen[1].headers
    assert "Content-Type" not in seen[1].headers


def test_client_never_follows_a_redirect_and_sends_the_host_asked() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(308, headers={"Location": "http://www.example/api/delivery/v1/x"})

    with client_for(handler) as client:
        response = client.request("GET", "config", host="delivery.sandbox")
    assert response.status_code == 308 and len(seen) == 1
    assert seen[0].headers["Host"] == "delivery.sandbox"


def test_client_records_every_exchange_redacted() -> None:
    recorded: list[Exchange] = []
    body = {"play_auth_token": "tok-very-secret", "vid": "v1"}
    with client_for(answer(200, body), on_exchange=recorded.append) as client:
        response = client.post("playback", role="films", json={"episode_id": "e"})
    assert response.exchange is recorded[0]
    dumped = json.dumps(recorded[0].to_dict())
    assert KEY not in dumped and "tok-very-secret" not in dumped
    assert recorded[0].status == 200 and recorded[0].method == "POST"


def test_exchange_body_is_capped() -> None:
    with client_for(answer(200, {"x": "y" * (BODY_CAP * 2)})) as client:
        exchange = client.get("config").exchange
    assert len(exchange.response_body) < BODY_CAP + 100


def test_json_body_of_html_is_target_garbage_in_one_line() -> None:
    handler = answer(
        200, raw=b"<html>\n<body>oops</body></html>", headers={"Content-Type": "text/html"}
    )
    with client_for(handler) as client:
        response = client.get("config", role="films")
        with pytest.raises(TargetGarbage) as caught:
            response.json_body()
    assert "not JSON" in str(caught.value) and "\n" not in str(caught.value)


def test_json_body_of_empty_body_is_target_garbage() -> None:
    with client_for(answer(200)) as client, pytest.raises(TargetGarbage, match="empty body"):
        client.get("config").json_body()


def test_connection_refused_is_target_unreachable_and_still_recorded() -> None:
    recorded: list[Exchange] = []

    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    with (
        client_for(handler, on_exchange=recorded.append) as client,
        pytest.raises(TargetUnreachable, match="connection refused"),
    ):
        client.get("config", role="films")
    assert recorded[0].status is None and recorded[0].error == "connection refused"


def test_read_timeout_is_target_unreachable_naming_the_timeout() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("slow", request=request)

    with (
        client_for(handler, timeout=2.5) as client,
        pytest.raises(TargetUnreachable, match=r"2\.5 s"),
    ):
        client.get("config")


def test_invalid_http_is_target_garbage() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.RemoteProtocolError("illegal status line", request=request)

    with client_for(handler) as client, pytest.raises(TargetGarbage, match="invalid HTTP"):
        client.get("config")


def test_a_connection_dropped_before_any_byte_is_unreachable_however_it_is_read() -> None:
    """A reset may reach h11 as EOF before the status line; both readings are one outcome."""

    def handler(request: httpx.Request) -> httpx.Response:
        message = "Server disconnected without sending a response."
        raise httpx.RemoteProtocolError(message, request=request)

    with client_for(handler) as client, pytest.raises(TargetUnreachable, match="cannot reach"):
        client.get("config")


def test_unknown_role_is_a_harness_failure() -> None:
    with client_for(answer(200, {})) as client, pytest.raises(HarnessFailure, match="'nobody'"):
        client.get("config", role="nobody")


def test_client_keeps_no_cookie_between_requests() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, headers={"Set-Cookie": "s=1; Path=/"}, json={})

    with client_for(handler) as client:
        client.get("config")
        client.get("config")
    assert "cookie" not in seen[1].headers


def paced_client(pacer: Pacer, clock: FakeClock) -> DeliveryClient:
    """A client on a mock target that answers 200, paced on the fake clock."""
    return DeliveryClient(
        make_profile(),
        transport=httpx.MockTransport(answer(200, {})),
        pacer=pacer,
        sleep=clock.sleep,
        clock=clock,
    )


def test_client_sleeps_under_the_pacing_budget_with_an_injected_clock() -> None:
    clock = FakeClock(start=0.0)
    client = paced_client(Pacer({"config": 4}), clock)
    for _ in range(3):
        client.get("config", role="films")
    assert clock.sleeps == [pytest.approx(60.0)]


def test_a_burst_is_neither_delayed_nor_charged_and_pacing_resumes_after_it() -> None:
    clock = FakeClock(start=0.0)
    pacer = Pacer({"config": 4})
    client = paced_client(pacer, clock)
    client.get("config", role="films")
    with client.burst("the scenario drains a lowered counter"):
        for _ in range(5):
            client.get("config", role="films")
        assert client.bursting == "the scenario drains a lowered counter"
    assert clock.sleeps == [] and pacer.used("config", clock.now) == 1 and client.bursting is None
    client.get("config", role="films")
    client.get("config", role="films")
    assert clock.sleeps == [pytest.approx(60.0)]
    with pytest.raises(HarnessFailure, match="say why"), client.burst(" "):
        pass
    with client.burst("a freshness poll on shared counters", charged=True):
        client.get("config", role="films")
    assert clock.sleeps == [pytest.approx(60.0)] and pacer.used("config", clock.now) == 2  # charged


def test_a_key_whose_organisation_no_other_role_shares_spends_a_budget_of_its_own() -> None:
    """spec: Limits counts per organisation: `limits` (and the twin a scenario holds in its
    place) has its own budget; `films` and `videos`, which may share one, spend one together."""
    keys = {"films": "k-films", "videos": "k-videos", "limits": "k-limits", "limits_b": "k-b"}
    pacer = Pacer({"config": 100})
    client = DeliveryClient(
        make_profile(keys=keys),
        transport=httpx.MockTransport(answer(200, {})),
        pacer=pacer,
        clock=lambda: 0.0,
    )
    client.get("config", role="films")
    client.get("config", role="videos")
    client.get("config", role="limits")
    client.get("config", key="k-limits")  # the key named: the budget of its role
    client.role_aliases = {"limits": "limits_b"}
    client.get("config", role="limits")  # the twin's key is sent: the twin's budget
    assert pacer.used("config", 0.0) == 2
    assert pacer.used("config", 0.0, organisation="limits") == 2
    assert pacer.used("config", 0.0, organisation="limits_b") == 1


def test_simulated_requests_use_their_own_counter_and_playback_batches_cost_tickets() -> None:
    pacer = Pacer({"playback": 100, "simulated": 100})
    client = DeliveryClient(
        make_profile(),
        transport=httpx.MockTransport(answer(200, {})),
        pacer=pacer,
        clock=lambda: 0.0,
    )
    client.post("playback", role="films", json={"episodes": [{}, {}, {}]})
    client.post("playback", role="films", json={"episode_id": "e", "next": 2})
    client.post("playback", role="films", json={"episode_id": "e"}, simulate="rate_limited")
    assert pacer.used("playback", 0.0) == 6
    assert pacer.used("simulated", 0.0) == 1


def test_learn_config_applies_limits_and_remembers_the_pin() -> None:
    body = {
        "api": {"pinned_version": "2026-10-02"},
        "rate_limits": {"doors": {"catalog": {"limit": 40, "unit": "requests"}}},
    }
    pacer = Pacer()
    client = DeliveryClient(
        make_profile(), transport=httpx.MockTransport(answer(200, body)), pacer=pacer
    )
    assert client.learn_config("films") == {"catalog": 40}
    assert pacer.budget("catalog") == 20
    assert client.get("catalog", role="films").context.pinned_version == "2026-10-02"


def test_a_role_alias_sends_the_twin_key_and_names_the_role_asked() -> None:
    """Several workers: a limit scenario holding the twin organisation sends its keys, and the
    evidence reads as a sequential run's (the credential named as the role it stands in for)."""
    twin_key = "svc_live_" + "Tw1" * 10 + "n2"
    seen: list[httpx.Request] = []
    recorded: list[Exchange] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return answer(200, {})(request)

    profile = make_profile(keys={"limits": KEY, "limits_b": twin_key})
    transport = httpx.MockTransport(handler)
    with DeliveryClient(profile, transport=transport, on_exchange=recorded.append) as client:
        client.role_aliases = {"limits": "limits_b"}
        client.get("config", role="limits")
        client.role_aliases = {}
        client.get("config", role="limits")
    assert [r.headers["Authorization"] for r in seen] == [f"Bearer {twin_key}", f"Bearer {KEY}"]
    assert [e.credential for e in recorded] == ["role:limits", "role:limits"]
    assert twin_key not in json.dumps(recorded[0].to_dict())
