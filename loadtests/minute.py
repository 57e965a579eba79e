"""Load campaign `minute`:
Clock-minute counters: count, Retry-After, reset at the UTC minute (LIM-022..034).

Run with `python -m loadtests.run minute` (embedded sandbox, verdict and exit code), or directly:
`locust -f loadtests/minute.py --headless -u 200 -r 200 --target-profile FILE`.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for `locust -f`

from loadtests.generator import CampaignUser, use_campaign

use_campaign("minute")

__all__ = ["CampaignUser"]
