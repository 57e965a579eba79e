"""Typed checks: the small public surface scenarios use.

    from delivery_conformance.checks import CHECKS, assert_conforms, expect, ConformanceFailure

`assert_conforms(response)` runs every cross-cutting check registered below (common headers,
no CORS, no cookies, Retry-After and X-RateLimit-* placement, JSON labelling, flat and envelope
error formats, request_id, unknown path and wrong method); `expect(...)` raises a typed violation
of one requirement from a scenario. See `registry` and `violation`.
"""

from delivery_conformance.checks import bodies as _bodies
from delivery_conformance.checks import headers as _headers
from delivery_conformance.checks.registry import (
    CHECKS,
    Check,
    CheckFunction,
    assert_conforms,
    register,
    run_checks,
)
from delivery_conformance.evidence.assertions import expect, expect_status, raise_hard
from delivery_conformance.evidence.violation import (
    ConformanceFailure,
    Severity,
    Violation,
    violation,
)

__all__ = [
    "CHECKS",
    "Check",
    "CheckFunction",
    "ConformanceFailure",
    "Severity",
    "Violation",
    "assert_conforms",
    "expect",
    "expect_status",
    "raise_hard",
    "register",
    "run_checks",
    "violation",
]

del _bodies, _headers
