"""Tables of body changes, shared by the fault modules that bend a 200 JSON body
(`resource_fields.py`, `deprecation.py`, `series_playlists.py`) and by the hooks that read a
JSON answer.

A block is a tuple of rows `(name, rule, summary, where, change)`: `where` picks the paths a
row acts on (`at`, `detail`), `change` bends the decoded body in place, helped by the walkers
below (`rows`, `data`, `films`, ...) that step into a member and give an empty value when it
is missing or of another type. `rows_of` gives a block's fault-table rows, `table_of` its
table of changes, and `apply_table` applies a table's switched-on rows to one answer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson

if TYPE_CHECKING:
    from delivery_sandbox.faults.switch import FaultSwitch

__all__ = ["Body", "Row", "Table", "Where", "api", "apply_table", "at", "data", "detail", "doors",
           "episodes", "films", "json_object", "links", "member", "rows", "rows_of", "table_of",
           "tickets"]  # fmt: skip

Body = dict[str, Any]
Where = Callable[[list[str]], bool]  # the path split on "/"
Row = tuple[str, str, str, Where, Callable[[Body], None]]
Table = dict[str, tuple[Where, Callable[[Body], None]]]


# -- where a row acts ----------------------------------------------------------------------------


def at(name: str) -> Where:
    """Paths that end with `name` (`/catalog`, `/series`)."""
    return lambda parts: parts[-1] == name


def detail(kind: str) -> Where:
    """Paths of one item of `kind` (`/series/{code}`)."""
    return lambda parts: len(parts) >= 2 and parts[-2] == kind


# -- walking a body ------------------------------------------------------------------------------


def rows(body: Body, name: str) -> list[Body]:
    """The objects listed under `name`, or none."""
    found = body.get(name)
    return [r for r in found if isinstance(r, dict)] if isinstance(found, list) else []


def member(body: Body, name: str) -> Body:
    """The object under `name`, or an empty one."""
    found = body.get(name)
    return found if isinstance(found, dict) else {}


def data(body: Body) -> Body:
    """The envelope's `data` object, or an empty one."""
    return member(body, "data")


def api(body: Body) -> Body:
    """The `/config` answer's `api` object, or an empty one."""
    return member(body, "api")


def links(body: Body) -> Body:
    """The `links` object, or an empty one."""
    return member(body, "links")


def doors(body: Body) -> Body:
    """The `/config` answer's `rate_limits.doors`, or an empty one."""
    found = (body.get("rate_limits") or {}).get("doors")
    return found if isinstance(found, dict) else {}


def films(body: Body) -> list[Body]:
    return rows(body, "films")


def episodes(body: Body) -> list[Body]:
    return rows(body, "episodes")


def tickets(body: Body) -> list[Body]:
    """The issued tickets of a batch answer, or the single ticket of a single answer."""
    items = rows(body, "items")
    return [i for i in items if i.get("status") == 200] if items else [body]


# -- blocks and tables ---------------------------------------------------------------------------


def rows_of(block: tuple[Row, ...]) -> tuple[tuple[str, tuple[str, ...], str], ...]:
    """Fault-table rows (name, rule, summary) of a block."""
    return tuple((name, (rid,), summary) for name, rid, summary, _, _ in block)


def table_of(block: tuple[Row, ...]) -> Table:
    """name -> (where, change) of a block."""
    return {name: (where, change) for name, _, _, where, change in block}


def json_object(raw: bytes) -> Body | None:
    """The JSON object a body holds, or None when it holds no JSON or another JSON value."""
    try:
        decoded = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return decoded if isinstance(decoded, dict) else None


def apply_table(
    table: Table, status: int, body: bytes, faults: FaultSwitch, path: str
) -> bytes | None:
    """The 200 JSON body of `path` with the table's switched-on changes applied (by name), or
    None when none applies (the body is then left as it is)."""
    on = faults.on & table.keys()
    if not on or status != 200 or not body:
        return None
    parts = path.rstrip("/").split("/")
    chosen = [table[n][1] for n in sorted(on) if table[n][0](parts)]
    if not chosen:
        return None
    decoded = json_object(body)
    if decoded is None:
        return None
    for change in chosen:
        change(decoded)
    return orjson.dumps(decoded)
