"""report.html in headless Chromium (Debian's, driven by Playwright; `make browser` installs it).

The page is rendered from a synthetic run with failed, warning, not exercised, passed and other
rows. It must load with no console error, show a failure in the first screen, and each filter
must show exactly its rows. A browser that cannot start fails the test: it is never skipped.
A screenshot goes to the temporary directory (never the repository), for a person to look at.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, sync_playwright
from report_support import sample_document

from delivery_conformance.reports.view import build_view
from delivery_conformance.reports.writer import write_document

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip
VIEWPORT = {"width": 1280, "height": 800}
SCREENSHOT = Path(tempfile.gettempdir()) / "delivery-conformance-report.png"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    assert Path(CHROMIUM).exists(), f"{CHROMIUM} missing: run `make browser`"
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS, timeout=30_000)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return sample_document()


@pytest.fixture
def page(browser: Browser, document: dict[str, Any], tmp_path: Path) -> Iterator[Page]:
    html = write_document(document, tmp_path / "run")
    page = browser.new_page(viewport=VIEWPORT)  # type: ignore[arg-type]
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file:") else r.abort())
    page.goto(html.as_uri(), wait_until="load")
    yield page
    assert errors == [], errors  # no console error, whatever the test clicked
    page.close()


def visible_rows(page: Page) -> set[str]:
    rows = page.locator("details.req")
    return {
        rows.nth(i).get_attribute("id") or ""
        for i in range(rows.count())
        if rows.nth(i).is_visible()
    }


def ids_by_filter(document: dict[str, Any]) -> dict[str, set[str]]:
    """What each filter must show: the rows whose status it names (report_view's mapping)."""
    found: dict[str, set[str]] = {}
    for group in build_view(document).groups:
        for row in group.requirements:
            found.setdefault(row.filter, set()).add(row.id)
    return found


def test_a_failure_is_visible_in_the_first_screen(page: Page) -> None:
    link = page.locator('#first a[href="#HDR-002-f1"]')
    assert link.is_visible()
    box = link.bounding_box()
    assert box is not None and box["y"] + box["height"] <= VIEWPORT["height"]
    assert page.locator("#verdict").inner_text() == "VIOLATIONS FOUND"
    page.screenshot(path=str(SCREENSHOT))


def test_each_filter_shows_exactly_its_rows(page: Page, document: dict[str, Any]) -> None:
    expected = ids_by_filter(document)
    assert set(expected) == {"failed", "warning", "not exercised", "passed", "other"}
    every = set().union(*expected.values())
    assert visible_rows(page) == every
    for name, ids in expected.items():
        page.locator(f'#filters button[data-show="{name}"]').click()
        assert visible_rows(page) == ids, name
        assert (
            page.locator(f'#filters button[data-show="{name}"]').get_attribute("aria-pressed")
            == "true"
        )
        hidden_groups = {
            g.get_attribute("id") for g in page.locator("section.group").all() if not g.is_visible()
        }
        shown_groups = {f"g-{rid.split('-')[0]}" for rid in ids}
        assert hidden_groups.isdisjoint(shown_groups) and hidden_groups
    page.locator('#filters button[data-show="all"]').click()
    assert visible_rows(page) == every


def test_a_finding_link_opens_its_row_even_when_filtered_out(page: Page) -> None:
    page.locator('#filters button[data-show="passed"]').click()
    assert not page.locator("#HDR-002-f1").is_visible()
    page.locator('#first a[href="#HDR-002-f1"]').click()
    finding = page.locator("#HDR-002-f1")
    finding.wait_for(state="visible", timeout=5_000)
    assert "Service-API-Status not beta" in finding.inner_text()
    assert finding.locator("mark").first.inner_text() == "Service-API-Status: ga"


def test_a_requirement_links_to_its_spec_section(page: Page) -> None:
    page.locator("#HDR-001 > summary").click()  # a passed row opens on click
    link = page.locator('#HDR-001 a[href^="spec.html#"]')
    anchor = (link.get_attribute("href") or "").split("#", 1)[1]
    link.click()
    page.wait_for_url(f"**/spec.html#{anchor}")
    heading = page.locator(f"[id='{anchor}']")
    assert heading.is_visible() and "Common response headers" in heading.inner_text()
    assert page.locator('a[href="report.html#HDR-001"]').count() == 1
