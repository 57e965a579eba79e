"""The product suite runs through the harness plugin (options, markers, fixtures, reports)."""

from collections.abc import Iterator

import pytest

from delivery_conformance.evidence.events import NOT_EXERCISED_PREFIX
from delivery_conformance.target.admin import AdminClient
from delivery_conformance.target.client import DeliveryClient
from delivery_conformance.target.profile import TargetProfile

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


OWN_CLOCK_ROLE = "limits"  # the role whose organisation's clock the clock-moving scenarios move


@pytest.fixture
def own_clock_role(admin: AdminClient, profile: TargetProfile) -> str:
    """The role a scenario marked `exclusive(LIMITS_ORGANISATION, OWN_CLOCK)` sends as, whose
    organisation's clock alone it moves (suite/exclusive.py). Against an admin API with one clock
    the scenario holds the whole target and sends as `films`, as it always did."""
    if not admin.organisation_clocks:
        return "films"
    if OWN_CLOCK_ROLE not in profile.keys:
        pytest.skip(
            f"{NOT_EXERCISED_PREFIX}the target moves a clock per organisation, and this scenario "
            f"moves role {OWN_CLOCK_ROLE!r}'s, for which the profile has no key"
        )
    return OWN_CLOCK_ROLE
