"""The success envelope judged member by member (spec: Endpoints > Paging and envelopes).

Each defect is charged to its own rule, so that a list scenario never charges a wrong envelope
member to the list's own requirement.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from delivery_conformance.checks import Violation, violation

if TYPE_CHECKING:
    from delivery_conformance.target.client import Response

__all__ = ["envelope_violations"]

MEMBERS = ("code", "message", "data", "server_time", "links")


def envelope_violations(response: Response, *, listing: bool) -> list[Violation]:
    """Each member of a success envelope judged under its own rule (spec: Endpoints > Paging
    and envelopes): the five members (PAGE-005), `code` 0 as an integer (PAGE-006), `message`
    ok (PAGE-007), `links.self` and `links.next` on a list (PAGE-009)."""
    body: Any = response.json_body()
    if not isinstance(body, dict):
        body = {}
    found: list[Violation] = []
    missing = [m for m in MEMBERS if m not in body]
    if missing:
        found.append(
            violation(
                "PAGE-005",
                "success envelope member missing",
                expected=", ".join(MEMBERS),
                actual=f"missing {', '.join(missing)}",
                response=response,
            )
        )
    code = body.get("code")
    if "code" in body and (isinstance(code, bool) or not isinstance(code, int) or code != 0):
        found.append(
            violation(
                "PAGE-006",
                "success envelope code is not the integer 0",
                expected="code 0 (a JSON integer)",
                actual=body["code"],
                response=response,
            )
        )
    if "message" in body and body["message"] != "ok":
        found.append(
            violation(
                "PAGE-007",
                "success envelope message is not ok",
                expected='message "ok"',
                actual=body["message"],
                response=response,
            )
        )
    links = body.get("links")
    if listing and "links" in body:
        absent = [n for n in ("self", "next") if not isinstance(links, dict) or n not in links]
        if absent:
            found.append(
                violation(
                    "PAGE-009",
                    "list envelope link missing",
                    expected="links.self and links.next",
                    actual=f"no links.{', links.'.join(absent)}",
                    response=response,
                )
            )
    return found
