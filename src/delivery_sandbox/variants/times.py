"""The variant `iso_time_offset`: ISO 8601 UTC times written with `+00:00` instead of `Z`.

General rules 5 asks for ISO 8601 UTC strings (`expires_at` of a ticket, `metadata_updated_at`,
the open videos' `expires_at` and `refresh_before`); ISO 8601 writes UTC as `Z` or as the zero
offset `+00:00` (RFC 3339 5.6 too), the form many serialisers print. Only strings that are a
whole UTC date-time change; dates (`release_date`, `deprecated_at`) and epoch integers do not.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["offset_times"]

UTC_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z")


def offset_times(node: Any, endpoint: str = "", status: int = 200) -> None:
    """Every `...Z` date-time string under `node` written with `+00:00` (in place)."""
    if isinstance(node, dict):
        items: Any = list(node.items())
    elif isinstance(node, list):
        items = list(enumerate(node))
    else:
        return
    for key, value in items:
        if isinstance(value, str):
            if UTC_TIME.fullmatch(value):
                node[key] = value[:-1] + "+00:00"
        else:
            offset_times(value)
