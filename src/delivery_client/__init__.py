"""delivery_client: a reference client of the Delivery API v1 that follows the spec's client
rules (retry policy and budget, paging, safe catalog sync, creatives sync, batch retries,
secrets). Built on httpx; imports nothing from the harness or the sandbox.
"""

from importlib.metadata import PackageNotFoundError, version

from delivery_client.budget import RetryBudget, process_budget
from delivery_client.client import DeliveryClient, Reply
from delivery_client.exceptions import (
    BadResponse,
    ClientError,
    NotNow,
    RequestFailed,
    RetriesExhausted,
    RetryBudgetExhausted,
    StateError,
    TransportFailure,
    UsageError,
)
from delivery_client.policy import BACKGROUND, INTERACTIVE, RetryProfile
from delivery_client.settings import DEFAULT_SETTINGS, Settings

__all__ = [
    "BACKGROUND",
    "DEFAULT_SETTINGS",
    "INTERACTIVE",
    "BadResponse",
    "ClientError",
    "DeliveryClient",
    "NotNow",
    "Reply",
    "RequestFailed",
    "RetriesExhausted",
    "RetryBudget",
    "RetryBudgetExhausted",
    "RetryProfile",
    "Settings",
    "StateError",
    "TransportFailure",
    "UsageError",
    "__version__",
    "process_budget",
]

try:  # one version for the three packages: pyproject reads delivery_conformance.__version__
    __version__ = version("delivery-conformance")
except PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0+unknown"
