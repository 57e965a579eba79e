"""One module per endpoint (catalog, series, playlists, creatives, videos, share links, config,
POST /playback) and the listing and cursor pieces they share."""
