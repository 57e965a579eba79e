"""Property tests: Schemathesis 4 driven by spec/openapi.yaml, judged by the spec's own rules.

`checks` registers the harness checks (and the error-table judge of `rules`) as Schemathesis
checks; `runs` holds the seed and budget, loads the schema and sends cases through the harness
client. The tests themselves live in tests/properties.
"""

from delivery_conformance.properties.checks import (
    CHECK_NAMES,
    OPERATION_ROLES,
    ContractViolation,
    configure,
)
from delivery_conformance.properties.runs import (
    DEFAULT_SEED,
    PropertySettings,
    load_schema,
    send,
)

__all__ = [
    "CHECK_NAMES",
    "DEFAULT_SEED",
    "OPERATION_ROLES",
    "ContractViolation",
    "PropertySettings",
    "configure",
    "load_schema",
    "send",
]
