import json

from harness_support import KEY

from delivery_conformance.evidence.redact import (
    MARK,
    Redactor,
    redact_headers,
    redact_json,
    redact_text,
)


def test_authorization_header_keeps_scheme_and_a_short_prefix() -> None:
    shown = redact_headers({"Authorization": f"Bearer {KEY}"})["Authorization"]
    assert shown == f"Bearer svc_live_a1{MARK}"
    assert KEY not in shown


def test_any_key_in_free_text_is_masked() -> None:
    text = redact_text(f"calling with {KEY}, then more")
    assert KEY not in text and "svc_live_a1" in text and text.endswith(", then more")


def test_secret_fields_are_masked_wherever_they_sit() -> None:
    body = {
        "play_auth_token": "tok-abcdefghijkl",
        "manifest_url": "https://cdn.example/m/abc.m3u8?sig=1",
        "items": [{"mp4": {"p480": "https://v.example/1.mp4?s=2", "p720": None}}],
        "episodes": [{"poster_signed_url": "https://img.example/x?sig=3"}],
        "final": {"file_url": "https://www.example/api/c/secret.mp4"},
        "subtitles": [{"lang": "en", "url": "https://subs.example/en.vtt"}],
    }
    out = json.dumps(redact_json(body))
    for secret in ("tok-abcdefghijkl", "abc.m3u8", "1.mp4", "sig=3", "secret.mp4"):
        assert secret not in out
    assert "https://subs.example/en.vtt" in out  # not a signed link: kept
    assert "https://cdn.example/" in out  # the host stays visible


def test_url_beside_expires_at_is_treated_as_signed() -> None:
    body = {"data": {"url": "https://dl.example/f.mp4?X-Sig=9", "expires_at": 1}}
    assert "X-Sig" not in json.dumps(redact_json(body))


def test_location_of_a_download_is_masked_but_api_redirect_is_kept() -> None:
    signed = redact_headers({"Location": "https://dl.example/file.mp4?sig=1"})["Location"]
    assert "sig=1" not in signed
    api = "http://www.delivery.sandbox:1/api/delivery/v1/config?x=1"
    assert redact_headers({"Location": api})["Location"] == api


def test_redactor_masks_known_exact_secrets_such_as_the_admin_token() -> None:
    redactor = Redactor(["admin-token-123456"])
    assert "admin-token-123456" not in redactor.text("token admin-token-123456 used")
    headers = redactor.headers({"Authorization": "Bearer admin-token-123456"})
    assert "admin-token-123456" not in headers["Authorization"]


def test_redactor_body_masks_json_and_text_bodies() -> None:
    redactor = Redactor([KEY])
    assert KEY not in redactor.body(json.dumps({"key": KEY}))
    assert "tok-1234567" not in redactor.body('<html>"play_auth_token": "tok-1234567"</html>')


def test_masking_twice_changes_nothing() -> None:
    once = redact_text(f"k={KEY}")
    assert redact_text(once) == once
