"""The servers of the cache variants and the copies of the data they read (variants/caches.py).

Legal variants `catalog_cache` and `two_servers`: requests are answered by the servers of a
`ServerPlan` in turn; a server with a cache policy answers the catalog side and ticket checks
from its own copy of the store (`Store.snapshot`) and its own cache of built bodies, both
replaced together when the copy is due. Admin changes are noted on every copy (`noted`), so
each is taken in within its Freshness row; a reset drops every copy (`renew`). The default
sandbox has no `ServerViews`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from delivery_sandbox.state.store import Store
from delivery_sandbox.variants.caches import CachePolicy, Change, CopyAge, ServerPlan

__all__ = ["ServerViews", "View"]


@dataclass(slots=True)
class View:
    """One server's copy of the data, its built bodies and its age."""

    store: Store
    age: CopyAge
    cache: dict[Any, Any] = field(default_factory=dict)


class ServerViews:
    """The servers answering in turn, each with its own copy (None: it reads the store as is)."""

    def __init__(self, plan: ServerPlan) -> None:
        self.servers: tuple[CachePolicy | None, ...] = plan.servers
        self.copies: list[View | None] = [None] * len(self.servers)
        self.turn = 0

    def answer(self, store: Store, now: float, cached: bool) -> View | None:
        """The next server takes the request: its copy (taken again when due) when it has a
        cache and the endpoint reads through it, else None."""
        index, self.turn = self.turn, (self.turn + 1) % len(self.servers)
        policy = self.servers[index]
        if policy is None or not cached:
            return None
        view = self.copies[index]
        if view is None or view.age.stale(now):
            view = self.copies[index] = View(store.snapshot(), CopyAge.taken(now, policy))
        return view

    def renew(self) -> None:
        """Back to the start state: every server reads the data as it is at its next answer."""
        self.copies = [None] * len(self.servers)

    def noted(self, change: Change, now: float) -> None:
        """A change was made: each copy is taken again within the lag of its kind."""
        for view, policy in zip(self.copies, self.servers, strict=True):
            if view is not None and policy is not None:
                view.age.noted(change, now, policy)
