"""Scenarios generated from the change catalogue (spec/changes.yaml): one test per consequence
of each change, made with the command the profile's `[changes]` names for it or with the
sandbox admin API (docs/profile.md > Changes on your own server).

spec: Resources and their fields; States and transitions; Limits > Freshness (upper bounds).
The engine and its reading of the bounds: changes_support.py.
"""

from __future__ import annotations

from typing import Any

import pytest
from changes_support import Change, Consequence, consequences, judge

from delivery_conformance.target.client import DeliveryClient


@pytest.mark.parametrize(("change", "consequence"), consequences())
def test_a_change_has_each_consequence_the_spec_states(
    client: DeliveryClient, changes: Any, fixture_id: Any, change: Change, consequence: Consequence
) -> None:
    judge(client, changes, fixture_id, change, consequence)
