"""The sandbox clock: one injected time source, an offset the admin API moves, and an offset per
organisation on top of it.

Every part of the sandbox reads time through one `Clock`, so `POST /_sandbox/clock` moves
licence windows, link expiries, rate-limit windows and ticket lifetimes together. With a `role`,
the same call moves only that role's organisation's clock (a test clock, as some payment
sandboxes have): the requests its keys send, its counters and its tickets see the moved time,
while every other organisation's requests, the admin API and the changes held back for later
(`Sandbox.later`) keep the sandbox's own. A scenario can then move time for one organisation
while the others' scenarios run beside it.

    clock.now()                 # the sandbox's time
    clock.now(org)              # what `org`'s requests see
    with clock.caller(org):     # a request of `org`: `clock.current()` is `clock.now(org)`
        ...
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["Clock"]

# The organisation whose request is being answered (None: no caller known, or an admin call).
_CALLER: ContextVar[str | None] = ContextVar("sandbox_caller", default=None)


class Clock:
    """Wall time from `source` shifted by `offset` seconds, and by an organisation's own."""

    def __init__(self, source: Callable[[], float] = time.time, offset: float = 0.0) -> None:
        self._source = source
        self.offset = offset
        self.offsets: dict[str, float] = {}  # organisation -> its own offset on top of `offset`

    def now(self, org: str | None = None) -> float:
        moved = self.offsets.get(org, 0.0) if org is not None else 0.0
        return self._source() + self.offset + moved

    def current(self) -> float:
        """The time of the request being answered: its caller's organisation's clock."""
        return self.now(_CALLER.get())

    @contextmanager
    def caller(self, org: str | None) -> Iterator[None]:
        token = _CALLER.set(org)
        try:
            yield
        finally:
            _CALLER.reset(token)

    def know_caller(self, org: str) -> None:
        """From here to the end of the request (`caller`), `current()` reads `org`'s clock."""
        _CALLER.set(org)

    def advance(self, seconds: float, org: str | None = None) -> None:
        if org is None:
            self.offset += seconds
        else:
            self.offsets[org] = self.offsets.get(org, 0.0) + seconds

    def set(self, epoch: float, org: str | None = None) -> None:
        if org is None:
            self.offset = epoch - self._source()
        else:
            self.offsets[org] = epoch - self.now()

    def reset(self, org: str | None = None) -> None:
        """Back to wall time: every clock, or only `org`'s (back to the sandbox's time)."""
        if org is None:
            self.offset = 0.0
            self.offsets.clear()
        else:
            self.offsets.pop(org, None)
