"""POST /playback: body parsing, tickets and reuse, admission at the ceiling, rate limits and
simulated responses.
"""
