"""Client rules about refreshing a list before the time its answer names (pure).

Spec: Endpoints > GET /videos (frozen legacy path): each answer carries `refresh_before` (45
minutes after the response; Limits: open video links, refresh before 45 minutes) and its links
"are played as received and never cached in the app" (CLI-040). A client that keeps showing the
list must walk it again before the earliest `refresh_before` of its last walk. The rule names
the field, so the time is the one served, not a timer of the client's own: a scenario serves it
seconds ahead (the `refresh_in` injection) and follows the list for longer than that.

A walk starts with a list request that carries no `cursor`. The wall time of a walk's start is
the proxy's (`Entry.wall`); the end of the flow is the runner's (`FlowRun.ended_wall`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from delivery_conformance.certify.journal import Entry
from delivery_conformance.certify.observation import (
    FAILED,
    NOT_EXERCISED,
    PASSED,
    Observation,
    Verdict,
)

__all__ = ["REFRESH_JUDGES", "Walk", "walks"]

VIDEOS = "/api/delivery/v1/videos"


@dataclass(frozen=True)
class Walk:
    """One walk of the list: its requests in order and the earliest `refresh_before` served on
    them (epoch seconds; None when no answer of the walk named one)."""

    entries: tuple[Entry, ...]
    refresh_before: float | None

    @property
    def started(self) -> float:
        return self.entries[0].wall


def _served_refresh(entry: Entry) -> float | None:
    """The `refresh_before` of a 200 answer: as the injection noted it, else read from the body
    (a body cut at the journal's cap that cannot be read names none)."""
    if entry.status != 200:
        return None
    noted = entry.extra.get("refresh_before")
    if isinstance(noted, int | float) and not isinstance(noted, bool):
        return float(noted)
    try:
        body = json.loads(entry.response_body)
        stamp = datetime.fromisoformat(str(body["refresh_before"]).replace("Z", "+00:00"))
    except (ValueError, TypeError, KeyError):
        return None
    return stamp.timestamp() if stamp.tzinfo is not None else None


def walks(entries: Sequence[Entry], path: str = VIDEOS) -> list[Walk]:
    """The walks of the list at `path` (GET, the exact path), in the order they started."""
    listed = sorted((e for e in entries if e.method == "GET" and e.path == path),
                    key=lambda e: e.started)  # fmt: skip
    groups: list[list[Entry]] = []
    for entry in listed:
        if "cursor" not in entry.query or not groups:
            groups.append([])
        groups[-1].append(entry)
    found = []
    for group in groups:
        times = [t for t in map(_served_refresh, group) if t is not None]
        found.append(Walk(tuple(group), min(times, default=None)))
    return found


def refreshed_before(obs: Observation, params: Mapping[str, Any]) -> Verdict:
    """Each walk whose earliest `refresh_before` came while the flow still ran is followed by
    a new walk that starts before that time. Walks are judged within one run of the flow."""
    path = str(params.get("path", VIDEOS))
    expected = "the list walked again before the earliest refresh_before of the last walk"
    judged = 0
    for run in obs.runs:
        mine = walks([e for e in obs.entries if e.phase == run.phase], path)
        for n, walk in enumerate(mine):
            due = walk.refresh_before
            if due is None:
                continue
            later = mine[n + 1] if n + 1 < len(mine) else None
            if later is not None and later.started < due:
                judged += 1
                continue
            if later is not None:
                return FAILED, expected, (
                    f"walk {n + 1} was due at its refresh_before; walk {n + 2} started "
                    f"{later.started - due:.1f} s after it (run {run.phase})"
                ), (walk.entries[0], later.entries[0])  # fmt: skip
            if run.ended_wall > due:
                past = run.ended_wall - due
                return FAILED, expected, (
                    f"walk {n + 1} was due at its refresh_before, {due - walk.started:.1f} s "
                    f"after it started; no walk followed, and the flow ran {past:.1f} s past it "
                    f"(run {run.phase}, {len(mine)} walk(s))"
                ), (walk.entries[0],)  # fmt: skip
    if not judged:
        return NOT_EXERCISED, expected, (
            "no walk's refresh_before fell while the flow ran (no list answer named one, or "
            "the flow ended first)"
        ), ()  # fmt: skip
    return PASSED, expected, f"{judged} walk(s) refreshed before their refresh_before", ()


REFRESH_JUDGES = {"refreshed_before": refreshed_before}
