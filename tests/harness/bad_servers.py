"""Tiny misbehaving servers on 127.0.0.1 for the bad-target self-tests, one thread per connection.

    with BadServer("trickle") as base_url: ...

Kinds (each reads the request first, then):
  trickle       sends a valid JSON answer from its first byte on, 4 bytes every 0.5 s (~60 s)
  trickle_body  sends the status line and headers at once, then the body 4 bytes every 0.5 s
  hang          sends nothing and keeps the connection open
  html          answers 200 with an HTML page
  garbage       answers bytes that are not HTTP, then closes
  reset         closes at once with a TCP reset (SO_LINGER 0)
  drops_first   closes its first connection after reading the request, with no answer (an idle
                connection the server dropped as the request left); answers the others
  drops         closes every connection after reading the request, with no answer
A `refused` target needs no server: a port nothing listens on (`closed_port`).
Every wait is bounded by `LIFETIME` and by the server's stop event, so no thread outlives a test.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
from types import TracebackType

KINDS = ("trickle", "trickle_body", "hang", "html", "garbage", "reset", "drops_first", "drops")
LIFETIME = 90.0
TRICKLE_BYTES = 4
TRICKLE_EVERY = 0.5


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _json_answer() -> tuple[bytes, bytes]:
    body = json.dumps({"api": {"status": "beta", "padding": "x" * 400}}).encode()
    head = (
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nService-API-Status: beta\r\n\r\n"
    ).encode()
    return head, body


class BadServer:
    def __init__(self, kind: str) -> None:
        if kind not in KINDS:
            raise ValueError(f"unknown bad server kind {kind!r}")
        self.kind = kind
        self.connections = 0
        self._stop = threading.Event()
        self._listener = socket.socket()
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(16)
        self._listener.settimeout(0.2)
        self._threads: list[threading.Thread] = []

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    def __enter__(self) -> str:
        accept = threading.Thread(target=self._accept, daemon=True)
        accept.start()
        self._threads.append(accept)
        return self.base_url

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=2.0)
        self._listener.close()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.connections += 1
            first = self.connections == 1
            worker = threading.Thread(target=self._serve, args=(conn, first), daemon=True)
            worker.start()
            self._threads.append(worker)

    def _read_request(self, conn: socket.socket) -> None:
        conn.settimeout(5.0)
        data = b""
        while b"\r\n\r\n" not in data and len(data) < 65536:
            chunk = conn.recv(4096)
            if not chunk:
                return
            data += chunk

    def _trickle(self, conn: socket.socket, payload: bytes) -> None:
        for start in range(0, len(payload), TRICKLE_BYTES):
            if self._stop.wait(TRICKLE_EVERY):
                return
            conn.sendall(payload[start : start + TRICKLE_BYTES])

    def _serve(self, conn: socket.socket, first: bool) -> None:
        try:
            with conn:
                if self.kind == "reset":
                    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    return
                self._read_request(conn)
                head, body = _json_answer()
                if self.kind in ("drops_first", "drops"):
                    if self.kind == "drops_first" and not first:
                        conn.sendall(head + body)
                elif self.kind == "trickle":
                    self._trickle(conn, head + body)
                elif self.kind == "trickle_body":
                    conn.sendall(head)
                    self._trickle(conn, body)
                elif self.kind == "hang":
                    self._stop.wait(LIFETIME)
                elif self.kind == "html":
                    page = b"<html><body>Welcome to nginx</body></html>"
                    conn.sendall(
                        b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: "
                        + str(len(page)).encode() + b"\r\n\r\n" + page
                    )  # fmt: skip
                elif self.kind == "garbage":
                    conn.sendall(b"\x00\xffSSH-2.0-OpenSSH_9.6 not http at all\r\n\x07\x08")
        except OSError:
            pass  # the client gave up: that is what the tests want
