"""The referee proxy in front of the embedded sandbox: keep-alive, a journal readable while it
runs with no secret in it, injections on the wire, and the reference client driven through it
with no injection: zero server findings and zero client findings."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from delivery_conformance.certify.injections import Injector, parse_injection
from delivery_conformance.certify.journal import Journal, read_journal
from delivery_conformance.certify.judges import FAILED, JUDGES, FlowRun, Observation
from delivery_conformance.certify.proxy import RefereeProxy
from delivery_conformance.certify.runner import Upstream, embedded_upstream
from delivery_conformance.checks.common import judge_exchanges
from delivery_conformance.target.embedded import EmbeddedSandbox
from delivery_conformance.target.profile import load_profile

API = "/api/delivery/v1/"


@pytest.fixture(scope="module")
def upstream() -> Iterator[Upstream]:
    with EmbeddedSandbox() as profile_path:
        yield embedded_upstream(load_profile(profile_path, environ={}))


def test_the_proxy_keeps_connections_alive_and_journals_without_secrets(
    upstream: Upstream, tmp_path: Path
) -> None:
    path = tmp_path / "journal.jsonl"
    key = upstream.keys["catalog"]
    headers = {"Authorization": f"Bearer {key}"}
    with RefereeProxy(upstream.base_url, journal=Journal(path)) as proxy, \
            httpx.Client(base_url=proxy.base_url, headers=headers) as http:  # fmt: skip
        for _ in range(5):
            assert http.get(API + "config").status_code == 200
        proxy.settle()
        live = read_journal(path)  # readable while the proxy runs
    assert len(live) == 5 and {e.connection for e in live} == {1}
    text = path.read_text(encoding="utf-8")
    assert key not in text and "redacted" in text
    assert all(e.key_id and e.status == 200 and e.ended >= e.started for e in live)


def test_injections_reach_the_wire_as_status_reset_and_rewritten_links(
    upstream: Upstream,
) -> None:
    unavailable = {"status": 503, "retry_after": 2, "code": "service_unavailable"}
    injector = Injector(
        [
            parse_injection({"match": {"path": "config"}, "respond": unavailable}, "a"),
            parse_injection({"match": {"path": "config"}, "skip": 1, "reset": True}, "b"),
        ]
    )
    headers = {"Authorization": f"Bearer {upstream.keys['creatives']}"}
    with RefereeProxy(upstream.base_url, injector=injector) as proxy, \
            httpx.Client(base_url=proxy.base_url, headers=headers) as http:  # fmt: skip
        first = http.get(API + "config")
        assert (first.status_code, first.headers["retry-after"]) == (503, "2")
        assert first.json()["error_code"] == "service_unavailable"
        with pytest.raises(httpx.TransportError):
            http.get(API + "config")
        page = http.get(API + "creatives", params={"limit": 2}).json()
    assert page["links"]["next"].startswith(proxy.base_url)  # links lead back through the proxy
    assert [e.injected != "" for e in proxy.journal.entries()] == [True, True, False]


REQUEST_ID = re.compile(r"^req_[0-9A-HJKMNP-TV-Z]{26}$")
NOT_COMPARED = {"date", "server", "content-length"}  # per answer, or added by the web server


def shape(value: Any) -> Any:
    """The JSON shape of a body: its keys and the type of each value."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    return type(value).__name__


@pytest.mark.parametrize(
    ("flow", "path", "query", "respond"),
    [
        ("catalog", "catalog", {"limit": "0"},
         {"status": 400, "code": "invalid_request", "message": "invalid query parameter"}),
        ("creatives", "creatives", {"limit": "0"}, {"status": 422, "code": 4220}),
        ("catalog", "nope", {}, {"status": 404, "code": "not_found"}),
    ],
)  # fmt: skip
def test_an_injected_answer_looks_like_the_servers_own(
    upstream: Upstream, flow: str, path: str, query: dict[str, str], respond: dict[str, Any]
) -> None:
    """Header by header and shape by shape, against a real answer of the same endpoint and
    status (Common response headers; Errors > Formats): a client that reads request ids or the
    version reads them on injected answers too."""
    injector = Injector([parse_injection({"match": {"path": path}, "skip": 1, "times": 2,
                                          "respond": respond}, "x")])  # fmt: skip
    headers = {"Authorization": f"Bearer {upstream.keys[flow]}"}
    with RefereeProxy(upstream.base_url, injector=injector) as proxy, \
            httpx.Client(base_url=proxy.base_url, headers=headers) as http:  # fmt: skip
        real, made, again = (http.get(API + path, params=query) for _ in range(3))
    assert [a.status_code for a in (real, made, again)] == [respond["status"]] * 3
    names = {k for k in real.headers if k not in NOT_COMPARED}
    assert {k for k in made.headers if k not in NOT_COMPARED} == names
    for name in names - {"service-request-id"}:
        assert made.headers[name] == real.headers[name], name
    ids = [a.headers["service-request-id"] for a in (real, made, again)]
    assert all(REQUEST_ID.match(i) for i in ids) and len(set(ids)) == 3, ids
    assert shape(made.json()) == shape(real.json())
    assert made.json()["request_id"] == ids[1]


def test_the_reference_client_through_a_plain_proxy_yields_no_finding(
    upstream: Upstream, tmp_path: Path
) -> None:
    client = shutil.which("delivery-client", path=str(Path(sys.executable).parent))
    assert client is not None
    flows = {
        "catalog": ["sync-catalog"], "catalog_paged": ["sync-catalog", "--paged"],
        "creatives": ["sync-creatives"], "playback": ["play", upstream.vars["episode"]],
        "config": ["config"],
    }  # fmt: skip
    with RefereeProxy(upstream.base_url) as proxy:
        outputs = []
        for flow, args in flows.items():
            env = {**os.environ, "DELIVERY_BASE_URL": proxy.base_url,
                   "DELIVERY_API_KEY": upstream.keys[flow]}  # fmt: skip
            done = subprocess.run([client, "--state", str(tmp_path / "c.sqlite"), *args],
                                  env=env, capture_output=True, text=True, timeout=60)  # fmt: skip
            assert done.returncode == 0, done.stderr
            outputs.append(done.stdout + done.stderr)
            proxy.settle()
    entries = proxy.journal.entries()
    assert len(entries) >= 6
    assert judge_exchanges([e.exchange(proxy.base_url) for e in entries]) == ()
    observation = Observation(tuple(entries), (FlowRun(1, 0, 1.0),))
    client_rules = {
        "pages_sequential": {"path": "/creatives"}, "cursors_unchanged": {},
        "cursors_followed": {"path": "/creatives"}, "same_updated_since": {"path": "/creatives"},
        "retry_budget": {},
    }  # fmt: skip
    failed = {name: JUDGES[name](observation, params) for name, params in client_rules.items()}
    assert {name: r.actual for name, r in failed.items() if r.status == FAILED} == {}
    assert all(proxy.secrets.leaks(text) == [] for text in outputs)
    assert {"api_key", "manifest_url"} <= set(proxy.secrets.values.values())
    assert json.dumps([e.to_dict() for e in entries]).count("svc_live_") == sum(
        json.dumps(e.to_dict()).count("svc_live_") for e in entries)  # fmt: skip
