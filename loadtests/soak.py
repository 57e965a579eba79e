"""Load campaign `soak`:
Every counter at 80 % of its limit for a long run (default 10 minutes): no refusal, no
error; p50/p95/p99 per endpoint per minute and their drift.

Run with `python -m loadtests.run soak [--duration S]` (embedded sandbox, verdict and exit
code), or directly: `locust -f loadtests/soak.py --headless --target-profile FILE`.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for `locust -f`

from loadtests.generator import CampaignUser, use_campaign

use_campaign("soak")

__all__ = ["CampaignUser"]
