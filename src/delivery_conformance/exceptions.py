"""Every error the harness raises on purpose, and the exit code each one maps to.

    HarnessError                  base; carries a one-line message and an exit code
    ├── ProfileError              exit 2: the target profile is missing or malformed
    ├── UsageError                exit 2: bad command-line arguments
    ├── TargetUnreachable         exit 3: connection refused, DNS, timeout
    ├── TargetGarbage             exit 3 when the whole run cannot go on; inside a scenario
    │                             it is turned into a violation (HTML or non-JSON where
    │                             JSON is due)
    ├── HarnessFailure            exit 3: the harness itself could not do its job
    └── RunStopped                the run reached --max-duration, or a signal asked it to
                                  stop: the test is reported not exercised (never a pass)

A violation of the contract is not an exception of this tree: it is a typed
`Violation` (see `checks`), raised inside tests as `ConformanceFailure`.
"""

from __future__ import annotations

from delivery_conformance.verdict import Verdict

__all__ = [
    "HarnessError",
    "HarnessFailure",
    "ProfileError",
    "RunStopped",
    "TargetGarbage",
    "TargetUnreachable",
    "UsageError",
]


class HarnessError(Exception):
    """Base class. `str(error)` is always a single line fit for a terminal."""

    exit_code = Verdict.HARNESS.exit_code

    def __init__(self, message: str) -> None:
        super().__init__(" ".join(message.split()))

    @property
    def message(self) -> str:
        return str(self)


class ProfileError(HarnessError):
    """The target profile is missing or malformed."""

    exit_code = Verdict.USAGE.exit_code


class UsageError(HarnessError):
    """Bad command-line arguments."""

    exit_code = Verdict.USAGE.exit_code


class TargetUnreachable(HarnessError):
    """Connection refused, DNS, timeout (the base's exit code)."""


class TargetGarbage(HarnessError):
    """HTML or non-JSON where JSON is due (the base's exit code when the run cannot go on)."""


class HarnessFailure(HarnessError):
    """The harness itself could not do its job (the base's exit code)."""


class RunStopped(HarnessError):
    """The run reached --max-duration, or a signal asked it to stop."""

    exit_code = Verdict.TIMED_OUT.exit_code
