"""The change catalogue (spec/changes.yaml) as scenarios: make a change, read the changed thing
before and after in one view, and compare what the catalogue says must follow.

    for change, consequence in consequences():           # one test each (test_changes.py)
        judge(client, changes, fixture_id, change, consequence)

A view reads the thing from one endpoint (`VIEWS`). The read after the change is repeated every
half second until the change shows in that view (its `landed` field), or, for a view that
cannot show the change itself, until the consequence holds, and never longer than the change's
bound in Limits > Freshness: a server whose caches are within the bounds passes, and a failure
is concluded only once the bound has passed. A consequence whose view never took the change in
is "not exercised" (the Freshness rules have their own scenarios), never passed.

spec: Resources and their fields (the fields that never change, are stable, hash something or
record the last change); States and transitions; Limits > Freshness (upper bounds).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import listing_support as listing
import pytest
from json_support import at, body_of, objs
from state_model import moment
from timing_support import settle

from delivery_conformance.checks import expect
from delivery_conformance.evidence.events import NOT_EXERCISED_PREFIX
from delivery_conformance.spec.changes import Change, Consequence, load_changes
from delivery_conformance.suite.exclusive import (
    CHANGES_ORGANISATION,
    CHANGES_ROLE,
    OWN_FIXTURE_FOR,
)
from delivery_conformance.target.client import DeliveryClient, Response

__all__ = [
    "OWN_DATA_CHANGES", "VIEWS", "Change", "Consequence", "consequences", "judge", "load_changes",
]  # fmt: skip

NEW_TITLE = "Retitled by the change catalogue"
PAGE = 100


# The changes that can be made to the data the `films_changes` organisation alone sees (its
# film, its episode, its creative: suite/exclusive.py, OWN_DATA and OWN_FIXTURE_FOR).
OWN_DATA_CHANGES = frozenset({"film_retitled", "episode_withdrawn", "creative_renamed"})


def consequences() -> list[Any]:
    """One pytest param per generated consequence, with its requirement and needs as marks; a
    change of OWN_DATA_CHANGES holds the `films_changes` organisation alone (the whole target
    where the run has no such data)."""
    return [
        pytest.param(
            change,
            consequence,
            id=change.test_id(consequence),
            marks=[
                pytest.mark.requirement(consequence.requirement),
                pytest.mark.needs(*change.needs),
                *(
                    [pytest.mark.exclusive(CHANGES_ORGANISATION)]
                    if change.name in OWN_DATA_CHANGES
                    else []
                ),
            ],
        )
        for change in load_changes()
        for consequence in change.consequences
    ]


# -- views --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Seen:
    """One read of a view: the answer and the thing in it (None: not there)."""

    response: Response
    item: dict[str, Any] | None


def _find(rows: Any, key: str, value: Any) -> dict[str, Any] | None:
    found = [r for r in objs(rows) if value is not None and r.get(key) == value]
    return found[0] if found else None


def _role(role: str, ctx: dict[str, Any]) -> str:
    """The role that reads as `role` in this scenario (`films_changes` for `films` on the
    organisation's own data)."""
    return str(ctx.get("roles", {}).get(role, role))


def _catalog(key: str, rows: str, ctx_key: str) -> Callable[[DeliveryClient, dict], Seen]:
    def read(client: DeliveryClient, ctx: dict[str, Any]) -> Seen:
        response = client.get("catalog", role=_role("films", ctx))
        return Seen(response, _find(body_of(response).get(rows), key, ctx.get(ctx_key)))

    return read


def _film_of_episode(client: DeliveryClient, ctx: dict[str, Any]) -> Seen:
    """The film of fixture episode_encrypted, and whether the same answer lists the episode."""
    response = client.get("catalog", role=_role("films", ctx))
    body = body_of(response)
    film = _find(body.get("films"), "id", ctx.get("film_of_episode"))
    episode = _find(body.get("episodes"), "id", ctx.get("episode_encrypted"))
    return Seen(response, None if film is None else {**film, "_episode_listed": bool(episode)})


def _detail(path: str, role: str, ctx_key: str) -> Callable[[DeliveryClient, dict], Seen]:
    def read(client: DeliveryClient, ctx: dict[str, Any]) -> Seen:
        value = ctx.get(ctx_key)
        response = client.get(path.format(value), role=_role(role, ctx))
        data = body_of(response).get("data")
        ok = response.status_code == 200 and isinstance(data, dict) and value is not None
        return Seen(response, data if ok else None)

    return read


def _listed(path: str, role: str, key: str, ctx_key: str) -> Callable[[DeliveryClient, dict], Seen]:
    def read(client: DeliveryClient, ctx: dict[str, Any]) -> Seen:
        pages = listing.envelope_walk(client, path, _role(role, ctx), limit=PAGE)
        return Seen(pages[-1].response, _find(listing.items_of(pages), key, ctx.get(ctx_key)))

    return read


VIEWS: dict[str, Callable[[DeliveryClient, dict[str, Any]], Seen]] = {
    "catalog_film": _catalog("id", "films", "film_id"),
    "catalog_episode": _catalog("id", "episodes", "episode_encrypted"),
    "catalog_film_of_episode": _film_of_episode,
    "series_detail": _detail("series/{}", "films", "film_code"),
    "series_item": _listed("series", "films", "code", "film_code"),
    "playlist_detail": _detail("playlists/{}", "videos", "playlist_code"),
    "playlist_item": _listed("playlists", "videos", "code", "playlist_code"),
    "creative_detail": _detail("creatives/{}", "films", "creative_id"),
    "creative_item": _listed("creatives", "films", "creative_id", "creative_id"),
}


# -- judging ------------------------------------------------------------------------------------


def _context(client: DeliveryClient, fixture_id: Any, change: Change, own: bool) -> dict[str, Any]:
    """The fixtures the change names, and what the views derive from them (the film's code,
    the film of an episode), read before the change. `own`: the `films_changes` organisation's
    own data stands in for the shared fixtures, and its role for `films`."""
    ctx: dict[str, Any] = {"title": NEW_TITLE, "roles": {"films": CHANGES_ROLE} if own else {}}
    for need in change.needs:
        if need.startswith("fixture:"):
            name = need.removeprefix("fixture:")
            ctx[name] = fixture_id(OWN_FIXTURE_FOR.get(name, name) if own else name)
    if "film_id" in ctx or "episode_encrypted" in ctx:
        body = body_of(client.get("catalog", role=_role("films", ctx)))
        film = _find(body.get("films"), "id", ctx.get("film_id"))
        ctx["film_code"] = film.get("code") if film else None
        episode = _find(body.get("episodes"), "id", ctx.get("episode_encrypted"))
        ctx["film_of_episode"] = episode.get("film_id") if episode else None
    return ctx


def _filled(value: Any, ctx: dict[str, Any]) -> Any:
    if isinstance(value, str):
        return value.format(**{k: v for k, v in ctx.items() if v is not None})
    if isinstance(value, dict):
        return {k: _filled(v, ctx) for k, v in value.items()}
    return value


def _landed(change: Change, view: str, seen: Seen, ctx: dict[str, Any]) -> bool | None:
    """Whether the change shows in this read of `view`; None: the view cannot show it."""
    marker = change.landed.get(view)
    if marker is None:
        return None
    if marker.get("gone"):
        return seen.item is None
    return seen.item is not None and at(seen.item, marker["field"]) == _filled(
        marker["equals"], ctx
    )


def _moved(before: Any, after: Any) -> bool:
    """`after` differs from `before`; between two times, `after` is the later one."""
    if after == before:
        return False
    first, then = moment(before), moment(after)
    if first is not None and then is not None:
        return then > first
    return True


def judge(
    client: DeliveryClient,
    changes: Any,
    fixture_id: Any,
    change: Change,
    rule: Consequence,
    own_data: bool = False,
) -> None:
    """Make `change` (`changes`: the suite's ChangeMaker, the profile's `[changes]` command or
    the admin API) and judge one of its consequences (see the module docstring). `own_data`:
    the run has the `films_changes` organisation's data (OWN_DATA), which a change of
    OWN_DATA_CHANGES is then made to."""
    ctx = _context(client, fixture_id, change, own_data and change.name in OWN_DATA_CHANGES)
    read = VIEWS[rule.view]
    before = read(client, ctx)
    if before.item is None:
        pytest.skip(NOT_EXERCISED_PREFIX + f"the thing is not in {rule.view} before the change")
    other_view, _, other_field = rule.other.partition(".")
    values = {k: v for k, v in ctx.items() if v is not None}
    changes.make(change.name, _filled(change.admin, ctx), _filled(change.body, ctx) or None, values)

    def after() -> tuple[Seen, Seen | None]:
        return read(client, ctx), (VIEWS[other_view](client, ctx) if other_view else None)

    def holds(pair: tuple[Seen, Seen | None]) -> bool:
        seen, other = pair
        if rule.effect == "gone":
            return seen.item is None
        if seen.item is None:
            return False
        value = at(seen.item, rule.field)
        if rule.effect == "moves":
            return _moved(at(before.item, rule.field), value)
        if rule.effect == "stays":
            return value == at(before.item, rule.field)
        return other is not None and other.item is not None and value == at(other.item, other_field)

    def landed(pair: tuple[Seen, Seen | None]) -> tuple[bool | None, bool | None]:
        seen, other = pair
        own = _landed(change, rule.view, seen, ctx)
        theirs = _landed(change, other_view, other, ctx) if other is not None else None
        return own, theirs

    def shown(pair: tuple[Seen, Seen | None]) -> bool:
        own, theirs = landed(pair)
        if own is None and theirs is None:
            return holds(pair)  # nothing shows the change itself: wait for the consequence
        if own is None and rule.effect == "matches":
            # This view cannot show the change, the other one has: a copy of this view within
            # the bound may still lag it (several servers, each with its cache), so wait for
            # the two to agree; after the bound a disagreement is the violation.
            return theirs is not False and holds(pair)
        return own is not False and theirs is not False

    seen = settle(after, shown, change.bound)
    (now, other) = seen.value
    own, theirs = landed(seen.value)
    shown_at_end = own is not False and theirs is not False and (own, theirs) != (None, None)
    # A view that never took the change in leaves its other consequences unjudged; but where
    # the consequence is the thing leaving the view, not leaving it within the bound is the
    # violation itself, and so is a view that cannot show the change still disagreeing with
    # one that has, once the bound has passed.
    if (
        not seen.settled
        and (change.landed.get(rule.view) or rule.other)
        and rule.effect != "gone"
        and not (own is None and rule.effect == "matches" and shown_at_end)
    ):
        pytest.skip(
            NOT_EXERCISED_PREFIX
            + f"{change.name} did not show in {rule.view} within {change.bound:g} s"
        )
    if now.item is None and rule.effect != "gone":
        pytest.skip(NOT_EXERCISED_PREFIX + f"the thing left {rule.view} with the change")
    value = None if now.item is None else at(now.item, rule.field)
    expected = {
        "moves": f"{rule.field} other than {at(before.item, rule.field)!r} after {change.name}",
        "stays": f"{rule.field} still {at(before.item, rule.field)!r} after {change.name}",
        "gone": f"out of {rule.view} within {change.bound:g} s of {change.name}",
        "matches": f"{rule.field} equal to {rule.other} read at the same time",
    }[rule.effect]
    actual = (
        repr(at(other.item, other_field)) + f" in {other_view}, {value!r} here"
        if rule.effect == "matches" and other is not None and other.item is not None
        else ("still there" if rule.effect == "gone" else repr(value))
    )
    expect(
        rule.requirement,
        holds((now, other)),
        expected=expected,
        actual=actual,
        response=now.response,
        title=f"{change.name}: {rule.view} {rule.field or ''} {rule.effect}".strip(),
    )
