"""Locustfile of `benchmarks/load.py`: closed-loop POST /playback as fast as one process can.

Not a campaign: it measures the generator itself. The target profile comes from the environment
variable LOAD_BENCH_PROFILE (never from the command line, so no key shows in a process list).
"""

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for `locust -f`

from locust import FastHttpUser, task

from loadtests.exchange import DEVICE
from loadtests.target import Target

_TARGET = Target.from_file(os.environ.get("LOAD_BENCH_PROFILE", "missing.toml"))
_EPISODE = _TARGET.profile.fixtures.get("episode_encrypted", "")
_HEADERS = _TARGET.headers("limits")


class BenchUser(FastHttpUser):
    host = _TARGET.base_url

    @task
    def ticket(self) -> None:
        body = {"episode_id": _EPISODE, "intent": "play", **DEVICE}
        self.client.post("/api/delivery/v1/playback", json=body, headers=_HEADERS)
