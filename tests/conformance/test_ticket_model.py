"""Stateful exploration of tickets over time: random sequences of ticket requests and clock steps,
each issued ticket judged by a small model of the spec's reuse and lifetime rules
(ticket_model.py, written apart from the sandbox).

A sequence asks for tickets for one encrypted episode, with one of two viewer_refs or none, from
one of two devices, with intent `play` or `prefetch`, and moves the target's clock by 1 to 26
minutes; the model says which earlier ticket may come back and what it must then show. Reuse is
best effort: a server that never gives a ticket back breaks nothing here. Each sequence starts
from the target's reset with viewer_refs of its own. Where the target keeps a clock per
organisation (suite/exclusive.py) the sequences ask as the `limits` organisation, move only its
clock and put back only it, so other scenarios run beside them. Budget, seed and shrinking are
those of the other stateful exploration (stateful_support.py).

spec: see ticket_model.py.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule
from playback_support import DEVICE, OTHER_DEVICE, new_viewer, post
from stateful_support import judge, run_sequences, sequences_or_skip
from ticket_model import Request, TicketModel

from delivery_conformance.evidence.events import NOT_EXERCISED_PREFIX
from delivery_conformance.suite.exclusive import LIMITS_ORGANISATION, OWN_CLOCK
from delivery_conformance.target.client import DeliveryClient

JUDGED = ("PLAY-003", "PLAY-059", "PLAY-061", "PLAY-062", "PLAY-063", "PLAY-064")
DEVICES = {"one": DEVICE, "two": OTHER_DEVICE}
MINUTE = 60


def _machine(
    client: DeliveryClient, admin: Any, episode: str, issued: list[int], role: str
) -> type:
    class TicketState(RuleBasedStateMachine):
        model: TicketModel
        viewers: dict[str, str]
        last: Request | None = None

        @initialize()
        def start(self) -> None:
            # Back to the start state (the clock included); switched faults stay. Where the
            # target keeps a clock per organisation, only the organisation asking goes back.
            if admin.organisation_clocks:
                admin.restore(role)
            else:
                admin.call("POST", "reset", {"keep_faults": True})
            self.model = TicketModel()
            self.viewers = {"a": new_viewer(), "b": new_viewer()}
            self.last = None

        def _send(self, request: Request) -> None:
            self.last = request
            body: dict[str, Any] = {
                "episode_id": episode,
                "intent": request.intent,
                **DEVICES[request.device],
            }
            if request.viewer is not None:
                body["viewer_ref"] = self.viewers[request.viewer]
            sent = time.time()
            response = post(client, body, role=role)
            answer = response.json_body() if response.status_code == 200 else None
            if not isinstance(answer, dict) or "play_auth_token" not in answer:
                return  # refused or another kind of ticket: the scenarios of its rule judge it
            issued[0] += 1
            token, expires_at = answer.get("play_auth_token"), answer.get("expires_at")
            judge(self.model.answered(request, token, expires_at, sent), self.model.steps)

        @rule(
            viewer=st.sampled_from([None, "a", "b"]),
            device=st.sampled_from(sorted(DEVICES)),
            intent=st.sampled_from(["play", "prefetch"]),
        )
        def ask(self, viewer: str | None, device: str, intent: str) -> None:
            self._send(Request(viewer, device, intent))

        @precondition(lambda self: self.last is not None)
        @rule()
        def ask_again(self) -> None:
            """The last request once more: the repeat reuse is about."""
            assert self.last is not None
            self._send(self.last)

        @precondition(lambda self: self.last is not None)
        @rule(part=st.sampled_from(["viewer", "device", "intent"]))
        def ask_with_one_change(self, part: str) -> None:
            """The last request with one thing other: what must never get its ticket back."""
            assert self.last is not None
            last = self.last
            if part == "viewer":
                changed = replace(last, viewer="b" if last.viewer == "a" else "a")
            elif part == "device":
                changed = replace(last, device="two" if last.device == "one" else "one")
            else:
                changed = replace(last, intent="prefetch" if last.intent == "play" else "play")
            self._send(changed)

        @rule(minutes=st.sampled_from([1, 10, 24, 26]))
        def move_clock(self, minutes: int) -> None:
            admin.clock(advance=minutes * MINUTE, role=role)
            self.model.clock_moved(minutes * MINUTE)

    return TicketState


@pytest.mark.exclusive(LIMITS_ORGANISATION, OWN_CLOCK)  # it moves the organisation's clock
@pytest.mark.requirement(*JUDGED)
@pytest.mark.needs("admin", "role:films", "fixture:episode_encrypted")
@pytest.mark.long
def test_random_sequences_of_ticket_requests_keep_the_reuse_rules(
    client: DeliveryClient,
    admin: Any,
    fixture_id: Any,
    own_clock_role: str,
    request: pytest.FixtureRequest,
) -> None:
    sequences = sequences_or_skip(request)
    issued = [0]
    episode = str(fixture_id("episode_encrypted"))
    run_sequences(_machine(client, admin, episode, issued, own_clock_role), sequences, request)
    if issued[0] == 0:
        pytest.skip(NOT_EXERCISED_PREFIX + "no request was answered with a play_auth_token")
