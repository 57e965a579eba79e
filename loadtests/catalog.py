"""Load campaign `catalog`:
The catalog counter shared by catalog and series: capacity and refill (LIM-019..021).

Run with `python -m loadtests.run catalog` (embedded sandbox, verdict and exit code), or directly:
`locust -f loadtests/catalog.py --headless -u 200 -r 200 --target-profile FILE`.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for `locust -f`

from loadtests.generator import CampaignUser, use_campaign

use_campaign("catalog")

__all__ = ["CampaignUser"]
