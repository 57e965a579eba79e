"""`Policy`: every client rule the spec gives, as one switch or number each.

The defaults are the spec's rules (the good client). A "broken client" for certification
self-tests is `dataclasses.replace(DEFAULT_POLICY, <one knob>=<wrong value>)`; each knob names
the requirement ID it breaks when flipped, so a judge knows which rule should fail.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

__all__ = ["DEFAULT_POLICY", "Policy", "policy_from_overrides"]


@dataclass(frozen=True)
class Policy:
    # Errors > Retry policy (client side): which answers are retried.
    retry_transport_errors: bool = True  # CLI-007
    retry_429: bool = True  # CLI-008
    retry_503_unavailable: bool = True  # CLI-009, CLI-042
    retry_5xx: bool = True  # CLI-010
    retry_not_ready_now: bool = False  # CLI-011 (True: 503 not_ready retried at once)
    retry_4xx: bool = False  # CLI-012, ERR-018 (True: 4xx retried like 5xx)
    unknown_codes_by_class: bool = True  # CLI-005, ERR-010 (False: unknown 5xx codes not retried)
    # Backoff.
    honour_retry_after: bool = True  # CLI-008, CLI-013 (False: Retry-After ignored, backoff)
    retry_after_jitter: float = 1.0  # CLI-013: uniform 0 to this many seconds on top
    backoff_multiplier: float = 1.0  # CLI-014: scales min(cap, base x 2^attempt)
    min_attempt_timeout: float = 5.0  # CLI-016: attempt timeouts never below this
    use_retry_budget: bool = True  # CLI-023
    budget_ratio: float = 0.10  # CLI-023
    budget_floor: int = 10  # CLI-023
    # Paging and envelopes.
    cursor_verbatim: bool = True  # CLI-026, PAGE-003 (False: the cursor is URL-unquoted first)
    stop_on_short_page: bool = False  # CLI-027, PAGE-004
    follow_links_next: bool = True  # CLI-028 (False: envelope walks stop after page one)
    max_pages: int = 10_000  # a bound on any walk (a looping cursor is caught earlier)
    # Safe catalog sync (Limits > Freshness).
    prefer_unpaged: bool = True  # CLI-043
    page_size: int = 200  # used only when paging
    dedupe_later_wins: bool = True  # CLI-044 (False: the first copy of a film is kept)
    withdraw_only_after_complete_walk: bool = True  # CLI-045
    walks_before_unavailable: int = 2  # CLI-046
    keep_vid_ready_when_null: bool = True  # CAT-078
    min_poll_interval: float = 60.0  # CLI-048 (seconds between catalog walks of `watch`)
    # Creatives.
    keep_updated_since: bool = True  # CLI-029 (False: each page asks from its own last record)
    upsert_creatives: bool = True  # CLI-030 (False: records returned again are appended)
    reread_on_gone: bool = True  # CLI-031
    rights_grace_seconds: int = 86_400  # CLI-034: usable until rights.ends_at + this
    # Playback batches.
    batch_retry_failed_only: bool = True  # CLI-025 (False: the whole batch is sent again)
    batch_item_retry_after: bool = True  # CLI-025 (False: failed items retried at once)
    # Secrets.
    redact_logs: bool = True  # CLI-032, CLI-041, PLAY-097
    store_links: bool = False  # CLI-033, CLI-038, CLI-039, CAT-078 (True: signed links persisted)
    # Authentication.
    treat_key_503_as_revoked: bool = False  # CLI-042 (True: a 503 5031 ends the call as a 401)
    # Series and playlists.
    skip_unchanged_series: bool = True  # CLI-035 (False: every detail read on every sync)
    # Open videos.
    video_refresh_margin: float = 60.0  # CLI-040: seconds before refresh_before (negative: late)


DEFAULT_POLICY = Policy()


def policy_from_overrides(overrides: list[str], base: Policy = DEFAULT_POLICY) -> Policy:
    """`["retry_4xx=true", "budget_floor=5"]` -> a Policy with those fields changed (the CLI's
    `--policy`, so a broken client can be run as a subprocess). Raises ValueError, one line."""
    kinds = {f.name: type(getattr(base, f.name)) for f in fields(Policy)}
    changes: dict[str, object] = {}
    for text in overrides:
        name, sep, raw = text.partition("=")
        name, raw = name.strip(), raw.strip()
        if not sep or name not in kinds:
            raise ValueError(f"unknown policy knob {name!r} (see delivery_client/knobs.py)")
        kind = kinds[name]
        try:
            if kind is bool:
                if raw.lower() not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError
                changes[name] = raw.lower() in ("true", "1", "yes")
            else:
                changes[name] = kind(raw)
        except ValueError:
            raise ValueError(f"policy knob {name} wants a {kind.__name__}, not {raw!r}") from None
    return replace(base, **changes)  # type: ignore[arg-type]
