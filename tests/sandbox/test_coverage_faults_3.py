"""The third block of coverage faults: each row is in the one fault table, acts only on a 200
JSON body of its own endpoint, and leaves the body alone when switched off
(coverage_faults_3.py)."""

from __future__ import annotations

import orjson

from delivery_sandbox.faults.coverage_faults_3 import (
    BODY_FAULTS_3,
    COVERAGE_FAULT_ROWS_3,
    mangle_body_3,
)
from delivery_sandbox.faults.coverage_faults_4 import (
    BODY_FAULTS_4,
    COVERAGE_FAULT_ROWS_4,
    mangle_body_4,
)
from delivery_sandbox.faults.coverage_faults_5 import BODY_FAULTS_5, COVERAGE_FAULT_ROWS_5
from delivery_sandbox.faults.registry import FAULTS, FaultSwitch

CONFIG = orjson.dumps(
    {"api": {"latest_version": "2026-10-02"}, "links": {"docs": "https://d", "catalog": "x"}}
)


def test_every_row_is_a_fault_with_one_rule_and_a_change() -> None:
    blocks = (
        (COVERAGE_FAULT_ROWS_3, BODY_FAULTS_3),
        (COVERAGE_FAULT_ROWS_4, BODY_FAULTS_4),
        (COVERAGE_FAULT_ROWS_5, BODY_FAULTS_5),
    )
    for rows, table in blocks:
        assert {row[0] for row in rows} == table.keys() <= FAULTS.keys()
        assert all(len(row[1]) == 1 for row in rows)
    names = [name for _, table in blocks for name in table]
    assert len(names) == len(set(names))


def test_a_body_fault_bends_only_a_200_of_its_endpoint() -> None:
    on = FaultSwitch(["config_docs_link_missing"])
    assert mangle_body_3(200, CONFIG, FaultSwitch(), "/api/delivery/v1/config") is None
    assert mangle_body_3(400, CONFIG, on, "/api/delivery/v1/config") is None
    assert mangle_body_3(200, CONFIG, on, "/api/delivery/v1/catalog") is None
    bent = mangle_body_3(200, CONFIG, on, "/api/delivery/v1/config")
    assert bent is not None
    assert "docs" not in orjson.loads(bent)["links"]
    assert orjson.loads(bent)["api"] == {"latest_version": "2026-10-02"}


def test_a_fourth_block_fault_bends_only_its_endpoint() -> None:
    body = orjson.dumps({"films": [{"id": "f1", "code": "SB1"}], "episodes": []})
    on = FaultSwitch(["catalog_code_elsewhere"])
    assert mangle_body_4(200, body, on, "/api/delivery/v1/config") is None
    bent = mangle_body_4(200, body, on, "/api/delivery/v1/catalog")
    assert bent is not None
    assert orjson.loads(bent)["films"] == [{"id": "f1", "code": "ZZSB1"}]


def test_an_error_fault_bends_only_error_answers() -> None:
    from delivery_sandbox.faults.coverage_faults_6 import COVERAGE_FAULT_ROWS_6, mangle_error_6
    from delivery_sandbox.http.headers import Reply

    assert {row[0] for row in COVERAGE_FAULT_ROWS_6} <= FAULTS.keys()
    on = FaultSwitch(["envelope_error_with_data", "retry_after_zero_on_429"])
    envelope = {"code": 4040, "message": "no", "server_time": 1, "request_id": "req_1"}
    ok = Reply(200, orjson.dumps({"code": 0, "message": "ok", "data": {}}))
    mangle_error_6(ok, on, "/api/delivery/v1/series")
    assert orjson.loads(ok.body)["data"] == {}
    error = Reply(404, orjson.dumps(envelope))
    mangle_error_6(error, on, "/api/delivery/v1/series/X")
    assert orjson.loads(error.body) == {**envelope, "data": None}
    limited = Reply(429, b'{"error":"slow down"}', [(b"retry-after", b"3")])
    mangle_error_6(limited, on, "/api/delivery/v1/catalog")
    assert limited.headers == [(b"retry-after", b"0")]


def test_a_seventh_block_fault_bends_its_header_or_body_only() -> None:
    from delivery_sandbox.faults.coverage_faults_7 import (
        BODY_FAULTS_7,
        COVERAGE_FAULT_ROWS_7,
        HEADER_CHANGES_7,
        mangle_headers_7,
    )

    names = {row[0] for row in COVERAGE_FAULT_ROWS_7}
    assert names == HEADER_CHANGES_7.keys() | BODY_FAULTS_7.keys() and names <= FAULTS.keys()
    headers = [(b"deprecation", b"@1790035200"), (b"link", b"<x>")]
    assert mangle_headers_7(headers, 200, FaultSwitch()) == headers
    on = FaultSwitch(["deprecation_link_missing"])
    assert mangle_headers_7(headers, 200, on) == [(b"deprecation", b"@1790035200")]


def test_an_eighth_block_fault_bends_only_its_error() -> None:
    from delivery_sandbox.faults.coverage_faults_8 import COVERAGE_FAULT_ROWS_8, mangle_error_8
    from delivery_sandbox.http.headers import Reply

    assert {row[0] for row in COVERAGE_FAULT_ROWS_8} <= FAULTS.keys()
    on = FaultSwitch(["catalog_429_code_wrong"])
    body = orjson.dumps({"error": "slow down", "error_code": "rate_limited"})
    config = Reply(429, body)
    mangle_error_8(config, on, "/api/delivery/v1/config")
    assert orjson.loads(config.body)["error_code"] == "rate_limited"
    catalog = Reply(429, body)
    mangle_error_8(catalog, on, "/api/delivery/v1/catalog")
    assert orjson.loads(catalog.body)["error_code"] == "too_many_requests"
