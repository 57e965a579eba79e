"""Load campaign `hold`:
Plays on an empty bucket are held up to about 0.5 s and issued (LIM-043, LIM-044).

Run with `python -m loadtests.run hold` (embedded sandbox, verdict and exit code), or directly:
`locust -f loadtests/hold.py --headless -u 200 -r 200 --target-profile FILE`.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for `locust -f`

from loadtests.generator import CampaignUser, use_campaign

use_campaign("hold")

__all__ = ["CampaignUser"]
