"""Legal variants on the wire and on the request: content codings, header spelling and the
deployment's headers, `Cache-Control` casing, chunked framing, request ids, HEAD and `Allow`.

Each variant shows its behaviour; the default sandbox, asked the same, does not.
"""

from __future__ import annotations

import gzip
import http.client
import re
import signal
import subprocess
import sys
import time
import tomllib
import zlib
from collections.abc import Callable, Iterator
from email.utils import parsedate_to_datetime
from pathlib import Path

import brotli
import pytest
from sandbox_api import Api, make_api

from delivery_sandbox.variants.catalogue import VariantName, VariantSet
from delivery_sandbox.variants.wire import accepts, respell_head, spell

ALL_CODINGS = {"Accept-Encoding": "gzip, deflate, br"}
CODERS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": lambda body: gzip.compress(body, mtime=0),
    "deflate": zlib.compress,
    "br": brotli.compress,
}
DEPLOYMENT = {
    "Server",
    "Via",
    "Date",
    "Strict-Transport-Security",
    "X-Content-Type-Options",
    "X-Served-By",
}


@pytest.fixture
def plain() -> Iterator[Api]:
    """The default sandbox with the spec's version set."""
    made = make_api()
    yield made
    made.close()


def playing(*names: str) -> Api:
    return make_api(variants=names)


@pytest.mark.parametrize("coding", ["gzip", "deflate", "br"])
def test_a_coding_variant_codes_json_when_the_request_accepts_it(plain: Api, coding: str) -> None:
    plain = plain.get("catalog", "films", headers=ALL_CODINGS)
    api = playing(coding)
    try:
        coded = api.get("catalog", "films", headers=ALL_CODINGS)
        refused = api.get("catalog", "films", headers={"Accept-Encoding": f"{coding};q=0"})
    finally:
        api.close()
    assert "content-encoding" not in plain.headers
    assert coded.headers["content-encoding"] == coding
    assert coded.headers["vary"] == "Accept-Encoding"
    assert int(coded.headers["content-length"]) == len(CODERS[coding](plain.content))
    assert coded.content == plain.content  # httpx decoded it: the same JSON
    assert "content-encoding" not in refused.headers and refused.content == plain.content


def test_codings_follow_accept_encoding_rules() -> None:
    assert accepts("gzip, deflate", "deflate") and accepts("*", "br")
    assert not accepts("gzip;q=0", "gzip") and not accepts("identity", "gzip")
    assert not accepts(None, "gzip")


def test_title_case_headers_spells_names_and_adds_the_deployments_headers(plain: Api) -> None:
    api = playing(VariantName.title_case_headers)
    try:
        response = api.get("config", "films")
    finally:
        api.close()
    names = [name.decode() for name, _ in response.headers.raw]
    assert "Service-API-Status" in names and "Service-Request-Id" in names
    assert "Cache-Control" in names and "Content-Type" in names
    assert set(names) >= DEPLOYMENT
    assert all(name[0].isupper() for name in names)
    parsedate_to_datetime(response.headers["date"])  # an HTTP date
    assert not any(n.lower().startswith(("set-cookie", "access-control")) for n in names)
    plain = plain.get("config", "films")
    assert all(name == name.lower() for name, _ in plain.headers.raw)
    assert "server" not in plain.headers and "via" not in plain.headers


def test_respell_head_spells_only_the_names_of_a_head() -> None:
    head = b"HTTP/1.1 200 OK\r\nservice-api-status: beta\r\nx-ratelimit-limit: 3\r\n\r\n"
    assert respell_head(head) == (
        b"HTTP/1.1 200 OK\r\nService-API-Status: beta\r\nX-RateLimit-Limit: 3\r\n\r\n"
    )
    assert spell(b"service-request-id") == b"Service-Request-Id"


def test_title_case_names_reach_the_wire_through_uvicorn(tmp_path: Path) -> None:
    """uvicorn lower-cases names; the variant's protocol spells them again on the socket."""
    profile = tmp_path / "sandbox.toml"
    argv = [sys.executable, "-m", "delivery_sandbox", "--port", "0", "--profile-out", str(profile)]
    process = subprocess.Popen(
        [*argv, "--variant", "title_case_headers"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 20
        while not profile.exists() and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        data = tomllib.loads(profile.read_text())
        host = data["base_url"].removeprefix("http://")
        connection = http.client.HTTPConnection(host, timeout=5)
        key = data["keys"]["films"]
        connection.request(
            "GET", "/api/delivery/v1/config", headers={"Authorization": f"Bearer {key}"}
        )
        response = connection.getresponse()
        body = response.read()
        names = [name for name, _ in response.getheaders()]
        connection.close()
    finally:
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
    assert response.status == 200 and body.startswith(b"{")
    assert "Service-API-Status" in names and "Content-Length" in names
    assert set(names) >= DEPLOYMENT


def test_cache_control_casing_sends_no_store_in_another_case(plain: Api) -> None:
    api = playing(VariantName.cache_control_casing)
    try:
        response = api.get("catalog", "films")
        error = api.get("catalog")
    finally:
        api.close()
    assert response.headers["cache-control"] == "No-Store"
    assert error.status_code == 401 and error.headers["cache-control"] == "No-Store"
    assert plain.get("catalog", "films").headers["cache-control"] == "no-store"


def test_chunked_transfer_drops_content_length(plain: Api) -> None:
    api = playing(VariantName.chunked_transfer)
    try:
        response = api.get("config", "films")
    finally:
        api.close()
    assert "content-length" not in response.headers and response.json()["api"]["status"] == "beta"
    assert "content-length" in plain.get("config", "films").headers


def test_json_charset_and_connection_close_change_only_those_headers(plain: Api) -> None:
    api = playing(VariantName.json_charset, VariantName.connection_close)
    try:
        response = api.get("config", "films")
    finally:
        api.close()
    assert response.headers["content-type"] == "application/json; charset=utf-8"
    assert response.headers["connection"] == "close"
    plain = plain.get("config", "films")
    assert plain.headers["content-type"] == "application/json" and "connection" not in plain.headers
    assert response.json()["api"] == plain.json()["api"]


def test_request_id_alphabet_uses_another_alphabet_in_header_and_body(plain: Api) -> None:
    api = playing(VariantName.request_id_alphabet)
    try:
        ok = api.get("catalog", "films")
        error = api.get("catalog")
    finally:
        api.close()
    other = re.compile(r"req_[a-z2-7]{26}")
    assert other.fullmatch(ok.headers["service-request-id"])
    assert other.fullmatch(error.headers["service-request-id"])
    assert error.json()["request_id"] == error.headers["service-request-id"]
    assert ok.headers["service-request-id"] != error.headers["service-request-id"]
    assert re.fullmatch(
        r"req_[0-9A-HJKMNP-TV-Z]{26}", plain.get("catalog").headers["service-request-id"]
    )


def test_fewer_simulations_simulates_only_the_named_scenarios(plain: Api) -> None:
    api = playing(VariantName.fewer_simulations)
    try:
        named = api.get("catalog", "films", headers={"Service-Simulate": "rate_limited"})
        other = api.get("catalog", "films", headers={"Service-Simulate": "org_suspended"})
    finally:
        api.close()
    assert named.status_code == 429 and named.headers["service-simulated"] == "rate_limited"
    assert other.status_code == 200 and "service-simulated" not in other.headers
    plain = plain.get("catalog", "films", headers={"Service-Simulate": "org_suspended"})
    assert plain.status_code == 403 and plain.headers["service-simulated"] == "org_suspended"


def test_allow_lists_head_serves_head_like_get_without_a_body(plain: Api) -> None:
    api = playing(VariantName.allow_lists_head)
    try:
        get = api.get("catalog", "films")
        head = api.request("HEAD", "catalog", "films")
        wrong = api.request("DELETE", "catalog")
        head_post = api.request("HEAD", "playback", "films")
    finally:
        api.close()
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-length"] == get.headers["content-length"]
    assert head.headers["content-type"] == "application/json"
    assert wrong.status_code == 405 and wrong.headers["allow"] == "GET, HEAD"
    assert head_post.status_code == 405 and head_post.headers["allow"] == "POST"
    assert plain.request("HEAD", "catalog", "films").status_code == 405
    assert plain.request("DELETE", "catalog").headers["allow"] == "GET"


def test_every_variant_has_one_row_and_the_default_plays_none() -> None:
    rows = VariantSet().catalogue()
    assert sorted(row["name"] for row in rows) == sorted(name.value for name in VariantName)
    assert all(row["allowed_by"] and row["summary"] for row in rows)
    assert not VariantSet() and not any(row["enabled"] for row in rows)
