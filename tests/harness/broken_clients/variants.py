"""Broken clients: the reference client with one rule broken, each with the requirement IDs a
certification must charge it to (and nothing else).

Most flip one knob of `delivery_client.knobs.Policy`; a few are tiny wrappers where the reference
client has no knob (a retry profile figure, a careless log line, a strict parser). `apply(name)`
installs the variant in the current process before `delivery_client.cli.main` runs.
"""

from __future__ import annotations

import json
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

__all__ = ["VARIANTS", "Variant", "apply"]


@dataclass(frozen=True)
class Variant:
    name: str
    charged: frozenset[str]  # the requirement IDs the certification must fail, exactly
    what: str
    knobs: dict[str, Any] = field(default_factory=dict)
    patch: Callable[[], None] | None = None
    quick: str = ""  # the quick scenario that catches it (the make test form), if any


def _profile(name: str, **values: float) -> Callable[[], None]:
    def patch() -> None:
        from delivery_client import policy

        profile = getattr(policy, name)
        for attr, value in values.items():
            object.__setattr__(profile, attr, value)  # the one shared profile object

    return patch


def _log_play_token() -> None:
    from delivery_client import playback

    original = playback._ticket

    def careless(item: Any) -> Any:
        ticket = original(item)
        print(f"got ticket {ticket.play_auth_token} for {ticket.manifest_url}", file=sys.stderr)
        return ticket

    playback._ticket = careless


def _log_file_url() -> None:
    from delivery_client import creatives

    original = creatives._record

    def careless(item: Any) -> Any:
        final = item.get("final") if isinstance(item, dict) else None
        if isinstance(final, dict) and final.get("file_url"):
            print(f"final file {final['file_url']}", file=sys.stderr)
        return original(item)

    creatives._record = careless


def _keep_links(kind: str) -> Callable[[], None]:
    """A client that keeps the short-lived links of one kind of answer (no knob scopes
    `store_links` to one flow): playlist images and clip posters, or catalog episode posters."""

    def patch() -> None:
        from delivery_client import catalog, listings

        if kind == "playlists":
            original = listings.DETAILS["playlists"]
            listings.DETAILS["playlists"] = lambda data, store_links: original(data, True)
        else:
            catalog.strip_film = lambda film, episodes: (film, episodes)  # type: ignore[assignment,return-value]

    return patch


def _store_download_link() -> None:
    from delivery_client import creatives

    original = creatives._fetch

    def keeping(client: Any, url: Any, out: Path, how: str) -> str:
        if isinstance(url, str):
            out.with_name(out.name + ".link").write_text(url, encoding="utf-8")
        return original(client, url, out, how)

    creatives._fetch = keeping


def _no_rights_grace() -> None:
    from delivery_client import rules, state

    original = rules.usable
    state.usable = lambda creative, now, grace=86_400: original(creative, now, 0)  # type: ignore[attr-defined]


def _browser_headers() -> None:
    from delivery_client import client

    original = client.DeliveryClient.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        self._http.headers.update({"Origin": "https://app.example", "Sec-Fetch-Mode": "cors"})

    client.DeliveryClient.__init__ = init  # type: ignore[method-assign]


def _strict_reasons() -> None:
    """A client that refuses a not_entitled reason outside the five the spec lists today."""
    from delivery_client import client

    known = {"org_suspended", "entitlement_not_found", "entitlement_suspended",
             "streaming_disabled", "outside_window"}  # fmt: skip
    original = client._parse

    def strict(content: bytes) -> Any:
        parsed = original(content)
        items = parsed.get("items") if isinstance(parsed, dict) else None
        for item in items if isinstance(items, list) else []:
            entitled = not isinstance(item, dict) or item.get("error_code") != "not_entitled"
            if not entitled and item.get("reason") not in known:
                raise ValueError(f"unexpected not_entitled reason {item.get('reason')}")
        return parsed

    client._parse = strict


def _openapi_words() -> tuple[set[str], set[str]]:
    spec = Path(__file__).resolve().parents[3] / "spec" / "openapi.yaml"
    names: set[str] = set()
    enums: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            props = node.get("properties")
            if isinstance(props, dict):
                names.update(props)
            if isinstance(node.get("enum"), list):
                enums.update(str(v) for v in node["enum"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(yaml.safe_load(spec.read_text(encoding="utf-8")))
    return names, enums


def _items(data: Any) -> Any:
    return data.get("items") if isinstance(data, dict) else None


def _strict(kind: str) -> Callable[[], None]:
    """A client that refuses answers with a field (or a status value) it was not built for."""

    def patch() -> None:
        from delivery_client import catalog, client

        names, enums = _openapi_words()
        original = client._parse

        def records(body: Any) -> list[dict[str, Any]]:
            if not isinstance(body, dict):
                return []
            found = [body]
            data = body.get("data")
            for rows in (body.get("films"), body.get("episodes"), _items(data)):
                # the records it was built for: catalog films and episodes, creative records
                found += [r for r in rows or [] if isinstance(r, dict)
                          and (rows is not _items(data) or "creative_id" in r)]  # fmt: skip
            return found

        def check(body: Any) -> None:
            for record in records(body):
                for key, value in record.items():
                    if kind == "fields" and key not in names:
                        raise ValueError(f"unexpected field {key}")
                    if kind == "enums" and key == "status" and isinstance(value, str) and \
                            value not in enums:  # fmt: skip
                        raise ValueError(f"unexpected status {value}")

        def strict(content: bytes) -> Any:
            parsed = original(content)
            check(parsed)
            return parsed

        def strict_loads(text: Any, **kw: Any) -> Any:
            parsed = json.loads(text, **kw)
            check(parsed)
            return parsed

        client._parse = strict
        catalog.json = types.SimpleNamespace(loads=strict_loads)

    return patch


def _v(
    name: str, rules: str, what: str, patch: Callable[[], None] | None = None, quick: str = "",
    **knobs: Any,
) -> Variant:  # fmt: skip
    """One variant on a line or two: `rules` are the charged IDs, space separated."""
    return Variant(name, frozenset(rules.split()), what, knobs, patch, quick)


_MORE = (
    _v("exceeds_background_total", "CLI-022", "background calls may take 150 s",
       _profile("BACKGROUND", total=150.0)),
    _v("rereads_unchanged_series", "CLI-035", "reads every series detail on every sync",
       skip_unchanged_series=False),
    _v("stores_playlist_links", "CLI-038", "keeps playlist image and clip poster links",
       _keep_links("playlists")),
    _v("stores_poster_links", "CLI-039 CAT-078", "keeps episode poster_signed_url links",
       _keep_links("catalog")),
    _v("forgets_vid_ready", "CAT-078", "stores vid_ready null when an answer carries null",
       keep_vid_ready_when_null=False),
    _v("no_reread_on_gone", "CLI-031", "a 410 file link: goes to /file instead of reading "
       "the creative", reread_on_gone=False),
    _v("stores_download_link", "CLI-033", "writes the download link beside the file",
       _store_download_link),
    _v("stops_at_rights_end", "CLI-034", "stops using a creative at rights.ends_at (last day "
       "lost)", _no_rights_grace),
    _v("pages_the_catalog", "CLI-043", "syncs the catalog by pages", prefer_unpaged=False),
    _v("polls_every_few_seconds", "CLI-048", "catalog walks 5 s apart", min_poll_interval=5.0),
    _v("refuses_unknown_reason", "PLAY-084", "refuses a not_entitled reason it does not know",
       _strict_reasons),
    _v("sends_browser_headers", "GEN-009", "sends Origin and Sec-Fetch-Mode (a browser's call)",
       _browser_headers, quick="backend-only"),
)  # fmt: skip

VARIANTS = {
    v.name: v
    for v in (
        Variant(
            "retries_4xx",
            frozenset({"CLI-012", "ERR-018", "CLI-031"}),
            "retries a 400 (and a 410 file link, so never reads the creative again)",
            {"retry_4xx": True},
            quick="no-retry-400",
        ),
        Variant(
            "ignores_retry_after",
            frozenset({"CLI-013", "CLI-025"}),
            "ignores Retry-After",
            {"honour_retry_after": False},
            quick="retry-429-retry-after",
        ),
        Variant(
            "no_jitter",
            frozenset({"CLI-013"}),
            "no random 0 to 1 s on Retry-After",
            {"retry_after_jitter": 0.0},
        ),
        Variant(
            "retries_too_fast",
            frozenset({"CLI-014"}),
            "backoff 50 x too short",
            {"backoff_multiplier": 0.02},
        ),
        Variant(
            "too_many_retries_interactive",
            frozenset({"CLI-017"}),
            "interactive calls retried 6 times",
            patch=_profile("INTERACTIVE", max_retries=6),
        ),
        Variant(
            "too_many_retries_background",
            frozenset({"CLI-021"}),
            "background calls retried 8 times",
            patch=_profile("BACKGROUND", max_retries=8),
        ),
        Variant(
            "exceeds_total_budget",
            frozenset({"CLI-018"}),
            "interactive calls may take 60 s",
            patch=_profile("INTERACTIVE", total=60.0),
        ),
        Variant(
            "short_attempt_timeout",
            frozenset({"CLI-016"}),
            "interactive attempt timeout 2 s (floor lowered too)",
            {"min_attempt_timeout": 2.0},
            patch=_profile("INTERACTIVE", attempt_timeout=2.0),
        ),
        Variant(
            "no_retry_budget",
            frozenset({"CLI-023"}),
            "no process retry budget",
            {"use_retry_budget": False},
        ),
        Variant(
            "rewrites_cursor",
            frozenset({"CLI-026", "PAGE-003"}),
            "URL-unquotes the cursor",
            {"cursor_verbatim": False},
        ),
        Variant(
            "stops_on_short_page",
            frozenset({"CLI-027", "PAGE-004"}),
            "stops on an empty page",
            {"stop_on_short_page": True},
            quick="paging-catalog-empty-page",
        ),
        Variant(
            "ignores_links_next",
            frozenset({"CLI-028", "PAGE-013"}),
            "stops after page one",
            {"follow_links_next": False},
        ),
        Variant(
            "moves_updated_since",
            frozenset({"CLI-029"}),
            "asks each page from its own last record",
            {"keep_updated_since": False},
        ),
        Variant(
            "duplicates_creatives",
            frozenset({"CLI-030"}),
            "appends records returned again",
            {"upsert_creatives": False},
        ),
        Variant(
            "resends_whole_batch",
            frozenset({"CLI-025"}),
            "resends the whole batch",
            {"batch_retry_failed_only": False},
            quick="batch-failed-item",
        ),
        Variant(
            "batch_item_at_once",
            frozenset({"CLI-025"}),
            "retries a failed item at once",
            {"batch_item_retry_after": False},
        ),
        Variant(
            "withdraws_after_incomplete_walk",
            frozenset({"CLI-045", "CAT-066"}),
            "applies a walk that failed half way",
            {"withdraw_only_after_complete_walk": False},
        ),
        Variant(
            "unavailable_after_one_walk",
            frozenset({"CLI-046", "CAT-066"}),
            "marks a film unavailable after one walk",
            {"walks_before_unavailable": 1},
        ),
        Variant(
            "keeps_first_copy",
            frozenset({"CLI-044", "CAT-066"}),
            "keeps the first copy of a film",
            {"dedupe_later_wins": False},
        ),
        Variant(
            "logs_play_token",
            frozenset({"CLI-041"}),
            "prints play_auth_token",
            patch=_log_play_token,
            quick="secrets-play-token",
        ),
        Variant(
            "logs_file_url", frozenset({"CLI-032"}), "prints final.file_url", patch=_log_file_url
        ),
        Variant(
            "retries_not_ready_now",
            frozenset({"CLI-011"}),
            "retries not_ready at once",
            {"retry_not_ready_now": True},
            quick="retry-not-ready",
        ),
        Variant(
            "rotates_key_on_503",
            frozenset({"CLI-042"}),
            "treats 5031 as a revoked key",
            {"treat_key_503_as_revoked": True},
        ),
        Variant(
            "crashes_on_unknown_field",
            frozenset({"CLI-001", "CFG-027", "GEN-010"}),
            "refuses fields it does not know",
            patch=_strict("fields"),
            quick="tolerate-unknown-fields-catalog",
        ),
        Variant(
            "crashes_on_unknown_enum",
            frozenset({"CLI-002", "GEN-010"}),
            "refuses status values it does not know",
            patch=_strict("enums"),
        ),
        Variant(
            "no_retry_on_network_error",
            frozenset({"CLI-007"}),
            "network errors and timeouts not retried",
            {"retry_transport_errors": False},
        ),
        Variant("no_retry_on_429", frozenset({"CLI-008"}), "429 not retried", {"retry_429": False}),
        Variant(
            "no_retry_on_5xx",
            frozenset({"CLI-010", "CLI-005", "ERR-010", "GEN-010"}),
            "500/502/5xx not retried",
            {"retry_5xx": False},
        ),
        Variant(
            "no_retry_on_503_unavailable",
            frozenset({"CLI-009", "CLI-042", "CLI-025"}),
            "503 service_unavailable not retried",
            {"retry_503_unavailable": False},
        ),
        *_MORE,
        Variant(
            "unknown_codes_not_by_class",
            frozenset({"CLI-005", "ERR-010", "GEN-010"}),
            "unknown 5xx codes not retried",
            {"unknown_codes_by_class": False},
        ),
    )
}


def apply(name: str) -> None:
    variant = VARIANTS[name]
    if variant.knobs:
        from delivery_client import cli, knobs

        policy = replace(knobs.DEFAULT_POLICY, **variant.knobs)
        original = cli.DeliveryClient

        def forced(*args: Any, **kwargs: Any) -> Any:
            kwargs["policy"] = policy  # whatever policy the CLI itself would pass
            return original(*args, **kwargs)

        cli.DeliveryClient = forced  # type: ignore[misc,assignment]
    if variant.patch is not None:
        variant.patch()
