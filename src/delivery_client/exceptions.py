"""Every error the reference client raises, one tree (no traceback reaches the CLI user):

    ClientError                      base; `exit_code` is what the CLI returns for it
    ├── UsageError                   bad arguments or environment (exit 2)
    ├── RequestFailed                an answer the policy does not retry (exit 4)
    │   ├── NotNow                   503 `not_ready`: try again at the next play or sync
    │   └── RetriesExhausted         retryable, but retries, time or the budget ran out (exit 5)
    │       └── RetryBudgetExhausted the process-wide retry budget refused the retry
    ├── TransportFailure             no answer at all after the retries (exit 5)
    ├── BadResponse                  an answer the client cannot read: HTML, garbage, truncated
    │                                JSON, a looping cursor (exit 6)
    └── StateError                   the local SQLite state cannot be opened or written (exit 7)

Messages are one line and never hold a secret (keys, tokens, signed links): the text is built
from statuses, codes, paths and counts only.
"""

from __future__ import annotations

__all__ = [
    "BadResponse",
    "ClientError",
    "NotNow",
    "RequestFailed",
    "RetriesExhausted",
    "RetryBudgetExhausted",
    "StateError",
    "TransportFailure",
    "UsageError",
]


class ClientError(Exception):
    exit_code = 1


class UsageError(ClientError):
    exit_code = 2


class RequestFailed(ClientError):
    """An answer that ends the call. `code` is `error_code` (flat) or `code` (envelope)."""

    exit_code = 4

    def __init__(self, message: str, *, status: int, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


class NotNow(RequestFailed):
    pass


class RetriesExhausted(RequestFailed):
    exit_code = 5


class RetryBudgetExhausted(RetriesExhausted):
    pass


class TransportFailure(ClientError):
    exit_code = 5


class BadResponse(ClientError):
    exit_code = 6


class StateError(ClientError):
    exit_code = 7
