"""Fixtures: a fresh in-process sandbox per test (spec version set or extended), and a playback
sandbox whose sleeps move its own clock (`env`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sandbox_api import Api, make_api
from sandbox_playback_support import Sandboxed, patch_sleep

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


@pytest.fixture
def default() -> Iterator[Api]:
    """The default sandbox with the extended version set: what a variant is compared with."""
    made = make_api(versions=VersionSetName.EXTENDED)
    yield made
    made.close()


@pytest.fixture
def variant(request: pytest.FixtureRequest) -> Iterator[Api]:
    """The same sandbox playing one legal variant (`@plays(name)`, sandbox_api.py)."""
    made = make_api(variants=(request.param,), versions=VersionSetName.EXTENDED)
    yield made
    made.close()


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> Iterator[Sandboxed]:
    made = Sandboxed()
    patch_sleep(monkeypatch, made)
    yield made
    made.close()
