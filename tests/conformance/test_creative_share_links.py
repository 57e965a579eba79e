"""Share links of a creative: each open redirects to a download link valid 15 minutes, and a
revoked link is gone and reads null.

spec: Resources > Creative record (`final.file_url`); Endpoints > GET /creatives/{id}.
Links are secrets: opened only through a client whose redactor hides their tokens.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from json_support import at

from delivery_conformance.checks import expect, expect_status
from delivery_conformance.evidence.events import NOT_EXERCISED_PREFIX
from delivery_conformance.evidence.redact import Redactor
from delivery_conformance.target.client import DeliveryClient, Response


def _open(profile: Any, url: str) -> Response:
    """GET a keyless link (share or download) through a client that hides its secret parts."""
    parts = urlsplit(url)
    secrets = [parts.path.rsplit("/", 1)[-1], *(v for _, v in parse_qsl(parts.query))]
    with DeliveryClient(profile) as private:
        private.redactor = Redactor([*profile.keys.values(), *secrets])
        return private.get(parts.path + (f"?{parts.query}" if parts.query else ""))


@pytest.mark.needs("admin", "role:films", "fixture:creative_id")
@pytest.mark.requirement("CRE-023")
def test_a_share_link_download_lives_15_minutes(
    client: DeliveryClient, admin: Any, fixture_id: Any, profile: Any
) -> None:
    """spec: Resources > Creative record (`final.file_url`: each open redirects to a fresh
    download link valid 15 minutes); Limits > Other constants. The target's clock is moved
    with the admin API: the link opens at 14 min 50 s and is refused at 15 min 10 s."""
    record = client.get(f"creatives/{fixture_id('creative_id')}", role="films").json_body()
    url = at(record, "data.final.file_url")
    if not isinstance(url, str) or not url.startswith(profile.base_url):
        pytest.skip(NOT_EXERCISED_PREFIX + "the ready creative has no file_url on the target")
    redirect = _open(profile, url)
    location = redirect.headers.get("location") or ""
    expect(
        "CRE-023",
        redirect.status_code in (301, 302, 303, 307, 308) and location.startswith(profile.base_url),
        expected="a redirect to a download link on the target",
        actual=redirect.status_code,
    )
    admin.clock(advance=890)
    early = _open(profile, location).status_code
    admin.clock(advance=20)
    late = _open(profile, location).status_code
    expect(
        "CRE-023",
        early == 200 and late != 200,
        expected="the download link opens at 890 s and not at 910 s",
        actual=f"{early} at 890 s, {late} at 910 s",
    )


@pytest.mark.needs("admin", "role:films", "fixture:creative_id")
@pytest.mark.requirement("CRE-063", "CRE-064")
def test_a_revoked_share_link_is_gone_and_reads_null(
    client: DeliveryClient, admin: Any, fixture_id: Any, profile: Any
) -> None:
    """spec: Resources > Creative record (`final.file_url`: revocable by an organisation admin,
    null when revoked); Endpoints > GET /creatives/{id} (a 410 on a stored link: read the
    creative again, null if revoked). Sandbox admin action `creatives/{id}/revoke-link`."""
    creative = fixture_id("creative_id")
    url = at(client.get(f"creatives/{creative}", role="films").json_body(), "data.final.file_url")
    if not isinstance(url, str) or not url.startswith(profile.base_url):
        pytest.skip(NOT_EXERCISED_PREFIX + "the ready creative has no file_url on the target")
    admin.call("POST", f"creatives/{creative}/revoke-link", {})
    opened = _open(profile, url).status_code
    expect("CRE-063", opened == 410, expected="410 for the revoked link", actual=opened)
    again = client.get(f"creatives/{creative}", role="films")
    expect_status("CRE-034", again, 200, expected="200 for the creative")
    final = at(again.json_body(), "data.final")
    expect(
        "CRE-064",
        isinstance(final, dict) and "file_url" in final and final["file_url"] is None,
        expected="final.file_url null once revoked",
        actual="a link" if isinstance(final, dict) and final.get("file_url") else final,
        response=again,
    )
