"""Faults proving behaviours the suite had no check for (issue 13, second block; README:
Requirement proofs). Rows (in `faults/coverage_rows.py`) join the single table of
`faults/registry.py`.

Spec sections: Authentication (key form, the `Bearer` header, a key acting for its whole
organisation); Limits (the table `/config` reports); Resources > Creative record
(`final.file_url`: each open redirects to a download link valid 15 minutes).

The hooks are small and pure: `key_lookup` (auth.py), `share_link_ttl` (share.py),
`mangle_reply_2` (app.py, after the body of a 200 is built).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import orjson

from delivery_sandbox.faults import body_tables as bt
from delivery_sandbox.faults.coverage_faults_3 import mangle_body_3
from delivery_sandbox.faults.coverage_faults_4 import mangle_body_4
from delivery_sandbox.faults.coverage_faults_5 import mangle_body_5
from delivery_sandbox.faults.coverage_faults_6 import mangle_error_6
from delivery_sandbox.faults.coverage_faults_7 import mangle_body_7
from delivery_sandbox.faults.coverage_faults_8 import mangle_error_8
from delivery_sandbox.faults.coverage_faults_10 import mangle_reply_10
from delivery_sandbox.faults.coverage_faults_11 import mangle_reply_11
from delivery_sandbox.faults.names import FaultName

if TYPE_CHECKING:
    from delivery_sandbox.faults.registry import FaultSwitch
    from delivery_sandbox.http.headers import Exchange, Reply

__all__ = [ "bearer_key_tolerant", "key_lookup", "link_listed",
           "link_revoked", "mangle_reply_2", "share_link_ttl", "unpublished_licensed"]  # fmt: skip


KEY_PREFIX = "svc_live_"
SECRET_LENGTH = 32
SPACING = re.compile(r"Bearer[ \t]+(\S+)\Z")


def key_lookup(keys: dict[str, Any], key: str, faults: FaultSwitch) -> Any:
    """The key record for `key`; under `key_secret_only_lookup` the prefix is ignored and the
    secret cut at 32 characters (AUTH-005 broken)."""
    if not faults.enabled(FaultName.key_secret_only_lookup):
        return keys.get(key)
    secret = key.split("_", 2)[-1][:SECRET_LENGTH]
    return keys.get(KEY_PREFIX + secret) if len(secret) == SECRET_LENGTH else None


def bearer_key_tolerant(header: str) -> str | None:
    """`Bearer` then any run of spaces or tabs then the key (fault bearer_spacing_tolerated)."""
    found = SPACING.match(header.strip())
    return found.group(1) if found else None


def link_revoked(store: Any, creative_id: str, faults: FaultSwitch) -> bool:
    """The share link was revoked (ignored under `revoked_link_still_opens`)."""
    revoked = creative_id in store.revoked_links
    return revoked and not faults.enabled(FaultName.revoked_link_still_opens)


def link_listed(store: Any, creative_id: str, faults: FaultSwitch) -> bool:
    """The record shows its share link: not revoked, or `revoked_link_still_listed`."""
    revoked = creative_id in store.revoked_links
    return not revoked or faults.enabled(FaultName.revoked_link_still_listed)


def unpublished_licensed(store: Any, org_id: str, now: float) -> list[Any]:
    """Films with a current licence that are not published (fault catalog_lists_unpublished)."""
    return [
        f
        for f in store.films.values()
        if not f.published and store.licence_refusal(org_id, f.id, now) is None
    ]


def share_link_ttl(ttl: int, faults: FaultSwitch) -> int:
    return 2 * ttl if faults.enabled(FaultName.share_download_link_30_minutes) else ttl


# Roles that lose the last item of a list under `list_per_key`, and the lists they lose it from.
PER_KEY_LISTS = {"films_metadata": "series", "films_creatives": "creatives"}
PLAYBACK_REFILL_PER_SECOND = 180


def mangle_reply_2(reply: Reply, faults: FaultSwitch, path: str, exchange: Exchange) -> None:
    """Apply this block's body faults (and those of the third to fifth blocks,
    coverage_faults_3.py to _5.py) to a 200 JSON answer of `path`, and the sixth block's to an
    error answer, in place."""
    mangle_error_6(reply, faults, path)
    mangle_error_8(reply, faults, path)
    mangle_reply_10(reply, faults, path, exchange)
    mangle_reply_11(reply, faults, path, exchange)
    for mangle in (mangle_body_3, mangle_body_4, mangle_body_5, mangle_body_7):
        bent = mangle(reply.status, reply.body, faults, path)
        if bent is not None:
            reply.body = bent
    on = faults.on & {FaultName.list_per_key, FaultName.config_playback_door_per_second}
    if not on or reply.status != 200 or not reply.body:
        return
    body = bt.json_object(reply.body)
    if body is None:
        return
    endpoint = path.rsplit("/", 1)[-1]
    role = exchange.caller.role if exchange.caller is not None else None
    if FaultName.list_per_key in on and PER_KEY_LISTS.get(role or "") == endpoint:
        data = body.get("data")
        items = data.get("items") if isinstance(data, dict) else None
        if isinstance(items, list) and items:
            items.pop()
    if FaultName.config_playback_door_per_second in on and endpoint == "config":
        door = body.get("rate_limits", {}).get("doors", {}).get("playback")
        if isinstance(door, dict):
            door["limit"] = PLAYBACK_REFILL_PER_SECOND
    reply.body = orjson.dumps(body)
