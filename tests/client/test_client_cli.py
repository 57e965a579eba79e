"""`delivery-client` as a user runs it (a subprocess): exit codes, one-line errors, progress on
stderr, stable `--export-state`, bad answers from a local server, and a sync killed half way
that leaves the previous state intact."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from client_support import KEY, LocalServer, Sandbox, json_body

from cli_help import undocumented
from delivery_client.cli import _parser

CATALOG = "/api/delivery/v1/catalog"


def run(
    args: list[str], env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("DELIVERY_")} | (env or {})
    return subprocess.run(
        [sys.executable, "-m", "delivery_client", *args],
        capture_output=True,
        text=True,
        env=full,
        timeout=timeout,
    )


def one_line_error(result: subprocess.CompletedProcess[str], code: int) -> str:
    assert result.returncode == code, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("delivery-client: error:"), result.stderr
    return last


def test_missing_environment_and_bad_usage_exit_2(tmp_path: Path) -> None:
    state = ["--state", str(tmp_path / "s.sqlite")]
    assert "DELIVERY_BASE_URL" in one_line_error(run([*state, "config"]), 2)
    env = {"DELIVERY_BASE_URL": "ftp://x", "DELIVERY_API_KEY": KEY}
    one_line_error(run([*state, "config"], env), 2)
    one_line_error(run([*state, "no-such-command"]), 2)
    one_line_error(run([*state, "--deadline", "0", "config"], env), 2)


def test_a_wrong_key_exits_4_and_never_prints_the_key(sandbox: Sandbox, tmp_path: Path) -> None:
    env = {"DELIVERY_BASE_URL": sandbox.base_url, "DELIVERY_API_KEY": sandbox.keys["revoked"]}
    result = run(["--state", str(tmp_path / "s.sqlite"), "sync-catalog"], env)
    assert "401" in one_line_error(result, 4)
    assert sandbox.keys["revoked"] not in result.stderr + result.stdout


def test_sync_progress_on_stderr_and_a_stable_documented_export(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    env = {"DELIVERY_BASE_URL": sandbox.base_url, "DELIVERY_API_KEY": sandbox.keys["films"]}
    state = ["--state", str(tmp_path / "s.sqlite")]
    result = run([*state, "--export-state", str(tmp_path / "a.json"), "sync-catalog"], env)
    assert result.returncode == 0, result.stderr
    assert "catalog walk complete" in result.stderr and json.loads(result.stdout)["complete"]
    again = run([*state, "--export-state", "-", "export"], env)
    assert again.stdout == (tmp_path / "a.json").read_text()
    view = json.loads(again.stdout)
    assert view["format"] == "delivery-client-state/2" and view["catalog"]["walks"] == 1
    assert set(view["catalog"]["films"][0]) == {
        "id",
        "slug",
        "title",
        "title_shown",
        "available",
        "missed_walks",
        "metadata_version",
        "audio_language",
        "age_rating",
        "episodes",
    }
    everything = result.stdout + result.stderr + again.stdout
    assert sandbox.keys["films"] not in everything and "svc_live_" not in everything


def test_play_prints_no_token_and_says_whether_a_paid_episode_may_be_sold_play_097(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    env = {"DELIVERY_BASE_URL": sandbox.base_url, "DELIVERY_API_KEY": sandbox.keys["films"]}
    result = run(
        [
            "--state",
            str(tmp_path / "s.sqlite"),
            "-v",
            "play",
            sandbox.fixtures["episode_encrypted"],
            "--union-info",
            "device-0001",
            "--drm-kek",
            "kek-0000001",
        ],
        env,
    )
    assert result.returncode == 0, result.stderr
    item = json.loads(result.stdout)[0]
    assert item["status"] == 200 and item["sellable_as_paid"] is True
    assert "play_auth_token" not in result.stdout + result.stderr


def garbage_server(kind: str) -> LocalServer:
    def respond(method: str, path: str) -> tuple[int, dict[str, str], bytes]:
        if kind == "html":
            return 200, {"Content-Type": "text/html"}, b"<html><body>maintenance</body></html>"
        if kind == "truncated":
            return 200, {"Content-Type": "application/json"}, b'{"films": [{"id": "a"'
        cursor = "A" if "cursor=B" in path else "B"  # two cursors in turn: a loop
        return json_body({"films": [], "episodes": [], "next_cursor": cursor})

    return LocalServer(respond)


def test_html_truncated_json_and_looping_cursors_exit_6_and_keep_the_state(tmp_path: Path) -> None:
    for kind, extra in (("html", []), ("truncated", []), ("loop", ["--paged"])):
        with garbage_server(kind) as server:
            env = {"DELIVERY_BASE_URL": server.url, "DELIVERY_API_KEY": KEY}
            result = run(["--state", str(tmp_path / "s.sqlite"), "sync-catalog", *extra], env)
        one_line_error(result, 6)
        assert len(server.seen) <= 4
    view = json.loads(
        run(["--state", str(tmp_path / "s.sqlite"), "--export-state", "-", "export"]).stdout
    )
    assert view["catalog"] == {"walks": 0, "display_lang": "en", "films": []}


def test_an_unreachable_server_ends_at_the_deadline_with_exit_3(tmp_path: Path) -> None:
    with LocalServer(lambda m, p: json_body({})) as server:
        url = server.url  # a port that is closed once the server is gone
    started = time.monotonic()
    env = {"DELIVERY_BASE_URL": url, "DELIVERY_API_KEY": KEY}
    result = run(["--state", str(tmp_path / "s.sqlite"), "--deadline", "2", "config"], env)
    assert "deadline" in one_line_error(result, 3)
    assert time.monotonic() - started < 10


def paged_catalog(films: list[str], delay: float) -> LocalServer:
    def respond(method: str, path: str) -> tuple[int, dict[str, str], bytes]:
        index = int(path.split("cursor=p")[1].split("&")[0]) if "cursor=" in path else 0
        if index:
            time.sleep(delay)
        cursor = f"p{index + 1}" if index + 1 < len(films) else None
        page = {"id": films[index], "title": films[index], "slug": films[index]}
        return json_body({"films": [page], "episodes": [], "next_cursor": cursor})

    return LocalServer(respond)


def test_a_sync_killed_half_way_leaves_the_previous_state(tmp_path: Path) -> None:
    state = ["--state", str(tmp_path / "s.sqlite")]
    with paged_catalog([f"old-{i}" for i in range(5)], 0.0) as server:
        env = {"DELIVERY_BASE_URL": server.url, "DELIVERY_API_KEY": KEY}
        assert run([*state, "sync-catalog", "--paged"], env).returncode == 0
    before = run([*state, "--export-state", "-", "export"]).stdout
    with paged_catalog([f"new-{i}" for i in range(40)], 0.2) as server:
        env = {"DELIVERY_BASE_URL": server.url, "DELIVERY_API_KEY": KEY}
        full = {k: v for k, v in os.environ.items() if not k.startswith("DELIVERY_")} | env
        process = subprocess.Popen(
            [sys.executable, "-m", "delivery_client", *state, "sync-catalog", "--paged"],
            env=full,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 20
        while len(server.seen) < 5 and time.monotonic() < deadline:
            time.sleep(0.05)
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=10)
        assert 5 <= len(server.seen) < 40  # killed half way through the walk
    after = run([*state, "--export-state", "-", "export"]).stdout
    assert after == before and "old-0" in after and "new-0" not in after


def test_a_reset_then_a_timeout_are_retried_over_real_sockets_cli_007() -> None:
    """A local server drops the first connection without answering, holds the second past the
    attempt timeout (5 s, the floor), then answers: three attempts, one call."""
    import socket
    import threading

    from delivery_client import DeliveryClient, RetryBudget, RetryProfile

    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    stop = threading.Event()

    def serve() -> None:
        for attempt in range(3):
            connection, _ = listener.accept()
            connection.recv(65536)
            if attempt == 0:
                connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
                )
                connection.close()  # a reset
            elif attempt == 1:  # held open past the attempt timeout, without an answer
                holder = threading.Thread(target=lambda c=connection: (stop.wait(20), c.close()))
                holder.start()
            else:
                body = b'{"api": {"version": "2026-10-02"}}'
                connection.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body)
                )
                connection.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    quick = RetryProfile("quick", 0.1, 0.2, 5.0, 3, 15.0)
    started = time.monotonic()
    try:
        with DeliveryClient(f"http://127.0.0.1:{port}", KEY, budget=RetryBudget()) as client:
            reply = client.request("GET", "/api/delivery/v1/config", profile=quick)
    finally:
        stop.set()
        listener.close()
        thread.join(timeout=10)
    assert reply.status == 200 and len(reply.waits) == 2
    assert 5.0 <= time.monotonic() - started < 12.0


def test_no_switch_breaks_a_rule_and_the_settings_keep_to_the_spec(tmp_path: Path) -> None:
    from delivery_client import Settings

    for bad in ({"page_size": 0}, {"page_size": 201}, {"max_pages": 0},
                {"video_refresh_margin": -1.0}, {"video_refresh_margin": 2700.0}):  # fmt: skip
        with pytest.raises(ValueError):
            Settings(**bad)  # type: ignore[arg-type]
    assert Settings(page_size=1, max_pages=1, video_refresh_margin=0.0).page_size == 1
    state = ["--state", str(tmp_path / "s.sqlite")]
    not_found = (
        404,
        {"Content-Type": "application/json"},
        b'{"error": "x", "error_code": "not_found"}',
    )
    with LocalServer(lambda method, path: not_found) as server:
        env = {"DELIVERY_BASE_URL": server.url, "DELIVERY_API_KEY": KEY}
        one_line_error(run([*state, "config"], env), 4)
        assert len(server.seen) == 1  # a 404 is sent once (CLI-012, ERR-018)
        one_line_error(run([*state, "--policy", "retry_4xx=true", "config"], env), 2)
        assert len(server.seen) == 1  # the former knob is an unknown option: nothing is sent


def test_verbose_runs_against_the_sandbox_leak_no_secret_cli_032_cli_033_cli_041(
    sandbox: Sandbox, tmp_path: Path
) -> None:
    state = ["--state", str(tmp_path / "s.sqlite"), "-v"]
    creatives = {
        "DELIVERY_BASE_URL": sandbox.base_url,
        "DELIVERY_API_KEY": sandbox.keys["films_creatives"],
    }
    films = {"DELIVERY_BASE_URL": sandbox.base_url, "DELIVERY_API_KEY": sandbox.keys["films"]}
    outputs = [run([*state, "sync-creatives"], creatives)]
    view = json.loads(run([*state, "--export-state", "-", "export"], creatives).stdout)
    ready = [
        c["creative_id"] for c in view["creatives"]["items"] if c["has_file_url"] and c["usable"]
    ]
    outputs.append(run([*state, "download", ready[0], "--out", str(tmp_path / "f.mp4")], creatives))
    outputs.append(
        run(
            [*state, "download", sandbox.fixtures["creative_id"], "--out", str(tmp_path / "g.mp4")],
            creatives,
        )
    )
    outputs.append(
        run(
            [
                *state,
                "play",
                sandbox.fixtures["episode_encrypted"],
                sandbox.fixtures["episode_signed"],
                "--union-info",
                "device-0001",
                "--drm-kek",
                "kek-0000001",
            ],
            films,
        )
    )
    outputs.append(run([*state, "--export-state", "-", "export"], films))
    assert [o.returncode for o in outputs] == [0] * len(outputs), [o.stderr for o in outputs]
    assert (tmp_path / "f.mp4").stat().st_size > 0
    text = "\n".join(o.stdout + o.stderr for o in outputs)
    for secret in (
        "svc_live_",
        "/api/c/",
        "_files/",
        "sig=",
        "play_auth_token",
        "manifest_url",
        "http",
    ):
        assert secret not in text, secret


def test_every_option_has_help_text() -> None:
    assert list(undocumented(_parser())) == []
