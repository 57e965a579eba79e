"""Reading a data file (spec, catalogue, plan, results) with a one-line error naming the file.

    data = read_parsed(path, tomllib.loads, "not TOML", tomllib.TOMLDecodeError, UsageError)

An `OSError` becomes `UsageError("<path>: cannot read (No such file or directory)")`, a parse
error `UsageError("<path>: not TOML (<its message on one line>)")`; any other error is left
alone. Every layer may use it (spec/ imports nothing of the package).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import yaml

__all__ = ["parse_yaml", "read_parsed"]

T = TypeVar("T")
# libyaml's safe loader where PyYAML was built with it (about ten times faster on the spec's
# files than the pure-Python one, which is the fallback); both build the same safe values.
_SAFE_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def parse_yaml(text: str) -> Any:
    """`yaml.safe_load` of `text`, with libyaml when it is there."""
    return yaml.load(text, Loader=_SAFE_LOADER)


def read_parsed(
    path: Path,
    parse: Callable[[str], T],
    not_parsed: str,
    parse_errors: type[Exception] | tuple[type[Exception], ...],
    error: Callable[[str], Exception],
    where: str = "",
) -> T:
    """`parse` of the file's UTF-8 text; `where` goes before the path in the messages."""
    try:
        return parse(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise error(f"{where}{path}: cannot read ({exc.strerror})") from None
    except parse_errors as exc:
        reason = " ".join(str(exc).split())
        raise error(f"{where}{path}: {not_parsed} ({reason})") from None
