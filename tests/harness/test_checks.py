import pytest
from harness_support import REQUEST_ID, respond

from delivery_conformance.checks import (
    CHECKS,
    ConformanceFailure,
    Violation,
    assert_conforms,
    expect,
    run_checks,
)

FLAT_401 = {"error": "unauthorized", "request_id": REQUEST_ID}
ENVELOPE_404 = {"code": 4040, "message": "not found", "server_time": 1, "request_id": REQUEST_ID}


def ids(violations: list[Violation]) -> set[str]:
    return {v.requirement_id for v in violations}


def test_a_clean_config_answer_passes_every_check() -> None:
    assert run_checks(respond(body={"api": {}}, role="films")) == []


def test_a_clean_flat_error_and_envelope_error_pass() -> None:
    assert run_checks(respond(status=401, body=FLAT_401)) == []
    assert run_checks(respond(path="series/XX000001", status=404, body=ENVELOPE_404)) == []


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Service-API-Status": None}, {"HDR-001"}),
        ({"Service-API-Status": "ga"}, {"HDR-002"}),
        ({"Service-Version": None}, {"HDR-003"}),
        ({"Service-Version": "2026-13-40"}, {"HDR-006"}),
        ({"Service-Request-Id": None}, {"HDR-011"}),
        ({"Service-Request-Id": "req_short"}, {"HDR-012"}),
        ({"Cache-Control": None}, {"HDR-014"}),
        ({"Cache-Control": "no-store, max-age=0"}, {"HDR-015"}),
        ({"Access-Control-Allow-Origin": "*"}, {"GEN-002"}),
        ({"Set-Cookie": "a=1"}, {"GEN-003"}),
        ({"X-RateLimit-Limit": "600"}, {"HDR-028"}),
        ({"X-RateLimit-Window": "60"}, {"HDR-030"}),
    ],
)
def test_each_header_check_catches_its_fault(headers: dict, expected: set[str]) -> None:
    assert ids(run_checks(respond(body={}, headers=headers, role="films"))) == expected


@pytest.mark.parametrize("value", ["no-store", "No-Store", "NO-STORE", " no-store "])
def test_cache_control_directive_is_compared_in_any_letter_case(value: str) -> None:
    """Decision HDR-015: RFC 9111 directive names are case-insensitive; only no-store itself."""
    assert run_checks(respond(body={}, headers={"Cache-Control": value}, role="films")) == []


@pytest.mark.parametrize("value", ["no-store, private", "private, no-store", "No-Cache"])
def test_cache_control_with_another_directive_is_not_exactly_no_store(value: str) -> None:
    found = run_checks(respond(body={}, headers={"Cache-Control": value}, role="films"))
    assert ids(found) == {"HDR-015"}


def test_get_video_200_must_not_carry_service_version() -> None:
    found = run_checks(respond(path="videos/1d4e", body={"row": {}}))
    assert ids(found) == {"HDR-004"}
    clean = respond(path="videos/1d4e", body={"row": {}}, headers={"Service-Version": None})
    assert run_checks(clean) == []


def test_get_video_error_must_carry_service_version() -> None:
    body = {"error": "video_not_found", "request_id": REQUEST_ID}
    found = run_checks(
        respond(path="videos/1d4e", status=404, body=body, headers={"Service-Version": None})
    )
    assert ids(found) == {"HDR-005"}


def test_service_version_must_echo_a_requested_version() -> None:
    found = run_checks(respond(body={}, version="2027-01-01"))
    assert ids(found) == {"HDR-008"}
    refused = {"error": "x", "error_code": "unsupported_version", "request_id": REQUEST_ID}
    assert run_checks(respond(status=400, body=refused, version="2027-01-01")) == []
    # A 401 (a key refused before the version was read) is judged by HDR-010 / AUTH-010 only.
    unauthorized = {"error": "unauthorized", "request_id": REQUEST_ID}
    assert run_checks(respond(status=401, body=unauthorized, version="2027-01-01")) == []


def test_429_needs_retry_after_and_both_rate_limit_headers() -> None:
    body = {"error": "slow down", "error_code": "rate_limited", "request_id": REQUEST_ID}
    assert ids(run_checks(respond(status=429, body=body))) == {"HDR-024", "HDR-027", "HDR-029"}
    good = {"Retry-After": "2", "X-RateLimit-Limit": "600", "X-RateLimit-Window": "60"}
    assert run_checks(respond(status=429, body=body, headers=good)) == []
    dated = {**good, "Retry-After": "Wed, 21 Oct 2026 07:28:00 GMT"}
    assert ids(run_checks(respond(status=429, body=body, headers=dated))) == {"HDR-026"}


def test_503_not_ready_must_not_carry_retry_after_but_service_unavailable_must() -> None:
    not_ready = {"error": "x", "error_code": "not_ready", "request_id": REQUEST_ID}
    found = run_checks(respond("POST", "playback", 503, not_ready, {"Retry-After": "2"}))
    assert ids(found) == {"PLAY-093"}
    unavailable = {"error": "x", "error_code": "service_unavailable", "request_id": REQUEST_ID}
    assert ids(run_checks(respond("POST", "playback", 503, unavailable))) == {"HDR-025"}


def test_non_json_body_and_wrong_content_type_break_gen_005() -> None:
    found = run_checks(respond(body={}, headers={"Content-Type": "text/plain"}))
    assert ids(found) == {"GEN-005"}


def test_flat_error_needs_a_string_error_and_the_request_id() -> None:
    found = run_checks(respond(status=401, body={"message": "no", "request_id": "req_other"}))
    assert ids(found) == {"ERR-001", "HDR-013"}
    assert ids(run_checks(respond(status=401, body=[1]))) == {"ERR-005", "HDR-013"}
    both = {"error": "org_suspended", "error_code": 3, "request_id": REQUEST_ID}
    assert ids(run_checks(respond(status=403, body=both))) == {"ERR-002", "ERR-004"}


def test_envelope_code_must_start_with_the_status_and_carry_no_data() -> None:
    body = {**ENVELOPE_404, "code": 4220, "data": None}
    found = run_checks(respond(path="series/XX000001", status=404, body=body))
    assert ids(found) == {"ERR-008", "ERR-009"}
    assert {v.actual for v in found} == {"`data` present", "4220"}


def test_envelope_endpoint_429_is_flat() -> None:
    body = {"error": "x", "error_code": "rate_limited", "request_id": REQUEST_ID}
    headers = {"Retry-After": "1", "X-RateLimit-Limit": "3000", "X-RateLimit-Window": "60"}
    assert run_checks(respond(path="series", status=429, body=body, headers=headers)) == []
    envelope = {"code": 4290, "message": "x", "server_time": 1, "request_id": REQUEST_ID}
    found = run_checks(respond(path="series", status=429, body=envelope, headers=headers))
    assert ids(found) == {"ERR-001", "ERR-006"}


def test_unknown_path_must_be_404_not_found() -> None:
    assert ids(run_checks(respond(path="nothing-here", status=200, body={}))) == {"ERR-012"}
    assert ids(run_checks(respond("POST", "nothing-here", 405))) == {"ERR-013"}
    body = {"error": "x", "error_code": "not_found", "request_id": REQUEST_ID}
    assert run_checks(respond(path="nothing-here", status=404, body=body)) == []


def test_wrong_method_must_be_405_empty_with_allow() -> None:
    assert run_checks(respond("DELETE", "config", 405, headers={"Allow": "GET"})) == []
    found = run_checks(respond("DELETE", "config", 405, body={"error": "x"}))
    assert ids(found) == {"ERR-015", "ERR-016"}


def test_a_wrong_method_answered_404_is_err_015_alone() -> None:
    """Allow is what a 405 carries (ERR-016); another status is one finding, ERR-015's."""
    body = {"error": "x", "error_code": "not_found", "request_id": REQUEST_ID}
    assert ids(run_checks(respond("DELETE", "config", 404, body=body))) == {"ERR-015"}


def test_a_path_or_method_refused_for_the_key_first_is_accepted_without_a_valid_key() -> None:
    """Decision ERR-014, ERR-017: the key's 401 may come before the 404 or the 405."""
    assert run_checks(respond(path="nothing-here", status=401, body=FLAT_401)) == []
    assert run_checks(respond("DELETE", "config", 401, body=FLAT_401)) == []
    envelope_401 = {"code": 4010, "message": "x", "server_time": 1, "request_id": REQUEST_ID}
    assert run_checks(respond("PUT", "series", 401, body=envelope_401)) == []
    refused = {"error": "x", "error_code": "unsupported_version", "request_id": REQUEST_ID}
    assert (
        run_checks(respond(path="nothing-here", status=400, body=refused, version="1999-01-01"))
        == []
    )


def test_a_path_or_method_refused_401_with_a_valid_key_is_still_wrong() -> None:
    found = run_checks(respond(path="nothing-here", status=401, body=FLAT_401, role="films"))
    assert ids(found) == {"ERR-012"}
    found = run_checks(respond("DELETE", "config", 401, body=FLAT_401, role="films"))
    assert ids(found) == {"ERR-015"}


def test_an_error_answer_to_head_has_no_body_to_judge() -> None:
    """HTTP gives a HEAD answer no body: no flat-error, envelope or request_id finding."""
    found = run_checks(respond("HEAD", "config", 401))
    assert not ids(found) & {"ERR-001", "ERR-005", "ERR-008", "HDR-013"}
    assert ids(run_checks(respond("GET", "config", 401))) & {"ERR-005", "HDR-013"}


def test_assert_conforms_raises_typed_violations() -> None:
    response = respond(body={}, headers={"Cache-Control": "public"})
    with pytest.raises(ConformanceFailure) as caught:
        assert_conforms(response)
    assert [v.requirement_id for v in caught.value.violations] == ["HDR-015"]
    assert caught.value.violations[0].exchange is response.exchange
    assert_conforms(response, CHECKS["no_cors"])  # only the check asked for


def test_expect_raises_only_when_the_condition_fails() -> None:
    expect("PLAY-001", True, expected="x", actual="x")
    with pytest.raises(ConformanceFailure) as caught:
        expect("PLAY-001", False, expected="200", actual=503)
    violation = caught.value.violations[0]
    assert (violation.requirement_id, violation.expected, violation.actual) == (
        "PLAY-001",
        "200",
        "503",
    )


def test_violation_round_trips_through_a_dict() -> None:
    response = respond(body={}, headers={"Cache-Control": None})
    found = run_checks(response)[0]
    assert Violation.from_dict(found.to_dict()) == found


def test_every_registered_check_names_known_requirements() -> None:
    from delivery_conformance.spec.requirements import load_requirements

    known = load_requirements()
    for check in CHECKS.values():
        assert set(check.requirements) <= set(known), check.name
