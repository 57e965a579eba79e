"""Generated requests, valid and invalid, for each of the 12 operations, judged by the spec.

Schemathesis draws requests from spec/openapi.yaml (its explicit examples, the boundary values of
its coverage phase, then random ones up to the example budget, positive and negative); each goes
to the target with the key of the role that opens the operation, through the harness client
(paced, recorded), and its response is held to every harness check and to the spec's error
tables (`delivery_conformance.properties`). The seed is fixed: a run is repeatable, and a failure
prints the command that replays it.
"""

from __future__ import annotations

from typing import Any

import pytest
from properties_support import as_conformance_failure, requirements_for
from schemathesis.core.failures import Failure, FailureGroup

from delivery_conformance.properties import OPERATION_ROLES, PropertySettings, send
from delivery_conformance.properties.blame import validate
from delivery_conformance.properties.runs import operation_test
from delivery_conformance.target.client import DeliveryClient

OPERATIONS = [
    pytest.param(
        operation_id,
        marks=[
            pytest.mark.requirement(*requirements_for(operation_id)),
            pytest.mark.needs(f"role:{role}"),
        ],
        id=operation_id,
    )
    for operation_id, role in OPERATION_ROLES.items()
]


@pytest.mark.parametrize("operation_id", OPERATIONS)
def test_generated_requests_get_the_answers_the_spec_gives(
    operation_id: str,
    delivery_schema: Any,
    client: DeliveryClient,
    property_settings: PropertySettings,
    request: pytest.FixtureRequest,
) -> None:
    def check_case(case: Any) -> None:
        # Schemathesis's own checks too are charged to the requirement each breaks (`blame`).
        validate(case, send(client, case))

    run = operation_test(delivery_schema, operation_id, check_case)
    try:
        run()
    except (Failure, FailureGroup, ExceptionGroup) as error:  # Hypothesis groups distinct ones
        raise as_conformance_failure(error, property_settings, request.node.nodeid) from None
