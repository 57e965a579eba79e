"""`Settings`: the few choices the spec leaves to an integrator, each checked against its bounds.

Every client rule of the spec is fixed in the code (the retry table, backoff figures, paging,
safe sync, secrets); only these figures are tunable, because the spec gives a range:

- `page_size`: films per page when the catalog is walked by pages (GET /catalog `limit`, 1 to
  200).
- `max_pages`: the most pages one walk may take before it fails (a walk that never reaches a
  null cursor ends as an error and applies nothing, instead of running forever; at least 1).
- `video_refresh_margin`: seconds before the earliest `refresh_before` at which the open-video
  list is walked again (GET /videos: refresh before `refresh_before`, which comes 45 minutes
  after the answer; 0 to under 2700).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_SETTINGS", "Settings"]

CATALOG_LIMIT = (1, 200)  # GET /catalog `limit`
VIDEO_REFRESH_WINDOW = 2700.0  # seconds from an open-video answer to its `refresh_before`


@dataclass(frozen=True)
class Settings:
    page_size: int = 200
    max_pages: int = 10_000
    video_refresh_margin: float = 60.0

    def __post_init__(self) -> None:
        low, high = CATALOG_LIMIT
        if not low <= self.page_size <= high:
            raise ValueError(f"page_size must be {low} to {high} (GET /catalog limit)")
        if self.max_pages < 1:
            raise ValueError("max_pages must be at least 1")
        if not 0 <= self.video_refresh_margin < VIDEO_REFRESH_WINDOW:
            raise ValueError(
                "video_refresh_margin must be 0 or more and under 2700 s (refresh before "
                "refresh_before)"
            )


DEFAULT_SETTINGS = Settings()
