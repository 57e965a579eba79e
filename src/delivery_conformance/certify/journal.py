"""The proxy's journal: one JSON object per exchange, one line each, flushed as written.

Every entry is redacted before it is written (spec: Authentication; Playback ticket; Creative
record `final.file_url`; Open video row `mp4`): keys, tokens and signed links never reach the
file. The exact secrets the proxy saw are kept apart, in memory only (`SecretBook`), so the
runner can search the client's own output and state for them (CLI-032, CLI-040, CLI-041).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from delivery_conformance.evidence.exchange import Exchange
from delivery_conformance.evidence.redact import Redactor

__all__ = ["Entry", "Journal", "SecretBook", "read_journal"]

# Secret kinds and the client requirement a leak of each breaks ("" : charged to no rule).
LEAK_RULES = {
    "play_auth_token": "CLI-041",
    "manifest_url": "CLI-041",
    "file_url": "CLI-032",
    "signed_link": "CLI-032",
    "poster_link": "CLI-039",
    "download_link": "CLI-033",
    "video_link": "CLI-040",
    "api_key": "",
}
_TICKET_FIELDS = {"play_auth_token": "play_auth_token", "manifest_url": "manifest_url"}
# `_walk` names a value by its own key: an open video row's `mp4.p480` is "p480"
_LINK_FIELDS = {"file_url": "file_url", "poster_signed_url": "poster_link", "url": "signed_link",
                "p480": "video_link", "p720": "video_link"}  # fmt: skip
_LINK = re.compile(r"https?://[^\s\"'<>\\\x00-\x1f]+")


@dataclass(frozen=True)
class Entry:
    """One exchange as the proxy saw it (already redacted)."""

    seq: int
    connection: int
    started: float  # monotonic seconds, request head received
    ended: float  # monotonic seconds, last byte of the answer handed to the client
    wall: float  # epoch seconds at `started`
    method: str
    path: str  # path under the proxy, e.g. /api/delivery/v1/catalog
    query: Mapping[str, str]
    request_headers: Mapping[str, str]
    request_body: str
    status: int | None
    response_headers: Mapping[str, str]
    response_body: str
    latency: float  # seconds spent upstream (0 when the proxy answered alone)
    injected: str = ""  # what the proxy did instead of or on top of forwarding
    phase: int = 0  # which run of the flow (1-based) sent it
    notes: tuple[str, ...] = ()  # what the proxy noticed (e.g. an unknown cursor)
    key_id: str = ""  # a short fingerprint of the key sent (never the key)
    error: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)  # parsed request facts for judges

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["notes"] = list(self.notes)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Entry:
        values = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        values["notes"] = tuple(values.get("notes", ()))
        return cls(**values)

    def exchange(self, base: str = "http://proxy") -> Exchange:
        query = "&".join(f"{k}={v}" for k, v in self.query.items())
        return Exchange(
            method=self.method,
            url=base + self.path + (f"?{query}" if query else ""),
            request_headers=dict(self.request_headers),
            request_body=self.request_body,
            status=self.status,
            response_headers=dict(self.response_headers),
            response_body=self.response_body,
            elapsed=round(self.ended - self.started, 6),
            started_at=self.wall,
            error=self.error,
        )

    def line(self) -> str:
        what = f" [{self.injected}]" if self.injected else ""
        return f"#{self.seq} {self.method} {self.path} -> {self.status}{what}"


class SecretBook:
    """Exact secret values seen through the proxy, by kind. Never written anywhere."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.values: dict[str, str] = {}  # value -> kind

    def add(self, value: Any, kind: str) -> None:
        if isinstance(value, str) and len(value) >= 8:
            with self._lock:
                self.values.setdefault(value, kind)

    def add_key(self, authorization: str | None) -> None:
        if authorization and authorization.lower().startswith("bearer "):
            self.add(authorization[7:].strip(), "api_key")

    def add_body(self, body: Any) -> None:
        """Learn tickets and links from a parsed JSON answer."""
        for name, value in _walk(body):
            if name in _TICKET_FIELDS:
                self.add(value, _TICKET_FIELDS[name])
            elif name in _LINK_FIELDS and isinstance(value, str) and "://" in value:
                self.add(value, _LINK_FIELDS[name])

    def leaks(self, text: str) -> list[tuple[str, str]]:
        """(kind, masked value) for each known secret found in `text`."""
        with self._lock:
            items = list(self.values.items())
        return [(kind, value[:6] + "…") for value, kind in items if value in text]

    def stored(self, raw: bytes, kinds: Iterable[str]) -> list[tuple[str, str]]:
        """(kind, masked value) for each known link of `kinds` kept in `raw` (a file of the
        client's state): links are picked out by pattern, then looked up, so a large file costs
        one scan, not one per secret."""
        wanted = set(kinds)
        with self._lock:
            values = {v: k for v, k in self.values.items() if k in wanted}
        found = {m for m in _LINK.findall(raw.decode("latin-1")) if m in values}
        return [(values[v], "{}://{}/…".format(*urlsplit(v)[:2])) for v in sorted(found)]

    def redactor(self) -> Redactor:
        with self._lock:
            return Redactor(self.values)


def _walk(value: Any, name: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _walk(item, str(key))
    elif isinstance(value, list):
        for item in value:
            yield from _walk(item, name)
    else:
        yield name, value


class Journal:
    """Append-only JSON Lines file, one flushed line per entry, readable while it grows."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._entries: list[Entry] = []
        self._file: IO[str] | None = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._file = path.open("a", encoding="utf-8")

    def next_seq(self) -> int:
        with self._lock:
            return len(self._entries) + 1

    def write(self, entry: Entry) -> None:
        with self._lock:
            self._entries.append(entry)
            if self._file is not None:
                self._file.write(json.dumps(entry.to_dict(), ensure_ascii=False) + "\n")
                self._file.flush()

    def entries(self) -> list[Entry]:
        with self._lock:
            return list(self._entries)

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


def read_journal(path: Path) -> list[Entry]:
    """Entries of a journal file (a line cut short by a running writer is skipped)."""
    entries = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            entries.append(Entry.from_dict(json.loads(line)))
        except (ValueError, TypeError, KeyError):
            continue
    return entries
