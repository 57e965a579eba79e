"""Stateful property runs: chains of requests that follow the OpenAPI links of spec/openapi.yaml.

    machine = link_machine(schema, client, settings)          # a Hypothesis state machine class
    walk = run_links(machine, settings)                       # runs it; what was followed, found

Schemathesis 4 builds the state machine from the links (catalog -> playback by `episode_id` and
by `film_ref` + `episode_no`; series, playlists, creatives and videos lists -> their detail;
creative -> its file; every list -> its next page by `next_cursor`). Each step goes out through
the harness client with the key of the operation's role (`runs.send`) and its response is held
to the same checks as the per-operation runs (every harness check, the error-table judge, the
built-in checks kept on). A value carried along a link is what the spec calls valid input: a
cursor the list just issued must get the next page (spec: Endpoints > Paging and envelopes), an
episode just listed may be asked for a ticket (spec: POST /playback).

Bounded and repeatable: `settings.scenarios` scenarios of at most `settings.stateful_steps` steps,
with the run's seed (Hypothesis's `seed`, generation phase only, no example database).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import hypothesis
import schemathesis
from schemathesis.core.failures import Failure, FailureGroup
from schemathesis.generation.stateful import run_state_machine_as_test
from schemathesis.generation.stateful.state_machine import APIStateMachine, StepInput, StepOutput

from delivery_conformance.properties.blame import attributed
from delivery_conformance.properties.runs import (
    Findings,
    PropertySettings,
    findings_of,
    send,
)
from delivery_conformance.target.client import DeliveryClient

__all__ = ["LinkWalk", "link_machine", "run_links"]


@dataclass
class LinkWalk:
    """What a stateful run did: links followed (by link name), steps sent, what it found."""

    followed: Counter[str] = field(default_factory=Counter)
    steps: int = 0
    findings: Findings = field(default_factory=Findings)


def _link_name(step: StepInput) -> str | None:
    if step.transition is None or not step.is_applied:
        return None
    return step.transition.id


def link_machine(
    schema: schemathesis.BaseSchema, client: DeliveryClient, walk: LinkWalk
) -> type[APIStateMachine]:
    """The Schemathesis state machine of `schema`, sending through `client`, counting into
    `walk` the links it actually followed (a value extracted from a response and applied)."""
    base = schema.as_state_machine()

    class DeliveryLinks(base):  # type: ignore[valid-type, misc]
        def step(self, input: StepInput) -> StepOutput:
            name = _link_name(input)
            if name is not None:
                walk.followed[name] += 1
            walk.steps += 1
            output: StepOutput = super().step(input)
            return output

        def call(self, case: schemathesis.Case[Any], **kwargs: Any) -> schemathesis.Response:
            return send(client, case)

        def validate_response(
            self,
            response: schemathesis.Response,
            case: schemathesis.Case[Any],
            additional_checks: Any = None,
            **kwargs: Any,
        ) -> None:
            try:
                super().validate_response(response, case, additional_checks, **kwargs)
            except (Failure, FailureGroup) as error:  # built-in failures get their rule's ID
                raise attributed(error, case, response) from None

    return DeliveryLinks


def run_links(
    schema: schemathesis.BaseSchema, client: DeliveryClient, settings: PropertySettings
) -> LinkWalk:
    """Run the link walks; the violations found are returned, not raised."""
    walk = LinkWalk()
    machine = hypothesis.seed(settings.seed)(link_machine(schema, client, walk))
    hypothesis_settings = hypothesis.settings(
        max_examples=settings.scenarios,
        stateful_step_count=settings.stateful_steps,
        phases=[hypothesis.Phase.explicit, hypothesis.Phase.generate],
        deadline=None,
        database=None,
        derandomize=False,
        suppress_health_check=list(hypothesis.HealthCheck),
        print_blob=False,
    )
    try:
        run_state_machine_as_test(machine, settings=hypothesis_settings)
    except (Failure, FailureGroup, ExceptionGroup) as error:  # Hypothesis groups distinct ones
        walk.findings = findings_of(error)
    return walk
