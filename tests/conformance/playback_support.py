"""Helpers shared by the playback and limits scenarios: bodies, sends, answer shapes.

spec: POST /playback (body, single and batch responses); Errors > Playback; Errors > Formats.
Device values are made-up strings well over the 8-character minimum; viewer refs are random and
carry no personal data (spec: POST /playback, `viewer_ref`).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from json_support import body_of
from listing_support import iso_epoch, response_time, within

from delivery_conformance.checks import expect
from delivery_conformance.evidence.events import NOT_APPLICABLE_PREFIX
from delivery_conformance.target.client import DeliveryClient, Response

__all__ = [
    "BASIC_DEVICE",
    "DEVICE",
    "NO_REUSE",
    "OTHER_DEVICE",
    "TICKET_FIELDS",
    "Repeats",
    "batch_body",
    "body_of",
    "error_problems",
    "expect_answer",
    "expect_batch",
    "expect_refused_whole",
    "expect_ticket",
    "iso_epoch",
    "items_of",
    "new_viewer",
    "play_body",
    "post",
    "repeat_ticket",
    "response_time",
    "skip_unless_reused",
    "ticket_problems",
    "within",
]

DEVICE = {"union_info": "union-info-0123456789", "drm_kek": "drm-kek-ABCDEFGHIJKLMNOP"}
OTHER_DEVICE = {"union_info": "union-info-9876543210", "drm_kek": "drm-kek-QRSTUVWXYZ123456"}
# The one device of the scenarios outside the playback area (headers, scopes, config, simulate).
BASIC_DEVICE = {"union_info": "conformance-union-01", "drm_kek": "conformance-kek-0001"}
TICKET_FIELDS = ("vid", "play_auth_token", "manifest_url")
_NO_CODE = object()

Lookup = Callable[[str], Any]


def new_viewer() -> str:
    return "viewer-" + uuid.uuid4().hex


def play_body(
    fixture_id: Lookup,
    fixture: str = "episode_encrypted",
    *,
    device: dict[str, str] = DEVICE,
    **fields: Any,
) -> dict[str, Any]:
    """A single POST /playback body: the episode of a named fixture, a device, other fields."""
    return {"episode_id": fixture_id(fixture), **device, **fields}


def batch_body(
    fixture_id: Lookup, *fixtures: str, device: dict[str, str] = DEVICE
) -> dict[str, Any]:
    """A batch POST /playback body (`intent: play`): one item per named episode fixture."""
    items = [{"episode_id": fixture_id(name)} for name in fixtures]
    return {"intent": "play", "episodes": items, **device}


def post(client: DeliveryClient, body: Any, role: str = "films", **kwargs: Any) -> Response:
    return client.post("playback", json=body, role=role, **kwargs)


def items_of(response: Response) -> list[dict[str, Any]]:
    items = body_of(response).get("items")
    if not isinstance(items, list):
        return []
    return [item if isinstance(item, dict) else {} for item in items]


def error_problems(
    answer: dict[str, Any], status: int, actual_status: object, code: object = _NO_CODE
) -> list[str]:
    """What departs from an error row: status, and `error_code` (None: no member at all)."""
    problems = []
    if actual_status != status:
        problems.append(f"status {actual_status}, not {status}")
    if code is None and "error_code" in answer:
        problems.append(f"error_code {answer.get('error_code')!r} present")
    elif code is not _NO_CODE and code is not None and answer.get("error_code") != code:
        problems.append(f"error_code {answer.get('error_code')!r}, not {code!r}")
    if not isinstance(answer.get("error"), str):
        problems.append("no string `error`")
    return problems


def expect_answer(
    rid: str, response: Response, status: int, code: object = _NO_CODE, *, what: str = ""
) -> dict[str, Any]:
    """Expect a whole-request answer of `status` (and flat `error_code` when given)."""
    body = body_of(response)
    if status < 400:
        problems = [] if response.status_code == status else [f"status {response.status_code}"]
    else:
        problems = error_problems(body, status, response.status_code, code)
    wanted = f"{status}" + ("" if code is _NO_CODE else f" error_code {code!r}")
    expect(
        rid,
        not problems,
        expected=f"{wanted} {what}".strip(),
        actual="; ".join(problems),
        response=response,
    )
    return body


def expect_refused_whole(rid: str, response: Response, reason: str) -> None:
    """A whole request refused as one ticket would be: 403 `not_entitled` whose `reason` and
    `error` are both `reason` (spec: Errors > Playback, per-ticket shape)."""
    data = body_of(response)
    expect(
        rid,
        response.status_code == 403
        and data.get("error_code") == "not_entitled"
        and data.get("reason") == reason
        and data.get("error") == reason,
        expected=f"403 not_entitled, reason and error {reason}",
        actual=f"{response.status_code} {data}",
        response=response,
    )


def expect_batch(rid: str, response: Response, count: int) -> list[dict[str, Any]]:
    """Expect a 200 batch answer with `count` items; answer the items."""
    body = expect_answer(rid, response, 200, what="(batch)")
    items = body.get("items")
    expect(
        rid,
        isinstance(items, list) and len(items) == count,
        expected=f"items[] of {count} entries",
        actual=items if not isinstance(items, list) else f"{len(items)} entries",
        response=response,
    )
    return items_of(response)


def ticket_problems(ticket: dict[str, Any]) -> list[str]:
    """spec: Playback ticket: a `vid` + `play_auth_token` pair or a `manifest_url`, not both."""
    pair = isinstance(ticket.get("vid"), str) and isinstance(ticket.get("play_auth_token"), str)
    link = isinstance(ticket.get("manifest_url"), str)
    problems = []
    if pair == link:
        problems.append("both a token pair and a manifest_url" if pair else "no ticket at all")
    if link and ("vid" in ticket or "play_auth_token" in ticket):
        problems.append("manifest_url together with vid/play_auth_token")
    return problems


def expect_ticket(rid: str, ticket: dict[str, Any], response: Response) -> None:
    problems = ticket_problems(ticket)
    expect(
        rid,
        not problems,
        expected="vid + play_auth_token, or manifest_url alone",
        actual="; ".join(problems),
        response=response,
    )


# spec: POST /playback, server-side reuse ("Best effort only"): a server that mints a new ticket
# for a repeat took a legal path, and the rules about a reused ticket do not bind it.
NO_REUSE = "the server minted a new ticket for each repeat with the same viewer_ref"


def skip_unless_reused(reused: bool, what: str = "") -> None:
    """Not applicable (never failed) when the server did not reuse: reuse is best effort."""
    if not reused:
        reason = NO_REUSE + (f" ({what})" if what else "")
        pytest.skip(NOT_APPLICABLE_PREFIX + reason + "; reuse is best effort (POST /playback)")


@dataclass
class Repeats:
    """What a run of identical requests carrying one `viewer_ref` got back, in order: the token
    of each 200, and the first 429 (where the run stopped). A token seen before is a reuse."""

    tokens: list[Any] = field(default_factory=list)
    refused: Response | None = None

    @property
    def minted(self) -> int:
        return len(set(self.tokens))

    @property
    def reused(self) -> int:
        return len(self.tokens) - self.minted


def repeat_ticket(rid: str, send: Callable[[], Response], times: int) -> Repeats:
    """Send the same ticket request `times` times (stopping at the first 429); an answer that is
    neither a ticket nor a 429 is charged to `rid`. Reuse may happen on some repeats only (best
    effort, e.g. a repeat served by another server), so each 200 is classed on its own."""
    run = Repeats()
    for _ in range(times):
        response = send()
        if response.status_code == 429:
            run.refused = response
            break
        run.tokens.append(expect_answer(rid, response, 200).get("play_auth_token"))
    return run
