"""Locust 2 load campaigns for the Delivery API v1 limits (one file per campaign)."""
