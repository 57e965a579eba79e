"""How property runs are set up: seed and budget, the Schemathesis schema, sending a case.

    settings = PropertySettings.from_env(os.environ)          # seed 20261002, 10 examples
    schema = load_schema(profile, settings)                   # spec/openapi.yaml + our checks
    response = send(client, case)                             # through the harness client

Cases go out through the harness's `DeliveryClient`, so they are paced under the same budget as
the rest of the harness on a real target, redacted, and recorded as evidence. The Schemathesis
configuration keeps the built-in checks that agree with the spec and turns off the ones that
do not (see `BUILTIN_CHECKS`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import hypothesis
import schemathesis
from schemathesis.core import NOT_SET
from schemathesis.core.failures import Failure

from delivery_conformance.checks import Violation
from delivery_conformance.exceptions import HarnessFailure
from delivery_conformance.properties.blame import validate
from delivery_conformance.properties.checks import (
    CHECK_NAMES,
    OPERATION_ROLES,
    ContractViolation,
)
from delivery_conformance.resources import spec_path
from delivery_conformance.suite.runner import DEFAULT_SEED
from delivery_conformance.target.client import DeliveryClient
from delivery_conformance.target.profile import TargetProfile

__all__ = [
    "BUILTIN_CHECKS",
    "DEFAULT_SEED",
    "OPENAPI_PATH",
    "QUICK_EXAMPLES",
    "THOROUGH_EXAMPLES",
    "Findings",
    "PropertySettings",
    "load_schema",
    "role_of",
    "run_operation",
    "send",
]

OPENAPI_PATH = spec_path("openapi.yaml")
QUICK_EXAMPLES = 10
THOROUGH_EXAMPLES = 200
ENV_SEED = "DELIVERY_PROPERTIES_SEED"
ENV_EXAMPLES = "DELIVERY_PROPERTIES_EXAMPLES"
ENV_STEPS = "DELIVERY_PROPERTIES_STEPS"
ENV_SCENARIOS = "DELIVERY_PROPERTIES_SCENARIOS"
QUICK_STEPS = 8
QUICK_SCENARIOS = 20
_HEADER_VALUE = re.compile(r"(?:[\x21-\x7e](?:[\x20-\x7e\t]*[\x21-\x7e])?)?")

# Built-in Schemathesis checks: on where they agree with the spec, off (with the reason) where not.
BUILTIN_CHECKS: Mapping[str, bool] = {
    # Off: the spec documents 5xx answers (500 on open videos and playback, 502 and 503 on
    # playback, 503 everywhere); `delivery_error_table` judges 5xx by the operation's table.
    "not_a_server_error": False,
    "status_code_conformance": True,  # spec/openapi.yaml lists every documented status
    "content_type_conformance": True,
    "response_schema_conformance": True,
    "response_headers_conformance": True,
    # Off: a well-formed id that names nothing is answered 404 by design (spec: GET
    # /creatives/{id}, /series/{code}, /playlists/{code}, /videos/{id}); "schema-valid data must
    # get 2xx" is not the contract. `delivery_error_table` says which refusals valid data may get.
    "positive_data_acceptance": False,
    # Off: some schema-invalid input must be accepted by design (an unknown `Service-Simulate`
    # value is ignored, spec: POST /playback), so "any 4xx" is wrong there; where the spec does
    # say the input is refused, `delivery_error_table` demands the exact status and code.
    "negative_data_rejection": False,
    "missing_required_header": True,  # no Authorization: 401 (spec: Errors, every table)
    # Off: the key goes out through the harness client, so Schemathesis cannot tell it from a
    # generated one and reads every 200 as "auth ignored". Missing and bad keys are the AUTH
    # scenarios of tests/conformance.
    "ignored_auth": False,
    "unsupported_method": True,  # spec: General rules item 8 (405 with Allow)
    "use_after_free": True,
    "ensure_resource_availability": True,
}
# `max_response_time` stays off (not configured): the spec sets no response time.


@dataclass(frozen=True)
class PropertySettings:
    """Seed and budget of a property run; the seed goes into the report."""

    seed: int = DEFAULT_SEED
    examples: int = QUICK_EXAMPLES
    stateful_steps: int = QUICK_STEPS  # most steps in one stateful scenario (links followed)
    scenarios: int = QUICK_SCENARIOS  # stateful scenarios in a run
    coverage: bool = True  # Schemathesis's coverage phase: boundary values of every parameter

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> PropertySettings:
        def number(name: str, default: int) -> int:
            raw = environ.get(name)
            if raw is None or raw == "":
                return default
            if not raw.isdigit() or int(raw) < 1:
                raise HarnessFailure(f"{name} must be a positive whole number, got {raw!r}")
            return int(raw)

        return cls(
            seed=number(ENV_SEED, DEFAULT_SEED),
            examples=number(ENV_EXAMPLES, QUICK_EXAMPLES),
            stateful_steps=number(ENV_STEPS, QUICK_STEPS),
            scenarios=number(ENV_SCENARIOS, QUICK_SCENARIOS),
        )

    def replay_hint(self) -> str:
        return (
            f"{ENV_SEED}={self.seed} {ENV_EXAMPLES}={self.examples} "
            f"{ENV_STEPS}={self.stateful_steps} {ENV_SCENARIOS}={self.scenarios}"
        )


def schemathesis_config(
    profile: TargetProfile, settings: PropertySettings, mode: str = "all"
) -> dict[str, Any]:
    checks: dict[str, Any] = {name: {"enabled": on} for name, on in BUILTIN_CHECKS.items()}
    checks.update({name: {"enabled": True} for name in CHECK_NAMES})
    return {
        "seed": settings.seed,
        "base-url": profile.base_url,
        "generation": {
            "mode": mode,
            "max-examples": settings.examples,
            "deterministic": True,
            "database": "none",
            # Extra query parameters are optional parameters the spec may add (Versioning
            # item 3): a server ignores them, so they are not negative data.
            "allow-extra-parameters": False,
            # The key is the profile's (added by `send`); a generated `Bearer <noise>` would
            # only ever meet 401. Missing and bad keys are probed by `ignored_auth`.
            "with-security-parameters": False,
        },
        "phases": {
            "coverage": {"enabled": settings.coverage},
            "stateful": {"max-steps": settings.stateful_steps},
        },
        "checks": checks,
    }


def load_schema(
    profile: TargetProfile,
    settings: PropertySettings,
    path: Path = OPENAPI_PATH,
    mode: str = "all",
) -> schemathesis.BaseSchema:
    """spec/openapi.yaml for this target, with the harness checks and our built-in choices.
    `mode`: "all" (valid and invalid requests), "positive" or "negative"."""
    if not path.is_file():
        raise HarnessFailure(f"property tests need {path}, which does not exist")
    config = schemathesis.Config.from_dict(schemathesis_config(profile, settings, mode))
    return schemathesis.openapi.from_path(path, config=config)


def role_of(case: schemathesis.Case[Any]) -> str:
    operation_id = case.operation.definition.raw.get("operationId", "")
    try:
        return OPERATION_ROLES[operation_id]
    except KeyError:
        raise HarnessFailure(f"no key role for operation {operation_id!r}") from None


def _body(case: schemathesis.Case[Any]) -> tuple[bytes | None, str | None]:
    if case.body is NOT_SET:
        return None, None
    if isinstance(case.body, bytes):
        return case.body, case.media_type
    return json.dumps(case.body).encode(), case.media_type or "application/json"


def sendable(value: str) -> bool:
    """Whether an HTTP client can put this header value on the wire at all."""
    return _HEADER_VALUE.fullmatch(value) is not None


def send(client: DeliveryClient, case: schemathesis.Case[Any]) -> schemathesis.Response:
    """Send a generated case with its operation's key, through the harness client.

    A generated header value no HTTP client can send (a control character, a leading space) is
    not a request at all: the case is discarded (`hypothesis.reject`), never sent.
    """
    headers: dict[str, str | None] = {k: str(v) for k, v in (case.headers or {}).items()}
    headers.pop("Authorization", None)
    if not all(sendable(str(v)) and k.isascii() for k, v in headers.items()):
        hypothesis.reject()
    version = headers.pop("Service-Version", None)
    # Simulated scenarios have their own scenarios (SIM) and their own 300-a-minute budget:
    # generated values are not sent.
    headers.pop("Service-Simulate", None)
    content, media_type = _body(case)
    if media_type is not None and "Content-Type" not in headers:
        headers["Content-Type"] = media_type
    response = client.request(
        case.method,
        case.formatted_path,
        role=role_of(case),
        content=content,
        headers=headers,
        params=case.query or None,
        version=version,
    )
    converted = schemathesis.Response.from_any(response.http)
    # `from_any` re-applies the query to a URL that already has it; keep the URL actually sent.
    converted.request.url = str(response.http.request.url)
    return converted


def operation_test(schema: schemathesis.BaseSchema, operation_id: str, test_func: Any) -> Any:
    """A Hypothesis test of one operation with every phase Schemathesis's pytest integration
    runs (explicit examples, coverage of boundary values, fuzzing), with the schema's seed.

    This goes through `schemathesis.pytest._test_builder`, the builder behind
    `schema.parametrize()`: one pytest item per operation keeps requirement markers and
    reports per operation (schemathesis 4.x; pinned below 5 in pyproject.toml).
    """
    from schemathesis.generation.feedback import FeedbackSources
    from schemathesis.pytest._test_builder import build_operation_test

    operation = schema.find_operation_by_id(operation_id)  # type: ignore[attr-defined]
    return build_operation_test(
        config=schema.config,
        operation=operation,
        test_func=test_func,
        given_kwargs={},
        feedback=FeedbackSources(),
    )


@dataclass(frozen=True)
class Findings:
    """What one property run of one operation found: typed violations, and Schemathesis's own
    failures (built-in checks) as one-line titles."""

    violations: tuple[Violation, ...] = ()
    builtin: tuple[str, ...] = ()

    @property
    def requirement_ids(self) -> frozenset[str]:
        return frozenset(v.requirement_id for v in self.violations)

    def __bool__(self) -> bool:
        return bool(self.violations or self.builtin)


def _leaves(error: BaseException) -> list[BaseException]:
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in _leaves(inner)]
    return [error]


def findings_of(error: BaseException) -> Findings:
    violations: list[Violation] = []
    builtin: list[str] = []
    for leaf in _leaves(error):
        if isinstance(leaf, ContractViolation):
            violations.append(leaf.violation)
        elif isinstance(leaf, Failure):
            builtin.append(f"{leaf.code} {leaf.title}")
        else:
            raise leaf
    return Findings(tuple(violations), tuple(builtin))


def run_operation(
    schema: schemathesis.BaseSchema, client: DeliveryClient, operation_id: str
) -> Findings:
    """Generate, send and judge the cases of one operation; what broke (empty: nothing)."""

    def check_case(case: Any) -> None:
        validate(case, send(client, case))

    try:
        operation_test(schema, operation_id, check_case)()
    except (Failure, BaseExceptionGroup) as error:  # Hypothesis groups distinct ones (Base...)
        return findings_of(error)
    return Findings()
