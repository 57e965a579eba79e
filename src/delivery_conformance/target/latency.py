"""Latency proxy: a loopback TCP forwarder that delays every chunk, for timing self-tests.

A server in another data centre answers each request some tens of milliseconds later than the
embedded sandbox. `LatencyProxy` sits between the harness and a target on 127.0.0.1 and adds that
delay, with jitter, without changing a byte. Stable API (the load campaigns reuse it):

    with LatencyProxy(upstream="http://127.0.0.1:8123", latency=0.040, jitter=0.015, seed=1) as url:
        ...   # url == "http://127.0.0.1:<port>": the same target, ~40 ms +- 15 ms per round trip

    write_proxied_profile("target.toml", "slow.toml", url)   # base_url and [admin] url -> proxy

    python -m delivery_conformance.target.latency --upstream http://127.0.0.1:8123 --latency 40ms \\
        --jitter 15ms --port 0 [--seed N] [--profile IN --profile-out OUT]
    # prints the URL it listens on (and writes OUT), then forwards until SIGINT or SIGTERM

How it behaves:
- TCP level: bytes pass unchanged both ways. The Host header, keep-alive, chunked bodies and
  redirects (never followed) stay the business of the client and the target.
- A chunk read on one side is written to the other `latency/2 +- jitter/2` seconds after it was
  read (uniform, never below 0) and never before the previous chunk of the same direction, so the
  byte order of each connection is kept and one request/answer round trip gains about
  `latency +- jitter`. An end of stream is passed on after the last chunk.
- Randomness comes from `random.Random(seed)` (or an injected `rng`), drawn on the proxy's own
  event loop thread, once per chunk.
- Bounded: listens on 127.0.0.1 only and forwards to a loopback upstream only; at most
  `max_connections` client connections (more are closed at once); at most `max_chunks` chunks of
  up to 64 KiB queued per direction (reading pauses meanwhile); the upstream connect gives up
  after `connect_timeout`; a side silent for `idle_timeout` ends its connection.
- `close()` (or leaving the `with`) stops accepting, closes every connection and joins the
  thread within `stop_timeout` seconds. Bad arguments raise `ValueError` with a one-line message.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import re
import signal
import sys
import threading
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn
from urllib.parse import urlsplit

from delivery_conformance.target.service import Service

__all__ = [
    "LatencyProxy",
    "due_time",
    "main",
    "parse_duration",
    "proxied_profile_text",
    "write_proxied_profile",
]

CHUNK = 64 * 1024
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
_DURATION = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+)\s*(ms|s)?\s*")


def parse_duration(text: str) -> float:
    """'40ms' -> 0.04, '1.5s' -> 1.5, '0.2' -> 0.2 (seconds); ValueError on anything else."""
    match = _DURATION.fullmatch(text)
    if match is None:
        raise ValueError(f"not a duration: {text!r} (write e.g. 40ms or 0.04s)")
    value = float(match.group(1))
    return value / 1000 if match.group(2) == "ms" else value


def due_time(arrived: float, delay: float, previous_due: float) -> float:
    """When a chunk read at `arrived` may be written: after its delay, never before the last one."""
    return max(arrived + max(0.0, delay), previous_due)


def _loopback_address(url: str, what: str) -> tuple[str, int]:
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname or parts.port is None:
        raise ValueError(f"{what} must look like http://127.0.0.1:PORT, not {url!r}")
    if parts.hostname not in LOOPBACK:
        raise ValueError(f"{what} must be on the loopback interface, not {parts.hostname}")
    return parts.hostname, parts.port


class LatencyProxy(Service[str]):
    """A forwarding proxy with delay and jitter, run on its own event loop thread."""

    def __init__(
        self,
        upstream: str,
        *,
        latency: float = 0.040,
        jitter: float = 0.0,
        seed: int | None = None,
        port: int = 0,
        rng: random.Random | None = None,
        max_connections: int = 256,
        max_chunks: int = 64,
        connect_timeout: float = 5.0,
        idle_timeout: float = 120.0,
        stop_timeout: float = 5.0,
    ) -> None:
        self.upstream = upstream
        self._upstream_address = _loopback_address(upstream, "upstream")
        if latency < 0 or jitter < 0:
            raise ValueError("latency and jitter must not be negative")
        if not 0 <= port <= 65535:
            raise ValueError(f"port {port} is out of range")
        if min(max_connections, max_chunks) < 1 or min(connect_timeout, idle_timeout) <= 0:
            raise ValueError("connection, chunk and time bounds must be positive")
        self.latency, self.jitter, self.port = latency, jitter, port
        self.max_connections, self.max_chunks = max_connections, max_chunks
        self.connect_timeout, self.idle_timeout = connect_timeout, idle_timeout
        self.stop_timeout = stop_timeout
        self._rng = rng if rng is not None else random.Random(seed)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._server: asyncio.Server | None = None
        self._ready = threading.Event()
        self._stopped: asyncio.Event | None = None
        self._failure: BaseException | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self.url: str | None = None
        self.connections_total = 0
        self.refused_total = 0
        self.bytes_up = 0  # client -> upstream
        self.bytes_down = 0  # upstream -> client

    # -- public ---------------------------------------------------------------------------------

    def delay(self) -> float:
        """One direction's delay for one chunk: latency/2 +- jitter/2, never below 0."""
        spread = self._rng.uniform(-self.jitter / 2, self.jitter / 2) if self.jitter else 0.0
        return max(0.0, self.latency / 2 + spread)

    def start(self) -> str:
        """Start listening; answer the proxy's URL (raises OSError if it cannot listen)."""
        if self._thread is not None:
            raise RuntimeError("the latency proxy is already started")
        self._thread = threading.Thread(target=self._run, name="latency-proxy", daemon=True)
        self._thread.start()
        if not self._ready.wait(self.stop_timeout + self.connect_timeout):
            raise OSError("the latency proxy did not start listening in time")
        if self._failure is not None:
            raise OSError(f"the latency proxy cannot listen: {self._failure}")
        assert self.url is not None
        return self.url

    def stop(self) -> None:
        loop, thread = self._loop, self._thread
        if loop is not None and thread is not None and thread.is_alive():
            with contextlib.suppress(RuntimeError):  # the loop may have just ended
                loop.call_soon_threadsafe(self._request_stop)
            thread.join(self.stop_timeout)
        self._thread = None

    close = stop  # the name the CLI and callers use

    @property
    def open_connections(self) -> int:
        return len(self._connections)

    # -- event loop thread ----------------------------------------------------------------------

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        try:
            loop.run_until_complete(self._main())
        except BaseException as error:  # reported by start(); the thread must not die silently
            self._failure = error
        finally:
            self._ready.set()
            loop.close()

    def _request_stop(self) -> None:
        if self._stopped is not None:
            self._stopped.set()

    async def _main(self) -> None:
        self._stopped = asyncio.Event()
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._ready.set()
        try:
            await self._stopped.wait()
        finally:
            self._server.close()
            for task in list(self._connections):
                task.cancel()
            if self._connections:
                await asyncio.wait(list(self._connections), timeout=self.stop_timeout)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._server.wait_closed(), self.stop_timeout)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if len(self._connections) >= self.max_connections:
            self.refused_total += 1
            writer.close()
            return
        task = asyncio.current_task()
        assert task is not None
        self._connections.add(task)
        self.connections_total += 1
        upstream_writer: asyncio.StreamWriter | None = None
        try:
            host, port = self._upstream_address
            upstream_reader, upstream = await asyncio.wait_for(
                asyncio.open_connection(host, port), self.connect_timeout
            )
            upstream_writer = upstream
            await self._forward(reader, writer, upstream_reader, upstream)
        except (TimeoutError, OSError):
            pass  # the client sees its connection closed, as with an unreachable server
        except asyncio.CancelledError:
            pass  # close(): end quietly (the stream callback reads this task's exception)
        finally:
            self._connections.discard(task)
            for side in (writer, upstream_writer):
                if side is not None:
                    side.close()

    async def _forward(
        self,
        client_reader: asyncio.StreamReader,
        client_writer: asyncio.StreamWriter,
        upstream_reader: asyncio.StreamReader,
        upstream_writer: asyncio.StreamWriter,
    ) -> None:
        up: asyncio.Queue[tuple[float, bytes] | None] = asyncio.Queue(self.max_chunks)
        down: asyncio.Queue[tuple[float, bytes] | None] = asyncio.Queue(self.max_chunks)
        tasks = [
            asyncio.create_task(self._read(client_reader, up)),
            asyncio.create_task(self._write(up, upstream_writer, upstream=True)),
            asyncio.create_task(self._read(upstream_reader, down)),
            asyncio.create_task(self._write(down, client_writer, upstream=False)),
        ]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _read(
        self, reader: asyncio.StreamReader, queue: asyncio.Queue[tuple[float, bytes] | None]
    ) -> None:
        loop = asyncio.get_running_loop()
        due = 0.0
        while True:
            data = await asyncio.wait_for(reader.read(CHUNK), self.idle_timeout)
            if not data:
                await queue.put(None)
                return
            due = due_time(loop.time(), self.delay(), due)
            await queue.put((due, data))

    async def _write(
        self,
        queue: asyncio.Queue[tuple[float, bytes] | None],
        writer: asyncio.StreamWriter,
        *,
        upstream: bool,
    ) -> None:
        loop = asyncio.get_running_loop()
        while True:
            item = await queue.get()
            if item is None:
                if writer.can_write_eof():
                    writer.write_eof()
                return
            due, data = item
            wait = due - loop.time()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()
            if upstream:
                self.bytes_up += len(data)
            else:
                self.bytes_down += len(data)


# -- target profiles ------------------------------------------------------------------------------


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string
    raise ValueError(f"cannot write a {type(value).__name__} into a target profile")


def proxied_profile_text(profile: dict[str, Any], proxy_url: str) -> str:
    """The TOML of a decoded target profile with base_url and [admin] url moved to `proxy_url`.

    Only scheme, host and port change: the admin path (e.g. `/_sandbox`) is kept.
    """
    proxy = urlsplit(proxy_url)
    lines: list[str] = []
    tables: list[tuple[str, dict[str, Any]]] = []
    for name, value in profile.items():
        if isinstance(value, dict):
            tables.append((name, value))
        elif name == "base_url":
            lines.append(f"base_url = {_toml_value(proxy_url.rstrip('/'))}")
        else:
            lines.append(f"{name} = {_toml_value(value)}")
    for name, table in tables:
        lines += ["", f"[{name}]"]
        for key, value in table.items():
            if name == "admin" and key == "url" and isinstance(value, str):
                value = urlsplit(value)._replace(scheme=proxy.scheme, netloc=proxy.netloc).geturl()
            lines.append(f"{json.dumps(key)} = {_toml_value(value)}")
    return "\n".join(lines) + "\n"


def write_proxied_profile(source: str | Path, destination: str | Path, proxy_url: str) -> Path:
    """Write a copy of the target profile `source` that reaches the target through `proxy_url`."""
    with Path(source).open("rb") as handle:
        profile = tomllib.load(handle)
    out = Path(destination)
    out.write_text(proxied_profile_text(profile, proxy_url), encoding="utf-8")
    out.chmod(0o600)  # it holds the keys, like the original
    return out


# -- command line ---------------------------------------------------------------------------------


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message}\n")  # one line, no usage block


def _parser(prog: str = "python -m delivery_conformance.latency") -> argparse.ArgumentParser:
    parser = _Parser(
        prog=prog,
        description="Forward 127.0.0.1:PORT to a loopback upstream, adding latency with jitter.",
    )
    parser.add_argument("--upstream", required=True, help="http://127.0.0.1:PORT of the target")
    parser.add_argument("--latency", default="40ms", help="added round trip, e.g. 40ms")
    parser.add_argument("--jitter", default="0ms", help="round-trip spread, e.g. 15ms")
    parser.add_argument("--port", type=int, default=0, help="port to listen on (0: any free)")
    parser.add_argument("--seed", type=int, default=None, help="jitter seed (default: random)")
    parser.add_argument("--profile", type=Path, help="target profile to rewrite for the proxy")
    parser.add_argument("--profile-out", type=Path, help="where to write the rewritten profile")
    return parser


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> int:
    """Exit 0 after SIGINT/SIGTERM, 2 on bad arguments, 3 when it cannot listen."""
    parser = _parser(prog) if prog else _parser()
    args = parser.parse_args(argv)
    if (args.profile is None) != (args.profile_out is None):
        parser.error("--profile and --profile-out go together")
    try:
        proxy = LatencyProxy(
            args.upstream,
            latency=parse_duration(args.latency),
            jitter=parse_duration(args.jitter),
            seed=args.seed,
            port=args.port,
        )
    except ValueError as error:
        parser.error(str(error))
    stop = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    try:
        url = proxy.start()
    except OSError as error:
        print(f"error: {error}", file=sys.stderr)
        return 3
    try:
        if args.profile is not None:
            try:
                write_proxied_profile(args.profile, args.profile_out, url)
            except (OSError, ValueError, tomllib.TOMLDecodeError) as error:
                print(f"error: cannot rewrite {args.profile}: {error}", file=sys.stderr)
                return 2
        print(url, flush=True)
        while not stop.wait(0.5):
            pass
        return 0
    finally:
        proxy.close()


if __name__ == "__main__":
    sys.exit(main())
