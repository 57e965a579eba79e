"""The harness's HTTP transport: one time bound for a whole answer, not for each read.

    budget = AnswerBudget()
    transport = bounded_transport(budget)              # an httpx.HTTPTransport
    with budget.bound(10.0):                           # connect + send + every read of one answer
        client.send(request)                           # httpx.TimeoutException past the bound

httpx's timeouts apply to each socket operation, so a target that sends a few bytes every half
second never trips them and keeps a run alive for as long as it likes (docs/running.md > Exit codes:
bad targets end with exit 3 in a bounded time). Here every connect, write and read gets at most
the time left before the answer's deadline; the operation that crosses it fails with the
ordinary httpx timeout. Outside `bound()` the operations keep their own timeouts.

The deadline is per thread (one client may be shared by threads; each answer is read by the
thread that sent it). Real sockets need real time, so the clock here is `time.monotonic`
unless a test gives another.

Proxy variables (HTTP_PROXY, ...) are not followed: httpx applies them only when it builds its
own transport. The harness talks to the target named in the profile directly.
"""

from __future__ import annotations

import threading
import time
import typing
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import httpcore
import httpx

__all__ = ["AnswerBudget", "bounded_transport"]

MIN_WAIT = 0.001  # a socket timeout of 0 would mean non-blocking, not "time is up"
_SocketOptions = typing.Iterable[typing.Any] | None  # as httpcore's backends take them


class AnswerBudget:
    """The deadline of the answer being read on this thread, if any."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._local = threading.local()

    @contextmanager
    def bound(self, seconds: float) -> Iterator[None]:
        self._local.deadline = self._clock() + seconds
        try:
            yield
        finally:
            self._local.deadline = None

    def clip(self, timeout: float | None) -> float | None:
        """The timeout an operation may use now: its own, or less if the deadline is nearer."""
        deadline: float | None = getattr(self._local, "deadline", None)
        if deadline is None:
            return timeout
        left = max(deadline - self._clock(), MIN_WAIT)
        return left if timeout is None else min(timeout, left)


class _BoundedStream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream, budget: AnswerBudget) -> None:
        self._inner, self._budget = inner, budget

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, self._budget.clip(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, self._budget.clip(timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: typing.Any,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        upgraded = self._inner.start_tls(ssl_context, server_hostname, self._budget.clip(timeout))
        return _BoundedStream(upgraded, self._budget)

    def get_extra_info(self, info: str) -> typing.Any:
        return self._inner.get_extra_info(info)


class _BoundedBackend(httpcore.NetworkBackend):
    def __init__(self, budget: AnswerBudget) -> None:
        self._inner = httpcore.SyncBackend()
        self._budget = budget

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: _SocketOptions = None,
    ) -> httpcore.NetworkStream:
        stream = self._inner.connect_tcp(
            host, port, self._budget.clip(timeout), local_address, socket_options
        )
        return _BoundedStream(stream, self._budget)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: _SocketOptions = None
    ) -> httpcore.NetworkStream:
        stream = self._inner.connect_unix_socket(path, self._budget.clip(timeout), socket_options)
        return _BoundedStream(stream, self._budget)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def bounded_transport(budget: AnswerBudget) -> httpx.HTTPTransport:
    """httpx's default transport with its connection pool on the bounded network backend.

    httpx takes no network backend, so the pool it built is replaced by an equal one (same
    defaults: TLS context, 100 connections, 20 kept alive for 5 s) that has it; the transport
    keeps mapping httpcore's errors to httpx's. The trickling-target self-test
    (tests/harness/test_bad_targets.py) fails if an httpx release changes this.
    """
    transport = httpx.HTTPTransport()
    limits = httpx.Limits(max_connections=100, max_keepalive_connections=20, keepalive_expiry=5.0)
    transport._pool = httpcore.ConnectionPool(
        ssl_context=httpx.create_ssl_context(),
        max_connections=limits.max_connections,
        max_keepalive_connections=limits.max_keepalive_connections,
        keepalive_expiry=limits.keepalive_expiry,
        network_backend=_BoundedBackend(budget),
    )
    return transport
