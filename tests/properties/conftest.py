"""Property tests run through the harness plugin: `profile`, `client`, markers, reports."""

from __future__ import annotations

import os

import pytest

from delivery_conformance.client import DeliveryClient
from delivery_conformance.profile import TargetProfile
from delivery_conformance.properties import PropertySettings, configure, load_schema

pytest_plugins = ["delivery_conformance.plugin"]


@pytest.fixture(scope="session")
def property_settings() -> PropertySettings:
    return PropertySettings.from_env(os.environ)


@pytest.fixture(scope="session")
def delivery_schema(profile: TargetProfile, client: DeliveryClient, property_settings):  # type: ignore[no-untyped-def]
    configure(profile, dict(client.pins))
    return load_schema(profile, property_settings)
