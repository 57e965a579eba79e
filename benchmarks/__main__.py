"""`python -m benchmarks`: the sandbox's own endpoints (Python generator, then wrk where installed),
then POST /playback, then
the in-process cost per request (benchmarks/inprocess.py), then run time against the number of
workers behind added latency (benchmarks/workers.py, about half an hour).

Options other than the shared ones are passed to benchmarks/sandbox.py only.
"""

import importlib
import sys

from benchmarks import client_sync, conformance_run, contract_diff, inprocess, workers, wrk
from benchmarks.sandbox import main

argv = sys.argv[1:]
if argv[:1] == ["compare"]:  # `python -m benchmarks compare`: bare Schemathesis vs the harness
    from benchmarks import schemathesis_compare

    raise SystemExit(schemathesis_compare.main(argv[1:]))
status = main(argv)
status = wrk.main([]) or status  # the same scenarios with a C generator, where wrk is installed
try:
    playback = importlib.import_module("benchmarks.playback")
except ImportError:
    playback = None
if playback is not None and hasattr(playback, "main"):
    status = playback.main([]) or status
status = importlib.import_module("benchmarks.load").main([]) or status
status = conformance_run.main([]) or status  # wall time of a full run (target < 2 min)
status = inprocess.main(["--requests", "3000", "--rounds", "3"]) or status
status = client_sync.main([]) or status  # reference client sync vs bare httpx (<= 10 %)
status = contract_diff.main([]) or status  # contract-diff of the spec against itself (< 1 s)
status = workers.main([]) or status  # run time against --workers N behind 40 and 150 ms
raise SystemExit(status)
