"""GET /config (spec: GET /config; Versioning 5).

The body depends on the key (scopes, pin, organisation limits) and on the version serving the
request; it is cached per (key record, version, base URL) until something changes. Faults act at
one step of the step seam (faults/steps.py: `bend`), the body as built.
"""

from __future__ import annotations

from typing import Any

import orjson

from delivery_sandbox.faults.steps import bend
from delivery_sandbox.http.headers import Call, Exchange, Reply
from delivery_sandbox.http.versions import date_epoch
from delivery_sandbox.state.accounts import Caller
from delivery_sandbox.state.context import Sandbox

__all__ = ["PLAYBACK_DOMAINS", "handle"]

PLAYBACK_DOMAINS = ["play.delivery.sandbox", "cdn.delivery.sandbox"]
PROTECTION = ["private-encrypted", "signed-url-only"]
API = "/api/delivery/v1"


def deprecations(sb: Sandbox, base_url: str) -> list[dict[str, Any]]:
    """Every announced deprecation (the entry shape is ours: the spec does not show it).

    Requirements: CFG-024, VER-014.
    """
    return [
        {
            "kind": "version",
            "version": v.version,
            "deprecated_at": v.deprecated_at,
            "sunset_at": v.sunset_at,
            "deprecation": v.deprecated_at and f"@{date_epoch(v.deprecated_at)}",
            "link": f"{base_url}/docs/delivery-api-v1/evolution",
        }
        for v in sb.versions.deprecated
    ]


def subtitle_languages(sb: Sandbox, org_id: str, now: float) -> list[str]:
    """Every subtitle language of the organisation's licensed films. (CFG-023)"""
    langs: set[str] = set()
    for film in sb.store.licensed_films(org_id, now):
        for episode in sb.store.episodes_of(film.id):
            langs.update(episode.subtitles)
    return sorted(langs)


def body(sb: Sandbox, exchange: Exchange, caller: Caller) -> dict[str, Any]:
    """The `/config` object: api, key, rate_limits, playback, subtitles, deprecations, links.

    Requirements: CFG-001, CFG-002, CFG-003, CFG-004, CFG-005, CFG-006, CFG-007, CFG-008, CFG-009,
    CFG-010, CFG-011, CFG-012, CFG-013, CFG-014, CFG-015, CFG-016, CFG-017, CFG-018, CFG-019,
    CFG-020, CFG-021, CFG-022, CFG-025, CFG-026, CFG-035, CFG-036, VER-001, VER-002.
    """
    base, now = exchange.base_url, sb.now()
    doors = sb.limits.doors(caller.org_id)
    test_org = caller.organisation.test
    body: dict[str, Any] = {
        "api": {
            "status": "beta",
            "path_version": "v1",
            "version": exchange.version,
            "pinned_version": caller.pin,
            "latest_version": sb.versions.latest,
            "version_header": "Service-Version",
            "supported_versions": [
                {
                    "version": v.version,
                    "released_at": v.released_at,
                    "deprecated_at": v.deprecated_at,
                    "sunset_at": v.sunset_at,
                    "summary": v.summary,
                }
                for v in sb.versions.versions
                if not v.retired
            ],
        },
        "key": {"scopes": sorted(caller.scopes), "test_organisation": test_org},
        "rate_limits": {"window_seconds": 60, "doors": doors},
        "playback": {
            "domains": PLAYBACK_DOMAINS,
            "protection": PROTECTION,
            "grant_ttl_seconds": 1800,
            "manifest_url_ttl_seconds": 900,
            "batch": {"max_episodes": 3, "max_next": 2},
        },
        "subtitles": {"format": "webvtt", "languages": subtitle_languages(sb, caller.org_id, now)},
        "deprecations": deprecations(sb, base),
        "links": {
            "self": f"{base}{API}/config",
            "catalog": f"{base}{API}/catalog",
            "playback": f"{base}{API}/playback",
            "creatives": f"{base}{API}/creatives",
            "videos": f"{base}{API}/videos",
            "config": f"{base}{API}/config",
            "docs": f"{base}/docs/delivery-api-v1",
            "evolution": f"{base}/docs/delivery-api-v1/evolution",
            "changes": f"{base}/docs/delivery-api-v1/changes",
        },
    }
    return bend(
        sb, "config.body", body, video_limit=lambda: sb.limits.limit_of(caller.org_id, "video")
    )


async def handle(sb: Sandbox, exchange: Exchange, caller: Caller, call: Call) -> Reply:
    """GET /config: any valid key, cached a minute per caller and version. (AUTH-031, CFG-001)

    Requirements: FRESH-015.
    """
    cache_key = ("config", caller, exchange.version, exchange.base_url, int(sb.now() // 60))
    return Reply(200, sb.cached(cache_key, lambda: orjson.dumps(body(sb, exchange, caller))))
