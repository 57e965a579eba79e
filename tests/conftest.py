"""The root of the test tree: `pytest tests/` runs every self-test (tests/harness, tests/sandbox,
tests/client) from the repository root.

The product suites (tests/conformance, tests/properties) run only through the harness plugin,
which drives a whole session against one target (profile, pacing, reports): `delivery-conformance
run`, or pytest on their folders (`pytest tests/conformance`: their conftest loads the plugin).
In a session without that plugin they are left out of collection, and the session header says
so: left out is not passed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PRODUCT_SUITES = ("conformance", "properties")
PLUGIN_NAMES = ("delivery_conformance.suite.plugin", "delivery_conformance.plugin")


def _plugin_loaded(config: pytest.Config) -> bool:
    return any(config.pluginmanager.has_plugin(name) for name in PLUGIN_NAMES)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    if collection_path.parent == HERE and collection_path.name in PRODUCT_SUITES:
        return True if not _plugin_loaded(config) else None
    return None


def pytest_report_header(config: pytest.Config) -> str | None:
    if _plugin_loaded(config):
        return None
    return (
        "product suites left out (tests/conformance, tests/properties): they run through "
        "`delivery-conformance run` or `pytest tests/conformance`"
    )
