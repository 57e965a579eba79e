"""The sandbox admin API under /_sandbox/ (ARCHITECTURE: Sandbox admin API).

Its own bearer token; JSON in, JSON out; errors as `{"error": ...}` with 400, 401, 404 or 405.
Every change bumps the sandbox generation so cached bodies are rebuilt. The changes the faults
bend are made through one seam, `faults/freshness.py: admin_action`, named by action.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypeVar

import orjson

from delivery_sandbox.control.outages import AREAS
from delivery_sandbox.faults import registry as fault_registry
from delivery_sandbox.faults.freshness import admin_action
from delivery_sandbox.faults.registry import UnknownFault
from delivery_sandbox.http.headers import Exchange, Reply, bearer_key
from delivery_sandbox.playback.limits import LIMITS
from delivery_sandbox.state.context import Sandbox
from delivery_sandbox.variants.caches import admin_change

__all__ = ["handle"]

T = TypeVar("T")

MAX_BODY = 64 * 1024
FILMS_ORG = "org_films"  # the organisation of the `films` role


class AdminError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def _ok(value: Any) -> Reply:
    return Reply(200, orjson.dumps(value))


async def _body(receive: Any) -> dict[str, Any]:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            raise AdminError(400, "body too large")
        chunks.append(chunk)
        if not message.get("more_body"):
            break
    raw = b"".join(chunks)
    if not raw:
        return {}
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise AdminError(400, "body is not JSON") from exc
    if not isinstance(value, dict):
        raise AdminError(400, "body must be a JSON object")
    return value


def _names(body: dict[str, Any], field: str) -> list[str]:
    value = body.get(field, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise AdminError(400, f"{field} must be a list of fault names")
    return value


def _number(body: dict[str, Any], field: str) -> float:
    value = body.get(field)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise AdminError(400, f"{field} must be a number")
    return float(value)


# What a role's restore puts back; `own_data`: the films only its organisation licenses and the
# organisation's creatives (the state model's film scenario restores them between sequences).
ROLE_RESTORE = ("limits", "suspension", "clock", "pending", "own_data")


def state(sb: Sandbox) -> dict[str, Any]:
    now = sb.now()
    orgs = sorted({spec.org_id for spec in sb.accounts.roles.values()})
    # Each role's organisation's clock (`POST /_sandbox/clock` with a role moves one alone).
    roles = {role: sb.clock.now(spec.org_id) for role, spec in sorted(sb.accounts.roles.items())}
    return {
        "clock": {"now": now, "offset": sb.clock.offset, "roles": roles},
        "faults": sorted(sb.faults.on),
        "variants": sorted(sb.variants.on),
        "limits": {org: sb.limits.snapshot(org, sb.clock.now(org)) for org in orgs},
        "suspended": sorted(sb.accounts.suspended),
        "series_takedowns": sb.store.series_takedowns,
        "playlist_withdrawals": sb.store.playlist_withdrawals,
        "outages": sorted(sb.outages),
        "licences_changed": sb.store.changed_licences(),
        "episodes_withdrawn": sorted(sb.store.withdrawn_episodes),
        # What `POST /_sandbox/roles/{role}/restore` puts back for the role's organisation.
        "role_restore": list(ROLE_RESTORE),
    }


def _role(sb: Sandbox, role: str) -> str:
    if role not in sb.accounts.roles:
        raise AdminError(404, f"unknown role {role}")
    try:
        sb.accounts.key_of(role)
    except KeyError as exc:
        raise AdminError(404, f"role {role} has no key in this sandbox") from exc
    return sb.accounts.roles[role].org_id


async def dispatch(sb: Sandbox, method: str, parts: list[str], receive: Any) -> Reply:
    now = sb.now()
    if parts == ["state"]:
        _allow(method, "GET")
        return _ok(state(sb))
    if parts == ["variants"]:
        _allow(method, "GET")
        return _ok(sb.variants.catalogue())
    if parts == ["faults"]:
        if method == "GET":
            return _ok(fault_registry.catalogue(sb.faults))
        _allow(method, "POST")
        body = await _body(receive)
        try:
            if "only" in body:
                sb.faults.only(_names(body, "only"))
            else:
                sb.faults.switch(_names(body, "enable"), _names(body, "disable"))
        except UnknownFault as exc:
            raise AdminError(400, f"unknown fault: {exc}") from exc
        sb.changed()
        return _ok({"enabled": sorted(sb.faults.on)})
    _allow(method, "POST")
    if parts == ["reset"]:
        keep = (await _body(receive)).get("keep_faults") is True
        switched = set(sb.faults.on)
        sb.reset()
        if keep:  # the stateful exploration resets between its sequences, under a fault
            sb.faults.only(switched)
        return _ok({"reset": True, "faults_kept": keep})
    if parts == ["clock"]:
        return _clock(sb, await _body(receive))
    if parts == ["outages"]:
        return _outage(sb, await _body(receive))
    if len(parts) == 3 and parts[0] == "licences":
        return _licence(sb, parts[1], parts[2], now)
    if parts[:1] == ["creatives"] and parts[2:] == ["revoke-link"] and len(parts) == 3:
        return _revoke_link(sb, parts[1])
    if parts[:1] == ["creatives"] and parts[2:] == ["retitle"] and len(parts) == 3:
        return _retitle_creative(sb, parts[1], await _body(receive), now)
    if len(parts) == 3 and parts[0] == "playlists" and parts[2] == "retitle":
        return _retitle_playlist(sb, parts[1], await _body(receive), now)
    if len(parts) == 3 and parts[0] == "films" and parts[2] == "retitle":
        return _retitle(sb, parts[1], await _body(receive), now)
    if len(parts) == 3 and parts[0] == "episodes" and parts[2] == "subtitles":
        return _subtitle(sb, parts[1], await _body(receive), now)
    if len(parts) == 3 and parts[0] == "episodes":
        return _episode(sb, parts[1], parts[2])
    if len(parts) == 3 and parts[0] == "roles":
        return await _role_action(sb, parts[1], parts[2], receive, now)
    if len(parts) == 3 and parts[0] in ("series", "playlists") and parts[2] == "withdraw":
        return _withdraw(sb, parts[0], parts[1], now)
    raise AdminError(404, "no such admin endpoint")


def _clock(sb: Sandbox, body: dict[str, Any]) -> Reply:
    """Move the sandbox's clock, or with `role` that role's organisation's clock alone."""
    role = body.get("role")
    if role is not None and not isinstance(role, str):
        raise AdminError(400, "role must be a role name")
    org = None if role is None else _role(sb, role)
    if "advance" in body:
        sb.clock.advance(_number(body, "advance"), org)
    elif "set" in body:
        sb.clock.set(_number(body, "set"), org)
    else:
        raise AdminError(400, "send advance or set")
    sb.changed()
    answer: dict[str, Any] = {"now": sb.clock.now(org), "offset": sb.clock.offset}
    if role is not None:
        answer["role"] = role
    return _ok(answer)


async def _role_action(sb: Sandbox, role: str, action: str, receive: Any, now: float) -> Reply:
    org = _role(sb, role)
    now = sb.clock.now(org)  # the organisation's clock, which a test clock may have moved
    result: dict[str, Any] = {"role": role}
    if action == "revoke":
        admin_action(sb, "revoke", role=role)
    elif action == "rotate":
        try:
            result["key"] = admin_action(sb, "rotate", role=role)
        except PermissionError as exc:
            raise AdminError(400, str(exc)) from exc
    elif action == "suspend":
        admin_action(sb, "suspend", org_id=org)
    elif action == "unsuspend":
        sb.accounts.suspended.discard(org)
    elif action == "limits":
        body = await _body(receive)
        counter = body.get("counter")
        if counter not in LIMITS:
            raise AdminError(400, f"counter must be one of {sorted(LIMITS)}")
        limit = _number(body, "limit")
        if limit < 1 or limit != int(limit):
            raise AdminError(400, "limit must be a whole number from 1")
        admin_action(sb, "set_limit", org_id=org, counter=counter, limit=int(limit), now=now)
        result["limits"] = sb.limits.snapshot(org, now)
    elif action == "reset-limits":
        sb.limits.reset(org)
    elif action == "restore":
        sb.limits.restore(org)
        sb.accounts.suspended.discard(org)
        sb.clock.reset(org)
        sb.forget_pending(org)  # a suspension or a raise a fault holds back lands no more
        sb.store.restore_own_data(org)
    else:
        raise AdminError(404, f"no such action {action}")
    sb.changed()
    return _ok(result)


def _withdraw(sb: Sandbox, kind: str, code: str, now: float) -> Reply:
    store = sb.store
    if kind == "series":
        if store.film_by_code(code) is None:
            raise AdminError(404, f"no series {code}")
        store.series_takedowns.setdefault(code, int(now))
    else:
        if code not in store.playlists:
            raise AdminError(404, f"no playlist {code}")
        store.playlist_withdrawals.setdefault(code, int(now))
    sb.changed()
    return _ok({"withdrawn": code, "at": int(now)})


def _outage(sb: Sandbox, body: dict[str, Any]) -> Reply:
    area, on = body.get("area"), body.get("on")
    if area not in AREAS:
        raise AdminError(400, f"area must be one of {sorted(AREAS)}")
    if not isinstance(on, bool):
        raise AdminError(400, "on must be true or false")
    if on:
        sb.outages.add(area)
    else:
        sb.outages.discard(area)
    sb.changed()
    return _ok({"outages": sorted(sb.outages)})


def _licence(sb: Sandbox, film_id: str, action: str, now: float) -> Reply:
    """End, suspend or restore the `films` organisation's licence of a film (STATE-008)."""
    try:
        licence = admin_action(
            sb, "change_licence", org_id=FILMS_ORG, film_id=film_id, action=action, now=int(now)
        )
    except KeyError as exc:
        raise AdminError(404, f"the films organisation holds no licence of film {film_id}") from exc
    except ValueError as exc:
        raise AdminError(404, f"no such action {action}") from exc
    sb.changed()
    return _ok(
        {
            "film_id": film_id,
            "state": licence.state.value,
            "ends_at": licence.ends_at,
            "changed_at": licence.changed_at,
        }
    )


def _episode(sb: Sandbox, episode_id: str, action: str) -> Reply:
    """Withdraw (unpublish) or publish again a published episode of the seed."""
    if action not in ("withdraw", "publish"):
        raise AdminError(404, f"no such action {action}")
    if not admin_action(sb, "publish_episode", episode_id=episode_id, publish=action == "publish"):
        raise AdminError(404, f"no published episode {episode_id} in the seed")
    sb.changed()
    return _ok({"episode_id": episode_id, "published": action == "publish"})


LANG = re.compile(r"[A-Za-z]{2,8}(-[A-Za-z0-9]{1,8})*")


def _subtitle(sb: Sandbox, episode_id: str, body: dict[str, Any], now: float) -> Reply:
    """Attach a subtitle (`lang`, `url` of its WebVTT file) to a published episode, or replace
    the file of the one it has in that language, until the reset."""
    lang, url = body.get("lang"), body.get("url")
    if not isinstance(lang, str) or not LANG.fullmatch(lang):
        raise AdminError(400, "lang must be a language tag such as de or pt-BR")
    if not isinstance(url, str) or not url.startswith("https://"):
        raise AdminError(400, "url must be an https URL of the subtitle file")
    episode = admin_action(
        sb, "attach_subtitle", episode_id=episode_id, lang=lang, url=url, now=int(now)
    )
    if episode is None:
        raise AdminError(404, f"no published episode {episode_id}")
    sb.changed()
    return _ok({"episode_id": episode_id, "lang": lang, "url": url})


def _revoke_link(sb: Sandbox, creative_id: str) -> Reply:
    """Revoke a creative's share link, as an organisation admin does in the portal (spec:
    Resources > Creative record, `final.file_url`): it then answers 410 and reads null."""
    creative = sb.store.creatives.get(creative_id)
    if creative is None or not creative.share_token:
        raise AdminError(404, f"no creative {creative_id} with a share link")
    sb.store.revoked_links.add(creative_id)
    sb.changed()
    return _ok({"creative_id": creative_id, "link_revoked": True})


def _new_title(body: dict[str, Any]) -> str:
    title = body.get("title")
    if not isinstance(title, str) or not title.strip():
        raise AdminError(400, "title must be a non-empty string")
    return title


def _changed(sb: Sandbox, missing: str, change: Callable[[], T]) -> T:
    """Apply one admin change to the store; 404 `missing` when the record is not there."""
    try:
        record = change()
    except KeyError as exc:
        raise AdminError(404, missing) from exc
    sb.changed()
    return record


def _retitle(sb: Sandbox, film_id: str, body: dict[str, Any], now: float) -> Reply:
    """Give a film a new title: a metadata change (its `metadata_version` moves, CAT-082)."""
    title = _new_title(body)
    film = _changed(
        sb,
        f"no film {film_id}",
        lambda: admin_action(sb, "retitle_film", film_id=film_id, title=title, now=int(now)),
    )
    return _ok({"film_id": film_id, "title": film.title, "metadata_version": film.metadata_version})


def _retitle_playlist(sb: Sandbox, code: str, body: dict[str, Any], now: float) -> Reply:
    """Give a playlist a new title: a change of its metadata (its `updated_at` and
    `metadata_version` move, PLS-045, PLS-046)."""
    title = _new_title(body)
    playlist = _changed(
        sb,
        f"no playlist {code}",
        lambda: admin_action(sb, "retitle_playlist", code=code, title=title, now=int(now)),
    )
    return _ok(
        {
            "code": code,
            "title": playlist.title,
            "updated_at": playlist.updated_at,
            "metadata_version": playlist.metadata_version,
        }
    )


def _retitle_creative(sb: Sandbox, creative_id: str, body: dict[str, Any], now: float) -> Reply:
    """Give a listed creative a new name: an update (its `updated_at` moves, FRESH-022; its
    `created_at` and `approved_at` stay, CRE-065)."""
    title = _new_title(body)

    def rename() -> int:
        creative = sb.store.creatives.get(creative_id)
        if creative is None or not creative.visible:
            raise KeyError(creative_id)
        renamed = admin_action(sb, "rename_creative", creative=creative, name=title, now=int(now))
        sb.store.creatives[creative_id] = renamed
        stamp: int = renamed.updated_at
        return stamp

    stamp = _changed(sb, f"no listed creative {creative_id}", rename)
    return _ok({"creative_id": creative_id, "name": title, "updated_at": stamp})


def _allow(method: str, allowed: str) -> None:
    if method != allowed:
        raise AdminError(405, f"use {allowed}")


async def handle(
    sb: Sandbox, scope: dict[str, Any], receive: Any, exchange: Exchange, authorization: str | None
) -> Reply:
    key = bearer_key(authorization)
    if key is None or key != sb.admin_token:
        return Reply(401, orjson.dumps({"error": "admin token required"}))
    parts = [p for p in scope["path"][len("/_sandbox/") :].split("/") if p]
    try:
        reply = await dispatch(sb, scope["method"], parts, receive)
    except AdminError as exc:
        return Reply(exc.status, orjson.dumps({"error": str(exc)}))
    if scope["method"] == "POST":  # the cache variants take the change in within its row
        sb.note_change(admin_change(parts))
    return reply
