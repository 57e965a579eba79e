"""Every server requirement the suite claims is one it can prove it charges (issue 13).

Three figures over the server requirements of spec/requirements.yaml: proven (a scenario or
check charges it and a sandbox fault declaring it made the targeted kill rate fail with that ID),
unobservable (an `untestable:` reason), not yet proven. The not-yet-proven IDs are kept, with
their count, in `requirement_proofs_pending.json`: a ratchet. An ID that loses its proof fails
this test; an ID newly proven must leave the file (it can only shrink).

The dynamic half, which reads the session's targeted kill-rate run (conftest.py,
killrate_support.py), is in test_sandbox_kill_rate.py; the shared pieces in proofs_support.py.
"""

from __future__ import annotations

from proofs_support import (
    PENDING,
    SUITE,
    fault,
    pending_file,
    subtle_faults,
)

from delivery_conformance.killrate.proofs import (
    change_row_proofs,
    dynamic_proofs,
    judge,
    scan,
    scan_source,
)
from delivery_conformance.spec.changes import GENERATED_TEST, Change, Consequence
from delivery_conformance.spec.requirements import Level, Requirement, Role, load_requirements


def requirement(rid: str, role: Role = Role.SERVER, untestable: str | None = None) -> Requirement:
    return Requirement(rid, "S", "statement", Level.MUST, role, "observe", untestable)


def test_a_marker_names_an_id_and_a_charge_elsewhere_proves_it_can_fail() -> None:
    source = '''
import pytest
RULES = {"listSeries": "SER-030"}
@pytest.mark.requirement("PAGE-005", "PAGE-006")
def test_x(client):
    """Checks PAGE-007 in prose only."""
    expect("PAGE-006", True, expected=1, actual=1)  # PAGE-009 in a comment
'''
    marked, charged = scan_source(source)
    assert marked == {"PAGE-005", "PAGE-006"}
    assert charged == {"SER-030", "PAGE-006"}


def test_a_table_fed_to_parametrize_marks_each_row_s_id() -> None:
    source = """
import pytest
RULES = {"CRE-003": ("schema_version",), "CRE-006": ("name",)}
OTHER = ["CRE-009"]
@pytest.mark.parametrize("rid", [pytest.param(r, marks=pytest.mark.requirement(r)) for r in RULES])
def test_x(rid):
    expect(rid, False, expected=1, actual=2)
"""
    marked, charged = scan_source(source)
    assert marked == {"CRE-003", "CRE-006"}
    assert charged == {"CRE-003", "CRE-006", "CRE-009"}


def test_ids_written_inside_a_parametrize_call_are_marked() -> None:
    source = """
import pytest
@pytest.mark.parametrize(
    "rid", [pytest.param(r, marks=pytest.mark.requirement(r)) for r in ("LIM-012", "LIM-019")]
)
def test_x(rid):
    expect(rid, False, expected=1, actual=2)
@pytest.mark.parametrize("kind", kind_params(("STATE-005",), ("STATE-013",)))
def test_y(kind):
    expect("STATE-006", False, expected=1, actual=2)
"""
    marked, _ = scan_source(source)
    assert marked == {"LIM-012", "LIM-019", "STATE-005", "STATE-013"}


def test_a_table_handed_to_a_scenario_factory_bound_as_a_test_marks_each_row_s_id() -> None:
    source = """
ROWS = [("CRE-044", 400), ("CRE-045", 401)]
OTHER = [("CRE-046", 401)]
test_rows = listing.rows_scenario(ROWS, "CRE-062")
helper = listing.rows_scenario(OTHER, "CRE-062")
"""
    marked, charged = scan_source(source)
    assert marked == {"CRE-044", "CRE-045"}
    assert charged == {"CRE-044", "CRE-045", "CRE-046", "CRE-062"}


def test_a_fault_proves_only_the_ids_it_declares_and_was_charged_to() -> None:
    rows = [
        fault("a", ("PAGE-005",), ("PAGE-005", "SER-030")),
        fault("b", ("PAGE-006",), ("SER-030",)),
        fault("c", ("PAGE-007",), ("PAGE-007",), caught=False),
    ]
    assert dynamic_proofs(rows) == {"PAGE-005": "a"}


def test_each_server_requirement_lands_in_one_of_three_figures() -> None:
    requirements = {
        rid: requirement(rid)
        for rid in ("A-001", "A-002", "A-003", "A-004", "A-005")
    } | {"A-006": requirement("A-006", untestable="seen inside only"),
         "A-007": requirement("A-007", role=Role.CLIENT)}  # fmt: skip
    marked = {"A-001", "A-002", "A-003", "A-004"}
    charged = {"A-001", "A-002", "A-004"}
    rows = [fault("f1", ("A-001",), ("A-001",)), fault("f4", ("A-004",), ("A-001",))]
    proofs = judge(requirements, marked, charged, rows)
    assert proofs.proven == {"A-001": "f1"}
    assert proofs.unobservable == {"A-006": "seen inside only"}
    assert proofs.not_yet_proven == {
        "A-002": "no sandbox fault declares it",
        "A-003": "no check or scenario charges it",
        "A-004": "its fault was not charged to it",
        "A-005": "no test names it",
    }
    assert proofs.figures() == (
        "server requirements: 1 proven, 1 unobservable with a reason, 4 not yet proven"
    )


def test_the_ratchet_file_counts_its_ids() -> None:
    count, ids = pending_file()
    assert count == len(ids), f"{PENDING.name}: count {count} but {len(ids)} IDs listed"
    known = load_requirements()
    unknown = sorted(i for i in ids if i not in known or known[i].role is not Role.SERVER)
    assert not unknown, f"{PENDING.name} lists IDs that are no server requirement: {unknown}"


def test_every_named_requirement_is_charged_by_some_check_or_is_pending() -> None:
    """Static half, without the kill rate: a requirement a test names but no code can charge
    (it appears only in markers) is a false claim of coverage unless the ratchet lists it."""
    requirements = load_requirements()
    marked, charged = scan(SUITE)
    _, pending = pending_file()
    uncharged = sorted(
        rid
        for rid in marked - charged
        if requirements[rid].role is Role.SERVER and not requirements[rid].untestable
    )
    lost = [rid for rid in uncharged if rid not in pending]
    assert not lost, f"named by a test but charged by no check or scenario: {lost}"


def test_a_requirement_reported_as_measured_by_a_load_campaign_is_proven_by_that_campaign() -> None:
    """`load_campaign: NAME` in requirements.yaml makes a conformance report say "load campaign"
    instead of "not covered": only true when a load-only fault of that campaign declares the ID
    (so test_load_smoke.py proves the campaign charges it) and no conformance scenario names it."""
    marked, _ = scan(SUITE)
    claimed = {r.id: r.load_campaign for r in load_requirements().values() if r.load_campaign}
    assert claimed, "no requirement says a load campaign measures it"
    unproven = {
        rid: campaign
        for rid, campaign in claimed.items()
        if not any(c == campaign and rid in ids for c, ids in subtle_faults().values())
    }
    assert unproven == {}
    assert sorted(set(claimed) & marked) == []  # a scenario naming it: the report judges it


# -- the change catalogue, consequence by consequence -------------------------------------------

RETITLED = Change(
    "film_retitled",
    "S",
    consequences=(
        Consequence("CAT-002", "catalog_film", "stays", "slug"),
        Consequence("CAT-085", "catalog_film", "stays", "code"),
    ),
)
SLUG_ROW = f"tests/conformance/{GENERATED_TEST}[film_retitled:CAT-002:catalog_film_slug_stays]"


def _caught_by(name: str, ids: tuple[str, ...], tests: list[str], exact: bool = True) -> dict:
    row = fault(name, ids, ids)
    return {**row, "exact_blame": exact, "caught_by": tests}


def test_a_consequence_is_proven_by_a_fault_of_its_requirement_its_own_test_caught() -> None:
    proofs = change_row_proofs([RETITLED], [_caught_by("reslug", ("CAT-002",), [SLUG_ROW])])
    assert proofs.proven == {"film_retitled:CAT-002:catalog_film_slug_stays": "reslug"}
    assert proofs.not_yet_proven == ("film_retitled:CAT-085:catalog_film_code_stays",)
    assert proofs.figures().startswith("change catalogue: 1/2 consequences")


def test_a_consequence_is_not_proven_by_another_test_another_rule_or_inexact_blame() -> None:
    other_test = "tests/conformance/test_catalog.py::test_ids_hold_between_reads"
    faults = [
        _caught_by("elsewhere", ("CAT-002",), [other_test]),
        _caught_by("other_rule", ("CAT-085",), [SLUG_ROW]),
        _caught_by("inexact", ("CAT-002",), [SLUG_ROW], exact=False),
        {**_caught_by("missed", ("CAT-002",), [SLUG_ROW]), "caught": False},
    ]
    assert change_row_proofs([RETITLED], faults).proven == {}
