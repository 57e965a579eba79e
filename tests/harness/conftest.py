from __future__ import annotations

import pytest
from killrate_support import KillRateRun, run_targeted_killrate


@pytest.fixture(scope="session")
def targeted_killrate(tmp_path_factory: pytest.TempPathFactory) -> KillRateRun:
    """The targeted kill rate, run once per session (killrate_support.py)."""
    return run_targeted_killrate(tmp_path_factory.mktemp("killrate"))
