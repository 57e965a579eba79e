"""Load campaign `admission`:
Batches [prefetch, play, prefetch] with 2, 1 and 0 tickets left (LIM-039..041).

Run with `python -m loadtests.run admission` (embedded sandbox, verdict and exit code), or directly:
`locust -f loadtests/admission.py --headless -u 200 -r 200 --target-profile FILE`.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for `locust -f`

from loadtests.generator import CampaignUser, use_campaign

use_campaign("admission")

__all__ = ["CampaignUser"]
