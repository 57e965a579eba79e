"""Scenarios generated from the change catalogue (spec/changes.yaml): one test per consequence
of each change the sandbox admin API (or a profile's change command) can make.

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
    client: DeliveryClient, admin: Any, fixture_id: Any, change: Change, consequence: Consequence
) -> None:
    judge(client, admin, fixture_id, change, consequence)
