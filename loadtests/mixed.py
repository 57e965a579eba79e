"""Load campaign `mixed`:
Every counter near its ceiling at the same time, config past it: counters are independent;
latency percentiles per endpoint over time.

Run with `python -m loadtests.run mixed [--duration S]` (embedded sandbox, verdict and exit
code), or directly: `locust -f loadtests/mixed.py --headless --target-profile FILE`.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for `locust -f`

from loadtests.generator import CampaignUser, use_campaign

use_campaign("mixed")

__all__ = ["CampaignUser"]
