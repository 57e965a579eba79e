"""Tickets and the reuse window, with a fake clock and a counting secret source."""

from __future__ import annotations

import itertools
from collections.abc import Callable

from delivery_sandbox.playback.admission import IntentClass
from delivery_sandbox.playback.tickets import (
    ENCRYPTED,
    SIGNED_URL_ONLY,
    ReuseKey,
    TicketBook,
    TicketPolicy,
    iso_utc,
    mint,
)

T0 = 1_800_000_000.0
SUBS = [("fr", "https://subs/fr.vtt"), ("en", "https://subs/en.vtt"), ("de", "https://subs/de.vtt")]


def secrets() -> Callable[[], str]:
    counter = itertools.count(1)
    return lambda: f"secret{next(counter)}"


def ticket(protection: str = ENCRYPTED, policy: TicketPolicy | None = None, now: float = T0):
    return mint(
        episode_id="ep-1",
        episode_no=3,
        protection=protection,
        vid="vid-1",
        subtitles=SUBS,
        now=now,
        new_secret=secrets(),
        policy=policy or TicketPolicy(),
    )


def key(**changes: object) -> ReuseKey:
    base: dict[str, object] = {
        "viewer_ref": "viewer-1",
        "union_info": "device-123",
        "drm_kek": "kek-45678",
        "episode": ("episode_id", "ep-1"),
        "intent": IntentClass.PLAY,
    }
    base.update(changes)
    return ReuseKey(**base)  # type: ignore[arg-type]


def test_encrypted_ticket_has_vid_and_token_for_thirty_minutes() -> None:
    fields = ticket().fields()
    assert fields["vid"] == "vid-1" and fields["play_auth_token"] == "secret1"
    assert "manifest_url" not in fields
    assert fields["expires_at"] == iso_utc(T0 + 1800) == "2027-01-15T08:30:00Z"
    assert fields["protection"] == ENCRYPTED


def test_signed_url_ticket_has_a_manifest_link_for_fifteen_minutes() -> None:
    fields = ticket(SIGNED_URL_ONLY).fields()
    assert fields["manifest_url"].startswith("https://")
    assert "vid" not in fields and "play_auth_token" not in fields
    assert fields["expires_at"] == iso_utc(T0 + 900)
    assert fields["protection"] == SIGNED_URL_ONLY


def test_subtitles_come_in_lang_order_as_webvtt() -> None:
    subs = ticket().fields()["subtitles"]
    assert [s["lang"] for s in subs] == ["de", "en", "fr"]
    assert {s["format"] for s in subs} == {"webvtt"}
    assert subs[0]["url"] == "https://subs/de.vtt"


def test_subtitle_fault_breaks_the_lang_order() -> None:
    subs = ticket(policy=TicketPolicy(sort_subtitles=False)).fields()["subtitles"]
    assert [s["lang"] for s in subs] == ["fr", "en", "de"]


def test_lifetime_faults_change_expires_at() -> None:
    short = ticket(policy=TicketPolicy(play_token_ttl=1200)).expires_at
    long = ticket(SIGNED_URL_ONLY, TicketPolicy(manifest_ttl=1800)).expires_at
    assert (short, long) == (T0 + 1200, T0 + 1800)


def test_reuse_returns_the_same_ticket_while_five_minutes_are_left() -> None:
    book = TicketBook()
    issued = ticket()
    book.keep(key(), issued, T0)
    assert book.find(key(), T0 + 1500) is issued  # exactly 300 s left
    assert book.find(key(), T0 + 1500.5) is None
    assert len(book) == 0


def test_reuse_needs_the_same_viewer_device_episode_form_and_intent_class() -> None:
    book = TicketBook()
    book.keep(key(), ticket(), T0)
    assert book.find(key(viewer_ref="viewer-2"), T0) is None
    assert book.find(key(union_info="device-999"), T0) is None
    assert book.find(key(drm_kek="kek-99999"), T0) is None
    assert book.find(key(episode=("film_ref", "film-slug", "3")), T0) is None
    assert book.find(key(intent=IntentClass.PREFETCH), T0) is None
    assert book.find(key(), T0) is not None


def test_reuse_fault_ignores_the_device_values() -> None:
    book = TicketBook(TicketPolicy(reuse_ignores_device=True))
    book.keep(key(), ticket(), T0)
    assert book.find(key(union_info="device-999", drm_kek="other-kek"), T0) is not None


def test_book_drops_expired_tickets_when_it_grows() -> None:
    book = TicketBook()
    book.SOFT_CAP = 3  # type: ignore[misc]
    for i in range(3):
        book.keep(key(viewer_ref=f"v{i}"), ticket(), T0)
    book.keep(key(viewer_ref="late"), ticket(now=T0 + 1600), T0 + 1600)
    assert len(book) == 1
