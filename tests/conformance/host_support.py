"""Does the bare `Host` reach the server? A precondition of the bare-host scenarios.

spec: What the service does, rule 7 (the bare host answers 308 to the `www` host). The suite
sends to `base_url` with `Host: <bare_host>`. Anything between the suite and the server that
replaces the `Host` (a proxy forwarding to its upstream by name) or follows redirects itself
hides the 308: the server answers as the `www` host would. That is not the server's defect, so
the bare-host scenarios are then *not exercised* with this precondition named, never failed.

How it is told apart (docs/running.md > Intermediaries): a server builds its absolute links from the
host it was asked for. When a bare-host request is served (not 308) and the `links.self` of GET
/config asked with the bare `Host` names another host, the bare `Host` did not reach the server.
When nothing can be told (no link), the scenario judges the answer as it is.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

import pytest
from json_support import at

from delivery_conformance.evidence.events import NOT_EXERCISED_PREFIX

__all__ = ["require_host_passed_through"]


def _self_host(response: Any) -> str | None:
    try:
        body = json.loads(response.content)
    except ValueError:
        return None
    link = at(body, "links.self")
    if not isinstance(link, str):
        return None
    return (urlsplit(link).hostname or "").lower() or None


def require_host_passed_through(client: Any, profile: Any, response: Any) -> None:
    """Skip (not exercised) when `response`, a bare-host answer that is not 308, came from a
    server that never saw the bare `Host`; return when it did or when nothing tells."""
    if response.status_code == 308:
        return
    bare = profile.bare_host.split(":")[0].lower()
    seen = _self_host(response)
    if seen is None:
        role = "films" if "films" in profile.keys else None
        probe = client.get("config", role=role, host=profile.bare_host)
        if probe.status_code == 308:
            return  # the Host does reach the server: this answer is its own
        seen = _self_host(probe)
    if seen is not None and seen != bare:
        pytest.skip(
            f"{NOT_EXERCISED_PREFIX}precondition: the bare Host did not reach the server (a "
            f"request with Host {bare} was answered as {seen}: an intermediary replaced the Host "
            "or followed the redirect; docs/running.md > Intermediaries)"
        )
