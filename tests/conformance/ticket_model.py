"""A small model of the spec's ticket rules over time, written from the spec alone (not from the
sandbox): which repeat of POST /playback may come back with a ticket already handed out, and
what that ticket must then show.

The stateful scenario (test_ticket_model.py) sends random requests for one episode, each with
or without a `viewer_ref`, from one of two devices, with intent `play` or `prefetch`, and moves
the target's clock by minutes; it hands each issued ticket to the model, which answers the rules
it breaks. Pure: every request is told the wall time it was sent at (`now`), and the model adds
the seconds it moved the target's clock.

What a token seen before may mean (POST /playback, server-side reuse; Limits > Other constants,
the reuse window; Resources > Playback ticket, never extended):
- a request without `viewer_ref` mints a new ticket (PLAY-059): any token seen before breaks it;
- a request with `viewer_ref` may get back only the ticket of the same `viewer_ref`, device
  values, episode and intent class; a token of a request that differs breaks the rule of the
  first thing that differs: `viewer_ref` (PLAY-061), device values (PLAY-062), intent class
  (PLAY-063);
- a ticket given back keeps its `expires_at` (PLAY-003), and only while it has 5 minutes or more
  left (PLAY-064; judged only when it had clearly less, the clock slack taken off);
- reuse itself is best effort (PLAY-060, a should, judged by its own scenario): a new ticket
  where the same one could come back is never a finding here.
The 5 minutes are counted from the ticket's issue on the suite's clock moved by the clock steps
(a play token lives 30 minutes, Resources > Playback ticket); the lifetime itself is judged by
its own scenarios (STATE-018, PLAY-051).

The intent is always `play` or `prefetch`: which class a missing intent belongs to is left to
the scenarios of PLAY-063 (docs/reading-of-the-spec.md). Only `play_auth_token` tickets are
followed (the episode is encrypted).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from state_model import SLACK, Finding

__all__ = ["TICKET_SECONDS", "Request", "TicketModel"]

TICKET_SECONDS = 1800  # spec: Resources > Playback ticket (play token: 30 minutes)
REUSE_LEFT = 300  # spec: Limits > Other constants (reuse until 5 minutes before expires_at)


@dataclass(frozen=True)
class Request:
    """What a reuse is keyed on (POST /playback, server-side reuse); viewer None: no viewer_ref."""

    viewer: str | None
    device: str
    intent: str

    def first_difference(self, other: Request) -> str | None:
        """The requirement a token of `other` given back for this request breaks."""
        if self.viewer is None:
            return "PLAY-059"
        if other.viewer != self.viewer:
            return "PLAY-061"
        if other.device != self.device:
            return "PLAY-062"
        if other.intent != self.intent:
            return "PLAY-063"
        return None


@dataclass(frozen=True)
class Issued:
    request: Request
    expires_at: Any  # as the target wrote it
    issued_at: float  # the target's time the request was sent at


@dataclass
class TicketModel:
    clock: float = 0.0  # seconds the target's clock was moved
    tickets: dict[str, Issued] = field(default_factory=dict)  # token -> its first issue
    steps: list[str] = field(default_factory=list)

    def at(self, now: float) -> float:
        return now + self.clock

    def clock_moved(self, seconds: float) -> None:
        self.clock += seconds
        self.steps.append(f"clock +{seconds / 60:g} min")

    def answered(self, request: Request, token: Any, expires_at: Any, now: float) -> list[Finding]:
        """The findings of one issued ticket: `token` and `expires_at` as answered, `now` the
        wall time the request was sent at."""
        sent_at = self.at(now)
        who = "no viewer_ref" if request.viewer is None else f"viewer {request.viewer}"
        self.steps.append(f"request ({who}, device {request.device}, {request.intent})")
        if not isinstance(token, str) or not token:
            return []
        earlier = self.tickets.get(token)
        if earlier is None:
            self.tickets[token] = Issued(request, expires_at, sent_at)
            return []
        rule = request.first_difference(earlier.request)
        if rule is not None:
            return [
                Finding(rule, "a new ticket", f"the ticket issued for {_told(earlier.request)}")
            ]
        found = []
        if expires_at != earlier.expires_at:
            found.append(
                Finding("PLAY-003", f"expires_at still {earlier.expires_at!r}", repr(expires_at))
            )
        left = earlier.issued_at + TICKET_SECONDS - sent_at
        if left < REUSE_LEFT - SLACK:
            found.append(
                Finding(
                    "PLAY-064",
                    "a new ticket once the earlier one has less than 5 minutes left",
                    f"the earlier ticket, about {max(left, 0):.0f} s left",
                )
            )
        return found


def _told(request: Request) -> str:
    viewer = "no viewer_ref" if request.viewer is None else f"viewer {request.viewer}"
    return f"{viewer}, device {request.device}, {request.intent}"
