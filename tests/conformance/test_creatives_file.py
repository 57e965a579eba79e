"""GET /creatives/{id}/file and the keyless final.file_url: redirect, JSON form, file errors.

spec: Endpoints > GET /creatives/{id}/file; Resources > Creative record (`final.file_url`);
Errors > Creatives list, single read and file. Links are secrets: never followed, never printed.
"""

from __future__ import annotations

import uuid
from typing import Any
from urllib.parse import urlsplit

import pytest
from json_support import at, garbage_rule, obj
from listing_support import Code, error_shape_violations, expect_error, is_int

from delivery_conformance.checks import ConformanceFailure, expect, expect_status
from delivery_conformance.evidence.redact import Redactor
from delivery_conformance.exceptions import TargetGarbage
from delivery_conformance.target.client import DeliveryClient

ROLE = "films"
READY = pytest.mark.needs(f"role:{ROLE}", "fixture:creative_id")


def open_keyless(profile: Any, url: str) -> Any:
    """GET a share link with no key, from a client whose redactor hides the link's token."""
    parts = urlsplit(url)
    with DeliveryClient(profile) as private:
        private.redactor = Redactor([*profile.keys.values(), parts.path.rsplit("/", 1)[-1]])
        return private.get(parts.path + (f"?{parts.query}" if parts.query else ""))


def file_path(creative: str) -> str:
    return f"creatives/{creative}/file"


@READY
@pytest.mark.requirement("CRE-037", "CRE-038", "CRE-041")
@pytest.mark.parametrize("redirect", [None, "1", "false"])
def test_file_redirects_to_an_absolute_link(
    client: DeliveryClient, fixture_id: Any, redirect: str | None
) -> None:
    params = {} if redirect is None else {"redirect": redirect}
    response = client.get(file_path(fixture_id("creative_id")), role=ROLE, params=params)
    rid = "CRE-037" if redirect is None else "CRE-041"
    expect_status(rid, response, 302, expected="302")
    location = urlsplit(response.headers.get("location", ""))
    expect(
        "CRE-038",
        location.scheme in ("http", "https") and bool(location.netloc),
        expected="Location an absolute URL",
        actual="not absolute",
        response=response,
    )


@READY
@pytest.mark.requirement("CRE-039", "CRE-040")
def test_redirect_0_answers_json_valid_15_minutes(client: DeliveryClient, fixture_id: Any) -> None:
    response = client.get(file_path(fixture_id("creative_id")), role=ROLE, params={"redirect": "0"})
    expect_status("CRE-039", response, 200, expected="200 with redirect=0")
    try:
        body = response.json_body()
    except TargetGarbage as error:
        expect(
            garbage_rule("CRE-039", response),
            False,
            expected="a JSON envelope",
            actual=str(error),
            response=response,
        )
    body = obj(body)
    data = body.get("data")
    expect(
        "CRE-039",
        response.status_code == 200
        and body.get("code") == 0
        and isinstance(data, dict)
        and isinstance(data.get("url"), str)
        and is_int(data.get("expires_at")),
        expected="200 envelope with data.url and integer data.expires_at",
        actual=response.status_code,
        response=response,
    )
    now = body.get("server_time")
    expect(
        "CRE-040",
        is_int(now) and abs(data["expires_at"] - (now + 900)) <= 5,
        expected="expires_at = server_time + 900 (+-5)",
        actual=f"{data['expires_at'] - now if is_int(now) else now} s ahead",
        response=response,
    )


def _file_url(client: DeliveryClient, creative: str) -> Any:
    """The record's `final.file_url` as the target gives it (anything; callers check)."""
    record = client.get(f"creatives/{creative}", role=ROLE).json_body()
    return at(record, "data.final.file_url")


@READY
@pytest.mark.requirement("CRE-023")
def test_file_url_opens_without_a_key_as_a_redirect(
    client: DeliveryClient, fixture_id: Any, profile: Any
) -> None:
    url = _file_url(client, fixture_id("creative_id"))
    if not isinstance(url, str):
        pytest.skip("not exercised: the ready creative has no file_url (revoked?)")
    parts = urlsplit(url)
    if f"{parts.scheme}://{parts.netloc}" != profile.base_url:
        pytest.skip("not exercised: file_url is not on the target's base_url")
    response = open_keyless(profile, url)
    expect(
        "CRE-023",
        response.status_code in (301, 302, 303, 307, 308)
        and bool(response.headers.get("location")),
        expected="a redirect with Location",
        actual=response.status_code,
        response=response,
    )


@pytest.mark.needs(f"role:{ROLE}", "fixture:creative_rights_ended")
@pytest.mark.requirement("CRE-024")
def test_file_url_of_ended_rights_is_gone(
    client: DeliveryClient, fixture_id: Any, profile: Any
) -> None:
    url = _file_url(client, fixture_id("creative_rights_ended"))
    if not isinstance(url, str) or not url.startswith(profile.base_url):
        pytest.skip("not exercised: the creative carries no file_url on the target")
    response = open_keyless(profile, url)
    expect_status("CRE-024", response, 410, expected="410")


FILE_ROWS = [
    ("CRE-049", "creative_rights_ended", 403, 4032),
    ("CRE-053", "creative_not_ready", 409, 4090),
    ("CRE-052", "creative_other_org", 404, 4040),
    ("CRE-061", "creative_link_failure", 503, 5032),
]


@pytest.mark.needs(f"role:{ROLE}")
@pytest.mark.parametrize(
    ("requirement_id", "fixture", "status", "code"),
    [pytest.param(*r, marks=pytest.mark.requirement(r[0], "CRE-062"), id=r[0]) for r in FILE_ROWS],
)
def test_file_error_rows(
    client: DeliveryClient,
    fixture_id: Any,
    requirement_id: str,
    fixture: str,
    status: int,
    code: int,
) -> None:
    response = client.get(file_path(fixture_id(fixture)), role=ROLE)
    expect_error(requirement_id, response, status, Code.ENVELOPE, code)
    found = error_shape_violations("CRE-062", response)
    if found:
        raise ConformanceFailure(found)


@pytest.mark.needs(f"role:{ROLE}")
@pytest.mark.requirement("CRE-052", "CRE-062")
@pytest.mark.parametrize("creative", ["not-a-uuid", "random"])
def test_file_of_unknown_or_malformed_id_is_404(client: DeliveryClient, creative: str) -> None:
    target = str(uuid.uuid4()) if creative == "random" else creative
    response = client.get(file_path(target), role=ROLE)
    expect_error("CRE-052", response, 404, Code.ENVELOPE, 4040)
