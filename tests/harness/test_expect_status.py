import pytest
from harness_support import respond

from delivery_conformance.checks import ConformanceFailure, expect_status


def test_expect_status_passes_on_the_status_it_names() -> None:
    expect_status("LIM-001", respond(status=429, body={"error": "x"}), 429, expected="429")


def test_expect_status_fails_with_a_typed_violation_showing_the_status() -> None:
    response = respond(status=200, body={})
    with pytest.raises(ConformanceFailure) as caught:
        expect_status("LIM-001", response, 429, expected="429 for the other key at once")
    (found,) = caught.value.violations
    assert found.requirement_id == "LIM-001"
    assert found.expected == "429 for the other key at once"
    assert found.actual == "200"
    assert found.exchange is response.exchange
