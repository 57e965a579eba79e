"""Client-role requirements (spec/requirements.yaml, `role: client`) this library does not
implement, each with the reason. Every other client-role ID is named by a test in tests/client
(a self-test keeps the two sides in step)."""

from __future__ import annotations

__all__ = ["NOT_APPLICABLE"]

NOT_APPLICABLE: dict[str, str] = {
    "CLI-037": (
        "Hosting a copy of subtitle files happens outside the API; the library keeps only the "
        "subtitle languages of a series and leaves downloading and hosting to the integrator."
    ),
}
