"""The latency proxy (`delivery_conformance.target.latency`) and the latency self-test, scaled down.

The proxy's own tests use a tiny threaded upstream on 127.0.0.1 that records the bytes it gets
and answers canned bytes. The scaled-down self-test runs the time-dependent conformance
scenarios against the embedded sandbox behind the proxy (40 ms +- 15 ms), paced and unpaced; the
unpaced case is marked `latency_full`: `make test` runs the paced one, `make latency` the unpaced
one and then the whole suite behind the proxy in both modes (benchmarks/latency_suite.py).
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import socketserver
import statistics
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from delivery_conformance.target.embedded import EmbeddedSandbox
from delivery_conformance.target.latency import (
    LatencyProxy,
    due_time,
    parse_duration,
    proxied_profile_text,
    write_proxied_profile,
)
from delivery_conformance.target.profile import load_profile

ROOT = Path(__file__).resolve().parents[2]
ANSWER = (
    b"HTTP/1.1 302 Found\r\nLocation: http://127.0.0.1:1/elsewhere\r\n"
    b"Content-Length: 5\r\nConnection: keep-alive\r\n\r\nmoved"
)


class _Upstream(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, answer: bytes = ANSWER, pieces: int = 1) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.answer, self.pieces = answer, pieces
        self.received: list[bytes] = []
        self.connections = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(socketserver.BaseRequestHandler):
    """Answer each request (ended by a blank line) with the canned answer, in `pieces` writes."""

    def handle(self) -> None:
        server = self.server
        assert isinstance(server, _Upstream)
        server.connections += 1
        self.request.settimeout(10)
        pending = b""
        while True:
            try:
                data = self.request.recv(65536)
            except OSError:
                return
            if not data:
                return
            pending += data
            while b"\r\n\r\n" in pending:
                head, pending = pending.split(b"\r\n\r\n", 1)
                server.received.append(head + b"\r\n\r\n")
                size = -(-len(server.answer) // server.pieces)
                for start in range(0, len(server.answer), size):
                    self.request.sendall(server.answer[start : start + size])
                    time.sleep(0.001)


@pytest.fixture
def upstream() -> Iterator[_Upstream]:
    server = _Upstream()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _raw_exchange(url: str, request: bytes, expect: int) -> bytes:
    port = int(url.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.sendall(request)
        received = b""
        while len(received) < expect:
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
    return received


# -- pure pieces ------------------------------------------------------------------------------


def test_durations_read_milliseconds_and_seconds() -> None:
    assert parse_duration("40ms") == pytest.approx(0.040)
    assert parse_duration("1.5s") == 1.5
    assert parse_duration("0.2") == 0.2
    for bad in ("", "fast", "-3ms", "40 m"):
        with pytest.raises(ValueError, match="not a duration"):
            parse_duration(bad)


def test_a_chunk_is_never_due_before_the_previous_one() -> None:
    assert due_time(10.0, 0.02, 0.0) == pytest.approx(10.02)
    assert due_time(10.0, 0.001, 10.05) == 10.05  # a shorter draw waits for the earlier chunk
    assert due_time(10.0, -1.0, 0.0) == 10.0


def test_delays_stay_within_half_latency_plus_or_minus_half_jitter_and_follow_the_seed() -> None:
    first = LatencyProxy("http://127.0.0.1:9", latency=0.040, jitter=0.015, seed=7)
    again = LatencyProxy("http://127.0.0.1:9", latency=0.040, jitter=0.015, seed=7)
    draws = [first.delay() for _ in range(2000)]
    assert draws == [again.delay() for _ in range(2000)]
    assert 0.0125 <= min(draws) < 0.014 and 0.026 < max(draws) <= 0.0275
    assert statistics.mean(draws) == pytest.approx(0.020, abs=0.001)
    injected = LatencyProxy("http://127.0.0.1:9", latency=0.01, jitter=0.05, rng=random.Random(1))
    assert min(injected.delay() for _ in range(500)) == 0.0  # never below zero


@pytest.mark.parametrize(
    ("upstream_url", "message"),
    [
        ("http://10.1.2.3:80", "loopback"),
        ("https://127.0.0.1:8443", "http://127.0.0.1:PORT"),
        ("http://127.0.0.1", "http://127.0.0.1:PORT"),
    ],
)
def test_only_a_loopback_http_upstream_is_accepted(upstream_url: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        LatencyProxy(upstream_url)


def test_negative_latency_is_refused() -> None:
    with pytest.raises(ValueError, match="negative"):
        LatencyProxy("http://127.0.0.1:9", latency=-0.01)


# -- forwarding -------------------------------------------------------------------------------


def test_bytes_pass_unchanged_with_the_host_header_and_no_redirect_followed(upstream) -> None:
    request = (
        b"GET /api/delivery/v1/config HTTP/1.1\r\nHost: delivery.sandbox\r\n"
        b"X-Odd:  two  spaces \r\n\r\n"
    )
    with LatencyProxy(upstream.url, latency=0.02, jitter=0.01, seed=1) as url:
        answer = _raw_exchange(url, request, len(ANSWER))
    assert upstream.received == [request]
    assert answer == ANSWER  # the 302 comes back as it is: nobody follows it


def test_keep_alive_serves_many_requests_on_one_upstream_connection(upstream) -> None:
    with (
        LatencyProxy(upstream.url, latency=0.01, seed=1) as url,
        httpx.Client(base_url=url, follow_redirects=False) as client,
    ):
        statuses = [client.get(f"/n/{n}").status_code for n in range(5)]
    assert statuses == [302] * 5
    assert upstream.connections == 1 and len(upstream.received) == 5


def test_a_round_trip_gains_the_latency_within_the_jitter(upstream) -> None:
    proxy = LatencyProxy(upstream.url, latency=0.080, jitter=0.030, seed=3)
    with proxy as url, httpx.Client(base_url=url) as client:
        client.get("/warm-up")
        times = []
        for _ in range(12):
            start = time.monotonic()
            client.get("/timed")
            times.append(time.monotonic() - start)
    assert min(times) >= 0.080 - 0.030 - 0.002  # each way 40 ms +- 15 ms
    assert statistics.median(times) < 0.080 + 0.040  # slack for a loaded machine
    assert proxy.bytes_up > 0 and proxy.bytes_down == 13 * len(ANSWER)


def test_byte_order_is_kept_when_each_chunk_draws_its_own_delay() -> None:
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: 4000\r\n\r\n" + bytes(
        (n * 7) % 251 for n in range(4000)
    )
    server = _Upstream(answer, pieces=40)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with LatencyProxy(server.url, latency=0.02, jitter=0.04, seed=5) as url:
            got = _raw_exchange(url, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", len(answer))
        assert got == answer
    finally:
        server.shutdown()
        server.server_close()


def test_an_unreachable_upstream_closes_the_client_connection_at_once() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = probe.getsockname()[1]  # bound but not listening: connections are refused
        with LatencyProxy(f"http://127.0.0.1:{dead}", latency=0.01) as url:
            start = time.monotonic()
            with pytest.raises(httpx.TransportError), httpx.Client(base_url=url) as client:
                client.get("/", timeout=5)
            assert time.monotonic() - start < 2


def test_connections_past_the_bound_are_closed(upstream) -> None:
    proxy = LatencyProxy(upstream.url, latency=0.01, max_connections=1)
    with proxy as url, httpx.Client(base_url=url) as first, httpx.Client(base_url=url) as second:
        assert first.get("/one").status_code == 302  # holds the only slot (keep-alive)
        with pytest.raises(httpx.TransportError):
            second.get("/two", timeout=5)
    assert proxy.refused_total == 1


def test_close_ends_open_connections_and_stops_listening(upstream) -> None:
    proxy = LatencyProxy(upstream.url, latency=0.01)
    url = proxy.start()
    port = int(url.rsplit(":", 1)[1])
    idle = socket.create_connection(("127.0.0.1", port), timeout=5)
    time.sleep(0.1)
    assert proxy.open_connections == 1
    start = time.monotonic()
    proxy.close()
    assert time.monotonic() - start < 2
    assert idle.recv(1) == b""  # the idle connection was closed by the proxy
    idle.close()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    assert not any(t.name == "latency-proxy" for t in threading.enumerate())


# -- profiles and command line ----------------------------------------------------------------


def test_the_proxied_profile_moves_base_url_and_admin_url_and_keeps_the_rest(tmp_path) -> None:
    source = tmp_path / "target.toml"
    source.write_text(
        'base_url = "http://127.0.0.1:8123"\ntest_organisation = true\n'
        'bare_host = "delivery.sandbox"\n[keys]\nfilms = "svc_live_' + "a" * 32 + '"\n'
        '[fixtures]\nepisode_encrypted_no = 2\nfilm_id = "f\\"1"\n'
        '[admin]\nurl = "http://127.0.0.1:8123/_sandbox"\ntoken = "tok"\n'
    )
    out = write_proxied_profile(source, tmp_path / "proxied.toml", "http://127.0.0.1:9999")
    profile = load_profile(out)
    assert profile.base_url == "http://127.0.0.1:9999"
    assert profile.admin is not None and profile.admin.url == "http://127.0.0.1:9999/_sandbox"
    assert profile.admin.token == "tok" and profile.keys["films"] == "svc_live_" + "a" * 32
    assert dict(profile.fixtures) == {"episode_encrypted_no": "2", "film_id": 'f"1'}
    assert profile.test_organisation and profile.bare_host == "delivery.sandbox"
    assert oct(out.stat().st_mode & 0o777) == "0o600"


def test_a_profile_value_toml_cannot_hold_is_refused() -> None:
    with pytest.raises(ValueError, match="cannot write"):
        proxied_profile_text({"base_url": "http://x:1", "when": [1]}, "http://127.0.0.1:2")


def _cli(*args: str, **kwargs) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    command = [sys.executable, "-m", "delivery_conformance.target.latency", *args]
    return subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, **kwargs
    )


def test_command_line_prints_its_url_forwards_and_stops_on_sigterm(upstream, tmp_path) -> None:
    source = tmp_path / "t.toml"
    source.write_text(f'base_url = "{upstream.url}"\n[admin]\nurl = "{upstream.url}/_sandbox"\n')
    out = tmp_path / "p.toml"
    process = _cli(
        "--upstream", upstream.url, "--latency", "20ms", "--jitter", "10ms", "--seed", "4",
        "--profile", str(source), "--profile-out", str(out),
    )  # fmt: skip
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        with open(out, "rb") as handle:
            assert tomllib.load(handle)["base_url"] == url
        assert httpx.get(url + "/x", timeout=5).status_code == 302
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=10) == 0
    finally:
        process.kill()
        process.communicate()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--upstream", "http://127.0.0.1:9", "--latency", "soon"], "not a duration"),
        (["--upstream", "http://192.0.2.1:80"], "loopback"),
        (["--upstream", "http://127.0.0.1:9", "--profile", "x.toml"], "go together"),
    ],
)
def test_command_line_refuses_bad_arguments_in_one_line(args: list[str], message: str) -> None:
    process = _cli(*args)
    _, err = process.communicate(timeout=20)
    assert process.returncode == 2
    assert message in err and "Traceback" not in err and err.strip().count("\n") <= 1 + 1


# -- the timing scenarios behind the proxy (scaled-down latency self-test) ----------------------

# One or two scenarios of each timing kind: hold and no hold (LIM-043), simulated answers in one
# minute (SIM-005), refill (LIM-013, LIM-020), clock minute (LIM-024, LIM-034 on config), burst
# (LIM-014), shedding level after a drain (LIM-035), freshness poll (FRESH-008).
TIMING_SCENARIOS = (
    "held_then_issued or refused_at_once or own_limit_of_300 or refills_at_a_sixtieth"
    " or (clock_minute and config) or available_as_a_burst or shed_near_the_ceiling"
    " or revoked_key_is_refused_on_the_catalog"
)
SCENARIO_COUNT = 10
RUN_BOUND = 240.0


@pytest.fixture(scope="module")
def slow_target(tmp_path_factory) -> Iterator[Path]:
    """The embedded sandbox behind 40 ms +- 15 ms: a correct server in another data centre."""
    with EmbeddedSandbox() as profile_path:
        upstream = load_profile(profile_path).base_url
        with LatencyProxy(upstream, latency=0.040, jitter=0.015, seed=11) as url:
            out = tmp_path_factory.mktemp("latency") / "proxied.toml"
            yield write_proxied_profile(profile_path, out, url)


@pytest.mark.slow
@pytest.mark.parametrize(
    "paced", [True, pytest.param(False, marks=pytest.mark.latency_full)], ids=["paced", "unpaced"]
)
def test_timing_scenarios_pass_against_a_correct_server_40_ms_away(
    slow_target: Path, tmp_path: Path, paced: bool
) -> None:
    command = [sys.executable, "-m", "delivery_conformance.cli", "run", "--target"]
    command += [str(slow_target), "--no-properties", "-k", TIMING_SCENARIOS]
    command += ["--report-dir", str(tmp_path)] + ([] if paced else ["--no-pacing"])
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=RUN_BOUND, check=False, cwd=tmp_path
    )
    found = sorted(tmp_path.glob("*/results.json"))
    assert found, f"no results.json: {(done.stderr or done.stdout).strip()[-300:]}"
    results = json.loads(found[0].read_text())
    run = results["run"]
    failing = [
        f"{t['nodeid']}: {[v.get('expected') for v in t.get('violations', [])]} {t.get('reason')}"
        for t in results["tests"]
        if t.get("outcome") in ("failed", "error")
    ]
    assert run["requirements"]["failed"] == 0 and not failing, failing
    assert run["tests"]["failed"] == 0 and run["tests"]["error"] == 0
    assert run["tests"]["passed"] == SCENARIO_COUNT  # every selected scenario ran and passed
    assert run["pacing"] is paced
