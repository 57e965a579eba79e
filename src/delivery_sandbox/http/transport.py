"""One socket write per answer: uvicorn's httptools protocol behind a write-coalescing transport.

uvicorn writes the status line and headers when the app sends `http.response.start`, and the body
when it sends `http.response.body`: two `write` system calls, two TCP segments, and often two
wake-ups of the client, for every answer. `CoalescingTransport` keeps the writes made during one
turn of the event loop and hands them to the real transport as one write at the next turn (or at
once when the connection is closed). The bytes and their order on the wire are unchanged; only how
they are cut into segments changes. Everything else is passed through to the real transport.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from delivery_sandbox.variants.wire import respell_head

__all__ = [
    "CoalescingHttpToolsProtocol",
    "CoalescingTransport",
    "HeaderSpellingHttpToolsProtocol",
    "SpellingTransport",
]


class CoalescingTransport:
    """A transport wrapper whose writes in one loop turn go out as one."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._pending: list[bytes] = []

    def write(self, data: bytes) -> None:
        if not self._pending:
            self._loop.call_soon(self._flush)
        self._pending.append(data)

    def writelines(self, chunks: Any) -> None:
        for chunk in chunks:
            self.write(chunk)

    def _flush(self) -> None:
        if not self._pending:
            return
        pending, self._pending = self._pending, []
        if not self._transport.is_closing():
            self._transport.write(pending[0] if len(pending) == 1 else b"".join(pending))

    def get_write_buffer_size(self) -> int:
        return self._transport.get_write_buffer_size() + sum(len(p) for p in self._pending)

    def write_eof(self) -> None:
        self._flush()
        self._transport.write_eof()

    def close(self) -> None:
        self._flush()
        self._transport.close()

    def abort(self) -> None:
        self._pending = []
        self._transport.abort()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class CoalescingHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol, writing through a `CoalescingTransport`."""

    def connection_made(self, transport: Any) -> None:
        wrapped: Any = CoalescingTransport(transport, self.loop)
        super().connection_made(wrapped)


class HeaderSpellingHttpToolsProtocol(CoalescingHttpToolsProtocol):
    """The coalescing protocol that writes header names in their mixed-case spelling.

    uvicorn lower-cases every name before it writes the head of an answer; a server behind a
    proxy that spells them in Title-Case (the legal variant `title_case_headers`) needs them
    spelled on the wire. uvicorn writes the status line and every header in one write, the body
    in others: a write that starts with a status line is a head, and only its names are respelled
    (`variants/wire.py: respell_head`). Used only while that variant is on.
    """

    def connection_made(self, transport: Any) -> None:
        wrapped: Any = SpellingTransport(transport, self.loop)
        HttpToolsProtocol.connection_made(self, wrapped)


class SpellingTransport(CoalescingTransport):
    """A coalescing transport that respells the header names of every head written."""

    def write(self, data: bytes) -> None:
        if data.startswith(b"HTTP/1."):
            data = respell_head(data)
        super().write(data)
