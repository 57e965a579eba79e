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
    (
        "unknown_key_flat_error_code",
        ("CAT-071", "PLAY-072", "CFG-030", "VID-022"),
        "a flat 401 for an unknown or revoked key carries error_code unauthorized",
    ),
    (
        "unknown_key_envelope_4010",
        ("CRE-046", "SER-038", "PLS-030"),
        "an envelope 401 for an unknown or revoked key carries code 4010 instead of 4011",
    ),
    (
        "unverifiable_key_401",
        ("AUTH-021", "CAT-075", "PLAY-077", "CFG-033", "CRE-060", "SER-046", "PLS-042", "VID-030"),
        "a key that cannot be verified in time is refused 401 instead of 503",
    ),
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
