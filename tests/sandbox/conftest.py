"""Fixtures: a fresh in-process sandbox per test (spec version set or extended)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sandbox_api import Api, make_api

from delivery_sandbox.http.versions import VersionSetName


@pytest.fixture
def api() -> Iterator[Api]:
    made = make_api()
    yield made
    made.close()


@pytest.fixture
def ext() -> Iterator[Api]:
    made = make_api(versions=VersionSetName.EXTENDED)
    yield made
    made.close()
