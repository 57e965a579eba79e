"""DeliveryClient over httpx.MockTransport with a fake clock: every retry row end to end, the
waits in the spec's window, bad bodies, headers sent (spec: Errors > Retry policy (client side);
Errors > Formats; Authentication; What the service does)."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable

import httpx
import pytest
from client_support import KEY, FakeClock, Rig, envelope_ok, json_response

from delivery_client import (
    INTERACTIVE,
    BadResponse,
    DeliveryClient,
    NotNow,
    RequestFailed,
    RetriesExhausted,
    RetryBudget,
    RetryBudgetExhausted,
    TransportFailure,
)
from delivery_client.client import error_code

PATH = "/api/delivery/v1/catalog"
OK = {"films": [], "episodes": [], "extra_field": {"new": True}}


def sequence(
    *responses: httpx.Response | type[Exception],
) -> Callable[[httpx.Request], httpx.Response]:
    queue = list(responses)

    def handler(request: httpx.Request) -> httpx.Response:
        item = queue.pop(0) if len(queue) > 1 else queue[0]
        if isinstance(item, type):
            raise item("boom", request=request)
        return item

    return handler


def test_timeout_then_network_error_are_retried_with_backoff_cli_007(
    rig: Callable[..., Rig],
) -> None:
    r = rig(sequence(httpx.ReadTimeout, httpx.ConnectError, json_response(200, OK)))
    reply = r.client.request("GET", PATH, profile=INTERACTIVE)
    assert reply.status == 200 and len(r.requests) == 3
    assert r.clock.sleeps == [0.5, 1.0]  # uniform at its upper bound: base x 2^attempt


def test_transport_errors_to_the_end_give_a_transport_failure(rig: Callable[..., Rig]) -> None:
    r = rig(sequence(httpx.ConnectError))
    with pytest.raises(TransportFailure, match="no retries left after 3 retries"):
        r.client.request("GET", PATH, profile=INTERACTIVE)
    assert len(r.requests) == 4


@pytest.mark.parametrize("after", ["0", "1", "3"])
def test_429_waits_retry_after_plus_up_to_one_second_cli_008_cli_013(
    rig: Callable[..., Rig], after: str
) -> None:
    for uniform, extra in ((lambda a, b: a, 0.0), (lambda a, b: b, 1.0)):
        r = rig(
            sequence(
                json_response(
                    429, {"error": "x", "error_code": "rate_limited"}, {"Retry-After": after}
                ),
                json_response(200, OK),
            ),
            uniform=uniform,
        )
        r.client.request("GET", PATH)
        assert r.clock.sleeps == [float(after) + extra]


def test_503_with_and_without_retry_after_cli_009(rig: Callable[..., Rig]) -> None:
    body = {"error": "x", "error_code": "service_unavailable"}
    r = rig(
        sequence(
            json_response(503, body, {"Retry-After": "2"}),
            json_response(503, body),
            json_response(200, OK),
        )
    )
    r.client.request("GET", PATH)
    assert r.clock.sleeps == [3.0, 2.0]  # 2 + 1; then backoff bound 1 x 2^1 (background)


def test_envelope_5031_key_check_is_retried_never_a_key_change_cli_042(
    rig: Callable[..., Rig],
) -> None:
    r = rig(
        sequence(
            json_response(503, {"code": 5031, "message": "m"}, {"Retry-After": "1"}),
            envelope_ok({}),
        )
    )
    r.client.request("GET", "/api/delivery/v1/creatives/x")
    assert len(r.requests) == 2
    assert {req.headers["authorization"] for req in r.requests} == {f"Bearer {KEY}"}


@pytest.mark.parametrize("status", [500, 502, 504, 599])
def test_500_502_and_unknown_5xx_are_retried_with_backoff_cli_010(
    rig: Callable[..., Rig], status: int
) -> None:
    r = rig(sequence(httpx.Response(status, text="<html>oops</html>"), json_response(200, OK)))
    assert r.client.request("GET", PATH).status == 200 and r.clock.sleeps == [1.0]


def test_503_not_ready_is_not_retried_now_cli_011(rig: Callable[..., Rig]) -> None:
    r = rig(sequence(json_response(503, {"error": "x", "error_code": "not_ready"})))
    with pytest.raises(NotNow) as caught:
        r.client.request("POST", "/api/delivery/v1/playback", json_body={})
    assert len(r.requests) == 1 and caught.value.code == "not_ready"


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (400, {"error": "x", "error_code": "invalid_request"}),
        (401, {"error": "x"}),
        (403, {"error": "x"}),
        (404, {"error": "x", "error_code": "not_found"}),
        (405, None),
        (409, {"error_code": "sdk_required"}),
        (422, {"code": 4220, "message": "m"}),
        (418, {"error_code": "made_up"}),
    ],
)
def test_4xx_answers_are_sent_once_cli_012_err_018(
    rig: Callable[..., Rig], status: int, body: object
) -> None:
    r = rig(sequence(json_response(status, body)))
    with pytest.raises(RequestFailed) as caught:
        r.client.request("GET", PATH)
    assert len(r.requests) == 1 and caught.value.status == status and r.clock.sleeps == []


def test_unknown_codes_go_by_status_class_cli_005_err_010(rig: Callable[..., Rig]) -> None:
    r = rig(
        sequence(
            json_response(503, {"error": "x", "error_code": "brand_new_code"}),
            json_response(200, OK),
        )
    )
    assert r.client.request("GET", PATH).status == 200
    r = rig(
        sequence(
            json_response(429, {"error": "x", "error_code": "brand_new_code"}),
            json_response(200, OK),
        )
    )
    assert r.client.request("GET", PATH).status == 200
    r = rig(sequence(json_response(418, {"error": "x", "error_code": "brand_new_code"})))
    with pytest.raises(RequestFailed):
        r.client.request("GET", PATH)


def test_codes_come_from_error_code_or_envelope_code_never_message_text_cli_003() -> None:
    assert (
        error_code({"error": "service_unavailable please retry", "error_code": "rate_limited"})
        == "rate_limited"
    )
    assert error_code({"code": 5030, "message": "not_ready"}) == "5030"
    assert error_code({"code": 0, "message": "ok"}) is None
    assert error_code({"error": "not_ready"}) is None  # message text is never a code


def test_string_codes_are_compared_whole_cli_004_err_011() -> None:
    assert error_code({"error": "org_suspended"}) == "org_suspended"
    assert error_code({"error": "video_not_found"}) == "video_not_found"
    assert error_code({"error": "org_suspended_x"}) is None
    assert error_code({"error": "the org_suspended state"}) is None


def test_request_id_is_kept_as_an_opaque_string_cli_006(rig: Callable[..., Rig]) -> None:
    odd = "req_!!not-a-normal-id_0123456789"
    r = rig(sequence(json_response(200, OK, {"Service-Request-Id": odd})))
    assert r.client.request("GET", PATH).request_id == odd


def test_unknown_fields_are_ignored_cli_001_gen_010(rig: Callable[..., Rig]) -> None:
    r = rig(sequence(json_response(200, OK)))
    assert r.client.request("GET", PATH).object()["extra_field"] == {"new": True}


@pytest.mark.parametrize(
    "content",
    [b"<html><body>Bad gateway</body></html>", b'{"films": [', b"\x00\xff garbage", b"[1, 2]"],
)
def test_unreadable_bodies_are_a_one_line_bad_response(
    rig: Callable[..., Rig], content: bytes
) -> None:
    r = rig(sequence(httpx.Response(200, content=content)))
    with pytest.raises(BadResponse) as caught:
        r.client.request("GET", PATH).object()
    assert "\n" not in str(caught.value)


def test_backend_only_no_origin_no_cookies_bearer_key_gen_009(rig: Callable[..., Rig]) -> None:
    r = rig(sequence(json_response(200, OK, {"Set-Cookie": "session=abc; Path=/"})))
    r.client.request("GET", PATH)
    r.client.request("GET", PATH)
    for request in r.requests:
        assert "origin" not in request.headers and "cookie" not in request.headers
        assert request.headers["authorization"] == f"Bearer {KEY}"


def test_a_redirect_from_the_bare_host_is_not_followed_gen_011(rig: Callable[..., Rig]) -> None:
    r = rig(
        sequence(
            httpx.Response(
                308, headers={"Location": "http://www.example.test/api/delivery/v1/catalog"}
            )
        )
    )
    with pytest.raises(RequestFailed, match="www host") as caught:
        r.client.request("GET", PATH)
    assert caught.value.status == 308 and len(r.requests) == 1


def test_the_key_is_never_sent_to_another_origin(rig: Callable[..., Rig]) -> None:
    r = rig(sequence(json_response(200, OK)))
    with pytest.raises(BadResponse):
        r.client.request("GET", "http://elsewhere.test/api/delivery/v1/catalog")
    assert r.requests == []


def test_the_retry_budget_fails_fast_when_spent_cli_023(rig: Callable[..., Rig]) -> None:
    clock = FakeClock()
    budget = RetryBudget(clock=clock)
    for _ in range(10):
        assert budget.try_acquire()
    r = rig(sequence(json_response(500, None), json_response(200, OK)), budget=budget)
    r.client.clock, r.client.sleep = clock, clock.sleep
    with pytest.raises(RetryBudgetExhausted, match="retry budget"):
        r.client.request("GET", PATH)
    assert len(r.requests) == 1 and clock.sleeps == []


def test_a_huge_retry_after_ends_the_call_instead_of_waiting_cli_018(
    rig: Callable[..., Rig],
) -> None:
    r = rig(sequence(json_response(429, {"error_code": "rate_limited"}, {"Retry-After": "3600"})))
    with pytest.raises(RetriesExhausted, match="no time left"):
        r.client.request("GET", PATH, profile=INTERACTIVE)
    assert r.clock.sleeps == []


def test_real_clock_waits_land_within_50_ms_of_the_planned_wait_cli_013_cli_014() -> None:
    """Measured: the real sleep of each retry against the wait the policy planned."""
    handler = sequence(
        json_response(503, {"error_code": "service_unavailable"}, {"Retry-After": "0"}),
        json_response(500, None),
        json_response(200, OK),
    )
    stamps: list[float] = []
    planned: list[float] = []

    def record(request: httpx.Request) -> httpx.Response:
        stamps.append(time.monotonic())
        return handler(request)

    def uniform(low: float, high: float) -> float:
        value = min(high, 0.2)
        planned.append(value)
        return value

    client = DeliveryClient(
        "http://127.0.0.1:9",
        KEY,
        transport=httpx.MockTransport(record),
        budget=RetryBudget(),
        uniform=uniform,
    )
    reply = client.request("GET", PATH, profile=INTERACTIVE)
    client.close()
    gaps = [later - earlier for earlier, later in itertools.pairwise(stamps)]
    assert list(reply.waits) == planned == [0.2, 0.2]
    assert all(abs(gap - want) <= 0.05 for gap, want in zip(gaps, planned, strict=True)), gaps
