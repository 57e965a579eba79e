"""Reading a target's JSON without trusting its shape.

A scenario reads fields of answers that may be anything: a list where an object is due, a number
where a list is due. These helpers give the scenario what it can use (an object, an array, the
objects of an array) and nothing else; the shape itself is judged by the scenarios and checks of
its own requirement, so a malformed answer fails there and never crashes a scenario elsewhere.
"""

from __future__ import annotations

import json
from typing import Any

from delivery_conformance.checks import expect
from delivery_conformance.exceptions import TargetGarbage

__all__ = ["arr", "at", "body_of", "garbage_rule", "json_for", "key", "obj", "objs", "strings_in"]


def key(value: Any) -> Any:
    """`value` itself when it can be a set member or a dict key, else its canonical JSON text
    (a list or an object where an id is due must not crash a uniqueness check)."""
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return json.dumps(value, sort_keys=True)


def obj(value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def arr(value: Any) -> list[Any]:
    """`value` when it is a JSON array, else an empty one."""
    return value if isinstance(value, list) else []


def objs(value: Any) -> list[dict[str, Any]]:
    """The objects of a JSON array (other items and non-arrays: none)."""
    return [item for item in arr(value) if isinstance(item, dict)]


def body_of(response: Any) -> dict[str, Any]:
    """The JSON object of an answer, or {} when it is not one (the checks that read it then
    fail on the missing fields; the body itself is judged by its own rule)."""
    try:
        return obj(response.json_body())
    except TargetGarbage:
        return {}


def garbage_rule(requirement_id: str, response: Any) -> str:
    """Who a body that is not JSON breaks: a non-empty one is GEN-005's (every non-empty body is
    JSON), whatever scenario read it; an empty one the rule of the read that needed a body."""
    return "GEN-005" if response.content else requirement_id


def json_for(requirement_id: str, response: Any) -> Any:
    """The decoded body; a body that is not JSON at all is a finding (`garbage_rule`)."""
    try:
        return response.json_body()
    except TargetGarbage as error:
        expect(
            garbage_rule(requirement_id, response),
            False,
            expected="a JSON body",
            actual=str(error),
            response=response,
        )
        raise  # not reached: expect raised


def at(value: Any, dotted: str) -> Any:
    """`value["a"]["b"]` for "a.b"; None where a step is missing or not an object."""
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def strings_in(value: Any) -> list[str]:
    """Every string anywhere in a JSON value (object values and array items, depth first)."""
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings_in(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings_in(v)]
    return [value] if isinstance(value, str) else []
