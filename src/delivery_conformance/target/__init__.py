"""Reaching a target: profiles, the HTTP client and transport, the embedded sandbox, pacing, the
admin client, latency proxy, preflight.
"""
