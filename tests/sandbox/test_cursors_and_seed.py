"""Pure cores: cursors (tamper-evident, bound to endpoint and query) and the seed data."""

from __future__ import annotations

from delivery_sandbox.endpoints import cursors
from delivery_sandbox.state.seed import build_store

SECRET = b"s" * 32


def test_cursor_round_trips_only_for_its_endpoint_and_query() -> None:
    token = cursors.encode(SECRET, "creatives", "u=5", [10, "abc"])
    assert cursors.decode(SECRET, "creatives", "u=5", token) == [10, "abc"]
    assert cursors.decode(SECRET, "series", "u=5", token) is None
    assert cursors.decode(SECRET, "creatives", "u=6", token) is None
    assert cursors.decode(b"t" * 32, "creatives", "u=5", token) is None
    tampered = token[:-2] + ("A" if token[-2] != "A" else "B") + token[-1]
    assert cursors.decode(SECRET, "creatives", "u=5", tampered) is None
    assert cursors.decode(SECRET, "creatives", "u=5", "") is None


def test_a_scope_resumes_only_the_listing_that_issued_its_cursor() -> None:
    scope = cursors.Scope(SECRET, "playlists", "u=None&c=drama")
    token = scope.encode([1_795_000_000, "pl_1"])
    assert scope.resume_after(None) is None
    assert scope.resume_after(token) == [1_795_000_000, "pl_1"]
    assert cursors.Scope(SECRET, "playlists", "u=None&c=comedy").resume_after(token) is False
    assert cursors.Scope(SECRET, "series", "u=None&c=drama").resume_after(token) is False
    assert scope.resume_after("not a cursor") is False
    assert scope.resume_after(cursors.encode(SECRET, "playlists", "u=None&c=drama", [])) == []


def test_seed_is_deterministic_and_covers_every_branch() -> None:
    one, two = build_store(1, 1_795_000_000), build_store(1, 1_795_000_000)
    assert one.fixtures == two.fixtures and list(one.films) == list(two.films)
    episodes = list(one.episodes.values())
    assert {e.protection for e in episodes} == {"private-encrypted", "signed-url-only"}
    assert any(not e.stream_ready for e in episodes) and any(e.failure for e in episodes)
    assert len(one.episodes_of(_film_id(one, one.fixtures["series_code_long"]))) > 100
    films = list(one.films.values())
    assert any(f.planned_episodes is None for f in films) and any(f.code is None for f in films)
    assert len(films) >= 120 and len(one.creatives) >= 120 and len(one.videos) >= 250
    assert len(one.playlists) >= 60
    main = one.film_by_ref(str(one.fixtures["film_slug"]))
    assert main is not None
    langs = {lang for e in one.episodes_of(main.id) for lang in e.subtitles}
    assert len(langs) >= 2


def _film_id(store, code) -> str:  # type: ignore[no-untyped-def]
    film = store.film_by_code(str(code))
    assert film is not None
    return film.id
