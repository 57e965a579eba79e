"""Load campaign `shedding`:
Prefetch until shed near 20 % left, then play until the ceiling (LIM-035..038).

Run with `python -m loadtests.run shedding` (embedded sandbox, verdict and exit code), or directly:
`locust -f loadtests/shedding.py --headless -u 200 -r 200 --target-profile FILE`.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for `locust -f`

from loadtests.generator import CampaignUser, use_campaign

use_campaign("shedding")

__all__ = ["CampaignUser"]
