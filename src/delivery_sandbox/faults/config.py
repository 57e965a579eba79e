"""The GET /config faults that act where the body is built (their rows: registry.py > Config):
one hook, `bend_body` (endpoints/config.py, the config body step, at the step seam:
faults/steps.py), with the organisation's allowance on the single-video counter passed in.

Spec sections: Endpoints > GET /config (key, rate_limits.doors).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from delivery_sandbox.faults.names import FaultName

if TYPE_CHECKING:
    from delivery_sandbox.faults.seams import Server

__all__ = ["bend_body"]


def bend_body(
    sb: Server, body: dict[str, Any], *, video_limit: Callable[[], int]
) -> dict[str, Any]:
    """The /config object as built: the single-video counter listed among the doors
    (config_lists_video_door), key.test_organisation as a string (config_test_org_string)."""
    on = sb.faults.on
    if FaultName.config_lists_video_door in on:
        doors = body["rate_limits"]["doors"]
        doors["video"] = {"limit": video_limit(), "unit": "requests"}
    if FaultName.config_test_org_string in on:
        key = body["key"]
        key["test_organisation"] = str(key["test_organisation"]).lower()
    return body
