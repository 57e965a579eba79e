"""The fault catalogue of docs/sandbox.md (once in README.md) is the sandbox's fault table."""

from __future__ import annotations

from pathlib import Path

from delivery_sandbox.faults.registry import markdown

README = Path(__file__).resolve().parents[2] / "docs" / "sandbox.md"


def test_readme_fault_catalogue_matches_the_table() -> None:
    text = README.read_text(encoding="utf-8")
    block = text.split("<!-- faults:start -->", 1)[1].split("<!-- faults:end -->", 1)[0]
    assert block.strip() == markdown()
