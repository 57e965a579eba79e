"""The faults of the reply seam (faults/reply.py, rows in faults/coverage_rows.py): every
name they act on is a row of the one fault table, and each bends only what its row says."""

from __future__ import annotations

import orjson

from delivery_sandbox.faults.coverage_rows import REPLY_FAULT_ROWS
from delivery_sandbox.faults.registry import FAULTS, FaultSwitch
from delivery_sandbox.faults.reply import (
    BODY_CHANGES,
    CALLER_FAULTS,
    ENVELOPE_FAULTS,
    HEADER_CHANGES,
    bend_headers,
    bend_reply,
)
from delivery_sandbox.http.headers import Exchange, Reply

ENVELOPE = {"code": 0, "message": "ok", "data": {"items": []}, "server_time": 1,
            "links": {"self": "s", "next": None}}  # fmt: skip


def test_every_acting_name_is_a_row_and_every_row_acts_somewhere() -> None:
    acting = ENVELOPE_FAULTS | BODY_CHANGES.keys() | HEADER_CHANGES.keys() | CALLER_FAULTS
    rows = {row[0] for row in REPLY_FAULT_ROWS}
    assert acting <= rows <= FAULTS.keys()
    assert all(len(row[1]) >= 1 for row in REPLY_FAULT_ROWS)


def test_a_header_fault_changes_only_its_header() -> None:
    headers = [(b"service-api-status", b"beta"), (b"cache-control", b"no-store")]
    assert bend_headers(headers, 200, FaultSwitch()) == headers
    changed = bend_headers(headers, 200, FaultSwitch(["cache_control_missing"]))
    assert changed == [(b"service-api-status", b"beta")]
    on_429 = FaultSwitch(["retry_after_missing_on_429"])
    with_retry = [(b"retry-after", b"1")]
    assert bend_headers(with_retry, 503, on_429) == with_retry
    assert bend_headers(with_retry, 429, on_429) == []


def test_an_envelope_fault_bends_a_success_envelope_and_nothing_else() -> None:
    exchange = Exchange("req_" + "0" * 26, "2026-10-02", "http://127.0.0.1:1")
    reply = Reply(200, orjson.dumps(ENVELOPE))
    bend_reply(reply, FaultSwitch(["envelope_code_string"]), "/api/delivery/v1/series", exchange)
    assert orjson.loads(reply.body)["code"] == "0"
    flat = Reply(200, orjson.dumps({"films": [], "episodes": []}))
    before = flat.body
    bend_reply(flat, FaultSwitch(["envelope_code_string"]), "/api/delivery/v1/catalog", exchange)
    assert flat.body == before
    error = Reply(404, orjson.dumps(ENVELOPE))
    bend_reply(error, FaultSwitch(["envelope_code_string"]), "/api/delivery/v1/series", exchange)
    assert orjson.loads(error.body)["code"] == 0
