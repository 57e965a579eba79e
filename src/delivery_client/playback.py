"""Playback tickets (spec: POST /playback; Errors > Playback; Errors > Retry policy (client
side): "in a batch retry only failed items, each after its own `retry_after`").

`play` asks for one or several episodes (batch form A) with the interactive profile. Items that
fail with a retryable per-item status (429, 503 `service_unavailable`, 502, other 5xx) are sent
again, only those, each once its own wait (`retry_after` plus 0 to 1 s, else backoff) is over;
the others are final (403, 404, 409, 503 `not_ready`: not now). A `Ticket` never shows its token
or manifest link in `repr`, and both are registered with the redactor.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from delivery_client.client import API_PREFIX, DeliveryClient
from delivery_client.exceptions import BadResponse, RetryBudgetExhausted, UsageError
from delivery_client.policy import INTERACTIVE, Answer, Decision, RetryState, classify, wait_for
from delivery_client.redact import redactor
from delivery_client.rules import may_sell_paid

__all__ = ["ItemResult", "Ticket", "due_items", "item_retry_after", "new_viewer_ref", "play"]

PATH = API_PREFIX + "playback"


@dataclass(frozen=True)
class Ticket:
    episode_id: str | None
    expires_at: str | None
    protection: str | None
    vid: str | None = None
    play_auth_token: str | None = field(default=None, repr=False)
    manifest_url: str | None = field(default=None, repr=False)

    @property
    def sellable(self) -> bool:
        return may_sell_paid({"protection": self.protection})


@dataclass(frozen=True)
class ItemResult:
    request: Mapping[str, Any]
    status: int
    code: str | None
    ticket: Ticket | None
    tries: int
    waits: tuple[float, ...]


def new_viewer_ref(random_bytes: bytes) -> str:
    """An opaque session id (PLAY-025): random, never derived from the viewer."""
    return "vr_" + uuid.UUID(bytes=random_bytes[:16].ljust(16, b"\0")).hex


def _ticket(item: Mapping[str, Any]) -> Ticket:
    token, manifest = item.get("play_auth_token"), item.get("manifest_url")
    redactor.add(token if isinstance(token, str) else None)
    redactor.add(manifest if isinstance(manifest, str) else None)
    return Ticket(
        item.get("episode_id"),
        item.get("expires_at"),
        item.get("protection"),
        item.get("vid"),
        token,
        manifest,
    )


def item_retry_after(item: Mapping[str, Any]) -> float | None:
    """A batch item's own `retry_after` in seconds, or None when it carries no number."""
    value = item.get("retry_after")
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def due_items(pending: Mapping[int, float], now: float) -> list[int]:
    """The items whose own wait is over at `now`: only they are sent again (CLI-025)."""
    return sorted(i for i, when in pending.items() if when <= now + 1e-6)


def play(
    client: DeliveryClient,
    episodes: Sequence[Mapping[str, Any]],
    device: Mapping[str, str] | None = None,
    *,
    intent: str = "play",
    viewer_ref: str | None = None,
) -> list[ItemResult]:
    """Tickets for 1 to 3 episodes (each `{episode_id}` or `{film_ref, episode_no}`)."""
    if not 1 <= len(episodes) <= 3:
        raise UsageError("a batch holds 1 to 3 episodes")
    if viewer_ref is not None and "@" in viewer_ref:
        raise UsageError("viewer_ref must be an opaque id, not personal data (it has an @)")
    common: dict[str, Any] = {"intent": intent, **(device or {})}
    if viewer_ref:
        common["viewer_ref"] = viewer_ref
    profile = INTERACTIVE
    results: dict[int, ItemResult] = {}
    pending = {index: 0.0 for index in range(len(episodes))}  # index -> due time
    states = {index: RetryState(profile, client.clock()) for index in pending}
    while pending:
        due = min(pending.values())
        if due > client.clock():
            client.sleep(due - client.clock())
        now = client.clock()
        batch = due_items(pending, now)
        retrying = any(states[i].attempt for i in batch)
        if retrying and not client.budget.try_acquire():
            raise RetryBudgetExhausted("POST playback: retry budget", status=0)
        body = {**common, "episodes": [dict(episodes[i]) for i in batch]}
        reply = client.request("POST", PATH, json_body=body, profile=profile)
        items = reply.object().get("items")
        if not isinstance(items, list) or len(items) != len(batch):
            raise BadResponse("the batch answer has no `items` entry per requested episode")
        for index, item in zip(batch, items, strict=True):
            if not isinstance(item, dict) or not isinstance(item.get("status"), int):
                raise BadResponse("a batch item has no integer `status`")
            status, code = item["status"], item.get("error_code")
            code = code if isinstance(code, str) else None
            state = states[index]
            history = tuple(wait for _, wait in state.history)
            answer = Answer(status, code, item_retry_after(item))
            decision = classify(answer)
            retry = decision in (Decision.BACKOFF, Decision.AFTER)
            if retry and state.attempt < profile.max_retries:
                wait = wait_for(
                    decision, state.attempt, answer.retry_after, profile, client.uniform
                )
                if client.clock() + wait < state.started_at + profile.total:
                    pending[index] = client.clock() + wait
                    states[index] = RetryState(
                        profile,
                        state.started_at,
                        state.attempt + 1,
                        (*state.history, (answer, wait)),
                    )
                    continue
            pending.pop(index, None)
            ticket = _ticket(item) if status == 200 else None
            results[index] = ItemResult(
                episodes[index], status, code, ticket, state.attempt + 1, history
            )
    return [results[i] for i in range(len(episodes))]
