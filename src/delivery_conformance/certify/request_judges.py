"""Client rules about the requests themselves, judged on what crossed the proxy (pure).

Spec: What the service does, general rule 4 (JSON bodies, `Content-Type: application/json` on
POST; Endpoints > POST /playback calls the header recommended: CLI-049, a "should");
Authentication, rule 1 (`Authorization: Bearer <key>`: the word, one space, the key; no cookies,
no key in the query string: CLI-050); Endpoints > POST /playback (`viewer_ref` opaque, no
personal data: PLAY-025). The journal is already redacted: a key in a query value
shows as `svc_live_..` followed by the mask, the `Authorization` value as its scheme, the
separator and the masked key, so the shape is judged without the key itself.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from delivery_conformance.certify.journal import Entry
from delivery_conformance.certify.observation import (
    FAILED,
    NOT_EXERCISED,
    PASSED,
    Observation,
    Verdict,
)

__all__ = ["REQUEST_JUDGES"]

API_PREFIX = "/api/delivery/v1/"
KEY_PREFIX = "svc_live_"
_EPOCH = re.compile(r"^\d{1,11}$")
_BEARER = re.compile(r"^bearer [^\s]", re.IGNORECASE)  # the scheme's letter case is free


def _header(headers: Mapping[str, str], name: str) -> str | None:
    for key, value in headers.items():
        if key.lower() == name:
            return value
    return None


def json_on_post(obs: Observation, params: Mapping[str, Any]) -> Verdict:
    """Every POST under the API prefix sends `Content-Type: application/json` (any parameters,
    e.g. a charset, allowed) and a body that is JSON."""
    expected = "Content-Type: application/json and a JSON body on every POST"
    posts = [e for e in obs.entries if e.method == "POST" and e.path.startswith(API_PREFIX)]
    if not posts:
        return NOT_EXERCISED, expected, "no POST was sent", ()
    for entry in posts:
        kind = (_header(entry.request_headers, "content-type") or "").split(";")[0]
        if kind.strip().lower() != "application/json":
            return FAILED, expected, f"Content-Type {kind or 'missing'!r}", (entry,)
        capped = entry.request_body.endswith(" more]")  # the journal keeps 8 kB of a body
        try:
            json.loads(entry.request_body)
        except ValueError:
            if not capped:
                return FAILED, expected, "the body is not JSON", (entry,)
    return PASSED, expected, f"{len(posts)} POSTs", ()


def bearer_only(obs: Observation, params: Mapping[str, Any]) -> Verdict:
    """Every request under the API prefix carries `Authorization: Bearer <key>` (one space), no
    `Cookie` header, and no key in its query string."""
    expected = "the key only as Authorization: Bearer <key>; no cookie, no key in the query"
    calls = [e for e in obs.entries if e.path.startswith(API_PREFIX)]
    if not calls:
        return NOT_EXERCISED, expected, "no API request", ()
    for entry in calls:
        if any(KEY_PREFIX in str(v) for v in entry.query.values()):
            named = next(k for k, v in entry.query.items() if KEY_PREFIX in str(v))
            return FAILED, expected, f"a key in the query string ({named}=)", (entry,)
        if _header(entry.request_headers, "cookie") is not None:
            return FAILED, expected, "a Cookie header was sent", (entry,)
        authorization = _header(entry.request_headers, "authorization")
        if authorization is None or not _BEARER.match(authorization):
            shown = "missing" if authorization is None else repr(authorization.split(" ")[0])
            return (
                FAILED,
                expected,
                f"Authorization {shown} (not Bearer, one space, the key)",
                (entry,),
            )
    return PASSED, expected, f"{len(calls)} requests", ()


def epoch_updated_since(obs: Observation, params: Mapping[str, Any]) -> Verdict:
    """Every `updated_since` sent (creatives, series, playlists) is whole epoch seconds, up to
    11 digits, never an ISO 8601 string or a fraction (CLI-055)."""
    expected = "updated_since as whole epoch seconds (up to 11 digits)"
    sent = [e for e in obs.entries if "updated_since" in e.query]
    if not sent:
        return NOT_EXERCISED, expected, "no updated_since was sent", ()
    for entry in sent:
        if not _EPOCH.match(str(entry.query["updated_since"])):
            return FAILED, expected, f"updated_since={entry.query['updated_since']!r}", (entry,)
    return PASSED, expected, f"{len(sent)} requests with updated_since", ()


def _playback_bodies(obs: Observation) -> list[tuple[Entry, dict[str, Any]]]:
    """Each POST /playback of the journal whose body is a JSON object, with that object."""
    found = []
    for entry in obs.entries:
        if entry.method != "POST" or not entry.path.endswith("/playback"):
            continue
        try:
            body = json.loads(entry.request_body)
        except ValueError:
            continue
        if isinstance(body, dict):
            found.append((entry, body))
    return found


def tap_is_play(obs: Observation, params: Mapping[str, Any]) -> Verdict:
    """The episode a viewer tapped (the first episode of each playback request of the flow) is
    never sent with intent `prefetch` (CLI-056); a missing intent counts as a play."""
    expected = "the tapped episode's intent is play (or left out), never prefetch"
    judged = 0
    for entry, body in _playback_bodies(obs):
        first = body.get("episodes", [None])[0] if isinstance(body.get("episodes"), list) else None
        intent = first.get("intent", body.get("intent")) if isinstance(first, dict) else None
        intent = body.get("intent") if first is None else intent
        judged += 1
        if intent == "prefetch":
            return FAILED, expected, "the tapped episode was sent as prefetch", (entry,)
    if not judged:
        return NOT_EXERCISED, expected, "no playback request", ()
    return PASSED, expected, f"{judged} playback requests", ()


def device_values_paired(obs: Observation, params: Mapping[str, Any]) -> Verdict:
    """Every playback request carries `union_info` and `drm_kek` together or neither, on its
    first attempt and on every retry (CLI-059). Exercised when device values were sent."""
    expected = "union_info and drm_kek together or neither, on every playback request"
    paired = 0
    for entry, body in _playback_bodies(obs):
        present = {name for name in ("union_info", "drm_kek") if name in body}
        if len(present) == 1:
            return FAILED, expected, f"only {present.pop()} sent", (entry,)
        paired += len(present) == 2
    if not paired:
        return NOT_EXERCISED, expected, "no playback request carried device values", ()
    return PASSED, expected, f"{paired} playback requests with both device values", ()


_EMAIL = re.compile(r"[^\s@]+@[^\s@]+\.[A-Za-z]{2,}")
_ADDRESS_TOKEN = re.compile(r"[0-9A-Fa-f:.]+")


def _squashed(text: str) -> str:
    """Letters and digits only, lower case: `Ada.Lovelace` and `ada_lovelace` compare equal."""
    return re.sub(r"[^0-9a-z]", "", text.lower())


def _personal_data(ref: str, personal: tuple[str, ...]) -> str | None:
    """What personal data `ref` carries, or None: an email address, an IP address, or one of
    the viewer's own values (or the part of an email address before its @), compared on
    letters and digits alone so a changed separator does not hide it."""
    if _EMAIL.search(ref):
        return "an email address"
    for token in _ADDRESS_TOKEN.findall(ref):
        try:
            ipaddress.ip_address(token.strip(".:"))
        except ValueError:
            continue
        return "an IP address"
    squashed = _squashed(ref)
    for value in personal:
        for part in {value, value.split("@", 1)[0]}:
            if len(_squashed(part)) >= 6 and _squashed(part) in squashed:
                return "the viewer's account"
    return None


def opaque_viewer_ref(obs: Observation, params: Mapping[str, Any]) -> Verdict:
    """Every `viewer_ref` sent is opaque (PLAY-025): no email or IP address, nothing of the
    account the plan handed the client as `{viewer}` (Endpoints > POST /playback). A client
    that sends no `viewer_ref` (it is optional) leaves the rule not exercised."""
    expected = "viewer_ref an opaque session or device id, no personal data"
    refs = []
    for entry, body in _playback_bodies(obs):
        episodes = body.get("episodes")
        items: list[Any] = episodes if isinstance(episodes, list) else []
        for holder in (body, *items):
            if isinstance(holder, dict) and isinstance(holder.get("viewer_ref"), str):
                refs.append((entry, holder["viewer_ref"]))
    if not refs:
        return NOT_EXERCISED, expected, "no playback request carried a viewer_ref", ()
    for entry, ref in refs:
        found = _personal_data(ref, obs.personal)
        if found is not None:
            return FAILED, expected, f"viewer_ref holds {found}", (entry,)
    return PASSED, expected, f"{len(refs)} viewer_ref values, none personal", ()


def _key(entry: Entry) -> tuple[Any, ...]:
    return (entry.phase, entry.method, entry.path, tuple(sorted(entry.query.items())),
            entry.request_body)  # fmt: skip


def code_not_message(obs: Observation, params: Mapping[str, Any]) -> Verdict:
    """Answers with the same status and code, one with the usual message and one whose message
    names another code, take the same branch of the Retry policy table: both sent again, or
    neither (CLI-003). Whether that branch is the right one is judged by the rule of the code
    (CLI-009, CLI-011), so a client that never retries them is not charged here."""
    expected = "the same branch for the same code, whatever the message says"
    word = str(params.get("injected", ""))
    served = [e for e in obs.entries if e.injected and word in e.injected]
    if len(served) < 2:
        return NOT_EXERCISED, expected, f"{len(served)} of the 2 answers were served", ()
    branches = []
    for entry in served:
        again = any(
            later.started > entry.started and later.seq != entry.seq and _key(later) == _key(entry)
            for later in obs.entries
        )
        branches.append(again)
    if len(set(branches)) > 1:
        shown = ", ".join(f"#{e.seq} {'retried' if b else 'not retried'}"
                          for e, b in zip(served, branches, strict=True))  # fmt: skip
        return FAILED, expected, f"the message changed the branch ({shown})", tuple(served)
    return (
        PASSED,
        expected,
        f"{len(served)} answers, all {'retried' if branches[0] else 'not retried'}",
        (),
    )


REQUEST_JUDGES: dict[str, Callable[[Observation, Mapping[str, Any]], Verdict]] = {
    "json_on_post": json_on_post,
    "bearer_only": bearer_only,
    "epoch_updated_since": epoch_updated_since,
    "tap_is_play": tap_is_play,
    "code_not_message": code_not_message,
    "device_values_paired": device_values_paired,
    "opaque_viewer_ref": opaque_viewer_ref,
}
