"""The common rules judged on every recorded exchange of a test (checks/common.py)."""

from __future__ import annotations

import gzip
import json
import zlib
from typing import Any

import brotli
from harness_support import answer, client_for, respond

from delivery_conformance.checks.common import judge_exchanges, response_of, with_common_rules
from delivery_conformance.evidence.events import Outcome
from delivery_conformance.evidence.exchange import BODY_CAP, Exchange


def record(*args: Any, **kwargs: Any) -> Exchange:
    return respond(*args, **kwargs).exchange


def test_a_clean_exchange_adds_nothing_and_keeps_the_outcome() -> None:
    clean = record("GET", "config", 200, {"limits": {}})
    assert judge_exchanges([clean]) == ()
    assert with_common_rules(Outcome.PASSED, (), [clean]) == (Outcome.PASSED, ())


def test_one_rule_broken_on_many_exchanges_is_one_finding_charged_to_that_rule() -> None:
    broken = [record("GET", "catalog", 200, {}, headers={"Service-API-Status": None})] * 3
    (found,) = judge_exchanges(broken)
    assert found.requirement_id == "HDR-001"
    assert found.actual.endswith("(and on 2 more exchanges)")
    outcome, violations = with_common_rules(Outcome.PASSED, (), broken)
    assert outcome is Outcome.FAILED and [v.requirement_id for v in violations] == ["HDR-001"]


def test_a_violation_the_scenario_raised_on_the_same_exchange_is_not_repeated() -> None:
    response = respond("GET", "catalog", 200, {}, headers={"Cache-Control": "public"})
    (found,) = judge_exchanges([response.exchange])
    assert found.requirement_id == "HDR-015"
    assert judge_exchanges([response.exchange], already=[found]) == ()


def test_the_request_context_is_rebuilt_so_exceptions_to_a_rule_hold() -> None:
    """HDR-004: GET /videos/{id} 200 carries no Service-Version; a requested version is echoed."""
    video = record("GET", "videos/v1", 200, {"row": {}}, headers={"Service-Version": None})
    assert judge_exchanges([video]) == ()
    echoed = record("GET", "catalog", 200, {}, version="2024-01-01")
    (found,) = judge_exchanges([echoed])  # the canned answer says another date
    assert found.requirement_id == "HDR-008"
    assert response_of(echoed) is not None and response_of(echoed).context.version == "2024-01-01"


def test_admin_exchanges_and_answers_without_a_status_are_not_judged() -> None:
    admin = Exchange("GET", "http://127.0.0.1:1/_sandbox/state", status=200)
    lost = Exchange("GET", "http://127.0.0.1:1/api/delivery/v1/catalog", error="timeout")
    assert response_of(admin) is None and response_of(lost) is None
    assert judge_exchanges([admin, lost]) == ()


def test_a_capped_body_is_judged_on_its_headers_only() -> None:
    capped = record("GET", "catalog", 200, {"x": "y" * (BODY_CAP + 10)})
    assert len(capped.response_body) > BODY_CAP
    assert judge_exchanges([capped]) == ()


def test_an_error_or_a_test_not_exercised_keeps_its_outcome() -> None:
    broken = [record("GET", "catalog", 200, {}, headers={"Service-API-Status": None})]
    assert with_common_rules(Outcome.ERROR, (), broken) == (Outcome.ERROR, ())
    assert with_common_rules(Outcome.NOT_EXERCISED, (), broken) == (Outcome.NOT_EXERCISED, ())


def test_an_answer_the_server_content_coded_is_judged_on_its_decoded_body() -> None:
    # spec: General rules 4 asks for JSON bodies; a gzip, deflate or br coding the client
    # accepted is the transport's business: the record keeps the decoded body, never a finding.
    body = json.dumps({"api": {"status": "beta"}}).encode()
    codings = {"gzip": gzip.compress(body), "deflate": zlib.compress(body)}
    codings["br"] = brotli.compress(body)
    for coding, coded_body in codings.items():
        headers = {"Content-Type": "application/json", "Content-Encoding": coding}
        with client_for(answer(200, headers=headers, raw=coded_body)) as client:
            coded = client.request("GET", "config").exchange
        assert coded.response_headers.get("content-encoding") == coding
        rebuilt = response_of(coded)
        assert rebuilt is not None and rebuilt.json_body() == {"api": {"status": "beta"}}
        assert judge_exchanges([coded]) == ()
