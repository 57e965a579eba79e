"""The error-answer faults (faults/error_formats.py, faults/error_codes.py): each bends only
error answers, and only those of its own endpoint."""

from __future__ import annotations

import orjson

from delivery_sandbox.faults import error_codes, error_formats
from delivery_sandbox.faults.registry import FAULTS, FaultSwitch
from delivery_sandbox.http.headers import Reply


def test_an_error_format_fault_bends_only_error_answers() -> None:
    assert {row[0] for row in error_formats.FAULT_ROWS} <= FAULTS.keys()
    on = FaultSwitch(["envelope_error_with_data", "retry_after_zero_on_429"])
    envelope = {"code": 4040, "message": "no", "server_time": 1, "request_id": "req_1"}
    ok = Reply(200, orjson.dumps({"code": 0, "message": "ok", "data": {}}))
    error_formats.bend_error(ok, on, "/api/delivery/v1/series")
    assert orjson.loads(ok.body)["data"] == {}
    error = Reply(404, orjson.dumps(envelope))
    error_formats.bend_error(error, on, "/api/delivery/v1/series/X")
    assert orjson.loads(error.body) == {**envelope, "data": None}
    limited = Reply(429, b'{"error":"slow down"}', [(b"retry-after", b"3")])
    error_formats.bend_error(limited, on, "/api/delivery/v1/catalog")
    assert limited.headers == [(b"retry-after", b"0")]


def test_an_error_code_fault_bends_only_its_endpoint() -> None:
    assert {row[0] for row in error_codes.FAULT_ROWS} <= FAULTS.keys()
    on = FaultSwitch(["catalog_429_code_wrong"])
    body = orjson.dumps({"error": "slow down", "error_code": "rate_limited"})
    config = Reply(429, body)
    error_codes.bend_error(config, on, "/api/delivery/v1/config")
    assert orjson.loads(config.body)["error_code"] == "rate_limited"
    catalog = Reply(429, body)
    error_codes.bend_error(catalog, on, "/api/delivery/v1/catalog")
    assert orjson.loads(catalog.body)["error_code"] == "too_many_requests"
