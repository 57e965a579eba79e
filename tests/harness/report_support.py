"""A synthetic run for the report self-tests: every requirement status, collapsed findings, an
unattributed finding, and secrets that must never reach a report file."""

from __future__ import annotations

import json
from typing import Any

from delivery_conformance.checks import Violation
from delivery_conformance.evidence.events import (
    Outcome,
    RunFinished,
    RunStarted,
    TestDeselected,
    TestFinished,
)
from delivery_conformance.evidence.exchange import Exchange
from delivery_conformance.evidence.violation import Severity
from delivery_conformance.reports.results import RunSummary, summarise
from delivery_conformance.reports.writer import results_document, run_info
from delivery_conformance.spec.requirements import Level, Requirement, Role

HEADERS_SECTION = "What the service does > Common response headers"
SECRET_KEY = "svc_live_" + "S3cr3tK3y" * 3
SECRET_TOKEN = "tok_" + "playauthsecret" * 2
SECRET_LINK = "https://cdn.example/films/x.mp4?sig=signedlinksecret123"
SECRET_PASSWORD = "pa55w0rdsecret"
SECRETS = (SECRET_KEY, SECRET_TOKEN, "signedlinksecret123", SECRET_PASSWORD)
BASE_URL = f"http://admin:{SECRET_PASSWORD}@127.0.0.1:9"


def req(
    rid: str,
    section: str = HEADERS_SECTION,
    *,
    level: Level = Level.MUST,
    role: Role = Role.SERVER,
    untestable: str | None = None,
) -> Requirement:
    statement = f"statement of {rid}: the `Service-API-Status` header is `beta`"
    return Requirement(rid, section, statement, level, role, "observe", untestable)  # fmt: skip


REQUIREMENTS = {
    r.id: r
    for r in (
        req("GEN-001", "What the service does"), req("HDR-001"), req("HDR-002"),
        req("HDR-003", level=Level.SHOULD), req("HDR-004"), req("HDR-005"), req("HDR-006"),
        req("GEN-008", untestable="loopback is plain HTTP"), req("ERR-001", "Errors > Formats"),
        req("PLAY-001", "Endpoints > POST /playback"), req("CLI-001", role=Role.CLIENT),
    )
}  # fmt: skip

BIG_BODY = json.dumps(
    {
        "data": {
            "items": [{"id": f"it-{i}", "title": f"Item {i}", "rank": i} for i in range(30)],
            "play_auth_token": SECRET_TOKEN,
            "file_url": SECRET_LINK,
            "protection": "public",
        }
    }
)


def exchange(status: int = 200, body: str = BIG_BODY, path: str = "catalog") -> Exchange:
    return Exchange(
        "GET",
        f"http://127.0.0.1:9/api/delivery/v1/{path}",
        {"Authorization": f"Bearer {SECRET_KEY}"},
        status=status,
        response_headers={"Service-API-Status": "ga", "Service-Version": "2026-10-02"},
        response_body=body,
    )


STATUS_VIOLATION = Violation(
    "HDR-002", "Service-API-Status not beta", "beta", "ga", exchange()
)  # two scenarios show it: collapsed into one finding with a count of 2
BODY_VIOLATION = Violation(
    "HDR-002", "protection is not private-encrypted", "none", "public", exchange(path="config")
)
WARNING = Violation("HDR-003", "Retry-After missing", "a Retry-After header", "absent",
                    exchange(429, '{"error": "rate_limited"}'), Severity.WARNING)  # fmt: skip
UNATTRIBUTED = Violation("", "undocumented status", "a status the spec lists", "500",
                         exchange(500, "boom"))  # fmt: skip


def finished(nodeid: str, ids: tuple[str, ...], outcome: Outcome, **kw: Any) -> TestFinished:
    return TestFinished(f"tests/conformance/test_x.py::{nodeid}", ids, outcome,
                        exchanges=(exchange(),), **kw)  # fmt: skip


def sample_events() -> list[Any]:
    return [
        RunStarted(BASE_URL, 1_790_000_000.0, 20261002, True),
        finished("test_ok", ("HDR-001", "GEN-001"), Outcome.PASSED),
        finished("test_status_a", ("HDR-002",), Outcome.FAILED, violations=(STATUS_VIOLATION,),
                 duration=0.25),
        finished("test_status_b", ("HDR-002",), Outcome.FAILED,
                 violations=(STATUS_VIOLATION, BODY_VIOLATION), duration=0.5),
        finished("test_retry_after", ("HDR-003",), Outcome.FAILED, violations=(WARNING,)),
        finished("test_admin", ("HDR-004",), Outcome.NOT_EXERCISED,
                 reason="the profile lacks admin"),
        finished("test_broken", ("HDR-005",), Outcome.ERROR, reason="TargetUnreachable: refused"),
        finished("test_play", ("PLAY-001",), Outcome.FAILED, violations=(UNATTRIBUTED,)),
        TestDeselected("tests/conformance/test_x.py::test_other", ("HDR-006",)),
        RunFinished(1_790_000_012.5, 12.5, 1),
    ]  # fmt: skip


def sample_summary() -> RunSummary:
    return summarise(REQUIREMENTS, sample_events(), run_info())


def sample_document() -> dict[str, Any]:
    return results_document(sample_summary())


def clean_document() -> dict[str, Any]:
    events = [
        RunStarted("http://127.0.0.1:9", 1_790_000_000.0, 7, False),
        finished("test_ok", ("HDR-001",), Outcome.PASSED),
        RunFinished(1_790_000_001.0, 1.0, 0),
    ]
    return results_document(summarise({"HDR-001": REQUIREMENTS["HDR-001"]}, events))
