"""Load campaigns: raw records, open-model schedules, the bucket envelope and verdicts.

Pure modules (no I/O in the logic, time passed in); the Locust profiles live in `loadtests/`.
"""
