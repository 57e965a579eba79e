"""The `contract-diff` subcommand (wired into cli.py by `add_commands`).

    delivery-conformance contract-diff OLD.yaml NEW.yaml [--markdown FILE] [--json FILE]
                                       [--fail-on breaking|additive|any]

Reads two OpenAPI 3.x documents (YAML or JSON), lists every change from OLD to NEW classed
breaking, additive or editorial (spec/contract_diff.py; spec: Versioning 3), and writes the same
as a Markdown table for a pull-request comment (appended to the file, as `run --summary-md`
does, so `$GITHUB_STEP_SUMMARY` can take it) and as JSON (the file written anew). Identical
changes met on several operations (a shared component) are one line of the list and one row of
the table, naming the operations; the JSON has every change.

Exit codes: 0 nothing at or above the `--fail-on` class (default: nothing breaking), 1 at least
one such change, 2 bad input (a missing or unreadable file, neither YAML nor JSON, not OpenAPI
3.x, a `$ref` that does not resolve inside its document) or an output file that cannot be
written, as one line on stderr.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from delivery_conformance.exceptions import UsageError
from delivery_conformance.spec.contract_diff import (
    Change,
    ChangeClass,
    ContractError,
    check_document,
    contract_diff,
)
from delivery_conformance.spec.contract_schema import FAMILY, RULE_KEYWORDS
from delivery_conformance.spec.files import parse_yaml, read_parsed

__all__ = ["COMMANDS", "add_commands", "grouped", "markdown_table", "read_openapi"]

JSON_FORMAT = 1
FAIL_ON = {
    "breaking": {ChangeClass.BREAKING},
    "additive": {ChangeClass.BREAKING, ChangeClass.ADDITIVE},
    "any": set(ChangeClass),
}
ORDER = (ChangeClass.BREAKING, ChangeClass.ADDITIVE, ChangeClass.EDITORIAL)
SHOWN_OPERATIONS = 4
API_PREFIX = "/api/delivery/v1"  # left out of the operations a grouped line names
SHOWN_VALUE = 80

# Schema keywords a change's pointer may end with: named beside the place in the list and table.
KEYWORDS = frozenset({*FAMILY, *RULE_KEYWORDS, "type", "enum", "x-known-values", "default",
                      "additionalProperties", "oneOf", "anyOf"})  # fmt: skip


def add_commands(commands: Any) -> None:
    diff = commands.add_parser(
        "contract-diff",
        help="compare two OpenAPI documents: every change classed breaking, additive or "
        "editorial (exit 1 on breaking)",
    )
    diff.add_argument("old", type=Path, help="the earlier OpenAPI document (YAML or JSON)")
    diff.add_argument("new", type=Path, help="the later OpenAPI document (YAML or JSON)")
    diff.add_argument("--markdown", type=Path, metavar="FILE",
                      help="append the changes as a Markdown table (a PR comment, "
                      "$GITHUB_STEP_SUMMARY)")  # fmt: skip
    diff.add_argument("--json", type=Path, metavar="FILE",
                      help="write every change as JSON (kind, class, location, old, new, "
                      "reason)")  # fmt: skip
    diff.add_argument("--fail-on", choices=list(FAIL_ON), default="breaking",
                      help="exit 1 on a change of this class or above (default: "
                      "breaking)")  # fmt: skip


def _parse(text: str) -> Any:
    if text.lstrip().startswith("{"):
        return json.loads(text)
    return parse_yaml(text)


def read_openapi(path: Path) -> dict[str, Any]:
    """The parsed document, checked (OpenAPI 3.x, every `$ref` resolves, every node it compares
    of the right shape); else a `UsageError` naming the file."""
    document = read_parsed(path, _parse, "neither YAML nor JSON", (yaml.YAMLError, ValueError),
                           UsageError)  # fmt: skip
    try:
        contract_diff(document, document)  # walks every operation: a malformed node names its file
    except ContractError as error:
        raise UsageError(f"{path}: {error}") from None
    return check_document(document)


def command_contract_diff(args: argparse.Namespace) -> int:
    for output in filter(None, (args.markdown, args.json)):  # before any file is read or written
        if not output.parent.is_dir():
            raise UsageError(f"{output}: cannot write (no folder {output.parent})")
    old, new = read_openapi(args.old), read_openapi(args.new)
    try:
        changes = contract_diff(old, new)
    except ContractError as error:
        raise UsageError(f"contract-diff {args.old} {args.new}: {error}") from None
    counts = {c: sum(1 for x in changes if x.change_class is c) for c in ORDER}
    if args.markdown is not None:
        _write(args.markdown, markdown_table(changes, args.old, args.new), append=True)
    if args.json is not None:
        _write(args.json, json.dumps(json_document(changes, args.old, args.new), indent=2,
                                     ensure_ascii=False) + "\n")  # fmt: skip
    print("\n".join(text_lines(changes, args.old, args.new)))
    failing = FAIL_ON[args.fail_on]
    return 1 if any(counts[c] for c in failing) else 0


def _write(path: Path, text: str, append: bool = False) -> None:
    try:
        with path.open("a" if append else "w", encoding="utf-8") as out:
            out.write(text)
    except OSError as error:
        raise UsageError(f"{path}: cannot write ({error.strerror})") from None


def _summary(changes: list[Change]) -> str:
    counts = [sum(1 for c in changes if c.change_class is k) for k in ORDER]
    return ", ".join(f"{n} {k.value}" for n, k in zip(counts, ORDER, strict=True))


def json_document(changes: list[Change], old: Path, new: Path) -> dict[str, Any]:
    return {
        "format": JSON_FORMAT,
        "old": str(old),
        "new": str(new),
        "counts": {k.value: sum(1 for c in changes if c.change_class is k) for k in ORDER},
        "changes": [c.as_dict() for c in changes],
    }


def grouped(changes: list[Change]) -> list[tuple[Change, list[str]]]:
    """Changes that differ only by operation, as one (first change, operations), by class."""
    groups: dict[tuple[str, ...], tuple[Change, list[str]]] = {}
    for change in changes:
        place = _place(change)
        key = (change.change_class.value, change.kind, place, _value(change.old),
               _value(change.new), change.reason)  # fmt: skip
        _, operations = groups.setdefault(key, (change, []))
        operation = change.operation().replace(API_PREFIX, "", 1)
        part = change.part.removeprefix("response ").replace(" application/json", "")
        shown = f"{operation} {part}" if change.field else operation
        if shown not in operations:
            operations.append(shown)
    return sorted(groups.values(), key=lambda g: ORDER.index(g[0].change_class))


def _place(change: Change) -> str:
    """The field (or the part of the operation), and the schema keyword that changed."""
    keyword = change.pointer.rsplit("/", 1)[-1]
    place = change.field or change.part
    return f"{place} ({keyword})" if keyword in KEYWORDS else place


def _value(value: Any) -> str:
    if value is None:
        return "-"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= SHOWN_VALUE else text[: SHOWN_VALUE - 3] + "..."


def _operations(operations: list[str]) -> str:
    shown = ", ".join(operations[:SHOWN_OPERATIONS])
    more = len(operations) - SHOWN_OPERATIONS
    return f"{shown} (+{more} more)" if more > 0 else shown


def text_lines(changes: list[Change], old: Path, new: Path) -> list[str]:
    lines = [f"contract-diff {old} -> {new}: {_summary(changes)}"]
    if not changes:
        return [*lines, "no change"]
    current = None
    for change, operations in grouped(changes):
        if change.change_class is not current:
            current = change.change_class
            lines.append(current.value.upper())
        lines.append(f"  {change.kind} in {_operations(operations)}: {_place(change)}")
        lines.append(f"      {_value(change.old)} -> {_value(change.new)} ({change.reason})")
    return lines


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown_table(changes: list[Change], old: Path, new: Path) -> str:
    title = f"### Contract diff: {_summary(changes)}\n\n`{old}` -> `{new}`\n"
    if not changes:
        return title + "\nNo change.\n"
    rows = [
        "| Class | Change | Operations | Where | Old | New | Why |",
        "|---|---|---|---|---|---|---|",
    ]
    for change, operations in grouped(changes):
        cells = (
            f"**{change.change_class.value}**" if change.change_class is ChangeClass.BREAKING
            else change.change_class.value,
            f"`{change.kind}`", _operations(operations), _place(change),
            f"`{_value(change.old)}`", f"`{_value(change.new)}`", change.reason,
        )  # fmt: skip
        rows.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return title + "\n" + "\n".join(rows) + "\n"


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "contract-diff": command_contract_diff,
}
