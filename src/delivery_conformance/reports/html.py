"""report.html and spec.html: self-contained pages rendered with Jinja2 (autoescape on).

report.html, in reading order: the summary (verdict, coverage, counts per requirement group,
target, duration, tool version, seed), findings no requirement names, a table of contents per
group, filters (failed / warning / not exercised / passed / other; a few lines of inline script,
no network), then every requirement under its group with an anchor (`#PLAY-012`), each finding
with its own (`#PLAY-012-f1`), and a link to its section in spec.html.

spec.html is the spec's Markdown (spec/delivery-api-v1.md, shipped in the package) rendered with
an id on every heading (`section_anchor` of its heading path) and, under each heading, the
requirement IDs it holds, linked back into the report.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader, select_autoescape
from markdown_it import MarkdownIt
from markupsafe import Markup, escape

from delivery_conformance.exceptions import HarnessFailure
from delivery_conformance.reports.view import build_view, section_anchor
from delivery_conformance.resources import spec_path

__all__ = ["SPEC_NAME", "find_spec", "render_html", "render_spec", "spec_anchors"]

SPEC_NAME = "delivery-api-v1.md"
_BACKTICKS = re.compile(r"`([^`]+)`")

_ENV = Environment(
    loader=PackageLoader("delivery_conformance.reports", "templates"),
    autoescape=select_autoescape(default=True, default_for_string=True),
    trim_blocks=True,
    lstrip_blocks=True,
)


def _code(text: str) -> Markup:
    """Escape, then show `backticked` parts as <code>."""
    return Markup(_BACKTICKS.sub(r"<code>\1</code>", str(escape(text))))


def _utc(timestamp: float) -> str:
    return dt.datetime.fromtimestamp(timestamp, dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


_ENV.filters["code"] = _code
_ENV.filters["utc"] = _utc
_ENV.filters["anchor"] = section_anchor


def find_spec() -> Path | None:
    """The spec's Markdown: the wheel's copy or the checkout's (see `resources`); None if absent."""
    try:
        path = spec_path(SPEC_NAME)
    except HarnessFailure:
        return None
    return path if path.is_file() else None


def render_html(document: Mapping[str, Any], spec_sections: Iterable[str] = ()) -> str:
    """report.html of one results document; `spec_sections` are the anchors spec.html has."""
    view = build_view(document)
    return _ENV.get_template("report.html.j2").render(
        view=view, spec_sections=frozenset(spec_sections)
    )


def _headings(md: MarkdownIt, text: str) -> tuple[list[Any], dict[int, str]]:
    """Tokens with an id set on every heading, and each heading's path by token index."""
    tokens = md.parse(text)
    stack: list[tuple[int, str]] = []
    paths: dict[int, str] = {}
    for index, token in enumerate(tokens):
        if token.type != "heading_open":
            continue
        level = int(token.tag[1])
        title = tokens[index + 1].content
        stack = [(lvl, name) for lvl, name in stack if lvl < level]
        stack.append((level, title))
        # Paths start below the document title, as in spec/requirements.yaml.
        names = [name for lvl, name in stack if lvl > 1] or [title]
        paths[index] = " > ".join(names)
        token.attrSet("id", section_anchor(paths[index]))
    return tokens, paths


def spec_anchors(text: str) -> set[str]:
    """The heading anchors spec.html will have for this Markdown."""
    _, paths = _headings(MarkdownIt("commonmark", {"html": False}), text)
    return {section_anchor(path) for path in paths.values()}


def render_spec(text: str, requirements: Mapping[str, Iterable[str]]) -> str:
    """spec.html: the Markdown with heading anchors; `requirements` maps a section to its IDs."""
    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    tokens, paths = _headings(md, text)
    by_anchor: dict[str, list[str]] = {}
    for section, ids in requirements.items():
        by_anchor.setdefault(section_anchor(section), []).extend(ids)
    parts: list[str] = []
    start = 0
    for index in sorted(paths):
        close = next(i for i in range(index, len(tokens)) if tokens[i].type == "heading_close")
        parts.append(md.renderer.render(tokens[start : close + 1], md.options, {}))
        ids = by_anchor.get(section_anchor(paths[index]), [])
        if ids:
            links = " ".join(f'<a href="report.html#{escape(i)}">{escape(i)}</a>' for i in ids)
            parts.append(f'<p class="reqs">Requirements: {links}</p>\n')
        start = close + 1
    parts.append(md.renderer.render(tokens[start:], md.options, {}))
    return _ENV.get_template("spec.html.j2").render(body=Markup("".join(parts)))
