"""Pure parts of client certification: injections, judges, scenario and plan loaders."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from delivery_conformance.certify.injections import (
    UNKNOWN_FIELD,
    InjectionError,
    Injector,
    parse_injection,
)
from delivery_conformance.certify.journal import Entry, SecretBook
from delivery_conformance.certify.judges import (
    FAILED,
    JUDGES,
    NOT_EXERCISED,
    PASSED,
    FlowRun,
    Observation,
)
from delivery_conformance.certify.plan import parse_plan
from delivery_conformance.certify.runner import client_ids
from delivery_conformance.certify.scenarios import load_catalogue
from delivery_conformance.exceptions import UsageError
from delivery_conformance.spec.requirements import load_requirements

CATALOG = "/api/delivery/v1/catalog"


def entry(seq: int, started: float, ended: float, status: int | None = 200, *,
          injected: str = "", ra: str | None = None, path: str = CATALOG,
          query: dict[str, str] | None = None, method: str = "GET", body: str = "",
          extra: dict[str, Any] | None = None, key: str = "k1", phase: int = 1,
          notes: tuple[str, ...] = ()) -> Entry:  # fmt: skip
    headers = {"Retry-After": ra} if ra is not None else {}
    return Entry(seq, 1, started, ended, 0.0, method, path, query or {}, {}, body, status,
                 headers, "", 0.0, injected, phase, notes, key, None, extra or {})  # fmt: skip


def judge(name: str, entries: list[Entry], params: dict[str, Any] | None = None,
          runs: tuple[FlowRun, ...] = (FlowRun(1, 0, 1.0),)) -> tuple[str, str]:  # fmt: skip
    result = JUDGES[name](Observation(tuple(entries), runs), params or {})
    return result.status, result.actual


# -- injections ---------------------------------------------------------------------------


def test_an_injection_with_two_actions_or_an_unknown_key_is_refused() -> None:
    with pytest.raises(InjectionError, match="exactly one action"):
        parse_injection({"reset": True, "delay": 1}, "x")
    with pytest.raises(InjectionError, match="unknown keys often"):
        parse_injection({"reset": True, "often": 1}, "x")


def test_respond_fires_after_skip_for_times_then_forwards() -> None:
    injector = Injector([parse_injection(
        {"match": {"path": "catalog"}, "skip": 1, "times": 2,
         "respond": {"status": 429, "retry_after": 1}}, "x")])  # fmt: skip
    plans = [injector.decide("GET", CATALOG, {}, 1) for _ in range(4)]
    assert [p.respond[0] if p.respond else None for p in plans] == [None, 429, 429, None]
    assert plans[1].respond is not None and plans[1].respond[1]["retry-after"] == "1"
    body, head = json.loads(plans[1].respond[2]), plans[1].respond[1]
    assert body == {"error": "Too many requests", "request_id": head["service-request-id"]}
    assert head["x-ratelimit-limit"] == "3000" and head["x-ratelimit-window"] == "60"
    # the endpoint's own body shape: envelope on creatives, flat for any 429
    shaped = Injector([parse_injection({"respond": {"status": 503, "code": 5030}}, "x")])
    assert "code" in json.loads(shaped.decide("GET", "/api/delivery/v1/creatives", {}, 1)
                                .respond[2])  # type: ignore[index]  # fmt: skip
    limited = Injector([parse_injection({"respond": {"status": 429}}, "x")])
    assert "error" in json.loads(limited.decide("GET", "/api/delivery/v1/series", {}, 1)
                                 .respond[2])  # type: ignore[index]  # fmt: skip


def test_each_new_fails_every_distinct_request_once() -> None:
    injector = Injector([parse_injection(
        {"times": 0, "each_new": True, "respond": {"status": 503}}, "x")])  # fmt: skip
    first = injector.decide("GET", CATALOG, {"cursor": "a"}, 1)
    again = injector.decide("GET", CATALOG, {"cursor": "a"}, 1)
    other = injector.decide("GET", CATALOG, {"cursor": "b"}, 1)
    assert (first.respond is not None, again.respond is None, other.respond is not None) == (
        True, True, True)  # fmt: skip


def test_wrapped_cursors_map_back_and_a_changed_cursor_is_noted() -> None:
    injector = Injector([parse_injection({"times": 0, "wrap_cursors": True}, "x")])
    plan = injector.decide("GET", CATALOG, {"limit": "20"}, 1)
    page = {"films": [{"id": "f1"}], "next_cursor": "REAL",
            "links": {"next": "http://h/c?cursor=REAL"}}  # fmt: skip
    body = injector.rewrite(plan, CATALOG, 200, page)
    token = body["next_cursor"]
    assert token != "REAL" and "%2F" in token and token in body["links"]["next"].replace(
        "%25", "%")  # fmt: skip
    back = injector.decide("GET", CATALOG, {"limit": "20", "cursor": token}, 1)
    assert back.query["cursor"] == "REAL" and back.notes == []
    changed = injector.decide("GET", CATALOG, {"cursor": token.replace("%2F", "/")}, 1)
    assert changed.notes == ["cursor_unknown"]


def test_rewrites_add_unknown_fields_repeat_drop_and_fail_a_batch_item() -> None:
    injector = Injector([
        parse_injection({"times": 0, "unknown": "both"}, "a"),
        parse_injection({"skip": 1, "repeat_item": True}, "b"),
        parse_injection({"match": {"phase": 2}, "times": 0, "drop_item": True}, "c"),
    ])  # fmt: skip
    page1 = {"films": [{"id": "f1", "title": "One", "status": "published"}], "episodes": []}
    out = injector.rewrite(injector.decide("GET", CATALOG, {}, 1), CATALOG, 200, page1)
    assert out["films"][0][UNKNOWN_FIELD] and out["films"][0]["status"] != "published"
    page2 = {"films": [{"id": "f2", "title": "Two"}], "episodes": []}
    plan = injector.decide("GET", CATALOG, {}, 1)
    out = injector.rewrite(plan, CATALOG, 200, page2)
    assert [f["id"] for f in out["films"]] == ["f1", "f2"]
    assert plan.extra["repeated_title"] == "One (later copy)"
    plan = injector.decide("GET", CATALOG, {}, 2)
    out = injector.rewrite(plan, CATALOG, 200, {"films": [{"id": "f1"}, {"id": "f3"}],
                                                "episodes": [{"film_id": "f1"}]})  # fmt: skip
    assert [f["id"] for f in out["films"]] == ["f3"] and out["episodes"] == []
    batch = Injector([parse_injection({"batch_item": {"index": 1, "retry_after": 2}}, "d")])
    plan = batch.decide("POST", "/api/delivery/v1/playback", {}, 1)
    items = {"items": [{"status": 200}, {"status": 200, "request": {"e": 1}}]}
    out = batch.rewrite(plan, "/api/delivery/v1/playback", 200, items)
    assert out["items"][1]["status"] == 503 and out["items"][1]["retry_after"] == 2


def test_the_secret_book_finds_tokens_and_links_in_output() -> None:
    book = SecretBook()
    book.add_key("Bearer svc_live_abcdefghij")
    book.add_body({"items": [{"play_auth_token": "tok_12345678", "manifest_url":
                              "https://cdn/x?sig=1"}]})  # fmt: skip
    found = {kind for kind, _ in book.leaks("log: tok_12345678 and svc_live_abcdefghij")}
    assert found == {"play_auth_token", "api_key"}
    assert book.leaks("nothing here") == []


# -- judges -------------------------------------------------------------------------------


def test_retry_after_window_passes_inside_fails_early_and_without_jitter() -> None:
    good = [entry(1, 0, 0.1, 429, injected="respond", ra="1"), entry(2, 1.6, 1.7)]
    assert judge("retry_after_window", good)[0] == PASSED
    early = [entry(1, 0, 0.1, 429, injected="respond", ra="1"), entry(2, 0.5, 0.6)]
    assert judge("retry_after_window", early)[0] == FAILED

    def waits(extra: list[float]) -> list[Entry]:
        found = []
        for n, jitter in enumerate(extra):
            at = 3.0 * n  # each wait its own call (a new phase), as two syncs of four give
            found += [entry(2 * n + 1, at, at + 0.1, 429, injected="r", ra="1", phase=n),
                      entry(2 * n + 2, at + 1.1 + jitter, at + 1.2 + jitter, phase=n)]  # fmt: skip
        return found

    status, actual = judge("retry_after_window", waits([0.02] * 8))
    assert status == FAILED and "within 0.25 s" in actual  # no jitter at all
    assert judge("retry_after_window", waits([0.02] * 7 + [0.6]))[0] == PASSED
    assert judge("retry_after_window", waits([0.02] * 7))[0] == PASSED  # too few to judge it
    assert judge("retry_after_window", [entry(1, 0, 1)])[0] == NOT_EXERCISED
    # CLI-008: retried *after* Retry-After, not merely retried
    assert judge("retried_after_wait", good)[0] == PASSED
    assert judge("retried_after_wait", early)[0] == FAILED
    assert judge("retried_after_wait", good[:1])[0] == FAILED


def test_backoff_waits_are_judged_from_both_sides_over_nine_waits() -> None:
    def chains(share: float, *others: float) -> list[Entry]:
        shares = iter(others)
        found: list[Entry] = []
        for run in range(3):
            at = 10.0 * run
            for bound in (0.5, 1.0, 2.0):
                found.append(entry(len(found) + 1, at, at + 0.1, 500, injected="r", phase=run))
                at += 0.1 + next(shares, share) * bound
            found.append(entry(len(found) + 1, at, at + 0.1, 200, phase=run))
        return found

    params = {"base": 0.5, "cap": 8.0}
    status, actual = judge("backoff_spread", chains(0.1), params)  # a tenth of the base
    assert status == FAILED and "under 10 %" in actual
    assert judge("backoff_spread", chains(0.5), params)[0] == PASSED
    assert judge("backoff_spread", chains(0.1)[:8], params)[0] == NOT_EXERCISED
    # no jitter: every wait the whole bound (plus overhead) fails, one lower wait is enough
    status, actual = judge("backoff_spread", chains(1.02), params)
    assert status == FAILED and "no jitter" in actual
    assert judge("backoff_spread", chains(0.92), params)[0] == FAILED
    assert judge("backoff_spread", chains(1.0, 0.6), params)[0] == PASSED
    assert judge("backoff_spread", chains(1.0)[:8], params)[0] == NOT_EXERCISED


def test_the_attempt_timeout_is_judged_on_both_sides() -> None:
    params = {"seconds": 8.0, "min": 5.0, "first_backoff": 0.5, "injected": "delay"}
    held = entry(1, 0, 8.0, None, injected="delay", extra={"gave_up_after": 8.0})
    assert judge("attempt_timeout", [held], params)[0] == PASSED
    early = entry(1, 0, 3.0, None, injected="delay", extra={"gave_up_after": 3.0})
    assert judge("attempt_timeout", [early], params)[0] == FAILED
    waited = entry(1, 0, 10.0, 200, injected="delay")  # took the held answer: no timeout
    status, actual = judge("attempt_timeout", [waited], params)
    assert status == FAILED and "waited 10.0 s" in actual
    retried = [held, entry(2, 8.3, 8.5)]
    assert judge("retried", retried, {"injected": "delay", "given_up": True})[0] == PASSED
    assert judge("retried", [waited], {"injected": "delay", "given_up": True})[0] == NOT_EXERCISED


def test_the_next_envelope_page_is_the_one_links_next_names() -> None:
    path = "/api/delivery/v1/creatives"
    link = f"http://proxy{path}?updated_since=0&limit=20&cursor=ref1%252Fv"
    first = entry(1, 0, 0.1, path=path, query={"updated_since": "0"},
                  extra={"links_next": link, "next_cursor": "ref1%2Fv"})  # fmt: skip
    same = entry(2, 0.2, 0.3, path=path,
                 query={"updated_since": "0", "limit": "20", "cursor": "ref1%2Fv"})  # fmt: skip
    own = entry(2, 0.2, 0.3, path=path, query={"updated_since": "0", "cursor": "ref1%2Fv"})
    params = {"path": "/creatives"}
    assert judge("links_next_used", [first, same], params)[0] == PASSED
    status, actual = judge("links_next_used", [first, own], params)
    assert status == FAILED and "limit=None" in actual
    assert judge("links_next_used", [first], params)[0] == NOT_EXERCISED


def test_retried_and_not_retried_read_the_same_request_again() -> None:
    once = [entry(1, 0, 0.1, 400, injected="respond")]
    again = [*once, entry(2, 0.3, 0.4)]
    assert judge("not_retried", once)[0] == PASSED
    assert judge("not_retried", again)[0] == FAILED
    assert judge("retried", once)[0] == FAILED
    assert judge("retried", again)[0] == PASSED
    other_query = [*once, entry(2, 0.3, 0.4, query={"limit": "5"})]
    assert judge("not_retried", other_query)[0] == PASSED


def test_max_retries_and_total_time_count_one_call() -> None:
    chain = [entry(n + 1, n * 1.0, n * 1.0 + 0.1, 503, injected="respond") for n in range(5)]
    assert judge("max_retries", chain, {"max": 3})[0] == FAILED
    assert judge("max_retries", chain[:4], {"max": 3})[0] == PASSED
    assert judge("total_time", chain, {"total": 3.0})[0] == FAILED
    assert judge("total_time", chain, {"total": 15.0})[0] == PASSED


def test_the_retry_budget_allows_the_floor_and_no_more() -> None:
    entries = []
    for page in range(12):
        query = {"cursor": str(page)}
        entries += [entry(len(entries) + 1, page, page + 0.1, 503, query=query, injected="r"),
                    entry(len(entries) + 2, page + 0.5, page + 0.6, 200, query=query)]  # fmt: skip
    status, actual = judge("retry_budget", entries, {"floor": 10})
    assert status == FAILED and "11 retries among 22 requests (allowed 10)" in actual
    assert judge("retry_budget", entries[:20], {"floor": 10})[0] == PASSED
    assert judge("retry_budget", entries[:10], {"floor": 10})[0] == NOT_EXERCISED


def test_paging_judges_see_overlap_changed_cursors_and_an_early_stop() -> None:
    paged = [entry(1, 0, 0.2, extra={"next_cursor": "c1"}),
             entry(2, 0.1, 0.3, query={"cursor": "c1"}, extra={"next_cursor": None})]  # fmt: skip
    assert judge("pages_sequential", paged, {"path": "/catalog"})[0] == FAILED
    stopped = [entry(1, 0, 0.2, extra={"next_cursor": "c1"})]
    assert judge("cursors_followed", stopped, {"path": "/catalog"})[0] == FAILED
    walked = [entry(1, 0, 0.2, extra={"next_cursor": "c1"}),
              entry(2, 0.3, 0.4, query={"cursor": "c1"}, extra={"next_cursor": None})]  # fmt: skip
    assert judge("cursors_followed", walked, {"path": "/catalog"})[0] == PASSED
    assert judge("pages_sequential", walked, {"path": "/catalog"})[0] == PASSED
    bad = [entry(1, 0, 0.1, query={"cursor": "x"}, notes=("cursor_unknown",))]
    assert judge("cursors_unchanged", bad)[0] == FAILED
    # a run that crashed on the cursor it was handed never sent one back: failed, not unseen
    handed = [entry(1, 0, 0.2, extra={"handed_cursor": "ref1%2Fv"})]
    assert judge("cursors_unchanged", handed, runs=(FlowRun(1, 1, 1.0),))[0] == FAILED
    assert judge("cursors_unchanged", handed, runs=(FlowRun(1, None, 1.0),))[0] == FAILED
    assert judge("cursors_unchanged", handed)[0] == NOT_EXERCISED  # it finished: not this rule
    assert judge("cursors_unchanged", walked, runs=(FlowRun(1, 1, 1.0),))[0] == PASSED


def test_batch_judge_wants_failed_items_only_after_their_retry_after() -> None:
    post = "/api/delivery/v1/playback"
    first = entry(
        1,
        0,
        0.1,
        200,
        method="POST",
        path=post,
        extra={"episodes": ["a", "b"], "item_status": [503, 200], "item_retry_after": [1, None]},
    )
    good = entry(2, 1.5, 1.6, 200, method="POST", path=post, extra={"episodes": ["a"]})
    whole = entry(2, 1.5, 1.6, 200, method="POST", path=post, extra={"episodes": ["a", "b"]})
    # "b" had succeeded: sending it again is resending the whole batch
    soon = entry(2, 0.3, 0.4, 200, method="POST", path=post, extra={"episodes": ["a"]})
    assert judge("batch_only_failed", [first, good])[0] == PASSED
    assert judge("batch_only_failed", [first, whole])[0] == FAILED
    assert judge("batch_only_failed", [first, soon])[0] == FAILED


def test_an_unknown_refusal_reason_is_judged_on_traffic_and_the_declared_exit() -> None:
    post = "/api/delivery/v1/playback"

    def refusal(phase: int, reason: str) -> Entry:
        return entry(phase, phase * 10.0, phase * 10.0 + 0.1, 200, method="POST", path=post,
                     phase=phase, extra={"episodes": ["a", "b"], "item_status": [403, 200],
                                         "item_reason": [reason, None]})  # fmt: skip

    def asked(phase: int, episode: str) -> Entry:
        at = phase * 10.0 + 1
        return entry(9, at, at + 0.1, 200, method="POST", path=post, phase=phase,
                     extra={"episodes": [episode]})  # fmt: skip

    def handled(*entries: Entry, codes: tuple[int | None, ...] = (0,),
                item_exit: int | None = None) -> str:  # fmt: skip
        runs = tuple(FlowRun(n + 1, c, 1.0) for n, c in enumerate(codes))
        obs = Observation(entries, runs, item_failure_exit=item_exit)
        return JUDGES["refused_item_handled"](obs, {}).status

    new = refusal(1, "x-new")
    assert handled(new) == PASSED
    # the plan says 1 means "handled, an item was refused": accepted, never a failure
    assert handled(new, codes=(1,), item_exit=1) == PASSED
    assert handled(new, codes=(1,)) == FAILED  # undeclared: the run did not get past it
    assert handled(new, codes=(2,), item_exit=1) == FAILED
    assert handled(new, codes=(None,), item_exit=1) == FAILED
    assert handled(new, asked(1, "a")) == FAILED  # the refused item asked again
    assert handled(new, asked(1, "b")) == FAILED  # the ticket it got was not kept
    # against a named reason in run 1: treating both alike is not this rule's failure
    named, unknown = refusal(1, "outside_window"), refusal(2, "x-new")
    alike = (named, asked(1, "a"), unknown, asked(2, "a"))
    assert handled(*alike, codes=(0, 0)) == PASSED
    assert handled(named, unknown, asked(2, "a"), codes=(0, 0)) == FAILED
    assert handled(named, unknown, codes=(0, 1)) == FAILED
    assert handled(named, codes=(0,)) == NOT_EXERCISED
    assert JUDGES["refused_item_handled"](Observation((), ()), {}).status == NOT_EXERCISED


def test_state_judges_read_the_export_and_are_not_exercised_without_it() -> None:
    dropped = [entry(1, 0, 0.1, extra={"dropped": "f1"}, phase=2)]
    export = {"catalog": {"films": [{"id": "f1", "available": True, "missed_walks": 0}]}}
    runs = (FlowRun(1, 0, 1.0, export), FlowRun(2, 0, 1.0, export))
    params = {"phase": 2, "available": True, "untouched": True}
    assert judge("export_available", dropped, params, runs)[0] == PASSED
    gone = {"catalog": {"films": [{"id": "f1", "available": False}]}}
    runs_gone = (FlowRun(1, 0, 1.0, export), FlowRun(2, 0, 1.0, gone))
    assert judge("export_available", dropped, params, runs_gone)[0] == FAILED
    assert judge("export_available", dropped, params, (FlowRun(1, 0, 1.0),))[0] == NOT_EXERCISED


def test_stored_links_fail_not_stored_and_the_book_finds_them_in_state_bytes() -> None:
    book = SecretBook()
    book.add_body({"data": {"poster_signed_url": "https://cdn.x/p.jpg?sig=abc"}})
    state = b'SQLite\x00{"poster":"https://cdn.x/p.jpg?sig=abc"}\x00https://other/y'
    assert book.stored(state, ["poster_link"]) == [("poster_link", "https://cdn.x/…")]
    assert book.stored(state, ["download_link"]) == []
    params = {"kinds": ["poster_link"]}
    kept = Observation((), (), frozenset({"poster_link"}), (), (("poster_link", "m", 1),))
    clean = Observation((), (), frozenset({"poster_link"}))
    assert JUDGES["not_stored"](kept, params).status == FAILED
    assert JUDGES["not_stored"](clean, params).status == PASSED
    assert JUDGES["not_stored"](Observation((), ()), params).status == NOT_EXERCISED


def test_series_details_are_judged_on_unchanged_content_versions() -> None:
    series = "/api/delivery/v1/series"
    lists = [entry(1, 0, 0.1, path=series, extra={"item_versions": {"A": "v1", "B": "v1"}}),
             entry(4, 2, 2.1, path=series, phase=2,
                   extra={"item_versions": {"A": "v1", "B": "v2"}})]  # fmt: skip
    first = [entry(2, 0.2, 0.3, path=series + "/A"), entry(3, 0.4, 0.5, path=series + "/B")]
    changed = entry(5, 2.2, 2.3, path=series + "/B", phase=2)
    unchanged = entry(6, 2.4, 2.5, path=series + "/A", phase=2)
    runs = (FlowRun(1, 0, 1.0), FlowRun(2, 0, 1.0))
    params = {"path": "/series"}
    assert judge("details_skipped", [*lists, *first, changed], params, runs)[0] == PASSED
    assert judge("details_skipped", [*lists, *first, unchanged], params, runs)[0] == FAILED
    assert judge("details_skipped", lists, params, runs)[0] == NOT_EXERCISED


def test_unpaged_backend_gone_and_poll_judges() -> None:
    assert judge("unpaged_sync", [entry(1, 0, 1)], {"path": "/catalog"})[0] == PASSED
    paged = [entry(1, 0, 1, query={"limit": "200"})]
    assert judge("unpaged_sync", paged, {"path": "/catalog"})[0] == FAILED
    browser = entry(1, 0, 1)
    browser = Entry.from_dict({**browser.to_dict(), "request_headers": {"Origin": "https://a"}})
    assert judge("backend_only", [entry(1, 0, 1)])[0] == PASSED
    assert judge("backend_only", [browser])[0] == FAILED
    gone = entry(1, 0, 0.1, 410, path="/api/c/t.mp4", injected="respond 410")
    reread = entry(2, 0.2, 0.3, path="/api/delivery/v1/creatives/c1")
    other = entry(2, 0.2, 0.3, path="/api/delivery/v1/creatives/c1/file")
    assert judge("reread_on_gone", [gone, reread], {"injected": "410"})[0] == PASSED
    assert judge("reread_on_gone", [gone, other], {"injected": "410"})[0] == FAILED
    walks = [entry(1, 0, 1), entry(2, 61, 62)]
    assert judge("poll_interval", walks, {"min": 60.0})[0] == PASSED
    assert judge("poll_interval", [entry(1, 0, 1), entry(2, 5, 6)], {"min": 60.0})[0] == FAILED
    assert judge("poll_interval", walks[:1], {"min": 60.0})[0] == NOT_EXERCISED


def test_rights_and_vid_ready_are_judged_on_the_export() -> None:
    day = 86_400
    injector = Injector([parse_injection({"rights_ends": [0, -2]}, "r")], clock=lambda: 5.5 * day)
    plan = injector.decide("GET", "/api/delivery/v1/creatives", {}, 1)
    page = {"data": {"items": [{"creative_id": "a", "rights": {"ends_at": None}},
                               {"creative_id": "b"},
                               {"creative_id": "c", "rights": {"ends_at": None}},
                               {"creative_id": "d", "rights": {"ends_at": 9 * day}}]}}  # fmt: skip
    injector.rewrite(plan, "/api/delivery/v1/creatives", 200, page)
    # the served null (no end on record) is noted too; a served date is not the proxy's to judge
    assert plan.extra["rights_ends"] == {"a": 5 * day, "b": 3 * day, "c": None}
    seen = Entry.from_dict({**entry(1, 0, 1, extra=plan.extra).to_dict(), "wall": 5.5 * day})

    def export(a: bool, b: bool, c: bool = True) -> tuple[FlowRun, ...]:
        items = [{"creative_id": "a", "usable": a}, {"creative_id": "b", "usable": b},
                 {"creative_id": "c", "usable": c}]  # fmt: skip
        return (FlowRun(1, 0, 1.0, {"creatives": {"items": items}}),)

    assert judge("export_usable", [seen], {}, export(True, False))[0] == PASSED
    assert judge("export_usable", [seen], {}, export(False, False))[0] == FAILED
    status, actual = judge("export_usable", [seen], {}, export(True, False, c=False))
    assert status == FAILED and "no rights end on record" in actual
    assert judge("export_usable", [entry(1, 0, 1)], {}, export(True, False))[0] == NOT_EXERCISED
    nulled = Injector([parse_injection({"null_field": "vid_ready"}, "n")])
    plan = nulled.decide("GET", CATALOG, {}, 2)
    body = nulled.rewrite(plan, CATALOG, 200, {"films": [], "episodes": [{"vid_ready": "v"}]})
    assert body["episodes"] == [{"vid_ready": None}] and plan.extra["nulled"] == "vid_ready"

    def films(value: str | None) -> dict[str, Any]:
        return {"catalog": {"films": [{"id": "f", "episodes": [{"id": "e", "vid_ready": value}]}]}}

    marked = [entry(1, 0, 1, extra={"nulled": "vid_ready"}, phase=2)]
    kept = (FlowRun(1, 0, 1.0, films("v")), FlowRun(2, 0, 1.0, films("v")))
    lost = (FlowRun(1, 0, 1.0, films("v")), FlowRun(2, 0, 1.0, films(None)))
    assert judge("export_kept", marked, {"field": "vid_ready"}, kept)[0] == PASSED
    assert judge("export_kept", marked, {"field": "vid_ready"}, lost)[0] == FAILED


# -- catalogue and plan -------------------------------------------------------------------


def test_the_catalogue_loads_and_names_only_client_requirements() -> None:
    requirements = load_requirements()
    scenarios = load_catalogue(client_ids(requirements))
    assert len(scenarios) >= 30
    assert all(requirements[r].role.value == "client" for s in scenarios for r in s.requirements)
    assert len({s.id for s in scenarios}) == len(scenarios)
    assert [s for s in scenarios if s.quick]


def test_a_scenario_with_an_unknown_judge_or_key_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('[[scenario]]\nid="x"\ntitle="t"\nflow="catalog"\nexit="zero"\n'
                    '[[scenario.expect]]\nrequirement="CLI-008"\njudge="guess"\n')  # fmt: skip
    with pytest.raises(UsageError, match="unknown judge 'guess'"):
        load_catalogue(["CLI-008"], [path])
    path.write_text('[[scenario]]\nid="x"\ntitle="t"\nflow="catalog"\nsped=1\n')
    with pytest.raises(UsageError, match="unknown keys sped"):
        load_catalogue(["CLI-008"], [path])
    # every scenario says which exits finish its flow: a crash never passes by default
    path.write_text('[[scenario]]\nid="x"\ntitle="t"\nflow="catalog"\n'
                    '[[scenario.expect]]\nrequirement="CLI-008"\njudge="retried"\n')  # fmt: skip
    with pytest.raises(UsageError, match="exit is zero, handled, any"):
        load_catalogue(["CLI-008"], [path])


def test_a_plan_with_unknown_keys_or_flows_is_refused_in_one_line() -> None:
    with pytest.raises(UsageError, match="unknown keys flowz"):
        parse_plan({"flowz": {}})
    with pytest.raises(UsageError, match="unknown flows sing"):
        parse_plan({"flows": {"sing": "echo"}})
    with pytest.raises(UsageError, match="timeout is 1 to 600"):
        parse_plan({"flows": {"catalog": "x"}, "timeout": 0})
    plan = parse_plan({"flows": {"catalog": "x"}, "export": {"command": "y"}})
    assert plan.export == "y" and plan.timeout == 60 and plan.per_item_failure_exit is None
    for bad in (0, 256, "1", True, 1.0):
        with pytest.raises(UsageError, match="per_item_failure_exit is a whole number"):
            parse_plan({"flows": {"catalog": "x"}, "per_item_failure_exit": bad})
    assert parse_plan({"flows": {"catalog": "x"}, "per_item_failure_exit": 3}
                      ).per_item_failure_exit == 3  # fmt: skip


# -- answers that differ the ways the spec allows (CLI-006, CLI-047) ------------------------


def test_opaque_ids_put_one_legal_non_ulid_id_in_the_header_and_the_body() -> None:
    """Common response headers: `req_` and 26 characters, not to be parsed (CLI-006)."""
    injector = Injector([parse_injection({"opaque_ids": True, "times": 0}, "o"),
                         parse_injection({"respond": {"status": 500}}, "r")])  # fmt: skip
    path = "/api/delivery/v1/creatives"
    injected = injector.decide("GET", path, {}, 1)
    assert injected.respond is not None
    status, headers, raw = injected.respond
    rid = headers["service-request-id"]
    assert status == 500 and json.loads(raw)["request_id"] == rid
    forwarded = injector.decide("GET", path, {}, 1)
    body = injector.rewrite(forwarded, path, 200, {"data": {"items": []}, "request_id": "req_X"})
    for value in (rid, forwarded.headers["service-request-id"]):
        assert value.startswith("req_u") and len(value) == 30 and value.isascii()
        assert value != value.upper()  # lowercase: no Crockford reader takes it
    assert body["request_id"] == forwarded.headers["service-request-id"]
    with pytest.raises(InjectionError, match="opaque_ids"):
        parse_injection({"opaque_ids": 1}, "o")


def test_older_copy_moves_metadata_back_and_changes_its_version() -> None:
    """Limits > Freshness: calls seconds apart can differ (CLI-047)."""
    injector = Injector([parse_injection({"older_copy": 3600}, "c")])
    plan = injector.decide("GET", CATALOG, {}, 1)
    films = [{"id": "f1", "metadata_updated_at": "2026-11-29T10:00:00Z", "metadata_version": "h1"},
             {"id": "f2", "metadata_updated_at": None, "metadata_version": None}]  # fmt: skip
    body = injector.rewrite(plan, CATALOG, 200, {"films": films, "episodes": []})
    assert body["films"][0] == {"id": "f1", "metadata_updated_at": "2026-11-29T09:00:00Z",
                                "metadata_version": "older-h1"}  # fmt: skip
    assert body["films"][1]["metadata_updated_at"] is None and plan.extra["older_copy"] == ["f1"]
    with pytest.raises(InjectionError, match="older_copy"):
        parse_injection({"older_copy": 1.5}, "c")


def test_a_moved_updated_since_is_charged_where_it_happens_and_explains_the_stop() -> None:
    """CLI-029 is judged in every creatives scenario: a cursor sent back with another
    updated_since fails it; the same value, or a fresh sync without a cursor, passes."""
    path = "/api/delivery/v1/creatives"
    first = entry(1, 0, 1, path=path, query={"updated_since": "100"},
                  extra={"next_cursor": "c1"})  # fmt: skip
    moved = entry(2, 2, 3, 422, path=path, query={"updated_since": "150", "cursor": "c1"})
    kept = entry(2, 2, 3, path=path, query={"updated_since": "100", "cursor": "c1"})
    fresh = entry(2, 2, 3, path=path, query={"updated_since": "150"})
    status, actual = judge("cursor_kept_updated_since", [first, moved], {"path": "creatives"})
    assert status == FAILED and "updated_since=150" in actual
    assert judge("cursor_kept_updated_since", [first, kept], {"path": "creatives"})[0] == PASSED
    assert judge("cursor_kept_updated_since", [first, fresh])[0] == NOT_EXERCISED


def test_a_standing_failure_turns_the_end_of_flow_judges_of_its_scenario_to_not_exercised(
    tmp_path: Path,
) -> None:
    """judges.STANDING / FINISH_JUDGES (runner): a creatives flow that stopped after sending a
    cursor back with another updated_since is charged CLI-029 where it happened; the scenario's
    exit judge says "not exercised" (never passed), a judge of the traffic still fails."""
    from delivery_conformance.certify.runner import CertifyOptions, Upstream, _ScenarioRun
    from delivery_conformance.certify.scenarios import Expectation, Scenario
    from delivery_conformance.evidence.events import Outcome

    path = "/api/delivery/v1/creatives"
    first = entry(1, 0, 1, path=path, query={"updated_since": "100"}, injected="unknown",
                  extra={"next_cursor": "c1"})  # fmt: skip
    moved = entry(2, 2, 3, 422, path=path, query={"updated_since": "150", "cursor": "c1"})
    scenario = Scenario(
        id="s", family="f", title="t", flow="creatives", exit="zero", injections=(),
        expectations=(Expectation("CLI-001", "exit_zero", {}),
                      Expectation("CLI-005", "retried", {"injected": "unknown"})),
    )  # fmt: skip
    run = _ScenarioRun(scenario, parse_plan({"flows": {"creatives": "x"}}), Upstream("u", {}),
                       CertifyOptions(tmp_path), SecretBook())  # fmt: skip
    failed = Observation((first, moved), (FlowRun(1, 1, 1.0),))
    tests = {t.requirement_ids[0]: t.outcome for t in run._judge(failed, "http://p")}
    assert tests == {"CLI-029": Outcome.FAILED, "CLI-001": Outcome.NOT_EXERCISED,
                     "CLI-005": Outcome.FAILED}  # fmt: skip
    finished = Observation((first,), (FlowRun(1, 1, 1.0),))  # no standing failure: exit judged
    tests = {t.requirement_ids[0]: t.outcome for t in run._judge(finished, "http://p")}
    assert tests["CLI-001"] is Outcome.FAILED and "CLI-029" not in tests


def test_a_retry_with_another_body_counts_only_where_the_body_is_another_rules() -> None:
    """requests-device-values: a play retried without its device key is still retried (CLI-009
    holds); what the body lost is CLI-059's."""
    play = "/api/delivery/v1/playback"
    first = entry(1, 0.0, 0.1, 503, injected="503", method="POST", path=play, body='{"a":1,"b":2}')
    again = entry(2, 1.2, 1.3, 400, method="POST", path=play, body='{"a":1}')
    assert judge("retried", [first, again])[0] == FAILED  # not the same request
    assert judge("retried", [first, again], {"body_may_differ": True})[0] == PASSED
    assert judge("retried", [first], {"body_may_differ": True})[0] == FAILED  # never sent again
