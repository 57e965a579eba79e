"""Delivery API v1 conformance harness: target profiles, client, checks, runner, reports."""

__version__ = "0.1.0"
