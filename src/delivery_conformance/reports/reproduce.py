"""Findings a developer can reproduce: numbered, each with a curl line (pure: no I/O, no clock).

A results document lists every violation under the test that raised it; one defect seen several
times is one finding (`results.finding_key`). `numbered_findings` numbers them from 1 in the
order the run first saw them and gives each the request to send again:

    curl -i -sS --globoff --path-as-is -X POST 'http://127.0.0.1:8123/api/delivery/v1/playback'
      -H "Authorization: Bearer $DELIVERY_KEY_FILMS" -H 'content-type: application/json'
      --data-binary '{"episode_id": "..."}'

The key is never written out: the request's credential (`Exchange.credential`, named by the
redactor before it masked the header) becomes the role's `DELIVERY_KEY_<ROLE>` variable, the
ones a profile's keys are overridden with (docs/profile.md); a request without a key is sent
without one, and one with a well-formed key the profile does not hold (made up by the scenario,
or minted during the run) with `FAKE_KEY`, which no server holds. A request that cannot be sent
again as it was gets no curl line and says why (`SentRequest.refusal`): a redacted part (a
signed link, a secret header or body field), a body cut at the evidence cap, an `Authorization`
value that was a changed form of a real key, or a record that does not say whose key it carried
(results before format 1.3; the exchanges of a client certification's journal).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from delivery_conformance.evidence.redact import (
    ALTERED_KEY,
    MARK,
    NO_KEY,
    ROLE_PREFIX,
    UNKNOWN_KEY,
)
from delivery_conformance.evidence.violation import Violation
from delivery_conformance.reports.results import finding_key

__all__ = [
    "FAKE_KEY",
    "SentRequest",
    "key_variable",
    "numbered_findings",
    "sent_request",
]

# spec: Authentication (item 2): the key form, so the server judges it as a key it does not hold.
FAKE_KEY = "svc_live_FAKE" + "0" * 28
# Headers the client's transport adds on its own and a resend must not copy: curl and httpx
# compute the length and manage the connection; the user agent names the sending tool.
_NOT_COPIED = frozenset({"authorization", "content-length", "connection", "user-agent", "host"})
# Headers curl adds unless told otherwise: an original request without them sends them empty.
_CURL_ADDS = ("accept",)
_CUT = re.compile(r"…\[\d+ more characters\]$")  # what Exchange's cap appends to a body
_ROLE = re.compile(r"[a-z][a-z0-9_]*")  # target/profile_names.ROLES: safe in a variable name


def key_variable(role: str) -> str:
    """The environment variable a role's key is read from (target/profile_names.key_env)."""
    return "DELIVERY_KEY_" + role.upper()


@dataclass(frozen=True)
class SentRequest:
    """A recorded request as it can be sent again, or `refusal` saying why it cannot."""

    method: str
    path: str  # path and query, as sent
    headers: tuple[tuple[str, str], ...]  # without Authorization
    body: str
    credential: str  # `Exchange.credential`
    host: str | None = None  # a Host header other than the URL's (the bare-host scenarios)
    refusal: str = ""

    @property
    def role(self) -> str | None:
        return self.credential.removeprefix(ROLE_PREFIX) if self.is_role else None

    @property
    def is_role(self) -> bool:
        return self.credential.startswith(ROLE_PREFIX)

    def authorization(self, key: str | None) -> str | None:
        """The Authorization value to send: the role's key, the fake key, or none."""
        if self.credential == UNKNOWN_KEY:
            return f"Bearer {FAKE_KEY}"
        if self.is_role and key is not None:
            return f"Bearer {key}"
        return None

    def curl(self, base_url: str) -> str | None:
        """A shell-safe curl line that sends this request to `base_url`; None if it cannot."""
        if self.refusal:
            return None
        words = ["curl", "-i", "-sS", "--globoff", "--path-as-is"]
        if self.method == "HEAD":
            words.append("--head")
        elif self.method != "GET" or self.body:
            words += ["-X", shlex.quote(self.method)]
        words.append(shlex.quote(base_url.rstrip("/") + self.path))
        if self.is_role and self.role is not None:
            words += ["-H", f'"Authorization: Bearer ${key_variable(self.role)}"']
        elif self.credential == UNKNOWN_KEY:
            words += ["-H", shlex.quote(f"Authorization: Bearer {FAKE_KEY}")]
        if self.host:
            words += ["-H", shlex.quote(f"Host: {self.host}")]
        names = {name.lower() for name, _ in self.headers}
        for name, value in self.headers:
            words += ["-H", shlex.quote(f"{name}: {value}")]
        for name in _CURL_ADDS:
            if name not in names:
                words += ["-H", shlex.quote(f"{name}:")]  # curl leaves an emptied header out
        if self.body:
            if "content-type" not in names:
                words += ["-H", shlex.quote("content-type:")]
            words += ["--data-binary", shlex.quote(self.body)]
        if "accept-encoding" in names:
            words.append("--compressed")
        return " ".join(words)


def _refusal(exchange: Mapping[str, Any], headers: Mapping[str, str], credential: str) -> str:
    if MARK in str(exchange.get("url", "")):
        return "its URL carried a signed link, redacted in the record"
    for name, value in headers.items():
        if name.lower() != "authorization" and MARK in value:
            return f"its {name} header carried a secret, redacted in the record"
    body = str(exchange.get("request_body") or "")
    if MARK in body:
        return "its body carried a secret, redacted in the record"
    if _CUT.search(body):
        return "its body was cut at the evidence cap"
    if credential.startswith(ROLE_PREFIX) and not _ROLE.fullmatch(credential[len(ROLE_PREFIX) :]):
        return f"its credential {credential!r} names no role"
    if credential == ALTERED_KEY:
        return "its Authorization header was a changed form of a key, not kept in the record"
    if not credential and any(name.lower() == "authorization" for name in headers):
        return "the record does not say whose key it carried (results before format 1.3)"
    return ""


def sent_request(exchange: Mapping[str, Any]) -> SentRequest:
    """The request of a recorded exchange (a results document's `exchange` object)."""
    headers = {str(k): str(v) for k, v in (exchange.get("request_headers") or {}).items()}
    credential = str(exchange.get("credential") or "")
    if not credential and not any(name.lower() == "authorization" for name in headers):
        credential = NO_KEY
    parts = urlsplit(str(exchange.get("url", "")))
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    host = next((v for k, v in headers.items() if k.lower() == "host"), None)
    return SentRequest(
        method=str(exchange.get("method", "GET")).upper(),
        path=path,
        headers=tuple((k, v) for k, v in headers.items() if k.lower() not in _NOT_COPIED),
        body=str(exchange.get("request_body") or ""),
        credential=credential,
        host=host if host and host != parts.netloc else None,
        refusal=_refusal(exchange, headers, credential),
    )


def _tests(document: Mapping[str, Any]) -> Iterable[Mapping[str, Any]]:
    tests = document.get("tests", ())
    return tests if isinstance(tests, list) else ()


def numbered_findings(document: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The distinct findings of a results document, numbered from 1 in the order the run
    first saw them, each with the tests that saw it and its reproduction."""
    base_url = str(document.get("run", {}).get("base_url", ""))
    found: dict[tuple[str, ...], dict[str, Any]] = {}
    for test in _tests(document):
        for data in test.get("violations", ()):
            key = finding_key(Violation.from_dict(data))
            entry = found.get(key)
            if entry is None:
                entry = found[key] = _finding(len(found) + 1, data, base_url)
            entry["seen"] += 1
            if test["nodeid"] not in entry["tests"]:
                entry["tests"].append(str(test["nodeid"]))
    return list(found.values())


def _finding(number: int, violation: Mapping[str, Any], base_url: str) -> dict[str, Any]:
    exchange = violation.get("exchange")
    entry: dict[str, Any] = {
        "number": number,
        "requirement_id": violation["requirement_id"],
        "title": violation["title"],
        "expected": violation["expected"],
        "actual": violation["actual"],
        "severity": violation.get("severity", "error"),
        "tests": [],
        "seen": 0,
        "exchange": exchange,
        "role": None,
        "curl": None,
        "not_replayable": "no exchange was recorded with it",
    }
    if exchange:
        request = sent_request(exchange)
        origin = urlsplit(str(exchange.get("url", "")))
        entry["role"] = request.role
        entry["curl"] = request.curl(base_url or f"{origin.scheme}://{origin.netloc}")
        entry["not_replayable"] = request.refusal or None
    return entry
