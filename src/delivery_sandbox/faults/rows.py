"""Fault rows as plain data: a text table, one fault a line.

A line reads `name | ID ID ... | summary`; a line starting with `#` is a comment. `fault_rows`
turns the table into the `(name, requirement IDs, summary)` rows the fault table keeps, so every
table file writes its rows the same way and a reader scans them like the catalogue of
docs/sandbox.md > Fault catalogue.
"""

__all__ = ["FaultRow", "fault_rows"]

FaultRow = tuple[str, tuple[str, ...], str]


def fault_rows(table: str) -> tuple[FaultRow, ...]:
    """The rows of a `name | IDs | summary` text table; comment and blank lines are skipped."""
    rows = []
    for line in table.strip().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, ids, summary = (cell.strip() for cell in line.split("|"))
        rows.append((name, tuple(ids.split()), summary))
    return tuple(rows)
