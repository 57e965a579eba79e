"""Faults that prove the coverage of rules no other fault breaks (issue 13).

spec: Endpoints > Paging and envelopes (the success envelope and its members). The rows join the
single table of `faults.py`; `mangle_reply` applies the body-level ones to a finished reply, so
no handler needs to know about them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import orjson

if TYPE_CHECKING:
    from delivery_sandbox.faults import FaultSwitch
    from delivery_sandbox.headers import Reply

__all__ = ["COVERAGE_FAULT_ROWS", "mangle_reply"]

COVERAGE_FAULT_ROWS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("envelope_server_time_missing", ("PAGE-005",), "success envelopes leave out server_time"),
    ("envelope_code_string", ("PAGE-006",), 'success envelopes carry code "0" (a string)'),
    ("envelope_message_wrong", ("PAGE-007",), 'success envelopes carry message "OK"'),
    ("envelope_self_link_missing", ("PAGE-009",), "list envelopes have no links.self"),
)
ENVELOPE_FAULTS = frozenset(row[0] for row in COVERAGE_FAULT_ROWS)
SUCCESS_ENVELOPE = b'{"code":0,"message":"ok",'


def mangle_reply(reply: Reply, faults: FaultSwitch) -> None:
    """Apply the switched-on envelope faults to a success envelope, in place."""
    if ENVELOPE_FAULTS.isdisjoint(faults.on) or not reply.body.startswith(SUCCESS_ENVELOPE):
        return
    body = orjson.loads(reply.body)
    if faults.enabled("envelope_server_time_missing"):
        body.pop("server_time", None)
    if faults.enabled("envelope_code_string"):
        body["code"] = "0"
    if faults.enabled("envelope_message_wrong"):
        body["message"] = "OK"
    links = body.get("links")
    if faults.enabled("envelope_self_link_missing") and isinstance(links, dict) and "next" in links:
        links.pop("self", None)
    reply.body = orjson.dumps(body)
