"""Reproduction of findings: the numbered `findings` of results.json with their curl lines,
`replay RESULTS --finding N`, and `run --har FILE` (reports/reproduce.py, suite/replay.py,
reports/har.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from harness_support import KEY, OTHER_KEY, make_profile, respond, served

from delivery_conformance import cli
from delivery_conformance.evidence.exchange import Exchange
from delivery_conformance.evidence.redact import MARK, Redactor
from delivery_conformance.reports.markdown import render_summary_markdown
from delivery_conformance.reports.reproduce import FAKE_KEY, numbered_findings, sent_request
from delivery_conformance.reports.view import build_view
from delivery_conformance.reports.writer import load_results
from delivery_conformance.suite.replay import judge_again, replay
from delivery_conformance.target.client import DeliveryClient
from delivery_conformance.target.embedded import EmbeddedSandbox
from delivery_conformance.target.profile import load_profile

ROOT = Path(__file__).resolve().parents[2]
NASTY = """{"note": "it's $(touch pwned) `id` \\"q\\" ; rm -rf / # \\n"}"""
COMPARED = ("authorization", "content-type", "service-version", "accept", "accept-encoding")


class Recorder:
    """An ASGI app that keeps every request it gets and answers 200 with JSON."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        self.seen.append(
            {
                "method": scope["method"],
                "path": scope["path"],
                "query": scope["query_string"].decode(),
                "headers": headers,
                "body": body.decode(),
            }
        )
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"application/json")],
            }
        )
        await send({"type": "http.response.body", "body": b"{}"})


def _bash(line: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", line],
        capture_output=True,
        text=True,
        timeout=30,
        env=env,
        cwd=cwd,
        check=False,
    )


def _exchange(**fields: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "method": "GET",
        "url": "http://127.0.0.1:9/api/delivery/v1/config",
        "request_headers": {"accept": "*/*"},
        "request_body": "",
        "status": 200,
        "response_headers": {},
        "response_body": "",
        "credential": "none",
    }
    return base | fields


def _violation(exchange: dict[str, Any], rid: str, title: str = "t") -> dict[str, Any]:
    return {"requirement_id": rid, "title": title, "expected": "e", "actual": "a",
            "severity": "error", "exchange": exchange}  # fmt: skip


# --- the credential a request carried, named before the header is masked --------------------


@pytest.mark.parametrize(
    ("authorization", "said"),
    [
        (None, "none"),
        (f"Bearer {KEY}", "role:films"),
        (f"Bearer {OTHER_KEY}", "role:videos"),
        ("Bearer svc_live_" + "Zz9" * 10 + "Q1", "unknown key"),
        (f"Bearer  {KEY}", "altered key"),
        (f"Bearer {KEY[:-1]}", "altered key"),
        (f"Basic {KEY}", "altered key"),
        ("Token nothing", "altered key"),
    ],
)
def test_the_redactor_names_the_key_a_request_carried(authorization: str | None, said: str) -> None:
    redactor = Redactor([KEY, OTHER_KEY], {KEY: "films", OTHER_KEY: "videos"})
    headers = {"Accept": "*/*"} | ({"Authorization": authorization} if authorization else {})
    assert redactor.credential(headers) == said
    exchange = Exchange.capture(
        redactor,
        method="GET",
        url="http://x/api/delivery/v1/config",
        request_headers=headers,
        request_body="",
        status=200,
        response_headers={},
        response_body="",
        elapsed=0.0,
        started_at=0.0,
    )
    assert exchange.credential == said and KEY not in json.dumps(exchange.to_dict())


def test_the_client_records_the_role_whose_key_it_sent() -> None:
    assert respond(role="films").exchange.credential == "role:films"
    assert respond().exchange.credential == "none"
    assert respond(key="svc_live_" + "Qq" * 16).exchange.credential == "unknown key"


# --- curl lines ------------------------------------------------------------------------------


def test_a_curl_line_sends_the_same_request_as_the_client(tmp_path: Path) -> None:
    """Real curl through bash against a recording server: what it gets from the curl line is
    what it got from the harness's client (user agent aside)."""
    recorder, kept = Recorder(), []
    with served(recorder) as base_url:
        profile = make_profile(base_url=base_url)
        with DeliveryClient(profile, on_exchange=kept.append) as client:
            client.request(
                "POST",
                "playback",
                role="films",
                json={"episode_id": "e-1"},
                version="2026-10-02",
                params={"limit": 2, "q": "a b&c"},
                headers={"Idempotency-Key": "idem-1"},
            )
            client.request(
                "POST", "playback", role="videos", content=NASTY, headers={"Content-Type": None}
            )
        env = {
            "PATH": os.environ["PATH"],
            "DELIVERY_KEY_FILMS": KEY,
            "DELIVERY_KEY_VIDEOS": OTHER_KEY,
        }
        for exchange in kept:
            line = sent_request(exchange.to_dict()).curl(base_url)
            assert line is not None and KEY not in line and OTHER_KEY not in line
            done = _bash(line, env, tmp_path)
            assert done.returncode == 0, done.stderr
    first, second, again_first, again_second = recorder.seen
    for original, again in ((first, again_first), (second, again_second)):
        for name in ("method", "path", "query", "body"):
            assert again[name] == original[name], name
        for name in (*COMPARED, "idempotency-key"):
            assert again["headers"].get(name) == original["headers"].get(name), name
    assert again_second["body"] == NASTY and not (tmp_path / "pwned").exists()
    assert "content-type" not in again_second["headers"]  # sent without one, resent without


def test_a_fake_curl_receives_every_argument_unharmed(tmp_path: Path) -> None:
    """The line through bash with a `curl` on PATH that writes its argv: nothing expanded but
    the key variable, nothing run."""
    (tmp_path / "bin").mkdir()
    fake = tmp_path / "bin" / "curl"
    record = f"open({str(tmp_path / 'argv.json')!r}, 'w').write(json.dumps(sys.argv[1:]))"
    fake.write_text(f"#!{sys.executable}\nimport json, sys\n{record}\n")
    fake.chmod(0o755)
    exchange = _exchange(
        method="POST",
        url="http://127.0.0.1:9/api/delivery/v1/playback?x=%27a%27",
        request_headers={"content-type": "application/json", "service-simulate": "it's"},
        request_body=NASTY,
        credential="role:films_metadata",
    )
    line = sent_request(exchange).curl("http://127.0.0.1:9")
    assert line is not None and "$DELIVERY_KEY_FILMS_METADATA" in line
    env = {"PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}", "DELIVERY_KEY_FILMS_METADATA": KEY}
    assert _bash(line, env, tmp_path).returncode == 0
    argv = json.loads((tmp_path / "argv.json").read_text())
    assert argv[argv.index("-X") + 1] == "POST"
    assert "http://127.0.0.1:9/api/delivery/v1/playback?x=%27a%27" in argv
    assert f"Authorization: Bearer {KEY}" in argv and "service-simulate: it's" in argv
    assert argv[argv.index("--data-binary") + 1] == NASTY
    assert not (tmp_path / "pwned").exists()


def test_no_key_and_a_made_up_key_are_reproduced_as_such() -> None:
    plain = sent_request(_exchange()).curl("http://t")
    assert plain is not None and "Authorization" not in plain
    shown = {"authorization": "Bearer svc_live_Zz" + MARK}
    made_up = sent_request(_exchange(request_headers=shown, credential="unknown key"))
    line = made_up.curl("http://t")
    assert line is not None and f"Authorization: Bearer {FAKE_KEY}" in line and "FAKE" in FAKE_KEY


@pytest.mark.parametrize(
    ("fields", "why"),
    [
        ({"url": f"https://cdn.example/{MARK}"}, "signed link"),
        ({"request_headers": {"cookie": f"api_{MARK}"}}, "cookie header carried a secret"),
        ({"method": "POST", "request_body": '{"token": "ab' + MARK + '"}'}, "body carried a"),
        ({"method": "POST", "request_body": "{" + "x" * 10 + "…[12 more characters]"}, "cut"),
        (
            {"request_headers": {"authorization": "Bearer  svc"}, "credential": "altered key"},
            "changed form of a key",
        ),
        ({"request_headers": {"authorization": "Bearer svc"}, "credential": ""}, "whose key"),
        ({"request_headers": {"authorization": "x"}, "credential": "role:a$(id)"}, "names no role"),
    ],
)
def test_a_request_with_a_hidden_part_has_no_curl_line_and_says_why(
    fields: dict[str, Any], why: str
) -> None:
    request = sent_request(_exchange(**fields))
    assert request.curl("http://t") is None and why in request.refusal


def test_findings_are_numbered_in_run_order_with_the_tests_that_saw_them() -> None:
    def violation(rid: str, path: str) -> dict[str, Any]:
        return _violation(_exchange(url=f"http://127.0.0.1:9/api/delivery/v1/{path}"), rid)

    document = {
        "run": {"base_url": "http://127.0.0.1:9"},
        "tests": [
            {"nodeid": "a", "violations": [violation("GEN-002", "config")]},
            {
                "nodeid": "b",
                "violations": [violation("HDR-014", "catalog"), violation("GEN-002", "config")],
            },
        ],
    }
    findings = numbered_findings(document)
    assert [(f["number"], f["requirement_id"], f["tests"], f["seen"]) for f in findings] == [
        (1, "GEN-002", ["a", "b"], 2),
        (2, "HDR-014", ["b"], 1),
    ]
    assert all(f["curl"].startswith("curl ") for f in findings)
    view = build_view(document | {"requirements": [], "findings": findings})
    assert view.unattributed == ()
    markdown = render_summary_markdown(document | {"requirements": [], "findings": findings})
    assert "`curl" not in markdown  # listed only beside failed requirements, none here


def test_a_markdown_code_span_holds_a_curl_line_with_backticks() -> None:
    body = '{"a": "`x`"}'
    exchange = _exchange(method="POST", request_body=body, request_headers={"content-type": "a"})
    violation = _violation(exchange, "")
    document = {
        "run": {"base_url": "http://t"},
        "requirements": [],
        "unattributed_findings": [violation],
        "tests": [{"nodeid": "n", "violations": [violation]}],
    }
    markdown = render_summary_markdown(document)
    line = sent_request(exchange).curl("http://t")
    assert f"`` {line} ``" in markdown


# --- a failing run against a sandbox with a fault --------------------------------------------


def _run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "delivery_conformance.cli", *args],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=ROOT,
        check=False,
    )


@pytest.fixture(scope="module")
def faulty() -> Iterator[Path]:
    with EmbeddedSandbox(faults=["cors_header_sent"]) as profile_path:
        yield profile_path


@pytest.fixture(scope="module")
def failing_run(faulty: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    where = tmp_path_factory.mktemp("failing-run")
    har = where / "run.har"
    done = _run_cli(
        "run",
        "--target",
        str(faulty),
        "-k",
        "test_config",
        "--no-properties",
        "--report-dir",
        str(where / "reports"),
        "--har",
        str(har),
        "--summary-md",
        str(where / "summary.md"),
    )
    assert done.returncode == 1, done.stdout[-2000:] + done.stderr[-2000:]
    (results,) = [
        p for p in (where / "reports").glob("*/results.json") if p.parent.name != "latest"
    ]
    return {"results": results, "har": har, "summary": where / "summary.md"}


@pytest.mark.slow
def test_a_failing_run_numbers_its_findings_and_leaks_no_key(
    faulty: Path, failing_run: dict[str, Path]
) -> None:
    document = load_results(failing_run["results"])  # the published schema holds
    findings = document["findings"]
    assert [f["number"] for f in findings] == list(range(1, len(findings) + 1))
    assert len(findings) == document["run"]["findings"]  # as the verdict line counts them
    assert findings and all(f["requirement_id"] == "GEN-002" for f in findings)
    assert all(f["tests"] and f["curl"] for f in findings)
    assert any('"Authorization: Bearer $DELIVERY_KEY_FILMS"' in f["curl"] for f in findings)
    assert any("Authorization" not in f["curl"] for f in findings)  # the no-key scenarios
    run_dir = failing_run["results"].parent
    texts = {
        "results.json": failing_run["results"].read_text(encoding="utf-8"),
        "report.html": (run_dir / "report.html").read_text(encoding="utf-8"),
        "junit.xml": (run_dir / "junit.xml").read_text(encoding="utf-8"),
        "summary": failing_run["summary"].read_text(encoding="utf-8"),
        "har": failing_run["har"].read_text(encoding="utf-8"),
    }
    profile = load_profile(faulty, environ={})
    secrets = [*profile.keys.values(), profile.admin.token if profile.admin else "none"]
    for name, text in texts.items():
        assert not [s for s in secrets if s in text], name
    for name in ("report.html", "junit.xml", "summary"):
        assert "DELIVERY_KEY_FILMS" in texts[name] and "finding 1" in texts[name], name


# spec: none (HAR 1.2, http://www.softwareishard.com/blog/har-12-spec/): the fields a viewer needs.
HAR_ENTRY = {
    "startedDateTime": str,
    "time": (int, float),
    "request": dict,
    "response": dict,
    "cache": dict,
    "timings": dict,
}
HAR_REQUEST = {
    "method": str,
    "url": str,
    "httpVersion": str,
    "cookies": list,
    "headers": list,
    "queryString": list,
    "headersSize": int,
    "bodySize": int,
}
HAR_RESPONSE = {
    "status": int,
    "statusText": str,
    "httpVersion": str,
    "cookies": list,
    "headers": list,
    "content": dict,
    "redirectURL": str,
    "headersSize": int,
    "bodySize": int,
}


def _shaped(value: dict[str, Any], shape: dict[str, Any], where: str) -> None:
    for name, kind in shape.items():
        assert isinstance(value.get(name), kind), f"{where}.{name}: {value.get(name)!r}"


@pytest.mark.slow
def test_the_har_file_holds_every_exchange_in_the_har_1_2_shape(
    failing_run: dict[str, Path],
) -> None:
    har = json.loads(failing_run["har"].read_text(encoding="utf-8"))
    document = json.loads(failing_run["results"].read_text(encoding="utf-8"))
    log = har["log"]
    assert log["version"] == "1.2" and log["creator"]["name"] == "delivery-conformance"
    assert len(log["entries"]) == document["run"]["exchanges"]["total"] > 0
    nodeids = {t["nodeid"] for t in document["tests"]}
    for index, entry in enumerate(log["entries"]):
        _shaped(entry, HAR_ENTRY, f"entries[{index}]")
        _shaped(entry["request"], HAR_REQUEST, "request")
        _shaped(entry["response"], HAR_RESPONSE, "response")
        content = entry["response"]["content"]
        assert isinstance(content["size"], int) and isinstance(content["mimeType"], str)
        assert isinstance(content["text"], str)
        timings = entry["timings"]
        assert timings["send"] + timings["wait"] + timings["receive"] == pytest.approx(
            entry["time"]
        )
        assert entry["startedDateTime"].endswith("Z") and "T" in entry["startedDateTime"]
        assert entry["_test"] == entry["comment"] and entry["_test"] in nodeids
        for pair in (*entry["request"]["headers"], *entry["response"]["headers"]):
            assert set(pair) == {"name", "value"}
    authorizations = [
        h["value"]
        for e in log["entries"]
        for h in e["request"]["headers"]
        if h["name"].lower() == "authorization"
    ]
    assert authorizations and all(value.endswith(MARK) for value in authorizations)


@pytest.mark.slow
def test_replay_says_still_holds_against_the_faulty_sandbox(
    faulty: Path, failing_run: dict[str, Path]
) -> None:
    said: list[str] = []
    code = replay(failing_run["results"], 1, faulty, environ={}, out=said.append)
    assert code == 1, said
    assert "still holds, re-judged by check no_cors" in said[0]


@pytest.mark.slow
def test_replay_reads_the_key_from_the_environment_without_a_profile(
    faulty: Path, failing_run: dict[str, Path]
) -> None:
    keys = load_profile(faulty, environ={}).keys
    number = _first_with(failing_run["results"], "$DELIVERY_KEY_FILMS")
    said: list[str] = []
    code = replay(
        failing_run["results"],
        number,
        environ={"DELIVERY_KEY_FILMS": keys["films"]},
        out=said.append,
    )
    assert code == 1 and "with the films key" in said[1]
    with pytest.raises(cli.UsageError, match="set DELIVERY_KEY_FILMS or give --target"):
        replay(failing_run["results"], number, environ={}, out=said.append)


def _first_with(results: Path, text: str) -> int:
    document = json.loads(results.read_text(encoding="utf-8"))
    return next(f["number"] for f in document["findings"] if text in (f["curl"] or ""))


@pytest.mark.slow
def test_replay_says_no_longer_seen_against_a_clean_sandbox(
    failing_run: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    with EmbeddedSandbox() as clean:
        code = cli.main(
            ["replay", str(failing_run["results"]), "--finding", "1", "--target", str(clean)]
        )
    out = capsys.readouterr().out
    assert code == 0, out
    assert "no longer seen, re-judged by check no_cors" in out


@pytest.mark.slow
def test_replay_against_a_target_that_does_not_answer_exits_3_in_one_line(
    failing_run: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    closed = tmp_path / "closed.toml"
    closed.write_text('base_url = "http://127.0.0.1:9"\n[keys]\nfilms = "' + KEY + '"\n')
    started = time.monotonic()
    code = cli.main(
        [
            "replay",
            str(failing_run["results"]),
            "--finding",
            "1",
            "--target",
            str(closed),
            "--timeout",
            "2",
        ]
    )
    assert code == 3 and time.monotonic() - started < 10
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "cannot reach" in err and "Traceback" not in err


# --- bad input ------------------------------------------------------------------------------


def _results(tmp_path: Path, **changes: Any) -> Path:
    exchange = _exchange(response_headers={"access-control-allow-origin": "*"})
    violation = _violation(exchange, "GEN-002", "CORS header sent")
    document: dict[str, Any] = {
        "format_version": "1.3",
        "tool": {"name": "delivery-conformance", "version": "0"},
        "run": {
            "base_url": "http://127.0.0.1:9",
            "started_at": 0,
            "duration_seconds": 0,
            "seed": None,
            "pacing": False,
            "exit_code": 1,
            "verdict": "VIOLATIONS FOUND",
            "tests": {},
            "requirements": {},
            "coverage": {"selected": 0, "exercised": 0, "percent": 0, "not_exercised": []},
        },
        "requirements": [],
        "client_requirements": [],
        "violations_of_unknown_requirements": [],
        "tests": [
            {
                "nodeid": "t",
                "requirement_ids": ["GEN-002"],
                "outcome": "failed",
                "reason": "",
                "violations": [violation],
                "duration": 0,
            }
        ],
    }
    document.update(changes)
    path = tmp_path / "results.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--finding", "1"], "cannot read"),  # the results file is missing
        (["--finding", "2"], "has 1 findings (numbered from 1): no finding 2"),
        (["--finding", "0"], "no finding 0"),
        (["--finding", "one"], "invalid int value"),
        (["--finding", "1", "--timeout", "0"], "positive number of seconds"),
        (["--finding", "1", "--target", "/nonexistent.toml"], "nonexistent.toml"),
    ],
)
def test_replay_refuses_bad_input_with_exit_2_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], said: str
) -> None:
    results = tmp_path / "missing.json" if said == "cannot read" else _results(tmp_path)
    try:
        code = cli.main(["replay", str(results), *args])
    except SystemExit as stop:  # argparse's own errors
        code = int(stop.code or 0)
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and said in err and "Traceback" not in err


def test_replay_refuses_results_of_another_format_major(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _results(tmp_path, format_version="2.0")
    assert cli.main(["replay", str(path), "--finding", "1"]) == 2
    assert "not a results file of format 1.x" in capsys.readouterr().err


def test_replay_refuses_a_finding_that_carried_a_redacted_secret(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _results(tmp_path)
    document = json.loads(path.read_text())
    document["tests"][0]["violations"][0]["exchange"]["url"] = f"https://cdn.example/{MARK}"
    path.write_text(json.dumps(document))
    assert cli.main(["replay", str(path), "--finding", "1"]) == 2
    err = capsys.readouterr().err
    assert "finding 1 cannot be replayed: its URL carried a signed link" in err


def test_run_with_an_unwritable_har_path_exits_2_before_any_target(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    closed = tmp_path / "closed.toml"  # unreachable: reaching it would be exit 3
    closed.write_text('base_url = "http://127.0.0.1:9"\n[keys]\nfilms = "' + KEY + '"\n')
    har = tmp_path / "no-such-dir" / "run.har"
    code = cli.main(
        ["run", "--target", str(closed), "--report-dir", str(tmp_path / "r"), "--har", str(har)]
    )
    assert code == 2
    assert "--har" in capsys.readouterr().err and not har.exists()


# --- judging the new answer -----------------------------------------------------------------


def test_a_finding_no_check_raises_is_compared_with_the_recorded_answer() -> None:
    finding = {
        "requirement_id": "PLAY-012",
        "title": "Retry-After missing on 503",
        "expected": "a Retry-After header",
        "actual": "absent",
        "tests": ["tests/conformance/test_x.py::test_busy_answers_carry_retry_after[films]"],
    }
    recorded = respond(status=503, body={"error": "x", "request_id": "req_1"}).exchange
    same = judge_again(
        finding, recorded, respond(status=503, body={"error": "x", "request_id": "req_2"})
    )
    assert same.holds is True and same.how.startswith("compared with the recorded answer")
    assert same.details == ("the same answer came back",)
    fixed = judge_again(finding, recorded, respond(status=503, headers={"Retry-After": "2"}))
    assert fixed.holds is False and "the headers it names: retry-after" in fixed.how
    assert fixed.details == ("retry-after now present, recorded absent",)
    moved = judge_again(finding, recorded, respond(status=429))
    assert moved.holds is None, "another status is no proof of a fix (a 429, say)"
    assert moved.details == (
        "status 429, recorded 503",
        "only the scenario can judge it: delivery-conformance run -k "
        "'test_busy_answers_carry_retry_after'",
    )
    other = judge_again(finding, recorded, respond(status=503, body={"error": "y"}))
    assert other.holds is None and other.details[0] == "the body differs from the recorded one"


def test_a_finding_a_check_raises_is_judged_by_that_check() -> None:
    finding = {
        "requirement_id": "GEN-002",
        "title": "CORS header sent",
        "expected": "",
        "actual": "",
    }
    recorded = respond(headers={"Access-Control-Allow-Origin": "*"}).exchange
    held = judge_again(finding, recorded, respond(headers={"Access-Control-Allow-Origin": "*"}))
    assert held.holds and held.how == "re-judged by check no_cors"
    assert not judge_again(finding, recorded, respond()).holds
