"""`delivery-sandbox`: start the sandbox and write its target profile (ARCHITECTURE.md > Target
profile).

    delivery-sandbox --host 127.0.0.1 --port PORT --profile-out FILE [--fault NAME ...]
                     [--variant NAME ...] [--list-variants] [--limits-scale X]
                     [--versions spec|extended] [--admin-token T] [--tenants N]

`--port 0` picks a free port. Bad arguments: one line on stderr, exit 2. SIGINT/SIGTERM: clean
exit 0.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import socket
import sys
from pathlib import Path
from typing import Any, NoReturn

from delivery_sandbox import __version__
from delivery_sandbox.app import SandboxApp
from delivery_sandbox.control.profile import render_profile, write_profile
from delivery_sandbox.faults.registry import FAULTS
from delivery_sandbox.http.versions import VersionSetName
from delivery_sandbox.state.accounts import MAX_TENANTS
from delivery_sandbox.state.context import Sandbox, Settings, build_sandbox
from delivery_sandbox.variants.catalogue import VariantName, VariantSet

__all__ = ["main"]

EXIT_USAGE = 2
EXIT_START = 3


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"delivery-sandbox: {message}\n")


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0 or value != value or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number: {text!r}")
    return value


def _tenants(text: str) -> int:
    if not text.isdigit() or int(text) > MAX_TENANTS:
        raise argparse.ArgumentTypeError(f"tenants: a whole number 0 to {MAX_TENANTS}: {text!r}")
    return int(text)


def _port(text: str) -> int:
    if not text.isdigit() or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}")
    return int(text)


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="delivery-sandbox", description="Delivery API v1 reference sandbox")
    p.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default %(default)s)")
    p.add_argument(
        "--port", type=_port, default=8123, help="port to listen on; 0 picks a free one (8123)"
    )
    p.add_argument(
        "--profile-out",
        type=Path,
        default=None,
        metavar="FILE",
        help="write the target profile (keys, fixtures, admin token) there once listening",
    )
    p.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="NAME",
        help="switch a named fault on from the start (repeatable; docs/sandbox.md lists them)",
    )
    p.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME",
        help="play a legal variant: a behaviour the spec allows that the default sandbox does not"
        " show (repeatable; --list-variants names them)",
    )
    p.add_argument(
        "--list-variants",
        action="store_true",
        help="print the legal variants as JSON (name, allowed_by, summary, seam) and exit",
    )
    p.add_argument(
        "--limits-scale",
        type=_positive,
        default=1.0,
        metavar="X",
        help="multiply every rate limit by X, e.g. 0.05 for quick load runs (default 1)",
    )
    p.add_argument(
        "--versions",
        choices=[v.value for v in VersionSetName],
        default="spec",
        help="dated versions served: the spec's one, or extended with a retired and a deprecated"
        " one to exercise version errors and headers (default spec)",
    )
    p.add_argument(
        "--tenants",
        type=_tenants,
        default=0,
        metavar="N",
        help="N more test organisations (roles tenant_01..) and an idle one (tenant_idle), each "
        "with its own counters, listed in the profile's [tenants] (the tenants load campaign)",
    )
    p.add_argument(
        "--admin-token",
        default=None,
        metavar="TOKEN",
        help="Bearer token of the admin API under /_sandbox/ (default: a random one)",
    )
    return p


async def _serve(
    app: SandboxApp, sock: socket.socket, profile_out: Path | None, base_url: str
) -> None:
    import uvicorn

    from delivery_sandbox.http.transport import (
        CoalescingHttpToolsProtocol,
        HeaderSpellingHttpToolsProtocol,
    )
    from delivery_sandbox.variants.wire import spells_headers

    spelled = spells_headers(app.sandbox.variants)  # uvicorn alone writes names in lower case
    config = uvicorn.Config(
        app,
        http=HeaderSpellingHttpToolsProtocol if spelled else CoalescingHttpToolsProtocol,
        loop="uvloop",
        access_log=False,
        lifespan="off",
        log_level="warning",
        server_header=False,
        date_header=False,
        # idle keep-alive connections are kept 75 s (uvicorn's default is 5 s): a client that
        # pauses a few seconds between requests (pacing, a busy machine) reuses its connection
        # instead of racing the close
        timeout_keep_alive=75,
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started and not task.done():
        await asyncio.sleep(0.01)
    if server.started and profile_out is not None:
        write_profile(profile_out, render_profile(app.sandbox, base_url))
    if server.started:
        print(banner(app.sandbox, base_url, profile_out), flush=True)
    await task


def banner(sb: Sandbox, base_url: str, profile_out: Path | None) -> str:
    """One paragraph a person reads at start: where to call, where the keys are, what is on."""
    settings = sb.settings
    where = (
        f"profile (keys, fixtures, admin token): {profile_out}"
        if profile_out
        else ("no profile written (--profile-out FILE writes the keys, fixtures and admin token)")
    )
    faults = ", ".join(settings.faults) or "none"
    variants = ", ".join(settings.variants) or "none"
    return "\n".join(
        (
            f"delivery-sandbox: Delivery API v1 at {base_url}/api/delivery/v1/",
            f"  admin API: {base_url}/_sandbox/ (its Bearer token is in the profile)",
            f"  {where}",
            f"  versions {settings.versions.value}; limits x{settings.limits_scale:g}; "
            f"faults: {faults}; variants: {variants}"
            + (f"; tenants: {settings.tenants} and an idle one" if settings.tenants else ""),
            "  seed data fixed (same ids at every start, new keys)",
            "  stop: Ctrl-C or SIGTERM",
        )
    )


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.list_variants:
        print(json.dumps(VariantSet().catalogue(), indent=1))
        return 0
    unknown = [name for name in args.fault if name not in FAULTS]
    if unknown:
        print(f"delivery-sandbox: unknown fault: {', '.join(unknown)}", file=sys.stderr)
        return EXIT_USAGE
    unknown = [name for name in args.variant if name not in VariantName.__members__]
    if unknown:
        print(f"delivery-sandbox: unknown variant: {', '.join(unknown)}", file=sys.stderr)
        return EXIT_USAGE
    if args.profile_out is not None and not args.profile_out.parent.is_dir():
        print(f"delivery-sandbox: no such directory: {args.profile_out.parent}", file=sys.stderr)
        return EXIT_USAGE
    settings = Settings(
        faults=tuple(args.fault),
        variants=tuple(dict.fromkeys(args.variant)),
        limits_scale=args.limits_scale,
        versions=VersionSetName(args.versions),
        admin_token=args.admin_token,
        tenants=args.tenants,
    )
    try:
        sock = socket.socket(socket.AF_INET6 if ":" in args.host else socket.AF_INET)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((args.host, args.port))
        sock.listen(2048)
    except OSError as exc:
        print(
            f"delivery-sandbox: cannot listen on {args.host}:{args.port}: {exc.strerror}",
            file=sys.stderr,
        )
        return EXIT_START
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    app = SandboxApp(build_sandbox(settings))
    try:
        import uvloop

        loop_factory: Any = uvloop.new_event_loop
    except ImportError:
        loop_factory = None
    # uvicorn shuts down on SIGINT/SIGTERM, then raises the signal again under the previous
    # handlers: make those a clean exit.
    signal.signal(signal.SIGTERM, lambda *_: None)
    with (
        contextlib.suppress(KeyboardInterrupt),
        asyncio.Runner(loop_factory=loop_factory) as runner,
    ):
        runner.run(_serve(app, sock, args.profile_out, f"http://{shown}:{port}"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
