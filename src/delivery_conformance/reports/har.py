"""A run's exchanges as a HAR 1.2 log (`run --har FILE`), for a browser's devtools or any HAR
viewer (pure: no I/O, no clock).

    {"log": {"version": "1.2", "creator": {...}, "pages": [], "entries": [
        {"startedDateTime": "2026-11-29T07:11:37.123Z", "time": 12.5, "request": {...},
         "response": {...}, "cache": {}, "timings": {"send": 0, "wait": 12.5, "receive": 0},
         "comment": "<test nodeid>", "_test": "<test nodeid>"}, ...]}}

One entry per recorded exchange, in the order of the tests and, inside a test, of its requests.
The exchanges were redacted when captured (evidence/redact.py) and are redacted once more here,
so the file holds no key, token or signed link; a body is the recorded one (decoded, capped at
`exchange.BODY_CAP` characters). What a record does not keep is given as HAR's "unknown": header
sizes -1, and the whole time as `wait` (the harness measures one span, request to last byte). An
exchange that got no answer has status 0 and its error in `response._error`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from http import HTTPStatus
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from delivery_conformance.evidence.events import TestFinished
from delivery_conformance.evidence.exchange import Exchange
from delivery_conformance.evidence.redact import Redactor

__all__ = ["HAR_VERSION", "har_entry", "har_log"]

HAR_VERSION = "1.2"
HTTP_VERSION = "HTTP/1.1"  # what the harness's transport speaks (h11)


def _pairs(headers: Mapping[str, str]) -> list[dict[str, str]]:
    return [{"name": name, "value": value} for name, value in headers.items()]


def _header(headers: Mapping[str, str], name: str) -> str:
    return next((v for k, v in headers.items() if k.lower() == name), "")


def _status_text(status: int | None) -> str:
    try:
        return HTTPStatus(status).phrase if status is not None else ""
    except ValueError:
        return ""


def _started(epoch: float) -> str:
    stamp = dt.datetime.fromtimestamp(epoch, dt.UTC).isoformat(timespec="milliseconds")
    return stamp.replace("+00:00", "Z")


def har_entry(exchange: Exchange, nodeid: str, redactor: Redactor | None = None) -> dict[str, Any]:
    """One HAR entry of a recorded exchange (redacted once more)."""
    redactor = redactor or Redactor()
    url = redactor.text(exchange.url)
    sent = redactor.headers(exchange.request_headers)
    got = redactor.headers(exchange.response_headers)
    sent_body = redactor.body(exchange.request_body) if exchange.request_body else ""
    got_body = redactor.body(exchange.response_body) if exchange.response_body else ""
    millis = round(exchange.elapsed * 1000, 3)
    request: dict[str, Any] = {
        "method": exchange.method,
        "url": url,
        "httpVersion": HTTP_VERSION,
        "cookies": [],
        "headers": _pairs(sent),
        "queryString": [
            {"name": name, "value": value}
            for name, value in parse_qsl(urlsplit(url).query, keep_blank_values=True)
        ],
        "headersSize": -1,
        "bodySize": len(sent_body.encode("utf-8")),
    }
    if sent_body:
        request["postData"] = {"mimeType": _header(sent, "content-type"), "text": sent_body}
    response: dict[str, Any] = {
        "status": exchange.status or 0,
        "statusText": _status_text(exchange.status),
        "httpVersion": HTTP_VERSION if exchange.status is not None else "",
        "cookies": [],
        "headers": _pairs(got),
        "content": {
            "size": len(got_body.encode("utf-8")),
            "mimeType": _header(got, "content-type"),
            "text": got_body,
        },
        "redirectURL": _header(got, "location"),
        "headersSize": -1,
        "bodySize": -1,
    }
    if exchange.error:
        response["_error"] = redactor.text(exchange.error)
    return {
        "startedDateTime": _started(exchange.started_at),
        "time": millis,
        "request": request,
        "response": response,
        "cache": {},
        "timings": {"send": 0, "wait": millis, "receive": 0},
        "comment": nodeid,
        "_test": nodeid,
    }


def har_log(tests: Iterable[TestFinished], creator: str, version: str) -> dict[str, Any]:
    """The HAR document of every exchange the tests recorded."""
    redactor = Redactor()
    entries = [
        har_entry(exchange, test.nodeid, redactor) for test in tests for exchange in test.exchanges
    ]
    return {
        "log": {
            "version": HAR_VERSION,
            "creator": {"name": creator, "version": version},
            "pages": [],
            "entries": entries,
        }
    }
