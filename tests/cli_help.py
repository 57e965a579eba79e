"""Every option of a command line says what it does (issue: Reports and daily use, CLI).

`undocumented(parser)` walks a parser and its subcommands and names each argument that has no
help text; the self-tests of each package call it on their own command line.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator


def undocumented(parser: argparse.ArgumentParser, path: str = "") -> Iterator[str]:
    """`<subcommand path> <option or argument>` for every argument without help text."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from undocumented(sub, f"{path} {name}".strip())
        elif action.help is None:
            yield f"{path} {'/'.join(action.option_strings) or action.dest}".strip()
