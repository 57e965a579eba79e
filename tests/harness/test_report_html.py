"""report.html and spec.html as text: order, anchors, collapsing, marking, redaction, spec links."""

from __future__ import annotations

import json
import re

from report_support import (
    BODY_VIOLATION,
    HEADERS_SECTION,
    SECRETS,
    clean_document,
    sample_document,
)

from delivery_conformance.reports.html import find_spec, render_html, render_spec, spec_anchors
from delivery_conformance.reports.view import BODY_LINES, build_view, safe_url, section_anchor
from delivery_conformance.reports.writer import FORMAT_VERSION
from delivery_conformance.spec.requirements import load_requirements

SPEC_MD = """# Delivery API v1: interface specification

## What the service does

Intro with `code`.

### Common response headers

| Header | Value |
|---|---|
| Service-API-Status | beta |

## Errors

### Formats

<script>alert(1)</script> raw HTML stays text.
"""


def html_of(document: dict | None = None) -> str:
    return render_html(document or sample_document(), spec_anchors(SPEC_MD))


def test_the_summary_comes_first_with_verdict_coverage_target_seed_and_version() -> None:
    html = html_of()
    summary = html[html.index('id="summary"') : html.index('id="filters"')]
    assert "VIOLATIONS FOUND" in summary
    assert re.search(r"coverage <b id=\"coverage\">\d+ of \d+ \([\d.]+%\)</b>", summary)
    assert "127.0.0.1:9" in summary and "seed 20261002" in summary
    assert f"delivery-conformance 0.1.0 (results format {FORMAT_VERSION})" in summary
    assert "12.5 s" in summary
    # Per-group counts: HDR has one failed, one warning, one error.
    row = re.search(r'<tr><td><a href="#g-HDR">HDR</a></td>(.*?)</tr>', html, re.S)
    assert row is not None
    cells = re.findall(r">(\d+)<", row.group(1))
    assert cells[:3] == ["1", "1", "1"]


def test_failures_are_listed_in_the_first_screen_with_links_to_their_anchors() -> None:
    html = html_of()
    first = html[html.index('id="first"') : html.index('id="by-group"')]
    assert 'href="#HDR-002-f1"' in first and "Service-API-Status not beta" in first
    assert 'href="#HDR-003-f1"' in first  # the warning
    assert "unattributed" in first and "undocumented status" in first
    assert 'id="HDR-002-f1"' in html and 'id="HDR-002"' in html


def test_every_requirement_has_an_anchor_a_group_and_a_filter_class() -> None:
    html = html_of()
    row = r'<details class="req [^"]*" id="([A-Z]+-\d+)" data-filter="([^"]+)"'
    rows = dict(re.findall(row, html))
    assert rows == {
        "GEN-001": "passed", "HDR-001": "passed", "HDR-002": "failed", "HDR-003": "warning",
        "HDR-004": "not exercised", "HDR-005": "other", "HDR-006": "other",
        "GEN-008": "other", "ERR-001": "other", "PLAY-001": "not exercised",
    }  # fmt: skip
    toc = html[html.index('id="toc"') : html.index('id="requirements"')]
    assert [g for g in re.findall(r'href="#g-([A-Z]+)"', toc)] == ["GEN", "HDR", "ERR", "PLAY"]
    for status in ("failed", "warning", "not exercised", "passed", "other"):
        assert f'data-show="{status}"' in html
    assert 'id="CLI-001"' in html and 'class="creq' in html  # client rows: not filtered


def test_a_requirement_the_run_did_not_select_is_not_selected_not_missed() -> None:
    html = html_of()
    assert 'class="req st-not-selected" id="HDR-006"' in html  # deselected by the run
    missed = html[html.index('id="not-exercised"') :]
    missed = missed[: missed.index("</details>")]
    assert re.findall(r'href="#([A-Z]+-\d+)"', missed) == ["HDR-004", "PLAY-001"]
    assert "2 requirements not exercised" in missed


def test_identical_findings_are_collapsed_with_a_count_and_their_scenarios() -> None:
    view = build_view(sample_document())
    (hdr002,) = [r for g in view.groups for r in g.requirements if r.id == "HDR-002"]
    first, second = hdr002.findings
    assert first.count == 2 and second.count == 1
    assert first.tests == (
        "tests/conformance/test_x.py::test_status_a", "tests/conformance/test_x.py::test_status_b",
    )  # fmt: skip
    assert "&times;2" in html_of()


def test_expected_none_lines_are_dropped_and_backticks_become_code() -> None:
    html = html_of()
    block = html[html.index('id="HDR-002-f2"') :]
    block = block[: block.index("</div>")]
    assert BODY_VIOLATION.expected == "none" and "expected:" not in block
    assert "actual: public" in block
    assert "the <code>Service-API-Status</code> header is <code>beta</code>" in html
    assert "`" not in html.split("<script>")[0].split("</style>")[1]


def test_the_offending_header_and_field_are_marked_and_bodies_pretty_printed() -> None:
    html = html_of()
    assert "<mark>Service-API-Status: ga</mark>" in html
    assert "<mark>    &#34;protection&#34;: &#34;public&#34;</mark>" in html
    assert "\n        &#34;id&#34;: &#34;it-0&#34;,\n" in html  # indented, one field a line


def test_a_long_body_is_capped_around_the_offending_line() -> None:
    view = build_view(sample_document())
    (hdr002,) = [r for g in view.groups for r in g.requirements if r.id == "HDR-002"]
    exchange = hdr002.findings[1].exchange
    assert exchange is not None
    body = exchange.response_body
    assert len(body) == BODY_LINES and any(line.marked for line in body)
    assert exchange.body_note.startswith("lines ") and "of " in exchange.body_note


def test_a_truncated_json_body_is_still_indented() -> None:
    document = sample_document()
    cut = '{"data": {"protection": "public", "items": [1, 2' + "…[9000 more characters]"
    document["requirements"][2]["violations"][0]["exchange"]["response_body"] = cut
    lines = build_view(document).groups[1].requirements[1].findings[0].exchange.response_body
    assert [line.text for line in lines][:3] == ["{", '  "data": {', '    "protection": "public",']
    assert lines[-1].text == "…[9000 more characters]"


def test_no_secret_reaches_the_page_and_target_text_is_escaped() -> None:
    document = sample_document()
    document["requirements"][2]["violations"][0]["actual"] = "<img src=x onerror=alert(1)>"
    html = html_of(document)
    for secret in SECRETS:
        assert secret not in html
    assert "<img" not in html and "&lt;img" in html
    assert safe_url("http://u:p@h:8/x") == "http://h:8/x"


def test_the_page_is_self_contained() -> None:
    html = html_of()
    assert "<link" not in html and "src=" not in html and "@import" not in html
    assert not re.search(r"(href|src)=\"https?:", html)
    assert html.count("<script>") == 1


def test_requirements_link_to_their_spec_section_only_when_it_exists() -> None:
    html = html_of()
    anchor = section_anchor(HEADERS_SECTION)
    assert f'href="spec.html#{anchor}"' in html
    assert 'href="spec.html#s-endpoints-post-playback"' not in html  # not in SPEC_MD
    assert "spec.html" not in render_html(clean_document(), ())


def test_spec_html_has_an_anchor_per_heading_path_and_links_back() -> None:
    page = render_spec(SPEC_MD, {HEADERS_SECTION: ["HDR-001", "HDR-002"]})
    assert f'<h3 id="{section_anchor(HEADERS_SECTION)}">' in page
    assert '<h3 id="s-errors-formats">' in page and '<h2 id="s-errors">' in page
    assert '<a href="report.html#HDR-002">HDR-002</a>' in page
    assert "<table>" in page and "<script>" not in page and "&lt;script&gt;" in page


def test_every_section_of_the_requirements_file_has_an_anchor_in_the_shipped_spec() -> None:
    spec = find_spec()
    assert spec is not None, "spec/delivery-api-v1.md is not shipped"
    anchors = spec_anchors(spec.read_text(encoding="utf-8"))
    missing = {
        r.section for r in load_requirements().values() if section_anchor(r.section) not in anchors
    }
    assert missing == set()


def test_a_clean_run_renders_without_findings_section() -> None:
    html = html_of(clean_document())
    assert 'id="first"' not in html and "CONFORMING" in html
    assert json.dumps(clean_document())  # the document itself is plain JSON


def test_a_default_title_does_not_repeat_the_requirement_id() -> None:
    document = sample_document()
    document["requirements"][2]["violations"][0]["title"] = "HDR-002 not met"
    view = build_view(document)
    (hdr002,) = [r for g in view.groups for r in g.requirements if r.id == "HDR-002"]
    assert hdr002.findings[0].title == "not met"
    assert hdr002.findings[0].message() == "not met: expected beta; got ga"
