"""`delivery-client`: the reference client's flows from a shell.

    delivery-client [--base-url URL] [--api-key KEY] [--state PATH] [--export-state PATH|-]
                    [--display-lang LANG] [--deadline S] [--simulate NAME]
                    [--service-version DATE] [-v|-q] COMMAND

Commands: sync-catalog [--paged], watch --walks N [--interval S], sync-creatives, sync-series,
sync-playlists, play EPISODE_ID... [--union-info V --drm-kek V] [--intent I]
[--viewer-ref R | --viewer ACCOUNT], config, videos [--collection C] [--follow S [--every S]]
(with --follow: keeps the list current S seconds, as a player asking every S; counts only),
download CREATIVE_ID --out FILE, export.
`DELIVERY_BASE_URL` and `DELIVERY_API_KEY` come from the environment unless the flags are given.
Results go to stdout as JSON, progress to stderr; no key, token or link is ever printed.

Exit codes: 0 done; 2 bad usage or environment; 3 deadline passed (`--deadline`, default 900 s);
4 an answer the retry policy does not retry (4xx, 503 not_ready, a redirect); 5 retries, time or the
retry budget ran out, or no answer at all; 6 an answer that cannot be read (not JSON, wrong
shape, looping cursor); 7 the state file cannot be opened or written; 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any, NoReturn

from delivery_client import __version__
from delivery_client.client import DeliveryClient
from delivery_client.creatives import download_final, sync_creatives
from delivery_client.exceptions import ClientError, UsageError
from delivery_client.listings import sync_playlists, sync_series
from delivery_client.playback import new_viewer_ref, play
from delivery_client.redact import SecretFilter, redactor
from delivery_client.state import State
from delivery_client.sync import read_config, sync_catalog, watch_catalog
from delivery_client.videos import VideoFeed, fetch_videos, follow_videos

__all__ = ["EXIT_DEADLINE", "main"]

EXIT_DEADLINE = 3
log = logging.getLogger("delivery_client")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"usage: {message} (see delivery-client --help)")


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="delivery-client", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument(
        "--base-url",
        default=os.environ.get("DELIVERY_BASE_URL"),
        help="server root, e.g. https://www.example.com (default: $DELIVERY_BASE_URL)",
    )
    parser.add_argument(
        "--api-key",
        default=os.environ.get("DELIVERY_API_KEY"),
        help="API key (default: $DELIVERY_API_KEY; never printed)",
    )
    parser.add_argument(
        "--state",
        type=Path,
        default=Path("delivery-client.sqlite"),
        help="SQLite file holding the synced view (default: %(default)s)",
    )
    parser.add_argument(
        "--export-state", metavar="PATH", help="write the view as JSON (- = stdout)"
    )
    parser.add_argument(
        "--display-lang",
        default="en",
        metavar="BCP47",
        help="language the exported titles are shown in (missing: the en text; default en)",
    )
    parser.add_argument("--deadline", type=float, default=900.0, help="seconds for the command")
    parser.add_argument("--simulate", help="Service-Simulate scenario (test organisations)")
    parser.add_argument("--service-version", help="Service-Version for every request")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug lines on stderr")
    parser.add_argument("-q", "--quiet", action="store_true", help="warnings only on stderr")
    commands = parser.add_subparsers(dest="command", required=True)
    catalog = commands.add_parser("sync-catalog", help="one safe catalog walk")
    catalog.add_argument("--paged", action="store_true", help="walk pages instead of one response")
    watch = commands.add_parser("watch", help="catalog walks on a schedule of minutes")
    watch.add_argument("--walks", type=int, required=True, help="how many walks, then stop")
    watch.add_argument(
        "--interval", type=float, default=300.0, help="seconds between walks (default 300)"
    )
    watch.add_argument("--paged", action="store_true", help="walk pages instead of one response")
    commands.add_parser("sync-creatives", help="one incremental creatives walk")
    commands.add_parser("sync-series", help="series list, details only when changed")
    commands.add_parser("sync-playlists", help="playlists list, details only when changed")
    playing = commands.add_parser("play", help="tickets for 1 to 3 episodes")
    playing.add_argument("episode_ids", nargs="+", help="one to three episode ids")
    playing.add_argument("--union-info", help="device id from the player SDK (encrypted episodes)")
    playing.add_argument(
        "--drm-kek", help="device public key from the player SDK (with --union-info)"
    )
    playing.add_argument("--intent", default="play", help="play or prefetch (default play)")
    playing.add_argument("--viewer-ref", help="opaque viewer id (default: a random one)")
    playing.add_argument(
        "--viewer",
        metavar="ACCOUNT",
        help="the app's account of the viewer (personal data, never sent: the same account "
        "gets the same random viewer_ref, kept in the state)",
    )
    commands.add_parser("config", help="the configuration of the key")
    videos = commands.add_parser("videos", help="count the open videos (links are not printed)")
    videos.add_argument("--collection", help="one collection only (default: every granted one)")
    videos.add_argument(
        "--follow",
        type=float,
        metavar="SECONDS",
        help="keep the list current this long, as a player would, then print counts",
    )
    videos.add_argument(
        "--every",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="with --follow: how often the player asks for rows (default 5)",
    )
    download = commands.add_parser("download", help="the final MP4 of a creative")
    download.add_argument("creative_id", help="the creative whose final MP4 to fetch")
    download.add_argument("--out", type=Path, required=True, help="file to write the MP4 to")
    commands.add_parser("export", help="only write --export-state")
    return parser


def _client(args: argparse.Namespace) -> DeliveryClient:
    if not args.base_url or not args.base_url.startswith(("http://", "https://")):
        raise UsageError("set DELIVERY_BASE_URL or --base-url to an http(s) URL")
    if not args.api_key:
        raise UsageError("set DELIVERY_API_KEY or --api-key")
    return DeliveryClient(
        args.base_url,
        args.api_key,
        version=args.service_version,
        simulate=args.simulate,
    )


def _run(args: argparse.Namespace, state: State) -> Any:
    if args.command == "export":
        return None
    with _client(args) as client:
        if args.command == "sync-catalog":
            result = sync_catalog(client, state, paged=args.paged)
            log.info(
                "catalog walk complete: %d films, %d available, %d unavailable",
                result.films_seen,
                result.available,
                result.unavailable,
            )
            return result.__dict__
        if args.command == "watch":
            return _watch(client, state, args)
        if args.command == "sync-creatives":
            return sync_creatives(client, state).__dict__
        if args.command in ("sync-series", "sync-playlists"):
            flow = sync_series if args.command == "sync-series" else sync_playlists
            items, details = flow(client, state)
            return {"items": items, "detail_calls": details}
        if args.command == "play":
            device = {
                k: v for k, v in (("union_info", args.union_info), ("drm_kek", args.drm_kek)) if v
            }
            viewer = args.viewer_ref or (
                state.viewer_ref(args.viewer, lambda: new_viewer_ref(os.urandom(16)))
                if args.viewer
                else new_viewer_ref(os.urandom(16))
            )
            results = play(
                client,
                [{"episode_id": e} for e in args.episode_ids],
                device,
                intent=args.intent,
                viewer_ref=viewer,
            )
            state.record_tickets(
                [
                    (
                        str(r.request.get("episode_id")),
                        r.status,
                        r.ticket.protection if r.ticket else None,
                        r.ticket.expires_at if r.ticket else None,
                        r.ticket.sellable if r.ticket else False,
                    )
                    for r in results
                ]
            )
            return [
                {
                    "episode_id": r.request.get("episode_id"),
                    "status": r.status,
                    "code": r.code,
                    "tries": r.tries,
                    "protection": r.ticket.protection if r.ticket else None,
                    "expires_at": r.ticket.expires_at if r.ticket else None,
                    "sellable_as_paid": r.ticket.sellable if r.ticket else False,
                }
                for r in results
            ]
        if args.command == "config":
            return read_config(client)
        if args.command == "videos" and args.follow is not None:
            return _follow(client, args)
        if args.command == "videos":
            listed = fetch_videos(client, args.collection)
            stamp = listed.refresh_before
            return {
                "rows": len(listed.rows),
                "collections": sorted({str(r.get("collection")) for r in listed.rows}),
                "refresh_before": stamp.isoformat() if stamp else None,
            }
        how = download_final(client, state, args.creative_id, args.out)
        return {"creative_id": args.creative_id, "written": str(args.out), "via": how}


def _watch(client: DeliveryClient, state: State, args: argparse.Namespace) -> Any:
    if args.walks < 1:
        raise UsageError("--walks must be at least 1")
    results = watch_catalog(client, state, args.walks, args.interval, paged=args.paged)
    return [result.__dict__ for result in results]


def _follow(client: DeliveryClient, args: argparse.Namespace) -> Any:
    if not 0 < args.follow < args.deadline or args.every <= 0:
        raise UsageError("--follow must be positive and under --deadline; --every positive")
    feed = VideoFeed(client, args.collection)
    done = follow_videos(feed, args.follow, args.every, lambda: datetime.now(UTC), time.sleep)
    return done.__dict__ | {"collections": list(done.collections)}


class _Deadline(ClientError):
    exit_code = EXIT_DEADLINE


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise _Deadline("the deadline passed; the state was left as it was before this command")


def _export(state: State, target: str, display_lang: str) -> None:
    text = json.dumps(state.export(time.time(), display_lang), indent=2, sort_keys=True) + "\n"
    if target == "-":
        sys.stdout.write(text)
    else:
        Path(target).write_text(text, encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(SecretFilter())
    handler.setFormatter(logging.Formatter("delivery-client: %(message)s"))
    log.addHandler(handler)
    try:
        args = _parser().parse_args(argv)
        log.setLevel(
            logging.DEBUG if args.verbose else logging.WARNING if args.quiet else logging.INFO
        )
        if args.deadline <= 0:
            raise UsageError("--deadline must be positive")
        signal.signal(signal.SIGALRM, _alarm)  # the CLI runs in the main thread
        signal.setitimer(signal.ITIMER_REAL, args.deadline)
        state = State(args.state)
        try:
            result = _run(args, state)
            if result is not None:
                print(json.dumps(result, sort_keys=True))
            if args.export_state:
                _export(state, args.export_state, args.display_lang)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            state.close()
        return 0
    except ClientError as error:
        print(f"delivery-client: error: {redactor(str(error))}", file=sys.stderr)
        return error.exit_code
    except KeyboardInterrupt:
        print("delivery-client: interrupted; the state is as before this command", file=sys.stderr)
        return 130
    except OSError as error:
        print(f"delivery-client: error: {redactor(str(error))}", file=sys.stderr)
        return 7
    finally:
        log.removeHandler(handler)


if __name__ == "__main__":
    raise SystemExit(main())
