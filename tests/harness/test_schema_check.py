"""Self-tests of `checks.schema`: bodies judged against spec/openapi.yaml component schemas."""

from __future__ import annotations

import pytest

from delivery_conformance.checks import ConformanceFailure
from delivery_conformance.checks.schema import (
    expect_schema,
    field_errors,
    has_schema,
    schema_errors,
)

UUID = "6f1c2a9e-4b7d-4c1a-9e3f-2a8b5c7d9e01"


def placeholder_row(**changes: object) -> dict[str, object]:
    row: dict[str, object] = {
        "id": None,
        "film_id": UUID,
        "episode_no": 7,
        "title": None,
        "synopsis": None,
        "duration_ms": None,
        "poster_uri": None,
        "poster_url": None,
        "poster_signed_url": None,
        "poster_store_uri": None,
        "poster_expires_at": None,
        "vid": None,
        "vid_ready": False,
        "status": "planned",
        "stream_ready": False,
        "title_i18n": {},
        "subtitles": [],
    }
    row.update(changes)
    return row


def test_schema_accepts_a_conforming_placeholder_row() -> None:
    assert schema_errors(placeholder_row(), "Episode") == []


def test_schema_names_the_path_of_a_wrong_type() -> None:
    errors = schema_errors(placeholder_row(episode_no="7"), "Episode")
    assert any(line.startswith(".episode_no:") for line in errors)


def test_schema_reports_a_missing_required_field() -> None:
    row = placeholder_row()
    del row["stream_ready"]
    assert "$: 'stream_ready' missing" in schema_errors(row, "Episode")


def test_schema_applies_the_placeholder_coupling() -> None:
    errors = schema_errors(placeholder_row(vid="v123"), "Episode")
    assert any(line.startswith(".vid:") for line in errors)


def test_schema_refuses_a_boolean_where_an_integer_is_due() -> None:
    assert schema_errors(True, "EpochSeconds")
    assert schema_errors(1790000000, "EpochSeconds") == []


def test_field_errors_judge_only_the_named_fields() -> None:
    film = {"id": "not-a-uuid", "slug": "ok-slug"}
    assert field_errors(film, "Film", ["slug"]) == []
    assert field_errors(film, "Film", ["id"])
    assert field_errors(film, "Film", ["title"]) == [".title: missing"]


def test_long_values_are_cut_in_messages() -> None:
    secret = "https://cdn.example/" + "x" * 200
    errors = field_errors({"id": secret}, "Film", ["id"])
    assert errors and all(secret not in line for line in errors)


def test_expect_schema_raises_a_typed_failure_for_the_requirement() -> None:
    with pytest.raises(ConformanceFailure) as caught:
        expect_schema("CAT-038", {"episode_no": 0}, "Episode", fields=["episode_no"])
    assert caught.value.violations[0].requirement_id == "CAT-038"


def test_two_fields_checked_apart_are_two_findings_not_one() -> None:
    """A field check names its field, so two wrong fields of one answer group as two defects."""
    titles = set()
    for field, rule in (("episode_no", "CAT-038"), ("id", "CAT-032")):
        with pytest.raises(ConformanceFailure) as caught:
            expect_schema(rule, {"episode_no": 0, "id": 5}, "Episode", fields=[field])
        titles.add(caught.value.violations[0].title)
    assert titles == {"Episode.episode_no departs from its schema",
                      "Episode.id departs from its schema"}  # fmt: skip


def test_has_schema_knows_the_component_names() -> None:
    assert has_schema("Creative") and not has_schema("NoSuchSchema")
