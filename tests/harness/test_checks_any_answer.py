"""Every harness check, on any answer a server could send, returns violations and never raises.

The checks run on every exchange of every test (and inside the property tests); one that raises
on an odd body ends the whole pytest session. Each check meets here every status class, every
endpoint, HEAD and wrong methods, and bodies whose fields hold the wrong JSON type (objects and
lists where strings are due, a bare list, a number, an empty or non-JSON body), with headers of
the wrong shape.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from harness_support import REQUEST_ID, respond

from delivery_conformance.checks import CHECKS, Violation

ODD = [{"x": 1}, [1, {"a": None}], None, 3.5, True, "", "x" * 300]
FIELDS = (
    "error",
    "error_code",
    "code",
    "message",
    "request_id",
    "server_time",
    "data",
    "reason",
    "retry_after",
    "items",
    "supported_versions",
    "latest_version",
)
BODIES: list[Any] = [
    None,
    [],
    [1, 2],
    42,
    "text",
    {},
    *({name: value} for name, value in itertools.product(FIELDS, ODD)),
    {"error": "org_suspended", "error_code": {"nested": True}, "request_id": REQUEST_ID},
    {"code": 4010, "message": ["m"], "server_time": "now", "request_id": {"id": 1}},
]
HEADERS: list[dict[str, str]] = [
    {},
    {"Retry-After": "soon", "X-RateLimit-Limit": "-1", "X-RateLimit-Window": "x"},
    {"Service-Version": "", "Service-Request-Id": "", "Cache-Control": "", "Allow": ""},
    {"Content-Type": "text/html", "Deprecation": "@x", "Sunset": "tomorrow", "Link": "<"},
]
REQUESTS = [
    ("GET", "config"),
    ("GET", "catalog"),
    ("POST", "playback"),
    ("GET", "series/X"),
    ("GET", "creatives"),
    ("GET", "videos/1"),
    ("HEAD", "catalog"),
    ("DELETE", "playlists"),
    ("GET", "nope"),
]
STATUSES = (200, 302, 308, 400, 401, 403, 404, 405, 422, 429, 500, 503)


def run_all(response: Any) -> list[Violation]:
    found: list[Violation] = []
    for check in CHECKS.values():
        found.extend(check(response))
    return found


@pytest.mark.parametrize(("method", "path"), REQUESTS)
def test_no_check_raises_on_any_answer(method: str, path: str) -> None:
    for status, body, headers in itertools.product(STATUSES, BODIES[::3], HEADERS):
        found = run_all(
            respond(method, path, status, body=body, headers=headers, version="2026-10-02")
        )
        assert all(isinstance(v, Violation) for v in found)


def test_every_odd_body_on_an_error_and_a_success() -> None:
    for status, body in itertools.product((200, 403, 404, 429), BODIES):
        for method, path in (("GET", "catalog"), ("GET", "series/X")):
            run_all(respond(method, path, status, body=body))
