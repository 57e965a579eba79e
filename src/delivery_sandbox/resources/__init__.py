"""The read endpoints (catalog, series, playlists, creatives, videos, share links, config) and
their shared listing and cursor pieces.
"""
