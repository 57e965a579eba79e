"""Variants at the `reading` seam: answers where the spec admits more than one reading.

`Readings` holds the knobs as plain values; the default is the sandbox's own reading
(docs/reading-of-the-spec.md), each variant switches one knob to another reasonable reading:

- `device_fields_values`: `fields` of 400 `invalid_device_info` lists the rejected values (the
  Errors > Formats table says "the rejected values"), not the names of the fields;
- `category_unknown_404`: the `category` grammar checked before the lookup is letters, digits,
  hyphens and underscores in any case, so such a value naming no Category is 404 4040 (the spec
  answers 422 for "not a slug" without giving the grammar of a slug);
- `episode_id_not_uuid_400`: a non-UUID `episode_id` is no episode id (General rules 4: ids are
  UUID strings), so the body has no episode: 400 without `error_code`, `invalid_request` in a
  batch (Errors > Playback, whole request);
- `suspended_batch_per_item`: a suspended organisation's well-formed batch is answered per
  ticket, every item 403 `not_entitled` reason `org_suspended` (the per-ticket table lists it);
  a single or malformed body keeps the whole-request 403 (the organisation comes before the
  body in Authentication 4);
- `unpaged_null_cursor`: the unpaged catalog also carries `next_cursor: null` and
  `links: {next: null}` (new response fields, Versioning 3);
- `list_since_12_digits`: series and playlists take an `updated_since` of 12 digits (their query
  tables say epoch seconds; only the creatives feed says up to 11 digits).

Pure: no clock, no sandbox state.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from delivery_sandbox.variants.catalogue import VariantName, VariantSet

__all__ = ["DEFAULT_READINGS", "Readings", "readings"]

STRICT_SLUG = re.compile(r"\A[a-z0-9]+(?:-[a-z0-9]+)*\Z")  # docs/reading-of-the-spec.md (PLS-039)
LOOSE_SLUG = re.compile(r"\A[A-Za-z0-9_-]+\Z")
EPOCH_DIGITS = 11  # the creatives feed's "up to 11 digits", the sandbox's reading for every list


@dataclass(frozen=True, slots=True)
class Readings:
    device_fields_as_values: bool = False
    episode_id_uuid_only: bool = False
    suspended_batch_per_item: bool = False
    category_slug: re.Pattern[str] = STRICT_SLUG
    unpaged_null_cursor: bool = False
    list_since_digits: int = EPOCH_DIGITS  # `updated_since` of series and playlists

    def unpaged_extra(self) -> dict[str, Any]:
        """Fields the unpaged catalog carries after `films` and `episodes`."""
        return {"next_cursor": None, "links": {"next": None}} if self.unpaged_null_cursor else {}


DEFAULT_READINGS = Readings()


def readings(variants: VariantSet) -> Readings:
    on = variants.enabled
    return Readings(
        device_fields_as_values=on(VariantName.device_fields_values),
        episode_id_uuid_only=on(VariantName.episode_id_not_uuid_400),
        suspended_batch_per_item=on(VariantName.suspended_batch_per_item),
        category_slug=LOOSE_SLUG if on(VariantName.category_unknown_404) else STRICT_SLUG,
        unpaged_null_cursor=on(VariantName.unpaged_null_cursor),
        list_since_digits=12 if on(VariantName.list_since_12_digits) else EPOCH_DIGITS,
    )
