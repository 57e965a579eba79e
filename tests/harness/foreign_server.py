"""A server nobody here wrote: every answer drawn from spec/openapi.yaml's response schemas.

The suite must never crash on an answer, whatever it is. This server stands in for an
independent mock built from the OpenAPI document (random values that fit the response schemas,
seeded) and, in `broken` mode, for a server that gets the schemas wrong (wrong types, missing
required fields, wrong content types, empty, truncated and huge bodies, undocumented statuses,
garbled headers). It has no admin API and its profile is written by hand, as a new user would.

    python tests/harness/foreign_server.py --seeds 10 --modes valid,broken --jobs 2  # make foreign

Each (seed, mode) starts the server on 127.0.0.1 (port 0, a thread), runs
`delivery-conformance run --target PROFILE --no-pacing --no-properties` against it with a
timeout, and reads results.json: the exit code, the tests whose outcome is "error" (the tool's
own failures: must be none), and the widest charge (how many requirements one violation was
charged to, counted by the same (title, expected, actual, exchange) across failed tests).
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import re
import string
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import referencing
from harness_support import served
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from delivery_conformance.spec.files import parse_yaml

ROOT = Path(__file__).resolve().parents[2]
OPENAPI = ROOT / "spec" / "openapi.yaml"
PREFIX = "/api/delivery/v1"
METHODS = ("get", "post", "put", "patch", "delete", "head", "options", "trace")
MODES = ("valid", "broken")
# Seconds one suite run may take before it counts as a hang. A server whose answers never agree
# costs each comparison of two reads its whole Freshness bound (30 to 60 s: the suite never fails
# a server before the bound), about 4 minutes of a run here.
RUN_TIMEOUT = 600.0

# --- a seeded value generator for the JSON Schema subset the document uses ------------------

_PRINTABLE = string.ascii_letters + string.digits + "-_.~ "


def _regex_value(pattern: str, rng: random.Random) -> str:
    """A string matching a simple regular expression (classes, groups, counts, anchors)."""
    out: list[str] = []
    pos = 0

    def atom(i: int) -> tuple[list[str], int]:
        ch = pattern[i]
        if ch == "[":
            j = pattern.index("]", i + 1)
            body = pattern[i + 1 : j]
            chars: list[str] = []
            k = 0
            while k < len(body):
                if body[k] == "\\" and k + 1 < len(body):
                    chars += _escape(body[k + 1])
                    k += 2
                elif k + 2 < len(body) and body[k + 1] == "-":
                    chars += [chr(c) for c in range(ord(body[k]), ord(body[k + 2]) + 1)]
                    k += 3
                else:
                    chars.append(body[k])
                    k += 1
            return chars, j + 1
        if ch == "\\":
            return _escape(pattern[i + 1]), i + 2
        if ch == ".":
            return list(string.ascii_letters + string.digits), i + 1
        return [ch], i + 1

    def count(i: int) -> tuple[int, int, int]:
        if i < len(pattern) and pattern[i] == "{":
            j = pattern.index("}", i)
            low, _, high = pattern[i + 1 : j].partition(",")
            hi = int(low) + 3 if high == "" and "," in pattern[i + 1 : j] else int(high or low)
            return int(low), hi, j + 1
        if i < len(pattern) and pattern[i] in "*+?":
            return {"*": (0, 3), "+": (1, 4), "?": (0, 1)}[pattern[i]] + (i + 1,)
        return 1, 1, i

    while pos < len(pattern):
        ch = pattern[pos]
        if ch in "^$":
            pos += 1
            continue
        if ch == "(":
            depth, j = 1, pos + 1
            while depth:
                depth += {"(": 1, ")": -1}.get(pattern[j], 0)
                j += 1
            inner = pattern[pos + 1 : j - 1]
            low, high, pos = count(j)
            for _ in range(rng.randint(low, high)):
                out.append(_regex_value(inner, rng))
            continue
        chars, nxt = atom(pos)
        low, high, pos = count(nxt)
        out.extend(rng.choice(chars) for _ in range(rng.randint(low, high)))
    return "".join(out)


def _escape(ch: str) -> list[str]:
    return {
        "s": [" "],
        "S": list(string.ascii_letters),
        "d": list(string.digits),
        "w": list(string.ascii_letters + string.digits + "_"),
    }.get(ch, [ch])


@dataclass
class Generator:
    """Draws values for the schemas of one OpenAPI document with one random source."""

    document: dict[str, Any]
    rng: random.Random
    depth: int = 0

    def resolve(self, schema: Any) -> Any:
        while isinstance(schema, dict) and "$ref" in schema:
            node: Any = self.document
            for part in schema["$ref"].lstrip("#/").split("/"):
                node = node[part]
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            schema = {**node, **rest} if rest and isinstance(node, dict) else node
        return schema

    def value(self, schema: Any) -> Any:
        schema = self.resolve(schema)
        if not isinstance(schema, dict) or schema is True:
            return self.rng.choice([1, "x", None, True])
        self.depth += 1
        try:
            return self._value(schema)
        finally:
            self.depth -= 1

    def _value(self, schema: dict[str, Any]) -> Any:
        rng = self.rng
        if "const" in schema:
            return copy.deepcopy(schema["const"])
        if "enum" in schema:
            return copy.deepcopy(rng.choice(schema["enum"]))
        if schema.get("examples") and rng.random() < 0.3:
            return copy.deepcopy(rng.choice(schema["examples"]))
        if "allOf" in schema:
            merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
            for part in schema["allOf"]:
                part = self.resolve(part)
                for key, val in part.items():
                    if key == "properties":
                        merged.setdefault("properties", {}).update(val)
                    elif key == "required":
                        merged["required"] = list(merged.get("required", [])) + list(val)
                    elif key not in merged:
                        merged[key] = val
            return self._value(merged)
        for key in ("oneOf", "anyOf"):
            if key in schema:
                choice = self.resolve(rng.choice(schema[key]))
                rest = {k: v for k, v in schema.items() if k != key}
                return self._value({**rest, **choice} if isinstance(choice, dict) else rest)
        kind = schema.get("type")
        if isinstance(kind, list):
            kind = rng.choice(kind)
        if kind is None:
            kind = "object" if "properties" in schema else "string"
        return getattr(self, f"_{kind}")(schema)

    def _null(self, schema: dict[str, Any]) -> None:
        return None

    def _boolean(self, schema: dict[str, Any]) -> bool:
        return self.rng.random() < 0.5

    def _integer(self, schema: dict[str, Any]) -> int:
        low = schema.get("minimum", schema.get("exclusiveMinimum", -5) + 1)
        high = schema.get("maximum", max(low, 0) + 10_000)
        return self.rng.randint(int(low), int(high))

    def _number(self, schema: dict[str, Any]) -> float:
        return round(self._integer(schema) + self.rng.random(), 3)

    def _string(self, schema: dict[str, Any]) -> str:
        rng = self.rng
        fmt = schema.get("format")
        if "pattern" in schema:
            text = _regex_value(schema["pattern"], rng)
        elif fmt == "uuid":
            text = "%08x-%04x-4%03x-8%03x-%012x" % tuple(  # noqa: UP031
                rng.getrandbits(bits) for bits in (32, 16, 12, 12, 48)
            )
        elif fmt == "date-time":
            text = f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T10:00:00Z"
        elif fmt == "date":
            text = f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        elif fmt == "uri":
            text = f"https://cdn.example.test/{rng.randint(1, 999)}/file.m3u8"
        else:
            low = schema.get("minLength", 0)
            high = schema.get("maxLength", low + 12)
            text = "".join(rng.choice(_PRINTABLE) for _ in range(rng.randint(low, high)))
        return text

    def _array(self, schema: dict[str, Any]) -> list[Any]:
        low = schema.get("minItems", 0)
        high = min(schema.get("maxItems", low + 3), low + 3)
        if self.depth > 8:
            high = low
        return [self.value(schema.get("items", {})) for _ in range(self.rng.randint(low, high))]

    def _object(self, schema: dict[str, Any]) -> dict[str, Any]:
        required = set(schema.get("required", []))
        out: dict[str, Any] = {}
        for name, sub in (schema.get("properties") or {}).items():
            if name in required or (self.depth < 8 and self.rng.random() < 0.7):
                out[name] = self.value(sub)
        return out


# --- the document read once: operations and their responses -------------------------------


@dataclass(frozen=True)
class Operation:
    method: str
    template: str
    pattern: re.Pattern[str]
    responses: Mapping[str, Any]


def _operations(document: dict[str, Any]) -> list[Operation]:
    found = []
    for template, item in document["paths"].items():
        regex = re.sub(r"\\\{[^}]+\\\}", "[^/]+", re.escape(template))
        for method, operation in item.items():
            if method in METHODS:
                found.append(
                    Operation(
                        method.upper(), template, re.compile(regex + "/?"), operation["responses"]
                    )
                )
    return found


@dataclass
class ForeignApp:
    """The ASGI app: each request answered with a drawn status, headers and body."""

    seed: int
    mode: str
    document: dict[str, Any] = field(default_factory=lambda: parse_yaml(OPENAPI.read_text()))
    counts: Counter[str] = field(default_factory=Counter)
    answered: int = 0
    config_seen: int = 0

    def __post_init__(self) -> None:
        self.operations = _operations(self.document)

    def app(self) -> Starlette:
        return Starlette(
            routes=[Route("/{path:path}", self.handle, methods=[m.upper() for m in METHODS])]
        )

    def rng_for(self, request: Request) -> random.Random:
        key = f"{self.seed}|{self.mode}|{request.method}|{request.url.path}|{request.url.query}"
        self.counts[key] += 1
        return random.Random(f"{key}|{self.counts[key]}")

    def pick(self, request: Request, rng: random.Random, preflight: bool) -> tuple[str, Any]:
        """A documented answer of the operation: its success 70 % of the time. A preflight
        answer (`preflight`) is one with a JSON body."""
        path = request.url.path
        same_path = [op for op in self.operations if op.pattern.fullmatch(path)]
        matching = [op for op in same_path if op.method == request.method]
        if matching:
            responses = matching[0].responses
            if preflight:
                responses = {
                    s: r
                    for s, r in responses.items()
                    if Generator(self.document, rng).resolve(r).get("content")
                }
            success = [s for s in responses if s.startswith("2") or s == "302"]
            status = rng.choice(success) if rng.random() < 0.7 else rng.choice(sorted(responses))
            return status, responses[status]
        components = self.document["components"]["responses"]
        if same_path:
            return "405", components["MethodNotAllowed"]
        return "404", components["UnknownPath"]

    def draw(self, generator: Generator, schema: Any) -> Any:
        """A value for the schema, redrawn until it validates (at most 20 draws)."""
        value = generator.value(schema)
        checker = _validator(self.document, schema)
        for _ in range(20):
            if checker is None or checker.is_valid(value):
                return value
            value = generator.value(schema)
        return value

    def _config_answers(self) -> int:
        self.config_seen += 1
        return self.config_seen

    async def handle(self, request: Request) -> Response:
        await request.body()
        rng = self.rng_for(request)
        # The run's preflight (its first three GET /config) ends a run whose /config is not
        # JSON at all with exit 3 (docs/running.md > Exit codes: not a Delivery API server); those
        # answers keep a JSON body so that the suite itself meets every other answer.
        preflight = request.url.path.endswith("/config") and self._config_answers() <= 3
        status, response = self.pick(request, rng, preflight)
        generator = Generator(self.document, rng)
        response = generator.resolve(response)
        headers: dict[str, str] = {}
        for name, header in (response.get("headers") or {}).items():
            header = generator.resolve(header)
            if header.get("required") or rng.random() < 0.6:
                value = str(self.draw(generator, header.get("schema", {"type": "string"})))
                headers[name] = value.encode("ascii", "replace").decode()
        content = response.get("content") or {}
        body = b""
        media = None
        if content:
            media = rng.choice(sorted(content))
            schema = content[media].get("schema", {})
            body = json.dumps(self.draw(generator, schema)).encode()
            headers["Content-Type"] = media
        code = 200 if status == "default" else int(status)
        if self.mode == "broken":
            code, headers, body = _break(rng, code, headers, body, media, json_only=preflight)
        self.answered += 1
        return Response(body, status_code=code, headers=headers)


_VALIDATORS: dict[int, Any] = {}


def _validator(document: dict[str, Any], schema: Any) -> Any:
    """A JSON Schema validator of `schema` with the document's `#/components/...` refs."""
    key = id(schema)
    if key not in _VALIDATORS:
        wrapper = {**document, "$id": "urn:openapi", "__schema__": schema}
        resource = referencing.Resource.from_contents(
            wrapper, default_specification=referencing.jsonschema.DRAFT202012
        )
        registry = referencing.Registry().with_resource("urn:openapi", resource)
        _VALIDATORS[key] = jsonschema.Draft202012Validator(
            {"$ref": "urn:openapi#/__schema__"}, registry=registry
        )
    return _VALIDATORS[key]


# --- broken mode: what a server that gets the schemas wrong sends --------------------------

_WRONG_VALUES: tuple[Any, ...] = ("", "x", -1, 0, 3.5, True, None, [], {}, "null", [None], 10**20)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(value, dict):
        for key, inner in value.items():
            yield (*prefix, key)
            yield from _paths(inner, (*prefix, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value):
            yield (*prefix, index)
            yield from _paths(inner, (*prefix, index))


def _mutate(rng: random.Random, value: Any) -> Any:
    places = list(_paths(value))
    if not places:
        return rng.choice(_WRONG_VALUES)
    for _ in range(rng.randint(1, 3)):
        places = list(_paths(value))
        if not places:
            break
        place = rng.choice(places)
        holder = value
        for step in place[:-1]:
            holder = holder[step]
        if isinstance(holder, dict) and rng.random() < 0.5:
            del holder[place[-1]]  # a required field, often
        else:
            holder[place[-1]] = rng.choice(_WRONG_VALUES)
    return value


def _break(
    rng: random.Random,
    status: int,
    headers: dict[str, str],
    body: bytes,
    media: str | None,
    *,
    json_only: bool = False,
) -> tuple[int, dict[str, str], bytes]:
    ways = [
        "types",
        "types",
        "types",
        "content_type",
        "empty",
        "huge",
        "truncated",
        "not_object",
        "status",
        "headers",
        "none",
    ]
    if json_only:
        ways = ["types", "headers", "none"]
    how = rng.choice(ways)
    if how == "types" and body:
        # a body nested past the interpreter's recursion limit is sent unmutated
        with suppress(ValueError, RecursionError):
            body = json.dumps(_mutate(rng, json.loads(body))).encode()
    elif how == "content_type":
        headers["Content-Type"] = rng.choice(["text/html", "text/plain", "application/xml"])
        if rng.random() < 0.5:
            body = b"<html><body>Bad gateway</body></html>"
    elif how == "empty":
        body = b""
    elif how == "huge":
        # ~1 MB of JSON: an object with one long string, or a long list
        if rng.random() < 0.5:
            body = json.dumps({"padding": "x" * 1_000_000, "data": []}).encode()
        else:
            body = json.dumps([{"id": i} for i in range(60_000)]).encode()
        headers["Content-Type"] = "application/json"
    elif how == "truncated" and body:
        body = body[: rng.randint(0, max(0, len(body) - 1))]
    elif how == "not_object":
        body = json.dumps(rng.choice([None, 42, "ok", [1, 2], True])).encode()
    elif how == "status":
        status = rng.choice([200, 201, 204, 301, 400, 404, 418, 500, 502, 503, 599])
        if status in (204, 301) or status < 200:
            body = b""
    elif how == "headers":
        for name in list(headers):
            choice = rng.random()
            if choice < 0.3:
                del headers[name]
            elif choice < 0.6:
                headers[name] = rng.choice(["", "soon", "-1", "abc, def", "0" * 300])
        headers.setdefault("Retry-After", rng.choice(["soon", "-5", "1e9", ""]))
        headers.setdefault("X-RateLimit-Limit", rng.choice(["many", "-1", ""]))
    return status, headers, body


# --- serving, the hand-written profile, and the run loop ----------------------------------


@contextmanager
def serve(seed: int, mode: str) -> Iterator[str]:
    """The foreign server on 127.0.0.1 (a free port, a thread); yields its base URL."""
    with served(ForeignApp(seed, mode).app()) as url:
        yield url


ROLES = (
    "films",
    "films_metadata",
    "films_playback",
    "films_creatives",
    "webhooks",
    "revoked",
    "videos",
    "videos_unbound",
    "videos_other",
    "suspended",
    "unlicensed",
    "production",
    "unverifiable",
    "limits",
    "limits_videos",
)
UUID_FIXTURES = (
    "creative_hidden",
    "creative_id",
    "creative_link_failure",
    "creative_not_ready",
    "creative_other_org",
    "creative_rights_ended",
    "episode_encrypted",
    "episode_entitlement_not_found",
    "episode_entitlement_suspended",
    "episode_internal_error",
    "episode_no_playable",
    "episode_not_ready",
    "episode_outside_window",
    "episode_paged_film",
    "episode_provider_timeout",
    "episode_signed",
    "episode_stream_error",
    "episode_streaming_disabled",
    "film_id",
    "video_broken",
    "video_id",
    "video_not_granted",
    "video_not_ready",
    "video_two_collections",
)
OTHER_FIXTURES: Mapping[str, str | int] = {
    "category_slug": "strength",
    "category_withdrawn": "mobility",
    "collection_broken": "col-broken",
    "collection_code": "col-strength",
    "collection_not_granted": "col-locked",
    "episode_encrypted_no": 2,
    "episode_last_no": 6,
    "film_slug": "the-heir-returns",
    "placeholder_episode_no": 8,
    "playlist_code": "PL0000",
    "playlist_code_not_granted": "PL0002",
    "playlist_code_withdrawn": "PL0060",
    "series_code": "SB000000",
    "series_code_long": "SB000002",
    "series_code_unlicensed": "SB000133",
    "series_code_withdrawn": "SB000134",
}


def profile_text(base_url: str, seed: int) -> str:
    """A profile as a new user writes it: keys of the right shape, plausible ids, no admin."""
    rng = random.Random(f"profile|{seed}")
    alphabet = string.ascii_letters + string.digits
    lines = [f'base_url = "{base_url}"', "test_organisation = true", "", "[keys]"]
    for role in ROLES:
        lines.append(f'{role} = "svc_live_{"".join(rng.choice(alphabet) for _ in range(32))}"')
    lines += ["", "[fixtures]"]
    for name in UUID_FIXTURES:
        lines.append(f'{name} = "{Generator({}, rng)._string({"format": "uuid"})}"')
    for name, value in OTHER_FIXTURES.items():
        lines.append(f"{name} = {json.dumps(value)}")
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class RunSummary:
    seed: int
    mode: str
    exit_code: int | None  # None: the run did not end within the timeout
    seconds: float
    errors: tuple[str, ...]  # nodeids of tests whose outcome is "error"
    failed_requirements: int
    findings: int  # distinct violations (title, expected, actual, exchange)
    widest_charge: int  # most requirements one violation was charged to
    widest: str
    stderr_tail: str

    def line(self) -> str:
        return (
            f"{self.mode:6} seed {self.seed:3}: exit {self.exit_code} in {self.seconds:5.1f} s, "
            f"{len(self.errors)} errors, {self.failed_requirements} failed requirements, "
            f"{self.findings} findings, widest charge {self.widest_charge}"
        )


def _finding_key(violation: Mapping[str, Any]) -> str:
    exchange = violation.get("exchange") or {}
    return json.dumps(
        [
            violation.get("title"),
            violation.get("expected"),
            violation.get("actual"),
            exchange.get("method"),
            exchange.get("url"),
            exchange.get("status"),
            exchange.get("started_at"),
        ],
        sort_keys=True,
    )


def summarise(results: Mapping[str, Any]) -> tuple[tuple[str, ...], int, int, int, str]:
    """Errors, failed requirements, distinct findings, widest charge (and which) of a run."""
    tests = results.get("tests", [])
    errors = tuple(t["nodeid"] for t in tests if t.get("outcome") == "error")
    failed = sum(1 for r in results.get("requirements", []) if r.get("status") == "failed")
    charged: dict[str, set[str]] = {}
    for test in tests:
        for v in test.get("violations", []):
            charged.setdefault(_finding_key(v), set()).add(v.get("requirement_id") or "")
        if test.get("outcome") == "failed" and not test.get("violations"):
            # an untyped failure: charged to whatever the report says the test failed
            charged.setdefault(f"untyped|{test['nodeid']}", set()).update(
                test.get("failed_requirements", test.get("requirement_ids", []))
            )
    widest, which = 0, ""
    for key, ids in charged.items():
        if len(ids) > widest:
            widest, which = len(ids), key
    # The run's own figures (results.json `run`: distinct findings, widest charge) when the
    # report has them; the per-exchange count above otherwise.
    run = results.get("run", {})
    if isinstance(run.get("widest_charge"), int):
        widest = max(widest, run["widest_charge"])
        which = which if widest == len(charged.get(which, ())) else "(see report: widest charge)"
    findings = run.get("findings") if isinstance(run.get("findings"), int) else len(charged)
    return errors, failed, findings, widest, which


def run_once(
    seed: int, mode: str, work: Path, timeout: float = RUN_TIMEOUT, extra: tuple[str, ...] = ()
) -> RunSummary:
    """One suite run against the foreign server with this seed and mode."""
    work.mkdir(parents=True, exist_ok=True)
    reports = work / f"{mode}-{seed}"
    with serve(seed, mode) as base_url:
        profile = work / f"foreign-{mode}-{seed}.toml"
        profile.write_text(profile_text(base_url, seed))
        command = [
            str(ROOT / ".venv" / "bin" / "delivery-conformance"),
            "run",
            "--target",
            str(profile),
            "--no-pacing",
            "--report-dir",
            str(reports),
            "--max-duration",
            str(int(max(30.0, timeout - 30))),
            *extra,
        ]
        started = time.monotonic()
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=timeout, cwd=ROOT, check=False
            )
            code: int | None = done.returncode
            stderr = done.stderr
            # A check or hook that raises ends the pytest session early (INTERNALERROR) while
            # the report still reads like a verdict: that is an error of the tool too.
            crash = [line for line in done.stdout.splitlines() if line.startswith("INTERNALERROR>")]
        except subprocess.TimeoutExpired as hung:
            code, stderr, crash = None, str(hung.stderr or ""), []
        seconds = time.monotonic() - started
    found = sorted(reports.glob("*/results.json"))
    if found:
        errors, failed, findings, widest, which = summarise(json.loads(found[-1].read_text()))
    else:
        errors, failed, findings, widest, which = ("no results.json",), 0, 0, 0, ""
    if crash:
        errors = (*errors, f"pytest INTERNALERROR: {crash[-1][:200]}")
    return RunSummary(
        seed, mode, code, seconds, errors, failed, findings, widest, which, stderr.strip()[-400:]
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20, help="seeds per mode (1..N)")
    parser.add_argument("--first-seed", type=int, default=1)
    parser.add_argument("--modes", default="valid,broken")
    parser.add_argument("--work", type=Path, default=ROOT / "reports" / "foreign")
    parser.add_argument("--with-properties", action="store_true")
    parser.add_argument("--jobs", type=int, default=1, help="runs at a time (1 to 4)")
    parser.add_argument("--serve", action="store_true", help="only serve seed --first-seed")
    args = parser.parse_args(argv)
    modes = [m for m in args.modes.split(",") if m]
    if not set(modes) <= set(MODES):
        print(f"foreign_server: modes are {', '.join(MODES)}", file=sys.stderr)
        return 2
    if args.serve:
        with serve(args.first_seed, modes[0]) as base_url:
            path = args.work / "foreign.toml"
            args.work.mkdir(parents=True, exist_ok=True)
            path.write_text(profile_text(base_url, args.first_seed))
            print(f"serving {base_url}; profile {path}; Ctrl-C stops", flush=True)
            try:
                while True:
                    time.sleep(1)
            except KeyboardInterrupt:
                return 0
    extra = () if args.with_properties else ("--no-properties",)
    if not 1 <= args.jobs <= 4:
        print("foreign_server: --jobs is 1 to 4", file=sys.stderr)
        return 2
    bad = 0
    widest = 0
    cases = [(s, m) for m in modes for s in range(args.first_seed, args.first_seed + args.seeds)]
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        summaries = pool.map(lambda case: run_once(case[0], case[1], args.work, extra=extra), cases)
        for summary in summaries:
            print(summary.line(), flush=True)
            for nodeid in summary.errors[:5]:
                print(f"    error: {nodeid}")
            if summary.exit_code != 1 or summary.errors:
                bad += 1
                print(f"    stderr: {summary.stderr_tail}")
            widest = max(widest, summary.widest_charge)
    print(f"foreign: {bad} bad runs; widest charge {widest}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
