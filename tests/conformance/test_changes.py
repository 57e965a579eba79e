"""Scenarios generated from the change catalogue (spec/changes.yaml): one test per consequence
of each change, made with the command the profile's `[changes]` names for it or with the
sandbox admin API (docs/profile.md > Changes on your own server). The changes of a film, its
episode and a creative are made to the `films_changes` organisation's own data where the run has
it (suite/exclusive.py, OWN_DATA), beside the other scenarios; else to the shared fixtures.

spec: Resources and their fields; States and transitions; Limits > Freshness (upper bounds).
The engine and its reading of the bounds: changes_support.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from changes_support import Change, Consequence, consequences, judge

from delivery_conformance.suite.exclusive import OWN_DATA
from delivery_conformance.target.client import DeliveryClient


@pytest.mark.parametrize(("change", "consequence"), consequences())
def test_a_change_has_each_consequence_the_spec_states(
    client: DeliveryClient,
    changes: Any,
    fixture_id: Any,
    change: Change,
    consequence: Consequence,
    request: pytest.FixtureRequest,
) -> None:
    own_data = request.config.stash.get(OWN_DATA, False)
    judge(client, changes, fixture_id, change, consequence, own_data)
