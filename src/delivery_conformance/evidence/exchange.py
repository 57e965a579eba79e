"""One request and its response, as evidence: redacted before it is stored.

`Exchange.capture(...)` builds the record from raw parts through a `Redactor`, so an `Exchange`
object never holds a secret. Bodies are kept as text, capped at `BODY_CAP` characters.
`credential` names what the request's `Authorization` carried (`redact.Redactor.credential`:
`role:films`, `none`, `unknown key`, `altered key`; "" on a record made before it was kept).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from delivery_conformance.evidence.redact import Redactor

__all__ = ["BODY_CAP", "Exchange"]

BODY_CAP = 8_000


def _cap(text: str) -> str:
    if len(text) <= BODY_CAP:
        return text
    return text[:BODY_CAP] + f"…[{len(text) - BODY_CAP} more characters]"


@dataclass(frozen=True)
class Exchange:
    method: str
    url: str
    request_headers: Mapping[str, str] = field(default_factory=dict)
    request_body: str = ""
    status: int | None = None
    response_headers: Mapping[str, str] = field(default_factory=dict)
    response_body: str = ""
    elapsed: float = 0.0
    started_at: float = 0.0
    error: str | None = None
    credential: str = ""

    @classmethod
    def capture(
        cls,
        redactor: Redactor,
        *,
        method: str,
        url: str,
        request_headers: Mapping[str, str],
        request_body: str,
        status: int | None,
        response_headers: list[tuple[str, str]] | Mapping[str, str],
        response_body: str,
        elapsed: float,
        started_at: float,
        error: str | None = None,
    ) -> Exchange:
        return cls(
            method=method,
            url=redactor.text(url),
            request_headers=redactor.headers(request_headers),
            request_body=_cap(redactor.body(request_body)) if request_body else "",
            status=status,
            response_headers=redactor.headers(response_headers),
            response_body=_cap(redactor.body(response_body)) if response_body else "",
            elapsed=round(elapsed, 6),
            started_at=started_at,
            error=redactor.text(error) if error else None,
            credential=redactor.credential(request_headers),
        )

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["request_headers"] = dict(self.request_headers)
        data["response_headers"] = dict(self.response_headers)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Exchange:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})

    def summary(self) -> str:
        status = self.status if self.status is not None else (self.error or "no response")
        return f"{self.method} {self.url} -> {status}"
