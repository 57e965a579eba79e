"""The seams of the front (app.py), one call each: the request as it comes in (`request_in`), a
request that authentication refused (`refused`), and the finished answer before it goes out
(`reply_out`). Each hands the request to the fault modules whose faults act there; with no fault
switched on each returns at once.

They call into `faults/` (the rows and pure hooks) and hand it what it builds answers with
(`http/errors.py`, `playback/request.py: parse`), and build the one answer a fault replaces
with `http/errors.py`, so they live here, above both (ARCHITECTURE.md: Import rules).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from delivery_sandbox.faults import authentication as auth_faults
from delivery_sandbox.faults import authentication_answers as answer_faults
from delivery_sandbox.faults import limits as limit_faults
from delivery_sandbox.faults import playback as playback_faults
from delivery_sandbox.faults import reply as reply_faults
from delivery_sandbox.faults import series_playlists as series_playlist_faults
from delivery_sandbox.faults.change_faults import mangle_change_reply
from delivery_sandbox.http import errors
from delivery_sandbox.playback.request import parse

if TYPE_CHECKING:
    from delivery_sandbox.http.headers import Exchange, Reply
    from delivery_sandbox.state.context import Sandbox

__all__ = ["refused", "reply_out", "request_in"]

Read = Callable[[], Awaitable[bytes]]


def request_in(
    sb: Sandbox,
    scope: dict[str, Any],
    exchange: Exchange,
    authorization: str | None,
    simulated: str | None,
    read: Read,
) -> tuple[str | None, Read]:
    """The request seam: the request id the answer carries (faults/reply.py), the
    Authorization read from the query or a cookie (faults/authentication.py), the body reader
    of POST /playback (faults/playback.py); the Service-Simulate value is noted for the
    simulation faults (faults/catalog.py). Returns the Authorization and the body reader."""
    if simulated is not None:
        exchange.extra["service_simulate"] = simulated
    if not sb.faults.on:
        return authorization, read
    exchange.request_id = reply_faults.bend_request_id(exchange.request_id, sb.faults)
    authorization = auth_faults.request_key(scope, authorization, sb.faults)
    return authorization, playback_faults.bend_request_body(read, scope, sb, exchange)


def refused(sb: Sandbox, counter: str | None, authorization: str | None, reply: Reply) -> None:
    """The seam of a request authentication refused: the limit faults that count it all the
    same (faults/limits.py)."""
    if sb.faults.on:
        limit_faults.count_refused(sb, counter, authorization, reply)


async def reply_out(reply: Reply, sb: Sandbox, scope: dict[str, Any], exchange: Exchange) -> Reply:
    """The reply seam: the finished answer as the switched-on faults bend it, in order: a wrong
    method answered 404, a 429 held, the body faults of every spec area (faults/reply.py), the
    answer faults of authentication (faults/authentication_answers.py), the series and playlists
    rows, the change rows."""
    faults = sb.faults
    if not faults.on:
        return reply
    if reply_faults.not_found_instead(reply, exchange, faults):
        reply = errors.flat(exchange, faults, 404, errors.MSG_NOT_FOUND, "not_found")
    await limit_faults.hold_refusal(reply, faults, scope["path"])
    reply_faults.bend_reply(reply, faults, scope["path"], exchange)
    reply = answer_faults.bend_answer(reply, sb, scope, exchange, errors, parse)
    series_playlist_faults.bend_reply(reply, faults, scope, exchange)
    mangle_change_reply(reply, sb, exchange)
    return reply
