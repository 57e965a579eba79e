"""The product suite runs through the harness plugin (options, markers, fixtures, reports)."""

from collections.abc import Iterator

import pytest

from delivery_conformance.target.client import DeliveryClient

pytest_plugins = ["delivery_conformance.suite.plugin"]


@pytest.fixture
def unpaused(client: DeliveryClient) -> Iterator[None]:
    """For a timed poll: a pacing wait inside it would read as a slow change. The requests are
    not delayed but still charged to the budget (shared counters; a poll sends at most 4 a
    second, for at most the spec's 30 or 60 s)."""
    with client.burst("a timed freshness poll", charged=True):
        yield


@pytest.fixture
def dedicated_counters(client: DeliveryClient) -> Iterator[None]:
    """For a limits scenario (`usefixtures`): no pacing, since it spends counters it lowered on
    its own, dedicated organisation."""
    with client.burst("limit scenario on a dedicated organisation"):
        yield
