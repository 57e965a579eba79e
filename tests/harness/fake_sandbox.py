"""A stand-in for `python -m delivery_sandbox` in the launcher and CLI self-tests.

Same arguments as the sandbox (`--host --port --profile-out --versions --fault`) plus `--mode`:
  good   answers GET /api/delivery/v1/config with JSON and the common headers
  html   answers every request with an HTML page
  exit   prints a line and exits 4 before writing a profile
  mute   writes a profile but never answers (the port is closed)
It stops by itself after 60 s so it can never outlive a test run.
"""

from __future__ import annotations

import argparse
import json
import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

KEY = "svc_live_" + "f0" * 16
LIFETIME = 60.0


def profile_text(base_url: str) -> str:
    return f'base_url = "{base_url}"\ntest_organisation = true\n[keys]\nfilms = "{KEY}"\n'


class Handler(BaseHTTPRequestHandler):
    mode = "good"

    def do_GET(self) -> None:
        if self.mode == "html":
            body, kind = b"<html><body>Welcome to nginx</body></html>", "text/html"
        else:
            body, kind = json.dumps({"api": {"status": "beta"}}).encode(), "application/json"
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Service-API-Status", "beta")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--profile-out", type=Path, required=True)
    parser.add_argument("--versions", default="spec")
    parser.add_argument("--fault", action="append", default=[])
    parser.add_argument("--mode", default="good")
    args = parser.parse_args()
    if args.mode == "exit":
        print("fake sandbox: cannot bind the port", flush=True)
        return 4
    if args.mode == "mute":
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        args.profile_out.write_text(profile_text(f"http://127.0.0.1:{port}"))
        threading.Event().wait(LIFETIME)
        return 0
    Handler.mode = args.mode
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    host, port = server.server_address[:2]
    args.profile_out.write_text(profile_text(f"http://{host}:{port}"))
    threading.Timer(LIFETIME, server.shutdown).start()
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
