"""Load campaign `simulated`:
The simulated-response limit, kept apart from real tickets (README SIM own limit).

Run with `python -m loadtests.run simulated` (embedded sandbox, verdict and exit code), or directly:
`locust -f loadtests/simulated.py --headless -u 200 -r 200 --target-profile FILE`.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for `locust -f`

from loadtests.generator import CampaignUser, use_campaign

use_campaign("simulated")

__all__ = ["CampaignUser"]
