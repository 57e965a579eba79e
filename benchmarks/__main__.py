"""`python -m benchmarks`: the sandbox's own endpoints, then POST /playback when present.

Options other than the shared ones are passed to benchmarks/sandbox.py only.
"""

import importlib
import sys

from benchmarks.sandbox import main

argv = sys.argv[1:]
status = main(argv)
try:
    playback = importlib.import_module("benchmarks.playback")
except ImportError:
    playback = None
if playback is not None and hasattr(playback, "main"):
    status = playback.main([]) or status
raise SystemExit(status)
