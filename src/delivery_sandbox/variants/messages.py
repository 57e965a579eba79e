"""The variant `reworded_messages`: other texts in `error` (flat) and `message` (envelope).

Errors > Formats: `error` is a message for logs, not parsed, except where the code itself is the
string. Those stay exactly as they are:

- a flat body with no `error_code` whose `error` is `org_suspended`, `app_not_registered`,
  `collection_not_found` or `video_not_found`;
- a `not_entitled` body (whole request or batch item), whose `error` equals its `reason`
  (Errors > Playback);
- the envelope's `message` `ok` on success (Paging and envelopes), and the envelope errors whose
  message is the name the Errors table gives (`rights_ended`, `final_not_ready`).

Every other text becomes another sentence of the same meaning class.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any

__all__ = ["CODE_IS_TEXT", "reword", "reworded"]

CODE_IS_TEXT = frozenset(
    {
        "org_suspended",
        "app_not_registered",
        "collection_not_found",
        "video_not_found",
        "rights_ended",
        "final_not_ready",
    }
)


def reworded(status: int) -> str:
    """The new text for an answer of `status`."""
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = "Error"
    return f"Request not served ({phrase}); see the status and code for what to do."


def _flat(body: dict[str, Any], status: int) -> None:
    error = body.get("error")
    if not isinstance(error, str):
        return
    if body.get("error_code") == "not_entitled":
        return
    if body.get("error_code") is None and error in CODE_IS_TEXT:
        return
    body["error"] = reworded(status)


def reword(doc: Any, endpoint: str, status: int) -> None:
    """Reword the error texts of one answer (in place)."""
    if not isinstance(doc, dict):
        return
    if "error" in doc:
        _flat(doc, status)
    message = doc.get("message")
    code = doc.get("code")
    if isinstance(message, str) and code not in (0, None) and message not in CODE_IS_TEXT:
        doc["message"] = reworded(status)
    for item in doc.get("items") or () if endpoint == "playback" else ():
        if isinstance(item, dict) and isinstance(item.get("status"), int):
            _flat(item, item["status"])
