"""The property rules' reading of a `category` slug (decision PLS-039): pure, no target."""

from __future__ import annotations

import pytest

from delivery_conformance.properties.rules import Reading, expected_answer, read_slug
from delivery_conformance.spec.operations import Operation


@pytest.mark.parametrize("value", ["strength", "strength-training", "a1-b2-c3", "x" * 50])
def test_a_plain_slug_is_valid(value: str) -> None:
    assert read_slug(value) is Reading.VALID


@pytest.mark.parametrize("value", ["-edge", "a--b", "Upper-Case", "snake_case", "x" * 51, ""])
def test_a_url_safe_value_outside_the_plain_form_gets_no_verdict(value: str) -> None:
    assert read_slug(value) is Reading.UNCLEAR


@pytest.mark.parametrize("value", ["Not A Slug!", "not a slug", "a/b", "caf\u00e9", "50%"])
def test_a_value_a_path_segment_must_escape_is_no_slug(value: str) -> None:
    assert read_slug(value) is Reading.INVALID


def test_no_slug_must_be_4220_and_a_plausible_one_is_not_judged() -> None:
    refused = expected_answer(Operation.LIST_PLAYLISTS, {"category": ["Not A Slug!"]}, {})
    assert refused is not None and refused.refused
    assert refused.admits(422, 4220) and not refused.admits(404, 4040)
    assert expected_answer(Operation.LIST_PLAYLISTS, {"category": ["-edge"]}, {}) is None
    valid = expected_answer(Operation.LIST_PLAYLISTS, {"category": ["no-such-category"]}, {})
    assert valid is not None and valid.admits(404, 4040) and not valid.admits(422, 4220)
