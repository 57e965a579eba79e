"""A background service a run starts and stops: the embedded sandbox, the latency proxy.

`with service as handle:` starts it and hands back what `start` answers (a profile path, a URL);
leaving the block stops it, on error too.
"""

from __future__ import annotations

from types import TracebackType
from typing import Generic, TypeVar

__all__ = ["Service"]

Handle = TypeVar("Handle")


class Service(Generic[Handle]):
    """Started by `start`, stopped by `stop`; a context manager over the two."""

    def start(self) -> Handle:
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Handle:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.stop()
