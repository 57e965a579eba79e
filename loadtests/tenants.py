"""Load campaign `tenants`:
Many organisations at their playback and catalog ceilings at the same time, one idle: each is
admitted its own allowance, none is refused under it, the idle one is served at once (LIM-002).

Run with `python -m loadtests.run tenants [--tenants N] [--duration S] [--workers N]` (embedded
sandbox with N organisations, verdict and exit code), or directly:
`locust -f loadtests/tenants.py --headless --target-profile FILE` (a profile with [tenants]).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for `locust -f`

from loadtests.generator import CampaignUser, use_campaign

use_campaign("tenants")

__all__ = ["CampaignUser"]
