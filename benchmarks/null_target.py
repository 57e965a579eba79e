"""A target that costs next to nothing, to measure the load generator alone (generator.py).

Answers every HTTP/1.1 request on 127.0.0.1 at once, keep-alive, with a fixed 200 body that
satisfies the campaign's answer reader: a ticket (`expires_at`) for POST /playback, a /config
body advertising `--scale` x the spec's limits for a test organisation, `{}` for the admin API
and anything else. It never refuses, so a campaign against it measures only the generator's
schedule (its lateness), never a limit.

    python -m benchmarks.null_target --port 0 --scale 20 --port-file FILE
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import time
from pathlib import Path
from typing import Any, ClassVar

__all__ = ["main"]

LIMITS = {"playback": 10_800, "catalog": 3_000, "creatives": 3_000, "videos": 3_000, "config": 600}


def _response(body: bytes) -> bytes:
    head = (
        f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode()
    return head + body


def _answers(scale: float) -> dict[bytes, bytes]:
    doors = {
        name: {
            "limit": round(limit * scale),
            "unit": "tickets" if name == "playback" else "requests",
        }
        for name, limit in LIMITS.items()
    }
    config = {
        "key": {"test_organisation": True, "scopes": []},
        "rate_limits": {"window_seconds": 60, "doors": doors},
    }
    return {
        b"/api/delivery/v1/config": _response(json.dumps(config).encode()),
        b"/api/delivery/v1/playback": _response(b'{"expires_at":"2030-01-01T00:00:00Z"}'),
    }


class _Protocol(asyncio.Protocol):
    answers: ClassVar[dict[bytes, bytes]] = {}
    other = _response(b"{}")

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport: Any = transport  # uvloop's transport is no asyncio.Transport subclass
        self.buffer = b""

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        out = []
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                break
            head = self.buffer[:end]
            length = 0
            for line in head.split(b"\r\n")[1:]:
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:].strip())
            if len(self.buffer) < end + 4 + length:
                break
            path = head.split(b" ", 2)[1].split(b"?", 1)[0]
            if path.startswith(b"/_sandbox/state"):
                body = json.dumps({"clock": {"now": time.time()}}).encode()
                out.append(_response(body))
            else:
                out.append(self.answers.get(path, self.other))
            self.buffer = self.buffer[end + 4 + length :]
        if out:
            self.transport.write(b"".join(out))


async def _serve(port: int, scale: float, port_file: Path | None) -> None:
    _Protocol.answers = _answers(scale)
    server = await asyncio.get_running_loop().create_server(
        _Protocol, "127.0.0.1", port, backlog=2048
    )
    bound = server.sockets[0].getsockname()[1]
    if port_file is not None:
        port_file.write_text(str(bound))
    print(f"null target on http://127.0.0.1:{bound}", flush=True)
    async with server:
        await server.serve_forever()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="benchmarks.null_target")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--scale", type=float, default=1.0)
    p.add_argument("--port-file", type=Path, default=None)
    args = p.parse_args(argv)
    try:
        import uvloop

        uvloop.install()
    except ImportError:
        pass
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_serve(args.port, args.scale, args.port_file))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
