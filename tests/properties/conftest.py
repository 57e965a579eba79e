"""Property tests run through the harness plugin: `profile`, `client`, markers, reports."""

from __future__ import annotations

import dataclasses
import os

import pytest

from delivery_conformance.properties import PropertySettings, configure, load_schema
from delivery_conformance.target.client import DeliveryClient
from delivery_conformance.target.profile import TargetProfile

pytest_plugins = ["delivery_conformance.suite.plugin"]


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """The property seed is the run's seed: `--conformance-seed` (set by `delivery-conformance
    run --seed`) wins; without it, DELIVERY_PROPERTIES_SEED or the default, recorded as the run's
    seed in results.json before the plugin reads it."""
    if config.getoption("conformance_seed", None) is None:
        config.option.conformance_seed = PropertySettings.from_env(os.environ).seed


@pytest.fixture(scope="session")
def property_settings(pytestconfig: pytest.Config) -> PropertySettings:
    settings = PropertySettings.from_env(os.environ)
    seed = pytestconfig.getoption("conformance_seed", None)
    return settings if seed is None else dataclasses.replace(settings, seed=int(seed))


@pytest.fixture(scope="session")
def delivery_schema(profile: TargetProfile, client: DeliveryClient, property_settings):  # type: ignore[no-untyped-def]
    configure(profile, dict(client.pins))
    return load_schema(profile, property_settings)
