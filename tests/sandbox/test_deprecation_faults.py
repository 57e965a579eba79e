"""The deprecation faults (faults/deprecation.py): each row bends a header or a body, and
nothing when switched off."""

from __future__ import annotations

from delivery_sandbox.faults.deprecation import (
    BODY_FAULTS,
    FAULT_ROWS,
    HEADER_CHANGES,
    bend_headers,
)
from delivery_sandbox.faults.registry import FAULTS, FaultSwitch


def test_a_deprecation_fault_bends_its_header_or_body_only() -> None:
    names = {row[0] for row in FAULT_ROWS}
    assert names == HEADER_CHANGES.keys() | BODY_FAULTS.keys() and names <= FAULTS.keys()
    headers = [(b"deprecation", b"@1790035200"), (b"link", b"<x>")]
    assert bend_headers(headers, 200, FaultSwitch()) == headers
    on = FaultSwitch(["deprecation_link_missing"])
    assert bend_headers(headers, 200, on) == [(b"deprecation", b"@1790035200")]
