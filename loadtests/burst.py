"""Load campaign `burst`:
From idle, the whole playback allowance in batches of 3 and the first 429 (LIM-014).

Run with `python -m loadtests.run burst` (embedded sandbox, verdict and exit code), or directly:
`locust -f loadtests/burst.py --headless -u 200 -r 200 --target-profile FILE`.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for `locust -f`

from loadtests.generator import CampaignUser, use_campaign

use_campaign("burst")

__all__ = ["CampaignUser"]
