"""One campaign request: what to send for a slot, and what its answer says (a Record).

spec: POST /playback (single and batch bodies, intents), Errors > Playback (per-item fields),
Limits > Behaviour at the ceiling (429 body and headers). Nothing secret is kept: the record
holds statuses, codes, reasons and the limit headers only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from delivery_conformance.load.records import ItemOutcome, Record
from delivery_conformance.load.schedule import Stage

__all__ = ["DEVICE", "EXPECTED_STATUS", "playback_body", "read_answer"]

DEVICE = {"union_info": "load-device-0001", "drm_kek": "load-kek-000000001"}

# Statuses a campaign request may get besides 429 (anything else is a target failure).
EXPECTED_STATUS: dict[str, frozenset[int]] = {
    "playback": frozenset({200}),
    "catalog": frozenset({200}),
    "series": frozenset({200}),
    "config": frozenset({200}),
    "creatives": frozenset({200}),
    "videos": frozenset({200, 404}),
    "video": frozenset({404, 200}),
}
SIMULATED_STATUS = frozenset({403})


def playback_body(stage: Stage, episode: str) -> dict[str, Any]:
    if stage.batch:
        items = [{"episode_id": episode, "intent": intent} for intent in stage.batch]
        return {"episodes": items, "intent": stage.batch[0], **DEVICE}
    body: dict[str, Any] = {"episode_id": episode, **DEVICE}
    if stage.intent is not None:
        body["intent"] = stage.intent
    return body


def _number(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        return None


def _int(value: str | None) -> int | None:
    number = _number(value)
    return int(number) if number is not None and number == int(number) else None


def _items(body: Any, stage: Stage) -> tuple[tuple[ItemOutcome, ...], str | None]:
    raw = body.get("items") if isinstance(body, dict) else None
    if not isinstance(raw, list) or len(raw) != len(stage.batch):
        return (), "batch answer without one item per requested episode"
    items = []
    problem = None
    for intent, item in zip(stage.batch, raw, strict=True):
        if not isinstance(item, dict) or not isinstance(item.get("status"), int):
            return (), "batch item without an integer status"
        status = item["status"]
        retry = item.get("retry_after")
        items.append(
            ItemOutcome(
                status=status,
                intent=intent,
                error_code=item.get("error_code"),
                reason=item.get("reason"),
                retry_after=float(retry) if isinstance(retry, int | float) else None,
            )
        )
        if status == 200 and "expires_at" not in item:
            problem = "issued batch item without expires_at"
        if status == 429 and (
            item.get("error_code") != "rate_limited" or not isinstance(retry, int)
        ):
            problem = "refused batch item without rate_limited and an integer retry_after"
    return tuple(items), problem


def read_answer(
    *,
    seq: int,
    worker: str,
    stage: Stage,
    endpoint: str,
    due: float,
    sent: float,
    answered: float,
    status: int,
    headers: Mapping[str, str],
    content: bytes | None,
) -> Record:
    """Turn one answer into a record; a wrong body or header becomes `problem`."""
    try:
        body = json.loads(content) if content else None
    except ValueError:
        body = None
    flat = body if isinstance(body, dict) else {}
    problem: str | None = None
    items: tuple[ItemOutcome, ...] = ()
    simulated = headers.get("Service-Simulated")
    if status == 0:
        problem = "no answer (connection error or timeout)"
    elif status == 429:
        if flat.get("error_code") != "rate_limited" or not isinstance(flat.get("error"), str):
            problem = "429 without a flat rate_limited body"
        elif headers.get("Retry-After") is None or headers.get("X-RateLimit-Limit") is None:
            problem = "429 without Retry-After or X-RateLimit-Limit"
    elif stage.simulate and simulated:
        if status not in SIMULATED_STATUS:
            problem = f"simulated answer with status {status}"
    elif status not in EXPECTED_STATUS.get(endpoint, frozenset({200})):
        problem = f"unexpected status {status}"
    elif endpoint == "playback" and stage.batch:
        items, problem = _items(body, stage)
    elif endpoint == "playback" and "expires_at" not in flat:
        problem = "ticket without expires_at"
    return Record(
        seq=seq,
        phase=stage.name,
        endpoint=endpoint,
        due=due,
        sent=sent,
        answered=answered,
        status=status,
        worker=worker,
        intent=stage.intent,
        tickets=stage.tickets,
        batch=bool(stage.batch),
        items=items,
        error_code=flat.get("error_code") if isinstance(flat.get("error_code"), str) else None,
        reason=flat.get("reason") if isinstance(flat.get("reason"), str) else None,
        retry_after=_number(headers.get("Retry-After")),
        limit_header=_int(headers.get("X-RateLimit-Limit")),
        window_header=_int(headers.get("X-RateLimit-Window")),
        simulated=simulated,
        problem=problem,
    )
