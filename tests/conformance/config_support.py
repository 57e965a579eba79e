"""What GET /config says, read defensively: scenarios that need it as a reference point.

Several scenarios compare an answer with `/config` (`api.latest_version`, `api.pinned_version`,
`api.supported_versions`; spec: GET /config). The config answer itself is judged by the CFG
scenarios; here a /config that gives no usable reference (not 200, not an object, a field of
the wrong type) leaves the comparing scenario *not exercised*, with the reason, never a crash.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from delivery_conformance.evidence.events import NOT_EXERCISED_PREFIX

__all__ = ["config_api", "dig", "listed_versions", "reference", "version_entries"]


def _body(response: Any) -> Any:
    try:
        return json.loads(response.content)
    except ValueError:
        return None


def dig(value: Any, dotted: str) -> Any:
    """`value["a"]["b"]` for "a.b", None where a step is missing or not an object."""
    for part in dotted.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def config_api(client: Any, role: str | None = None, **kwargs: Any) -> tuple[dict[str, Any], Any]:
    """The `api` object of a 200 GET /config and the response; not exercised without one."""
    response = client.get("config", role=role, **kwargs)
    api = dig(_body(response), "api")
    if response.status_code != 200 or not isinstance(api, dict):
        pytest.skip(
            f"{NOT_EXERCISED_PREFIX}GET /config gave no `api` object to compare with "
            f"(status {response.status_code}; judged by the CFG scenarios)"
        )
    return api, response


def version_entries(api: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """`api.supported_versions` by version string (entries that are not objects left out)."""
    versions = api.get("supported_versions")
    if not isinstance(versions, list):
        return {}
    return {
        e["version"]: e
        for e in versions
        if isinstance(e, dict) and isinstance(e.get("version"), str)
    }


def listed_versions(api: dict[str, Any]) -> list[str]:
    return list(version_entries(api))


def reference(api: dict[str, Any], name: str) -> str:
    """A version string of `api` (`latest_version`, `pinned_version`); not exercised if none."""
    value = api.get(name)
    if not isinstance(value, str):
        pytest.skip(
            f"{NOT_EXERCISED_PREFIX}GET /config `api.{name}` is not a string ({value!r}; judged "
            "by the CFG scenarios)"
        )
    return value
