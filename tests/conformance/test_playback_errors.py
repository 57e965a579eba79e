"""Every error row of POST /playback: whole-request refusals and per-ticket answers.

spec: Errors > Playback (both tables), Errors > Formats (flat; `reason`, `protection`,
`request_id`); Authentication (order of checks); Freshness (organisation suspended: within 30 s).
Readings followed (docs/reading-of-the-spec.md): AUTH-020/PLAY-082 (a suspended organisation is
refused whole with the `not_entitled` shape; a batch may carry it in every item instead), PLAY-085
(a non-UUID `episode_id` is 404 `not_ready` or a whole-request 400), PLAY (per-ticket order; a 500
in any item answers the whole request 500).
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from expect_support import expect_equal, expect_header
from playback_support import (
    DEVICE,
    batch_body,
    body_of,
    expect_answer,
    expect_batch,
    play_body,
    post,
)
from timing_support import settle

from delivery_conformance.checks import expect
from delivery_conformance.suite.exclusive import LIMITS_ORGANISATION
from delivery_conformance.target.client import DeliveryClient

pytestmark = pytest.mark.needs("role:films")

UNKNOWN_KEY = "svc_live_" + "Zq7" * 10 + "x1"
SUSPENSION_BOUND = 30.0  # spec: Freshness (organisation suspended: always within 30 s)

# fixture -> (status, error_code or None for none, requirement)
PER_TICKET = {
    "episode_not_ready": (404, "not_ready", "PLAY-088"),
    "episode_no_playable": (503, "not_ready", "PLAY-092"),
    "episode_provider_timeout": (503, "service_unavailable", "PLAY-094"),
    "episode_stream_error": (502, None, "PLAY-091"),
}
REASONS = {
    "episode_outside_window": ("outside_window", "PLAY-078"),
    "episode_entitlement_not_found": ("entitlement_not_found", "PLAY-079"),
    "episode_entitlement_suspended": ("entitlement_suspended", "PLAY-080"),
    "episode_streaming_disabled": ("streaming_disabled", "PLAY-081"),
}


def _expect_not_entitled(rid: str, response, answer: dict, reason: str) -> None:
    """spec: Errors > Playback: `error` equal to the reason, `error_code`, `reason`."""
    shape = (answer.get("error_code"), answer.get("reason"), answer.get("error"))
    expect(
        rid,
        shape[:2] == ("not_entitled", reason),
        expected=f"not_entitled, reason {reason}",
        actual=f"error_code {shape[0]!r}, reason {shape[1]!r}",
        response=response,
    )
    expect_equal(
        "PLAY-083",
        shape[2],
        reason,
        expected=f"error {reason!r} (the reason itself)",
        response=response,
    )


# -- whole request ------------------------------------------------------------------------------


def _refusal(rid: str, sent: dict, status: int, code: str | None, name: str, *needs: str):
    """One whole-request refusal: (rid, how the request is sent, status, error_code or None)."""
    marks = [pytest.mark.requirement(rid), *(pytest.mark.needs(n) for n in needs)]
    return pytest.param(rid, sent, status, code, marks=marks, id=name)


# A valid body sent in a way the whole request is refused (spec: Errors > Playback).
WHOLE_REQUEST = [
    _refusal("PLAY-070", {"version": "1999-01-01"}, 400, "unsupported_version", "unknown_version"),
    _refusal("PLAY-070", {"role": "retired_pin"}, 400, "unsupported_version", "retired_pin",
             "role:retired_pin"),
    _refusal("PLAY-073", {"role": "films_metadata"}, 403, None, "no_playback_scope",
             "role:films_metadata"),
    _refusal("PLAY-077", {"role": "unverifiable"}, 503, "service_unavailable", "unverifiable_key",
             "role:unverifiable"),
]  # fmt: skip


@pytest.mark.parametrize(("rid", "sent", "status", "code"), WHOLE_REQUEST)
def test_whole_request_refusal(client, fixture_id, rid, sent, status, code):
    expect_answer(rid, post(client, play_body(fixture_id), **sent), status, code)


@pytest.mark.requirement("PLAY-071")
def test_missing_authorization_is_401_without_code(client, fixture_id):
    response = client.post("playback", json={"episode_id": fixture_id("episode_encrypted")})
    expect_answer("PLAY-071", response, 401, None)


@pytest.mark.requirement("PLAY-072")
@pytest.mark.parametrize("credential", ["unknown", "revoked"])
def test_unknown_or_revoked_key_is_401_without_code(client, key, fixture_id, credential):
    secret = UNKNOWN_KEY if credential == "unknown" else key("revoked")
    body = play_body(fixture_id)
    response = client.post("playback", json=body, key=secret)
    expect_answer("PLAY-072", response, 401, None, what=f"for a {credential} key")


@pytest.mark.requirement("PLAY-076")
@pytest.mark.needs("fixture:episode_internal_error")
def test_unexpected_error_is_500_without_code_with_request_id(client, fixture_id):
    response = post(client, play_body(fixture_id, "episode_internal_error"))
    body = expect_answer("PLAY-076", response, 500, None)
    request_id = response.headers.get("service-request-id")
    expect(
        "PLAY-076",
        isinstance(body.get("request_id"), str) and body["request_id"] == request_id,
        expected=f"request_id {request_id!r}",
        actual=body.get("request_id"),
        response=response,
    )


@pytest.mark.requirement("PLAY-076")
@pytest.mark.needs("fixture:episode_internal_error", "fixture:episode_encrypted")
def test_unexpected_error_in_a_batch_item_is_500_for_the_whole_request(client, fixture_id):
    response = post(client, batch_body(fixture_id, "episode_encrypted", "episode_internal_error"))
    expect_answer("PLAY-076", response, 500, None, what="for a batch with a failing item")


@pytest.mark.requirement("PLAY-082", "PLAY-083")
@pytest.mark.needs("role:suspended", "fixture:episode_encrypted")
@pytest.mark.parametrize("form", ["single", "batch"])
def test_suspended_organisation_is_refused_not_entitled(client, fixture_id, form):
    """docs/reading-of-the-spec.md (AUTH-020, PLAY-082): a batch may be refused whole, or answered
    200 with the per-ticket refusal in every item (the per-ticket table lists `org_suspended`)."""
    episode = fixture_id("episode_encrypted")
    body = {"episode_id": episode} if form == "single" else {"episodes": [{"episode_id": episode}]}
    response = post(client, {**body, **DEVICE}, role="suspended")
    if form == "batch" and response.status_code == 200:
        for item in expect_batch("PLAY-082", response, 1):
            expect_equal("PLAY-082", item.get("status"), 403, what="item status", response=response)
            _expect_not_entitled("PLAY-082", response, item, "org_suspended")
        return
    answer = expect_answer("PLAY-082", response, 403, "not_entitled", what=f"({form} body)")
    _expect_not_entitled("PLAY-082", response, answer, "org_suspended")


@pytest.mark.exclusive(LIMITS_ORGANISATION)
@pytest.mark.requirement("PLAY-067")
@pytest.mark.needs("role:limits", "admin", "fixture:episode_encrypted")
def test_suspension_and_its_end_are_seen_on_the_next_requests(client, admin, fixture_id, unpaused):
    body = play_body(fixture_id)
    expect_answer("PLAY-067", post(client, body, role="limits"), 200, what="before suspension")
    admin.suspend("limits")
    refused = settle(
        lambda: post(client, body, role="limits"), lambda r: r.status_code == 403, SUSPENSION_BOUND
    ).value
    answer = expect_answer(
        "PLAY-067",
        refused,
        403,
        "not_entitled",
        what=f"within {SUSPENSION_BOUND:g} s of suspension",
    )
    expect_equal("PLAY-067", answer.get("reason"), "org_suspended", what="reason", response=refused)
    admin.unsuspend("limits")
    served = settle(
        lambda: post(client, body, role="limits"), lambda r: r.status_code == 200, SUSPENSION_BOUND
    ).value
    expect_answer("PLAY-067", served, 200, what=f"within {SUSPENSION_BOUND:g} s of unsuspension")


# -- per ticket -----------------------------------------------------------------------------------


@pytest.mark.requirement("PLAY-011", "PLAY-089")
@pytest.mark.needs("fixture:episode_encrypted")
def test_encrypted_episode_without_device_values_is_sdk_required(client, fixture_id):
    response = post(client, {"episode_id": fixture_id("episode_encrypted")})
    body = expect_answer("PLAY-011", response, 409, "sdk_required")
    expect_equal(
        "PLAY-089",
        body.get("protection"),
        "private-encrypted",
        what="protection",
        response=response,
    )


@pytest.mark.parametrize(
    "fixture",
    [
        pytest.param(f, marks=pytest.mark.requirement(r, "PLAY-083"), id=r)
        for f, (_, r) in REASONS.items()
    ],
)
def test_licence_refusal_is_not_entitled_with_its_reason(client, fixture_id, fixture):
    reason, rid = REASONS[fixture]
    response = post(client, {"episode_id": fixture_id(fixture), **DEVICE})
    answer = expect_answer(rid, response, 403, "not_entitled")
    _expect_not_entitled(rid, response, answer, reason)


@pytest.mark.parametrize(
    "fixture",
    [
        pytest.param(f, marks=pytest.mark.requirement(r), id=f"{r}-{f}")
        for f, (_, _, r) in PER_TICKET.items()
    ],
)
def test_per_ticket_failure_has_its_status_and_code(client, fixture_id, fixture):
    status, code, rid = PER_TICKET[fixture]
    response = post(client, {"episode_id": fixture_id(fixture), **DEVICE})
    expect_answer(rid, response, status, code, what=f"for {fixture}")


@pytest.mark.requirement("PLAY-093")
@pytest.mark.needs("fixture:episode_no_playable")
def test_no_playable_version_has_no_retry_after(client, fixture_id):
    response = post(client, play_body(fixture_id, "episode_no_playable"))
    expect_answer("PLAY-093", response, 503, "not_ready")
    expect(
        "PLAY-093",
        "retry-after" not in response.headers,
        expected="no Retry-After",
        actual=response.headers.get("retry-after"),
        response=response,
    )


@pytest.mark.requirement("PLAY-094")
@pytest.mark.needs("fixture:episode_provider_timeout")
def test_provider_timeout_asks_to_retry_after_two_seconds(client, fixture_id):
    response = post(client, play_body(fixture_id, "episode_provider_timeout"))
    expect_answer("PLAY-094", response, 503, "service_unavailable")
    expect_header("PLAY-094", response, "retry-after", "2", expected="Retry-After: 2")


@pytest.mark.requirement("PLAY-085")
def test_unknown_episode_id_is_404_not_ready(client):
    episode_id = str(uuid.uuid4())
    response = post(client, {"episode_id": episode_id, **DEVICE})
    expect_answer("PLAY-085", response, 404, "not_ready", what=f"for episode_id {episode_id!r}")


@pytest.mark.requirement("PLAY-085")
def test_non_uuid_episode_id_is_404_not_ready_or_a_whole_400(client):
    """docs/reading-of-the-spec.md (PLAY-085): ids are UUID strings (General rules item 4) but no
    error row names a malformed one: the 404 `not_ready` of an unknown episode and the whole-request
    400 (without code, or `invalid_request`) are accepted, as PLAY-010 accepts either for
    `episode_no` 0."""
    response = post(client, {"episode_id": "not-a-uuid", **DEVICE})
    code = body_of(response).get("error_code")
    if response.status_code == 404:
        expect_answer("PLAY-085", response, 404, "not_ready", what="for episode_id 'not-a-uuid'")
    elif code == "invalid_request":
        expect_answer("PLAY-085", response, 400, "invalid_request", what="(a malformed id)")
    else:
        expect_answer("PLAY-085", response, 400, None, what="(404 not_ready, or a whole 400)")


@pytest.mark.requirement("PLAY-086")
def test_unknown_film_ref_is_404_not_ready(client):
    response = post(
        client, {"film_ref": "no-such-film-" + uuid.uuid4().hex[:8], "episode_no": 1, **DEVICE}
    )
    expect_answer("PLAY-086", response, 404, "not_ready")


@pytest.mark.requirement("PLAY-087")
@pytest.mark.needs("fixture:episode_paged_film", "fixture:placeholder_episode_no")
def test_planned_episode_is_404_not_ready(client, fixture_id):
    body = {
        "film_ref": fixture_id("episode_paged_film"),
        "episode_no": int(fixture_id("placeholder_episode_no")),
        **DEVICE,
    }
    expect_answer("PLAY-087", post(client, body), 404, "not_ready")


@pytest.mark.parametrize(
    ("fixture", "status", "code"),
    [
        pytest.param("episode_not_ready", 404, "not_ready", id="not_ready"),
        pytest.param("episode_outside_window", 403, "not_entitled", id="not_entitled"),
        pytest.param("episode_provider_timeout", 503, "service_unavailable", id="provider"),
    ],
)
@pytest.mark.requirement("PLAY-096")
@pytest.mark.needs("fixture:episode_encrypted")
def test_single_and_batch_item_answer_the_same_status_and_code(
    client, fixture_id, fixture, status, code
):
    episode = fixture_id(fixture)
    single = post(client, {"episode_id": episode, **DEVICE})
    expect_answer("PLAY-096", single, status, code, what="(single)")
    batch = post(
        client,
        {
            "episodes": [{"episode_id": fixture_id("episode_encrypted")}, {"episode_id": episode}],
            **DEVICE,
        },
    )
    item = expect_batch("PLAY-096", batch, 2)[1]
    expect(
        "PLAY-096",
        (item.get("status"), item.get("error_code")) == (status, code),
        expected=f"item status {status}, error_code {code}",
        actual=f"{item.get('status')}, {item.get('error_code')!r}",
        response=batch,
    )
    expect_equal(
        "PLAY-096",
        item.get("error_code"),
        body_of(single).get("error_code"),
        expected="the single answer's code",
        response=batch,
    )


@pytest.mark.needs("admin", "role:films", "fixture:episode_signed")
@pytest.mark.requirement("PLAY-095")
def test_a_licence_check_that_times_out_is_a_503_never_a_refusal(
    client: DeliveryClient, admin: Any, fixture_id: Any
) -> None:
    """spec: Errors > Playback (per ticket): a licence or episode check that times out answers
    503 `service_unavailable`; it says nothing about the licence, so never 403 or 404. Sandbox
    outage `licences` (docs/sandbox.md > Admin API)."""
    admin.outage("licences", True)
    response = post(client, {"episode_id": fixture_id("episode_signed")})
    body = response.json_body()
    code = body.get("error_code") if isinstance(body, dict) else None
    expect(
        "PLAY-095",
        response.status_code == 503 and code == "service_unavailable",
        expected="503 service_unavailable (not 403, not 404)",
        actual=f"{response.status_code} {code!r}",
        response=response,
    )
