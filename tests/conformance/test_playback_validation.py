"""Whole-request validation of POST /playback: the body, the device values and the batch forms.

spec: POST /playback (body table: `episode_no`, `union_info`, `drm_kek`, `episodes`, `next`);
Errors > Playback (whole request: 400 without code, 400 `invalid_request`, 400
`invalid_device_info` with `fields`); Limits > Other constants (device value minimum 8 after
trimming). Readings followed (docs/reading-of-the-spec.md): PLAY-010/PLAY-069 (0, negative,
fractional `episode_no` and non-object bodies are the 400 without code), PLAY-012 (JSON null counts
as not sent), PLAY-019 (`fields` names the rejected fields or holds their values), PLAY-030/PLAY-033
(batch items and `next` must be whole JSON numbers).
"""

from __future__ import annotations

from typing import Any

import pytest
from playback_support import DEVICE, body_of, expect_answer, post

from delivery_conformance.checks import expect

pytestmark = pytest.mark.needs("role:films", "fixture:episode_encrypted")

NULL_WORDS = ("(null)", "null", "nil", "undefined", "nan", "<null>", "none")
GOOD = DEVICE["union_info"]


@pytest.fixture
def episode(fixture_id) -> str:
    return str(fixture_id("episode_encrypted"))


def _cases(word: str) -> list[str]:
    return [word, word.upper(), word.capitalize(), f"  {word.swapcase()}  "]


# -- body without a usable episode: 400 without error_code -------------------------------------


@pytest.mark.requirement("PLAY-068")
@pytest.mark.parametrize(
    "content", ["{not json", "", "episode_id=1"], ids=["broken", "empty", "form"]
)
def test_body_that_is_not_json_is_400_without_code(client, content):
    response = client.post("playback", role="films", content=content)
    expect_answer("PLAY-068", response, 400, None, what="for a body that is not JSON")


@pytest.mark.requirement("PLAY-069")
@pytest.mark.needs("fixture:film_slug")
@pytest.mark.parametrize("shape", ["empty", "film_ref_only", "array", "string"])
def test_json_without_an_episode_is_400_without_code(client, fixture_id, shape):
    bodies: dict[str, Any] = {
        "empty": {**DEVICE},
        "film_ref_only": {"film_ref": fixture_id("film_slug"), **DEVICE},
        "array": [],
        "string": "episode",
    }
    response = post(client, bodies[shape])
    expect_answer("PLAY-069", response, 400, None, what=f"for body {shape}")


@pytest.mark.requirement("PLAY-009")
@pytest.mark.needs("fixture:film_slug")
def test_episode_no_as_a_string_is_400_without_code(client, fixture_id):
    body = {"film_ref": fixture_id("film_slug"), "episode_no": "1", **DEVICE}
    expect_answer("PLAY-009", post(client, body), 400, None, what='for episode_no "1"')


@pytest.mark.requirement("PLAY-010")
@pytest.mark.needs("fixture:film_slug")
@pytest.mark.parametrize("number", [0, -1, 1.5])
def test_episode_no_not_a_whole_number_from_one_is_400_without_code(client, fixture_id, number):
    """docs/reading-of-the-spec.md (PLAY-010): the spec leaves it open; the whole-request 400
    without code and the per-ticket 404 `not_ready` (no such episode) are both accepted."""
    body = {"film_ref": fixture_id("film_slug"), "episode_no": number, **DEVICE}
    response = post(client, body)
    if response.status_code == 404:
        expect_answer("PLAY-010", response, 404, "not_ready", what=f"for episode_no {number}")
    else:
        expect_answer("PLAY-010", response, 400, None, what=f"for episode_no {number}")


# -- device values ----------------------------------------------------------------------------


@pytest.mark.requirement("PLAY-012")
@pytest.mark.parametrize("sent", ["union_info", "drm_kek"])
@pytest.mark.parametrize("other", ["absent", "null"])
def test_only_one_device_value_is_invalid_request(client, episode, sent, other):
    body: dict[str, Any] = {"episode_id": episode, sent: DEVICE[sent]}
    if other == "null":
        body["drm_kek" if sent == "union_info" else "union_info"] = None
    response = post(client, body)
    expect_answer("PLAY-012", response, 400, "invalid_request", what=f"with {sent} only")


# (union_info, drm_kek, requirement): every value here must be refused.
REFUSED: list[tuple[str, str, str]] = [
    ("abcdefg", GOOD, "PLAY-013"),
    ("   abcd   ", GOOD, "PLAY-015"),
    ("\tabcdefg\n ", GOOD, "PLAY-015"),
    *[(value, GOOD, "PLAY-016") for value in _cases("undefined")],
    *[
        (GOOD, value, "PLAY-017")
        for word in NULL_WORDS
        if word != "undefined"
        for value in _cases(word)
    ],
    (GOOD, "kek1234", "PLAY-018"),
    (GOOD, "   kek1   ", "PLAY-018"),
    (GOOD, "UnDeFiNeD", "PLAY-018"),
]


@pytest.mark.requirement("PLAY-013", "PLAY-015", "PLAY-016", "PLAY-017", "PLAY-018")
@pytest.mark.parametrize(
    ("union_info", "drm_kek", "rid"), REFUSED, ids=[f"{r}-{u!r}-{d!r}" for u, d, r in REFUSED]
)
def test_bad_device_value_is_invalid_device_info(client, episode, union_info, drm_kek, rid):
    body = {"episode_id": episode, "union_info": union_info, "drm_kek": drm_kek}
    response = post(client, body)
    expect_answer(
        rid,
        response,
        400,
        "invalid_device_info",
        what=f"for union_info {union_info!r}, drm_kek {drm_kek!r}",
    )


ACCEPTED: list[tuple[str, str, str]] = [
    ("abcdefgh", "12345678", "PLAY-014"),
    ("  abcdefgh  ", "\t12345678 ", "PLAY-015"),
    ("undefined-device", "null-kek-but-long", "PLAY-016"),
]


@pytest.mark.requirement("PLAY-014", "PLAY-015", "PLAY-016")
@pytest.mark.parametrize(
    ("union_info", "drm_kek", "rid"), ACCEPTED, ids=[f"{r}-{u!r}" for u, _, r in ACCEPTED]
)
def test_device_value_of_eight_characters_after_trimming_is_accepted(
    client, episode, union_info, drm_kek, rid
):
    body = {"episode_id": episode, "union_info": union_info, "drm_kek": drm_kek}
    expect_answer(rid, post(client, body), 200, what=f"for union_info {union_info!r}")


@pytest.mark.requirement("PLAY-019")
@pytest.mark.parametrize(
    ("union_info", "drm_kek", "fields"),
    [
        ("short", GOOD, ["union_info"]),
        (GOOD, "NULL", ["drm_kek"]),
        ("nil", "  none  ", ["drm_kek", "union_info"]),
    ],
    ids=["union_info", "drm_kek", "both"],
)
def test_invalid_device_info_names_exactly_the_rejected_fields(
    client, episode, union_info, drm_kek, fields
):
    """docs/reading-of-the-spec.md (PLAY-019): Errors > Playback says `fields` names the rejected
    value, Errors > Formats that it holds the rejected values: the field names, or the values as
    sent or as trimmed, are all accepted, as long as exactly the rejected ones are listed."""
    sent = {"union_info": union_info, "drm_kek": drm_kek}
    response = post(client, {"episode_id": episode, **sent})
    body = expect_answer("PLAY-019", response, 400, "invalid_device_info")
    named = body.get("fields")
    values = [sent[name] for name in fields]
    readings = [
        sorted(fields),
        sorted(values),
        sorted(value.strip() for value in values),
    ]
    expect(
        "PLAY-019",
        isinstance(named, list)
        and all(isinstance(n, str) for n in named)
        and sorted(named) in readings,
        expected=f"fields naming {fields}, or holding their values {values}",
        actual=named,
        response=response,
    )


# -- batch forms: 400 invalid_request ---------------------------------------------------------


def _batch_bodies(episode: str, slug: str) -> dict[str, tuple[str, Any]]:
    item = {"episode_id": episode}
    return {
        "episodes_empty": ("PLAY-028", {"episodes": []}),
        "episodes_four": ("PLAY-029", {"episodes": [item] * 4}),
        "item_intent_only": ("PLAY-030", {"episodes": [item, {"intent": "play"}]}),
        "item_episode_no_string": (
            "PLAY-030",
            {"episodes": [{"film_ref": slug, "episode_no": "2"}]},
        ),
        "item_episode_no_zero": ("PLAY-030", {"episodes": [{"film_ref": slug, "episode_no": 0}]}),
        "with_episode_id": ("PLAY-031", {"episodes": [item], "episode_id": episode}),
        "with_film_ref": ("PLAY-031", {"episodes": [item], "film_ref": slug}),
        "with_episode_no": ("PLAY-031", {"episodes": [item], "episode_no": 1}),
        "with_next": ("PLAY-032", {"episodes": [item], "next": 1}),
        "next_3": ("PLAY-033", {"episode_id": episode, "next": 3}),
        "next_negative": ("PLAY-033", {"episode_id": episode, "next": -1}),
        "next_fraction": ("PLAY-033", {"episode_id": episode, "next": 1.5}),
        "next_string": ("PLAY-033", {"episode_id": episode, "next": "1"}),
        "next_without_anchor": ("PLAY-034", {"next": 1}),
    }


BATCH_CASES = [
    ("episodes_empty", "PLAY-028"),
    ("episodes_four", "PLAY-029"),
    ("item_intent_only", "PLAY-030"),
    ("item_episode_no_string", "PLAY-030"),
    ("item_episode_no_zero", "PLAY-030"),
    ("with_episode_id", "PLAY-031"),
    ("with_film_ref", "PLAY-031"),
    ("with_episode_no", "PLAY-031"),
    ("with_next", "PLAY-032"),
    ("next_3", "PLAY-033"),
    ("next_negative", "PLAY-033"),
    ("next_fraction", "PLAY-033"),
    ("next_string", "PLAY-033"),
    ("next_without_anchor", "PLAY-034"),
]


@pytest.mark.needs("fixture:film_slug")
@pytest.mark.parametrize(
    "case",
    [pytest.param(name, marks=pytest.mark.requirement(rid), id=name) for name, rid in BATCH_CASES],
)
def test_malformed_batch_is_invalid_request(client, fixture_id, episode, case):
    rid, body = _batch_bodies(episode, str(fixture_id("film_slug")))[case]
    response = post(client, {**body, **DEVICE} if isinstance(body, dict) else body)
    expect_answer(rid, response, 400, "invalid_request", what=f"for batch {case}")
    expect(
        rid,
        "items" not in body_of(response),
        expected="no items[] on a refused batch",
        actual="items present",
        response=response,
    )
