"""Self-test of spec/requirements.yaml and its loader (delivery_conformance.spec.requirements)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from delivery_conformance.spec.requirements import (
    ID_PATTERN,
    PREFIXES,
    REQUIRED_FIELDS,
    Level,
    RequirementsError,
    Role,
    default_path,
    load_requirements,
)

REPO = Path(__file__).resolve().parents[2]
SPEC = REPO / "spec" / "delivery-api-v1.md"  # a copy of the shared spec, shipped in the wheel
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*$")


@pytest.fixture(scope="module")
def requirements():
    return load_requirements()


def spec_headings() -> set[str]:
    headings = set()
    for line in SPEC.read_text(encoding="utf-8").splitlines():
        match = HEADING.match(line)
        if match:
            headings.add(match.group(1))
    return headings


def test_default_path_is_the_repo_spec_file():
    assert default_path() == REPO / "spec" / "requirements.yaml"
    assert default_path().is_file()


def test_file_loads_with_ids_well_formed_and_prefixes_known(requirements):
    assert requirements
    for ident, requirement in requirements.items():
        assert ident == requirement.id
        assert ID_PATTERN.match(ident), ident
        assert requirement.prefix in PREFIXES, ident


def test_every_entry_has_every_required_field(requirements):
    for requirement in requirements.values():
        for name in REQUIRED_FIELDS:
            value = getattr(requirement, name)
            text = value.value if isinstance(value, Level | Role) else value
            assert isinstance(text, str) and text.strip(), (requirement.id, name)


def test_ids_are_unique_in_the_raw_file():
    raw = default_path().read_text(encoding="utf-8")
    ids = re.findall(r"^\s*-\s+id:\s*(\S+)\s*$", raw, flags=re.MULTILINE)
    assert len(ids) == len(set(ids))


def test_ids_are_numbered_without_gaps_within_each_prefix(requirements):
    numbers: dict[str, list[int]] = {}
    for requirement in requirements.values():
        numbers.setdefault(requirement.prefix, []).append(int(requirement.id[-3:]))
    for prefix, seen in numbers.items():
        assert sorted(seen) == list(range(1, len(seen) + 1)), prefix


def test_more_than_250_server_entries_in_total(requirements):
    servers = sum(1 for r in requirements.values() if r.role is Role.SERVER)
    assert servers > 250, f"only {servers} server entries (part 2 not merged yet?)"


def test_sections_name_real_headings_of_the_spec(requirements):
    headings = spec_headings()
    assert headings, f"no headings found in {SPEC}"
    for requirement in requirements.values():
        parts = [part.strip() for part in requirement.section.split(" > ")]
        assert parts[-1] in headings, (requirement.id, requirement.section)


def test_untestable_entries_explain_why(requirements):
    for requirement in requirements.values():
        if requirement.untestable is not None:
            assert len(requirement.untestable.split()) >= 3, requirement.id


GOOD_ENTRY = """\
  - id: GEN-001
    section: What the service does
    statement: A fact.
    level: must
    role: server
    observe: A way to see it.
"""


def write(tmp_path: Path, entries: str) -> Path:
    path = tmp_path / "requirements.yaml"
    path.write_text(f"version: 1\nsource: x\nrequirements:\n{entries}", encoding="utf-8")
    return path


def test_loader_reads_a_minimal_valid_file(tmp_path):
    loaded = load_requirements(write(tmp_path, GOOD_ENTRY))
    requirement = loaded["GEN-001"]
    assert requirement.level is Level.MUST
    assert requirement.role is Role.SERVER
    assert requirement.prefix == "GEN"
    assert requirement.untestable is None and requirement.decision is None


@pytest.mark.parametrize(
    ("broken", "message"),
    [
        (GOOD_ENTRY.replace("    observe: A way to see it.\n", ""), "observe"),
        (GOOD_ENTRY.replace("GEN-001", "GEN-01"), "bad id"),
        (GOOD_ENTRY.replace("GEN-001", "gen-001"), "bad id"),
        (GOOD_ENTRY.replace("GEN-001", "XYZ-001"), "unknown prefix"),
        (GOOD_ENTRY + GOOD_ENTRY, "duplicate id GEN-001"),
        (GOOD_ENTRY.replace("level: must", "level: may"), "GEN-001"),
        (GOOD_ENTRY.replace("role: server", "role: browser"), "GEN-001"),
        (GOOD_ENTRY.replace("statement: A fact.", "statement: ''"), "statement"),
        (GOOD_ENTRY + "    colour: blue\n", "unknown field"),
        (GOOD_ENTRY + "    decision: 3\n", "decision"),
        ("  - just a string\n", "not a mapping"),
    ],
)
def test_loader_rejects_a_malformed_entry(tmp_path, broken, message):
    with pytest.raises(RequirementsError, match=re.escape(message)) as caught:
        load_requirements(write(tmp_path, broken))
    assert "\n" not in str(caught.value)


def test_loader_rejects_a_file_that_is_not_yaml_or_has_no_list(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("requirements: [unclosed\n", encoding="utf-8")
    with pytest.raises(RequirementsError, match="not valid YAML"):
        load_requirements(path)
    path.write_text("requirements: 3\n", encoding="utf-8")
    with pytest.raises(RequirementsError, match="'requirements' list"):
        load_requirements(path)
    with pytest.raises(RequirementsError, match="cannot read"):
        load_requirements(tmp_path / "missing.yaml")
