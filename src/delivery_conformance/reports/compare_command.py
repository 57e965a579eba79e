"""The `compare` subcommand (wired into cli.py by `add_commands`).

    delivery-conformance compare OLD/results.json NEW/results.json
                                 [--summary-md FILE] [--html FILE] [--fail-on-behaviour]

Prints the comparison (reports/compare.py) on stdout; `--summary-md` appends it as Markdown
(a PR comment or a CI step summary), `--html` writes a self-contained page. Exit codes
(docs/release-gate.md > Comparing two runs): 0 no regression, 1 a regression (a new failure, a
newly errored or newly not exercised requirement, a coverage drop, a new unattributed finding;
with `--fail-on-behaviour` also a behavioural change), 2 bad input: a file missing or not
JSON, not a results.json (schemas/results.schema.json), results of another major format
version, or the results of two kinds of run (a server run and a client certification).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from delivery_conformance.exceptions import UsageError
from delivery_conformance.reports.compare import compare_documents, kind_of
from delivery_conformance.reports.compare_render import render_html, render_markdown, render_text
from delivery_conformance.reports.writer import FORMAT_VERSION, check_results
from delivery_conformance.spec.files import read_parsed

__all__ = ["COMMANDS", "EXIT_NO_REGRESSION", "EXIT_REGRESSION", "add_commands", "read_results"]

EXIT_NO_REGRESSION = 0
EXIT_REGRESSION = 1
MAJOR = FORMAT_VERSION.split(".")[0]


def add_commands(commands: Any) -> None:
    compare = commands.add_parser(
        "compare", help="compare two results.json: regressions, fixes, coverage, behaviour"
    )
    compare.add_argument("old", type=Path, metavar="OLD", help="results.json of the earlier run")
    compare.add_argument("new", type=Path, metavar="NEW", help="results.json of the later run")
    compare.add_argument("--summary-md", type=Path, metavar="FILE",
                         help="append the comparison as Markdown (a PR comment, a CI step "
                         "summary)")  # fmt: skip
    compare.add_argument("--html", type=Path, metavar="FILE",
                         help="write the comparison as a self-contained HTML page")  # fmt: skip
    compare.add_argument("--fail-on-behaviour", action="store_true",
                         help="a behavioural change (limits, Retry-After, page sizes, "
                         "deprecation headers, versions) is a regression too (exit 1)")  # fmt: skip


def _version(document: Any, label: str, path: Path) -> str:
    if not isinstance(document, dict) or not isinstance(document.get("format_version"), str):
        raise UsageError(f"{label} {path}: not a results file (no format_version)")
    return str(document["format_version"])


def read_results(old: Path, new: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """Both documents, checked: one major format version, the schema, one kind of run."""
    named = (("OLD", old), ("NEW", new))
    documents = [
        read_parsed(path, json.loads, "not JSON", ValueError, UsageError, f"{label} ")
        for label, path in named
    ]
    versions = [_version(d, *name) for d, name in zip(documents, named, strict=True)]
    for label, path, version in zip(("OLD", "NEW"), (old, new), versions, strict=True):
        if version.split(".")[0] != MAJOR:
            raise UsageError(
                f"{label} {path}: results format {version}, this compare reads {MAJOR}.x "
                f"(OLD is {versions[0]}, NEW is {versions[1]})"
            )
    check_results(documents[0], f"OLD {old}")
    check_results(documents[1], f"NEW {new}")
    kinds = [kind_of(d) for d in documents]
    if kinds[0] != kinds[1]:
        raise UsageError(
            f"OLD {old} is a {kinds[0]}, NEW {new} a {kinds[1]}: compare two runs of one kind"
        )
    return documents[0], documents[1]


def _append(path: Path, text: str) -> None:
    try:
        with path.open("a", encoding="utf-8") as out:
            out.write(text)
    except OSError as exc:
        raise UsageError(f"--summary-md {path}: cannot write ({exc.strerror})") from None


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--html {path}: cannot write ({exc.strerror})") from None


def command_compare(args: argparse.Namespace) -> int:
    old, new = read_results(args.old, args.new)
    comparison = compare_documents(old, new)
    strict = bool(args.fail_on_behaviour)
    print(render_text(comparison, str(args.old), str(args.new), strict), end="", flush=True)
    if args.summary_md is not None:
        _append(args.summary_md, render_markdown(comparison, strict))
    if args.html is not None:
        _write(args.html, render_html(comparison, str(args.old), str(args.new), strict))
    regressed = comparison.regressed or (strict and bool(comparison.behaviour))
    return EXIT_REGRESSION if regressed else EXIT_NO_REGRESSION


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {"compare": command_compare}
