"""junit.xml: one case per requirement, suites named after the tool and target, short messages."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from report_support import SECRETS, clean_document, sample_document

from delivery_conformance.reports.junit import render_junit
from delivery_conformance.reports.writer import write_document


def cases(xml: str) -> dict[str, ET.Element]:
    root = ET.fromstring(xml)
    return {c.get("name", "").split(" ")[0]: c for c in root.iter("testcase")}


def test_suites_are_named_after_the_tool_and_target_one_per_group() -> None:
    root = ET.fromstring(render_junit(sample_document()))
    assert root.get("name") == "delivery-conformance http://127.0.0.1:9"
    names = [s.get("name") for s in root.iter("testsuite")]
    assert names == [
        f"delivery-conformance {group} @ http://127.0.0.1:9"
        for group in ("GEN", "HDR", "ERR", "PLAY", "unattributed")
    ]
    hdr = root.find("testsuite[@name='delivery-conformance HDR @ http://127.0.0.1:9']")
    assert hdr is not None
    assert (hdr.get("tests"), hdr.get("failures"), hdr.get("errors"), hdr.get("skipped")) == (
        "5", "1", "1", "1",
    )  # fmt: skip
    assert "HDR-006" not in cases(render_junit(sample_document()))  # the run did not select it
    assert root.get("tests") == str(sum(1 for _ in root.iter("testcase")))


def test_each_status_maps_to_one_junit_outcome() -> None:
    found = cases(render_junit(sample_document()))
    passed = found["HDR-001"]
    assert [child.tag for child in passed] == ["system-out"]  # passed: scenarios only
    assert "test_ok" in (passed.findtext("system-out") or "")
    failure = found["HDR-002"].find("failure")
    assert failure is not None
    message = failure.get("message", "")
    assert message == "HDR-002: Service-API-Status not beta: expected beta; got ga"
    assert found["HDR-004"].find("skipped") is not None  # not exercised is never passed
    skipped = found["HDR-004"].find("skipped")
    assert skipped is not None and "the profile lacks admin" in skipped.get("message", "")
    assert found["HDR-005"].find("error") is not None
    assert found["GEN-008"].find("skipped") is not None
    assert found["ERR-001"].find("skipped") is not None
    assert "CLI-001" not in found  # client-side rules are not judged by a server run
    assert found["HDR-002"].get("classname") == "HDR"


def test_a_warning_is_not_a_failure_unless_strict(tmp_path: Path) -> None:
    lenient = cases(render_junit(sample_document()))["HDR-003"]
    assert lenient.find("failure") is None
    assert (lenient.findtext("system-out") or "").startswith("warning (should not met)")
    strict = cases(render_junit(sample_document(), strict=True))["HDR-003"]
    assert strict.find("failure") is not None
    # A run with --strict records it; the writer follows the record.
    document = sample_document()
    document["run"]["policy"]["strict"] = True
    write_document(document, tmp_path)
    written = cases((tmp_path / "junit.xml").read_text(encoding="utf-8"))["HDR-003"]
    assert written.find("failure") is not None


def test_a_case_takes_the_time_of_the_scenarios_that_judged_it() -> None:
    root = ET.fromstring(render_junit(sample_document()))
    assert cases(render_junit(sample_document()))["HDR-002"].get("time") == "0.750"
    hdr = root.find("testsuite[@name='delivery-conformance HDR @ http://127.0.0.1:9']")
    assert hdr is not None and hdr.get("time") == "0.750"
    assert root.get("time") == "12.500"  # the run's wall time


def test_messages_are_short_single_lines_without_class_prefixes() -> None:
    root = ET.fromstring(render_junit(sample_document()))
    for element in root.iter():
        message = element.get("message")
        if message is not None:
            assert "\n" not in message and len(message) <= 300
            assert "delivery_conformance" not in message and "Error:" not in message


def test_scenarios_are_the_evidence_and_findings_are_collapsed() -> None:
    out = cases(render_junit(sample_document()))["HDR-002"].findtext("system-out") or ""
    assert "Service-API-Status not beta: expected beta; got ga (x2)" in out
    assert "  tests/conformance/test_x.py::test_status_a" in out


def test_an_unattributed_finding_is_a_failed_case_of_its_own() -> None:
    root = ET.fromstring(render_junit(sample_document()))
    (case,) = [c for c in root.iter("testcase") if c.get("classname") == "unattributed"]
    assert case.find("failure") is not None and "undocumented status" in case.get("name", "")


def test_no_secret_reaches_junit_and_a_clean_run_has_no_failure() -> None:
    xml = render_junit(sample_document())
    for secret in SECRETS:
        assert secret not in xml
    root = ET.fromstring(render_junit(clean_document()))
    assert root.get("failures") == "0" and root.get("tests") == "1"
