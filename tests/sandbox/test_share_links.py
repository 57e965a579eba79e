"""Keyless share links (`final.file_url`) and download links (spec: Resources > Creative record,
`final.file_url`; Endpoints > GET /creatives/{id}/file; docs/reading-of-the-spec.md (CRE-023))."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import httpx
from sandbox_api import Api

from delivery_sandbox.endpoints.share import FAKE_MP4, LINK_TTL


def share_path(api: Api, fixture: str) -> str:
    record = api.get(f"creatives/{api.fx[fixture]}", "films").json()["data"]
    url = record["final"]["file_url"]
    assert url.startswith("http://127.0.0.1:8123/api/c/") and url.endswith(".mp4")
    return urlsplit(url).path


def relative(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.path}?{parts.query}"


def assert_common_headers(response: httpx.Response) -> None:
    assert response.headers["service-api-status"] == "beta"
    assert response.headers["cache-control"] == "no-store"
    assert response.headers["service-request-id"].startswith("req_")
    assert response.headers["service-version"]


def test_share_link_opens_without_a_key_to_a_fresh_link_valid_15_minutes(api: Api) -> None:
    response = api.get(share_path(api, "creative_id"))
    assert response.status_code == 302
    assert_common_headers(response)
    location = urlsplit(response.headers["location"])
    assert location.path == f"/_files/creatives/{api.fx['creative_id']}.mp4"
    expires = int(parse_qs(location.query)["exp"][0])
    assert expires == int(api.sb.now()) + LINK_TTL == int(api.sb.now()) + 900


def test_share_link_of_ended_rights_is_410_with_a_flat_body(api: Api) -> None:
    response = api.get(share_path(api, "creative_rights_ended"))
    assert response.status_code == 410
    assert_common_headers(response)
    body = response.json()
    assert (
        body["error_code"] == "gone"
        and body["request_id"] == response.headers["service-request-id"]
    )
    assert "location" not in response.headers


def test_share_link_is_rechecked_on_every_open(api: Api) -> None:
    path = share_path(api, "creative_id")
    creative = api.sb.store.creatives[api.fx["creative_id"]]
    assert api.get(path).status_code == 302
    assert creative.rights_ends_at is not None
    api.admin("POST", "clock", {"set": creative.rights_ends_at + 86_400})
    assert api.get(path).status_code == 410
    api.admin("POST", "clock", {"set": creative.rights_ends_at + 86_399})
    assert api.get(path).status_code == 302  # the whole last day is included


def test_share_link_is_gone_while_the_film_licence_is_suspended(api: Api) -> None:
    path = share_path(api, "creative_id")
    film_id = api.sb.store.creatives[api.fx["creative_id"]].film_id
    assert api.admin("POST", f"licences/{film_id}/suspend").status_code == 200
    assert api.get(path).status_code == 410
    file = api.get(f"creatives/{api.fx['creative_id']}/file", "films")
    assert file.status_code == 403 and file.json()["code"] == 4032
    api.admin("POST", f"licences/{film_id}/restore")
    assert api.get(path).status_code == 302


def test_unknown_share_token_is_404_and_link_failure_is_503(api: Api) -> None:
    assert api.get("/api/c/nosuchtoken000000000000.mp4").status_code == 404
    failing = api.get(share_path(api, "creative_link_failure"))
    assert failing.status_code == 503 and failing.headers["retry-after"] == "2"
    assert failing.json()["error_code"] == "service_unavailable"


def test_share_link_takes_get_only(api: Api) -> None:
    response = api.request("POST", share_path(api, "creative_id"))
    assert response.status_code == 405 and response.headers["allow"] == "GET"


def test_download_link_serves_a_small_mp4_until_it_expires(api: Api) -> None:
    location = api.get(share_path(api, "creative_id")).headers["location"]
    served = api.get(relative(location))
    assert served.status_code == 200
    assert served.headers["content-type"] == "video/mp4"
    assert served.content == FAKE_MP4 and served.content[4:8] == b"ftyp"
    assert_common_headers(served)
    api.admin("POST", "clock", {"advance": LINK_TTL - 1})
    assert api.get(relative(location)).status_code == 200
    api.admin("POST", "clock", {"advance": 1})
    expired = api.get(relative(location))
    assert expired.status_code == 410 and expired.json()["error_code"] == "link_expired"


def test_file_endpoint_links_are_served_too(api: Api) -> None:
    path = f"creatives/{api.fx['creative_id']}/file"
    location = api.get(path, "films").headers["location"]
    assert api.get(relative(location)).status_code == 200
    url = api.get(path, "films", params={"redirect": "0"}).json()["data"]["url"]
    assert api.get(relative(url)).status_code == 200


def test_forged_download_link_is_403(api: Api) -> None:
    location = api.get(share_path(api, "creative_id")).headers["location"]
    parts = urlsplit(location)
    exp = parse_qs(parts.query)["exp"][0]
    later = int(exp) + 3600
    forged = api.get(f"{parts.path}?exp={later}&sig={parse_qs(parts.query)['sig'][0]}")
    assert forged.status_code == 403 and forged.json()["error_code"] == "link_invalid"
    assert api.get(f"{parts.path}?exp=abc&sig=x").status_code == 403
    assert api.get(f"{parts.path}").status_code == 403


def test_share_link_is_503_during_a_creatives_outage(api: Api) -> None:
    path = share_path(api, "creative_id")
    api.admin("POST", "outages", {"area": "creatives", "on": True})
    down = api.get(path)
    assert down.status_code == 503 and down.headers["retry-after"]
    api.admin("POST", "outages", {"area": "creatives", "on": False})
    assert api.get(path).status_code == 302


def test_other_paths_outside_the_api_stay_404(api: Api) -> None:
    for path in ("/api/c/", "/api/c/x/y.mp4", "/api/c/token.mov", "/_files/creatives/x"):
        response = api.get(path)
        assert response.status_code == 404 and response.json()["error_code"] == "not_found"
