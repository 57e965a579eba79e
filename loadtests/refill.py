"""Load campaign `refill`:
Drain the playback bucket, then offer twice the refill rate: the slope is the refill (LIM-013).

Run with `python -m loadtests.run refill` (embedded sandbox, verdict and exit code), or directly:
`locust -f loadtests/refill.py --headless -u 200 -r 200 --target-profile FILE`.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for `locust -f`

from loadtests.generator import CampaignUser, use_campaign

use_campaign("refill")

__all__ = ["CampaignUser"]
