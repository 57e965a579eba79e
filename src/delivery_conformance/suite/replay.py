"""`delivery-conformance replay RESULTS --finding N`: send a finding's request again and say
whether the finding still holds (wired into cli.py by `add_commands`).

    delivery-conformance replay RESULTS --finding N [--target PROFILE] [--timeout SECONDS]

Finding N is the one numbered N in the results' `findings` (reports/reproduce.py; for results
written before format 1.3 the numbers are made the same way from the tests). Its request goes,
as the run recorded it, to the target: `--target PROFILE`, else the profile `$DELIVERY_TARGET`
names, else the run's own base_url with the key from `DELIVERY_KEY_<ROLE>`. The key is the
same role's (a request made without a key goes without one; one made with a key the profile
did not hold goes with `reproduce.FAKE_KEY`).

How the new answer is judged, said in the output:
- *re-judged by check NAME*: the finding is one a registered check (checks/registry.py) raises
  on the recorded answer; the same checks judge the new answer (the common checks, such as
  no_cors, cache_control, flat_error, retry_after);
- *compared with the recorded answer*: any other finding (a scenario's own assertion, which
  may rest on more than one exchange and is not re-run). It still holds when the same answer
  came back: the recorded status, each response header the finding's words name present or
  absent as recorded, and the same body (JSON compared as data, request ids left out). It is no
  longer seen when the status is the recorded one and a header the finding names flipped. Any
  other change (another status, another body) only the scenario can judge: *undecided*, with
  the command that re-runs the scenario, never "no longer seen".

Exit codes: 0 no longer seen, 1 still holds, 2 bad input (a missing or unreadable results file,
another format major, no finding N, a finding that cannot be replayed, a role without a key),
3 the target did not answer within `--timeout` seconds (default 10: connect to last byte),
4 undecided (the answer changed where only the scenario can judge it).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from delivery_conformance.checks.common import BODY_CHECKS, response_of
from delivery_conformance.checks.registry import CHECKS, Check
from delivery_conformance.evidence.exchange import BODY_CAP, Exchange
from delivery_conformance.evidence.redact import NO_KEY, UNKNOWN_KEY
from delivery_conformance.evidence.violation import Violation
from delivery_conformance.exceptions import UsageError
from delivery_conformance.reports.reproduce import (
    SentRequest,
    key_variable,
    numbered_findings,
    sent_request,
)
from delivery_conformance.reports.writer import load_results
from delivery_conformance.target.client import DEFAULT_TIMEOUT, DeliveryClient, Response
from delivery_conformance.target.profile import TargetProfile, load_profile, target_from_env

__all__ = [
    "COMMANDS",
    "STILL_HOLDS",
    "UNDECIDED",
    "Judgement",
    "add_commands",
    "judge_again",
    "replay",
]

NO_LONGER_SEEN, STILL_HOLDS, UNDECIDED = 0, 1, 4
VOLATILE_KEYS = frozenset({"request_id"})  # differ on every answer: left out of the comparison
# Headers an HTTP client adds by default: removed on a resend whose original lacked them.
_CLIENT_DEFAULTS = ("accept", "accept-encoding")


def add_commands(commands: Any) -> None:
    replay_parser = commands.add_parser(
        "replay", help="send a finding's request again and say whether the finding still holds"
    )
    replay_parser.add_argument("results", type=Path, help="a results.json written by `run`")
    replay_parser.add_argument(
        "--finding", type=int, required=True, metavar="N", help="the finding's number (from 1)"
    )
    replay_parser.add_argument(
        "--target", type=Path, default=None, metavar="PROFILE",
        help="send to this profile's base_url with its keys (default: $DELIVERY_TARGET, else "
        "the run's base_url with keys from DELIVERY_KEY_<ROLE>)",
    )  # fmt: skip
    replay_parser.add_argument(
        "--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="SECONDS",
        help=f"the whole answer, connect to last byte (default {DEFAULT_TIMEOUT:g}); "
        "past it: exit 3",
    )  # fmt: skip


@dataclass(frozen=True)
class Judgement:
    """What the new answer says of the finding, and how that was decided."""

    holds: bool | None  # None: undecided (only the scenario can judge the new answer)
    how: str  # "re-judged by check no_cors" or "compared with the recorded answer"
    details: tuple[str, ...] = ()


def _finding(document: Mapping[str, Any], number: int, where: Path) -> Mapping[str, Any]:
    findings = document.get("findings")
    if not isinstance(findings, list):
        findings = numbered_findings(document)
    if not 1 <= number <= len(findings):
        raise UsageError(
            f"{where} has {len(findings)} findings (numbered from 1): no finding {number}"
        )
    finding: Mapping[str, Any] = findings[number - 1]
    return finding


def _profile(
    args_target: Path | None, request: SentRequest, base_url: str, environ: Mapping[str, str]
) -> TargetProfile:
    """The target to send to, holding the key the request needs (or a one-line UsageError)."""
    path = args_target or target_from_env(environ)
    role = request.role
    if path is not None:
        profile = load_profile(path, environ=environ)
        if role is not None and role not in profile.keys:
            raise UsageError(f"profile {path} has no key for role {role!r}, which sent the finding")
        return profile
    if not base_url:
        raise UsageError("the results name no base_url: give --target PROFILE")
    keys = {}
    if role is not None:
        variable = key_variable(role)
        if not environ.get(variable):
            raise UsageError(f"the finding was sent with the {role} key: set {variable} or give "
                             "--target PROFILE")  # fmt: skip
        keys[role] = environ[variable]
    return TargetProfile(base_url=base_url, keys=keys)


def send_again(
    request: SentRequest, profile: TargetProfile, timeout: float = DEFAULT_TIMEOUT
) -> Response:
    """Send the recorded request to `profile`'s target; `TargetUnreachable` past `timeout`."""
    headers: dict[str, str | None] = dict(request.headers)
    names = {name.lower() for name in headers}
    headers.update({name: None for name in _CLIENT_DEFAULTS if name not in names})
    if request.host:
        headers["Host"] = request.host
    authorization = request.authorization(profile.keys.get(request.role or ""))
    if authorization is not None:
        headers["Authorization"] = authorization
    with DeliveryClient(profile, timeout=timeout) as client:
        response = client.request(
            request.method, request.path, content=request.body or None, headers=headers
        )
    return response


def _with_role(response: Response | None, role: str | None) -> Response | None:
    if response is None:
        return None
    context = dataclasses.replace(response.context, role=role)
    return Response(response.http, response.exchange, context)


def _raised(checks: list[Check], response: Response | None, rid: str) -> list[Violation]:
    if response is None:
        return []
    return [found for check in checks for found in check(response) if found.requirement_id == rid]


def _named_headers(finding: Mapping[str, Any], *answers: Mapping[str, str]) -> list[str]:
    words = " ".join(str(finding.get(k, "")) for k in ("title", "expected", "actual")).lower()
    names = {name.lower() for answer in answers for name in answer}
    return sorted(n for n in names if re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", words))


def judge_again(finding: Mapping[str, Any], recorded: Exchange, new: Response) -> Judgement:
    """Does the finding hold on the new answer? Its check again when one raises it on the
    recorded answer, else the recorded status and the headers the finding names."""
    rid = str(finding["requirement_id"])
    role = sent_request(recorded.to_dict()).role  # the checks judge a refusal by who asked
    capped = len(recorded.response_body) > BODY_CAP  # a body check cannot judge a cut body
    checks = [
        check for check in CHECKS.values()
        if rid in check.requirements and not (capped and check.name in BODY_CHECKS)
    ]  # fmt: skip
    raising = [c for c in checks if _raised([c], _with_role(response_of(recorded), role), rid)]
    if raising:
        names = ", ".join(check.name for check in raising)
        after = _raised(raising, _with_role(response_of(new.exchange), role), rid)
        return Judgement(bool(after), f"re-judged by check {names}", tuple(v.line() for v in after))
    named = _named_headers(finding, recorded.response_headers, dict(new.headers))
    how = "compared with the recorded answer" + (
        f" (status, the headers it names: {', '.join(named)}, body)" if named else " (status, body)"
    )
    if new.status_code != recorded.status:
        said = f"status {new.status_code}, recorded {recorded.status}"
        return Judgement(None, how, (said, *_rerun(finding)))
    was = {n.lower() for n in recorded.response_headers}
    flipped = [
        f"{name} now {'present' if name in new.headers else 'absent'}, recorded "
        f"{'present' if name in was else 'absent'}"
        for name in named
        if (name in was) != (name in new.headers)
    ]
    if flipped:
        return Judgement(False, how, tuple(flipped))
    if capped or not _same_body(recorded.response_body, new.text):
        said = "the recorded body was cut" if capped else "the body differs from the recorded one"
        return Judgement(None, how, (said, *_rerun(finding)))
    return Judgement(True, how, ("the same answer came back",))


def _same_body(recorded: str, new: str) -> bool:
    """The same body: JSON as data (request ids left out), anything else as text."""
    try:
        return bool(_steady(json.loads(recorded)) == _steady(json.loads(new)))
    except ValueError:
        return recorded == new


def _steady(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _steady(v) for k, v in value.items() if k not in VOLATILE_KEYS}
    if isinstance(value, list):
        return [_steady(v) for v in value]
    return value


def _rerun(finding: Mapping[str, Any]) -> tuple[str, ...]:
    """The command that judges the finding again the only sure way: its scenarios, re-run."""
    names = sorted({str(t).rsplit("::", 1)[-1].split("[", 1)[0] for t in finding.get("tests", ())})
    if not names:
        return ("only the scenario can judge it: run the suite again",)
    return ("only the scenario can judge it: delivery-conformance run -k "
            f"'{' or '.join(names)}'",)  # fmt: skip


def replay(
    path: Path,
    number: int,
    target: Path | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    environ: Mapping[str, str] | None = None,
    out: Callable[[str], None] = print,
) -> int:
    """The `replay` command: exit 0 no longer seen, 1 still holds (2, 3 raised)."""
    environ = os.environ if environ is None else environ
    if timeout <= 0:
        raise UsageError(f"--timeout takes a positive number of seconds, not {timeout:g}")
    document = load_results(path)
    finding = _finding(document, number, path)
    if not finding.get("exchange"):
        raise UsageError(f"finding {number} cannot be replayed: no exchange was recorded with it")
    request = sent_request(finding["exchange"])
    if request.refusal:
        raise UsageError(f"finding {number} cannot be replayed: {request.refusal}")
    profile = _profile(target, request, str(document["run"].get("base_url", "")), environ)
    recorded = Exchange.from_dict(finding["exchange"])
    response = send_again(request, profile, timeout)
    judgement = judge_again(finding, recorded, response)
    said = {True: "still holds", False: "no longer seen", None: "undecided"}[judgement.holds]
    head = f"finding {number} {finding['requirement_id']} ({finding['title']}): {said}"
    out(f"{head}, {judgement.how}")
    key = {NO_KEY: "no key", UNKNOWN_KEY: "a made-up key"}.get(request.credential, "")
    key = key or f"the {request.role} key"
    out(f"  sent {request.method} {profile.base_url.rstrip('/')}{request.path} with {key}")
    out(f"  answer {response.exchange.summary()}; recorded {recorded.summary()}")
    for line in judgement.details:
        out(f"  {line}")
    return {True: STILL_HOLDS, False: NO_LONGER_SEEN, None: UNDECIDED}[judgement.holds]


def command_replay(args: argparse.Namespace) -> int:
    return replay(args.results, args.finding, args.target, args.timeout)


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {"replay": command_replay}
