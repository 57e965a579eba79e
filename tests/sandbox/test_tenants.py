"""The organisations of `--tenants N`: each with counters of its own, listed in the profile's
[tenants], and the two load-only faults that make them share (spec: Limits, LIM-002)."""

from __future__ import annotations

import random
import tomllib

import pytest

from delivery_sandbox.control.profile import render_profile
from delivery_sandbox.playback.limits import LimitQuirks, Limits
from delivery_sandbox.state.accounts import IDLE_TENANT, MAX_TENANTS, Tenants
from delivery_sandbox.state.context import Settings, build_sandbox

T0 = 1_800_000_000.0
ORGS = ("org_tenant_01", "org_tenant_02", "org_tenant_03", "org_tenant_idle")


def _drain(limits: Limits, org: str, counter: str = "catalog") -> int:
    """Requests admitted until the first refusal (the clock stands still)."""
    admitted = 0
    while limits.take_request(org, counter, T0) is None:
        admitted += 1
    return admitted


def test_tenant_organisations_have_counters_of_their_own() -> None:
    limits = Limits(scale=0.01, quirks=LimitQuirks(tenants=ORGS))
    assert _drain(limits, ORGS[0]) == 30
    assert _drain(limits, ORGS[1]) == 30


def test_pooled_buckets_let_one_tenant_take_what_the_others_leave() -> None:
    limits = Limits(scale=0.01, quirks=LimitQuirks(tenants=ORGS, tenants_pooled=True))
    assert _drain(limits, ORGS[0]) == 30 * len(ORGS)
    assert limits.take_request(ORGS[1], "catalog", T0) is not None
    assert limits.take_request("org_limits", "catalog", T0) is None  # not a tenant: its own
    limits.reset(ORGS[1])
    assert limits.take_request(ORGS[0], "catalog", T0) is None  # the pool refilled


def test_a_tenant_at_its_ceiling_drains_the_others_under_the_fault() -> None:
    quirks = LimitQuirks(tenants=ORGS, tenant_refusals_drain_others=True)
    limits = Limits(scale=0.01, quirks=quirks)
    assert _drain(limits, ORGS[0]) == 30
    for _ in range(10):
        assert limits.take_request(ORGS[0], "catalog", T0) is not None
    # 11 refusals of the first (the one that ended its drain and 10 more) spent 11 of each other
    assert _drain(limits, ORGS[1]) == 19 and _drain(limits, "org_limits") == 30
    assert limits.playback_gate(ORGS[2], T0) is None


def test_the_sandbox_lists_its_tenants_in_the_profile_and_not_in_keys() -> None:
    sb = build_sandbox(Settings(tenants=3), time_source=lambda: T0, rng=random.Random(1))
    profile = tomllib.loads(render_profile(sb, "http://127.0.0.1:1"))
    assert len(profile["tenants"]["keys"]) == 3 and profile["tenants"]["idle"].startswith("svc_")
    assert not any(role.startswith("tenant_") for role in profile["keys"])
    start = sb.accounts.start_keys()
    assert profile["tenants"]["keys"][1] == start["tenant_02"]
    assert profile["tenants"]["idle"] == start[IDLE_TENANT]
    assert sb.limits.quirks.tenants == ORGS
    assert {org for org, _ in sb.store.licences if org.startswith("org_tenant_")} == set(ORGS)


def test_without_tenants_the_profile_has_no_tenants_table() -> None:
    sb = build_sandbox(Settings(), time_source=lambda: T0, rng=random.Random(1))
    assert "tenants" not in tomllib.loads(render_profile(sb, "http://127.0.0.1:1"))


def test_tenant_count_is_bounded() -> None:
    assert len(Tenants.make(MAX_TENANTS).roles) == MAX_TENANTS + 1
    with pytest.raises(ValueError):
        Tenants.make(MAX_TENANTS + 1)
