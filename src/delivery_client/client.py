"""`DeliveryClient`: one call = one request plus the retries the policy allows.

Spec: Authentication (Bearer key, no cookies), What the service does (backend only, `www`
host: redirects are never followed, so a 308 from the bare domain surfaces as an error), Errors
> Formats (branch on `error_code` or the envelope `code`, never on message text) and Errors >
Retry policy (client side) through `policy.plan_retry` and the shared `RetryBudget`.
The httpx transport is passed in, so tests use `httpx.MockTransport`.
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import httpx

from delivery_client.budget import RetryBudget, process_budget
from delivery_client.exceptions import (
    BadResponse,
    NotNow,
    RequestFailed,
    RetriesExhausted,
    RetryBudgetExhausted,
    TransportFailure,
)
from delivery_client.policy import (
    BACKGROUND,
    Answer,
    Decision,
    RetryProfile,
    RetryState,
    plan_retry,
)
from delivery_client.redact import redactor
from delivery_client.settings import DEFAULT_SETTINGS, Settings

__all__ = ["API_PREFIX", "STRING_CODES", "DeliveryClient", "Reply", "error_code"]

API_PREFIX = "/api/delivery/v1/"


def _distribution_version() -> str:
    """The installed distribution's version (pyproject reads it from delivery_conformance)."""
    try:
        return version("delivery-conformance")
    except PackageNotFoundError:  # a source tree that was never installed
        return "0+unknown"


USER_AGENT = f"delivery-client/{_distribution_version()}"
# Errors > Formats: codes carried in `error`, compared as whole strings (CLI-004, ERR-011).
STRING_CODES = frozenset(
    {"org_suspended", "app_not_registered", "collection_not_found", "video_not_found"}
)
log = logging.getLogger("delivery_client")
_REDIRECT = "redirect not followed: call the www host"


@dataclass(frozen=True)
class Reply:
    status: int
    headers: httpx.Headers
    content: bytes = field(repr=False)
    code: str | None  # `error_code`, envelope `code`, or a whole-string code of `error`
    request_id: str | None  # recorded, never parsed (CLI-006)
    waits: tuple[float, ...]  # the wait before each retry, in order
    parsed: list[Any] = field(default_factory=list, repr=False, compare=False)  # a parse cache

    @property
    def body(self) -> Any:
        """Parsed JSON, or None when the body is empty or not JSON (parsed on first use)."""
        if not self.parsed:
            self.parsed.append(_parse(self.content))
        return self.parsed[0]

    def object(self) -> dict[str, Any]:
        """The body as a JSON object, or a one-line BadResponse."""
        body = self.body
        if not isinstance(body, dict):
            kind = "no JSON body" if body is None else f"JSON {type(body).__name__}"
            raise BadResponse(f"expected a JSON object, got {kind} (status {self.status})")
        return body


def error_code(body: Any) -> str | None:
    """The machine code of an answer: flat `error_code`, envelope `code` (non-zero), or `error`
    when it is exactly one of the whole-string codes. Message text is never parsed."""
    if not isinstance(body, dict):
        return None
    flat = body.get("error_code")
    if isinstance(flat, str):
        return flat
    envelope = body.get("code")
    if isinstance(envelope, int) and not isinstance(envelope, bool) and envelope != 0:
        return str(envelope)
    error = body.get("error")
    return error if isinstance(error, str) and error in STRING_CODES else None


def _retry_after(headers: httpx.Headers) -> float | None:
    value = headers.get("retry-after", "").strip()
    try:
        seconds = float(value)
    except ValueError:
        return None
    return max(0.0, seconds) if seconds == seconds else None  # NaN is no value


def _parse(content: bytes) -> Any:
    if not content:
        return None
    try:
        return json.loads(content)
    except ValueError:  # HTML, garbage, truncated JSON: judged by the caller
        return None


class DeliveryClient:
    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        transport: httpx.BaseTransport | None = None,
        settings: Settings = DEFAULT_SETTINGS,
        budget: RetryBudget | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        uniform: Callable[[float, float], float] = random.uniform,
        version: str | None = None,
        simulate: str | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.settings = settings
        self.budget = budget if budget is not None else process_budget()
        self.clock, self.sleep, self.uniform = clock, sleep, uniform
        redactor.add(api_key)
        headers = {"Authorization": f"Bearer {api_key}", "Accept": "application/json"}
        headers["User-Agent"] = USER_AGENT
        if version:
            headers["Service-Version"] = version
        if simulate:
            headers["Service-Simulate"] = simulate
        default = httpx.Timeout(BACKGROUND.attempt_timeout)
        self._http = httpx.Client(
            base_url=self.base_url,
            headers=headers,
            transport=transport,
            follow_redirects=False,
            timeout=default,
        )
        self._bare = httpx.Client(transport=transport, follow_redirects=False, timeout=default)

    def close(self) -> None:
        self._http.close()
        self._bare.close()

    def __enter__(self) -> DeliveryClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def same_origin(self, url: str) -> bool:
        target, base = httpx.URL(url), httpx.URL(self.base_url)
        return (target.scheme, target.host, target.port) == (base.scheme, base.host, base.port)

    def request(
        self,
        method: str,
        path_or_url: str,
        *,
        params: Mapping[str, Any] | None = None,
        json_body: Any = None,
        profile: RetryProfile = BACKGROUND,
        accept: Collection[int] = (200,),
        keyless: bool = False,
    ) -> Reply:
        """Send with retries; return the reply when its status is in `accept`, else raise.
        `keyless` sends to an absolute URL without the key (share and download links)."""
        http = self._bare if keyless else self._http
        if not keyless and path_or_url.startswith("http") and not self.same_origin(path_or_url):
            raise BadResponse("refusing to send the key to another origin (a link left the API)")
        # a link's path can hold its token: messages name only its host
        url = httpx.URL(path_or_url)
        where = f"a link on {url.host}" if keyless else url.path
        state = RetryState(profile, self.clock())
        while True:
            seconds = state.attempt_timeout(self.clock())
            # the client's default timeout object is reused when it already says the same
            timeout = httpx.USE_CLIENT_DEFAULT if seconds == BACKGROUND.attempt_timeout else seconds
            self.budget.record_request()
            if http.cookies:
                http.cookies.clear()  # Authentication: no cookies are used
            response: httpx.Response | None = None
            try:
                response = http.request(
                    method, path_or_url, params=params, json=json_body, timeout=timeout
                )
                status = response.status_code
                code = error_code(_parse(response.content)) if status >= 400 else None
                answer = Answer(status, code, _retry_after(response.headers))
            except httpx.TimeoutException:
                answer = Answer(None, error="timeout")
            except httpx.TransportError as error:
                answer = Answer(None, error=f"network ({type(error).__name__})")
            step = plan_retry(state, answer, self.clock(), self.uniform)
            waits = tuple(wait for _, wait in state.history)
            if step.retry and not self.budget.try_acquire():
                raise _failure(RetryBudgetExhausted, method, where, answer, "retry budget", waits)
            if step.retry:
                log.info(
                    "%s %s: %s; retry %d in %.2f s",
                    method,
                    where,
                    _label(answer),
                    step.state.attempt,
                    step.wait,
                )
                self.sleep(step.wait)
                state = step.state
                continue
            if response is None:
                raise _failure(TransportFailure, method, where, answer, step.why, waits)
            request_id = response.headers.get("service-request-id")
            reply = Reply(
                response.status_code,
                response.headers,
                response.content,
                answer.code,
                request_id,
                waits,
            )
            log.debug("%s %s: %s after %d retries", method, where, _label(answer), len(waits))
            if response.status_code in accept:
                return reply
            raise _ending(step.decision, method, where, answer, step.why, waits)


def _label(answer: Answer) -> str:
    if answer.status is None:
        return answer.error or "transport error"
    return f"{answer.status} {answer.code}" if answer.code else str(answer.status)


def _failure(
    kind: type[Exception],
    method: str,
    where: str,
    answer: Answer,
    why: str,
    waits: tuple[float, ...],
) -> Exception:
    reason = {"retries": "no retries left", "time": "no time left"}.get(why, why)
    text = f"{method} {where}: {_label(answer)} ({reason} after {len(waits)} retries)"
    if issubclass(kind, RequestFailed):
        error: Exception = kind(text, status=answer.status or 0, code=answer.code)
    else:
        error = kind(text)
    error.waits = waits  # type: ignore[attr-defined]
    return error


def _ending(
    decision: Decision,
    method: str,
    where: str,
    answer: Answer,
    why: str,
    waits: tuple[float, ...],
) -> Exception:
    if decision is Decision.NOT_NOW:
        return _failure(NotNow, method, where, answer, "not ready: try at the next sync", waits)
    if decision in (Decision.BACKOFF, Decision.AFTER):
        return _failure(RetriesExhausted, method, where, answer, why, waits)
    if answer.status is not None and 300 <= answer.status < 400:
        return _failure(RequestFailed, method, where, answer, _REDIRECT, waits)
    return _failure(RequestFailed, method, where, answer, "not retried", waits)
