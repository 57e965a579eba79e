"""Client rules judged on what crossed the proxy (pure: journal entries in, results out).

Each judge reads the journal entries of one scenario (and, for safe-sync outcomes, the client's
exported state after each run of the flow) and answers passed, failed or not exercised, with the
entries that show it. A judge that saw nothing to judge (no injected answer fired, a single
page, no export) says "not exercised": it never passes by default. Figures are the spec's
(Errors > Retry policy (client side); Endpoints > Paging and envelopes; Limits > Freshness,
safe sync), read from the scenario's `params` so a scenario can scale time and say so.

Timing is measured at the proxy: a wait is the gap between the end of the answer that asked for
a retry and the start of the retry, so it includes the client's own overhead (hence `slack`).
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from delivery_conformance.certify.journal import Entry
from delivery_conformance.certify.observation import (
    FAILED,
    NOT_EXERCISED,
    PASSED,
    FlowRun,
    JudgeResult,
    Observation,
)
from delivery_conformance.certify.refresh_judges import REFRESH_JUDGES
from delivery_conformance.certify.request_judges import REQUEST_JUDGES
from delivery_conformance.certify.state_judges import STATE_JUDGES

__all__ = [
    "FAILED",
    "FINISH_JUDGES",
    "JUDGES",
    "NOT_EXERCISED",
    "PASSED",
    "STANDING",
    "FlowRun",
    "JudgeResult",
    "Observation",
    "request_key",
]

DEFAULT_SLACK = 0.35  # seconds of client and proxy overhead allowed on top of a spec window
RETRYABLE = frozenset({429, 500, 502, 503, 504, 599})


Judge = Callable[[Observation, Mapping[str, Any]], JudgeResult]


def request_key(entry: Entry) -> tuple[Any, ...]:
    """The same request sent again has the same key (method, path, query, body)."""
    return (entry.phase, entry.method, entry.path, tuple(sorted(entry.query.items())),
            entry.request_body)  # fmt: skip


def _injected(obs: Observation, params: Mapping[str, Any]) -> list[Entry]:
    word = str(params.get("injected", ""))
    return [e for e in obs.entries if e.injected and word in e.injected]


def _next_same(obs: Observation, entry: Entry) -> Entry | None:
    key = request_key(entry)
    for later in obs.entries:
        if later.started > entry.started and later.seq != entry.seq and request_key(later) == key:
            return later
    return None


def _next_to_same_endpoint(obs: Observation, entry: Entry) -> Entry | None:
    """The next request of the same run to the same method, path and query, whatever its body."""
    key = request_key(entry)[:4]
    for later in obs.entries:
        if (
            later.started > entry.started
            and later.seq != entry.seq
            and request_key(later)[:4] == key
        ):
            return later
    return None


def _retry_after(entry: Entry) -> float | None:
    for name, value in entry.response_headers.items():
        if name.lower() == "retry-after":
            try:
                return float(value)
            except ValueError:
                return None
    return None


def _slack(params: Mapping[str, Any]) -> float:
    return float(params.get("slack", DEFAULT_SLACK))


def _given_up(obs: Observation, entry: Entry) -> bool:
    """The client gave up a held attempt: it closed the connection before the hold ended
    (the proxy notes when), or sent the request again while the first was still held."""
    retry = _next_same(obs, entry)
    return "gave_up_after" in entry.extra or (retry is not None and retry.started < entry.ended)


def retried(obs: Observation, params: Mapping[str, Any]) -> JudgeResult:
    """Each injected answer is followed by the same request sent again. With `given_up`, only
    held attempts the client gave up count (a client that waits for a held answer has no
    timeout to retry: the attempt-timeout rule judges that)."""
    injected = _injected(obs, params)
    expected = "the same request sent again after each injected answer"
    if params.get("given_up"):
        injected = [e for e in injected if _given_up(obs, e)]
        expected = "the same request sent again after each attempt the client gave up"
    if not injected:
        return JudgeResult(NOT_EXERCISED, expected, "no injected answer was served")
    following = _next_same
    if params.get("body_may_differ"):
        # the body of the retry is another rule's (e.g. CLI-059, device values on every
        # attempt): here a retry is the same method, path and query sent again
        expected = "the request sent again (same method, path and query) after each injected answer"
        following = _next_to_same_endpoint
    missing = [e for e in injected if following(obs, e) is None]
    if missing:
        return JudgeResult(FAILED, expected, f"{len(missing)} of {len(injected)} injected "
                           f"answers were never retried", tuple(missing[:3]))  # fmt: skip
    return JudgeResult(PASSED, expected, f"{len(injected)} retried", tuple(injected))


def retried_after_wait(obs: Observation, params: Mapping[str, Any]) -> JudgeResult:
    """Each injected answer with `Retry-After` R is followed by the same request, sent no
    sooner than R seconds after the answer ended (retried *after* Retry-After)."""
    injected = [e for e in _injected(obs, params) if _retry_after(e) is not None]
    expected = "the same request sent again, no sooner than Retry-After"
    if not injected:
        return JudgeResult(NOT_EXERCISED, expected, "no injected answer with Retry-After")
    waits = []
    for entry in injected:
        retry, after = _next_same(obs, entry), _retry_after(entry) or 0.0
        if retry is None:
            return JudgeResult(FAILED, expected, "an answer with Retry-After was never retried",
                               (entry,))  # fmt: skip
        wait = retry.started - entry.ended
        if wait < after - 0.02:
            return JudgeResult(FAILED, expected, f"sent again {wait:.2f} s after an answer with "
                               f"Retry-After {after:g}", (entry, retry))  # fmt: skip
        waits.append(wait)
    shown = ", ".join(f"{w:.2f}" for w in waits)
    return JudgeResult(PASSED, expected, f"retried after {shown} s", tuple(injected))


def not_retried(obs: Observation, params: Mapping[str, Any]) -> JudgeResult:
    """No injected answer is followed by the same request in the same run of the flow."""
    injected = _injected(obs, params)
    expected = "no retry of a request that got this answer (in this run of the flow)"
    if not injected:
        return JudgeResult(NOT_EXERCISED, expected, "no injected answer was served")
    again = [(e, r) for e in injected if (r := _next_same(obs, e)) is not None]
    if again:
        first, retry = again[0]
        gap = retry.started - first.ended
        return JudgeResult(FAILED, expected, f"sent again {gap:.2f} s after the answer "
                           f"({len(again)} times)", (first, retry))  # fmt: skip
    return JudgeResult(PASSED, expected, "not sent again", tuple(injected))


JITTER_WAITS = 8  # waits needed to judge the random 0 to 1 s on top of Retry-After
JITTER_LOW = 0.25  # seconds: a wait with no jitter stays under R + this (client overhead)


def retry_after_window(obs: Observation, params: Mapping[str, Any]) -> JudgeResult:
    """The wait after an answer with Retry-After R lies in [R, R + 1] (plus slack), and the
    extra 0 to 1 s is random: over `JITTER_WAITS` (8) waits or more, not every one is under
    R + 0.25 s. A client drawing a uniform 0 to 1 s puts all 8 there with probability
    0.25^8 = 1.5e-5 (its own overhead only lowers that); one that adds nothing always does."""
    slack = _slack(params)
    waits: list[tuple[float, float, Entry, Entry]] = []
    for entry in _injected(obs, params):
        after = _retry_after(entry)
        retry = _next_same(obs, entry)
        if after is None or retry is None:
            continue
        waits.append((retry.started - entry.ended, after, entry, retry))
    expected = "waits of Retry-After plus a random 0 to 1 s"
    if not waits:
        return JudgeResult(NOT_EXERCISED, expected, "no retry after a Retry-After answer")
    for wait, after, entry, retry in waits:
        if not after - 0.02 <= wait <= after + 1.0 + slack:
            return JudgeResult(FAILED, f"a wait in [{after:g}, {after + 1:g}] s (+{slack:g} s)",
                               f"waited {wait:.2f} s", (entry, retry))  # fmt: skip
    if len(waits) >= JITTER_WAITS and all(w < after + JITTER_LOW for w, after, _, _ in waits):
        shown = ", ".join(f"{w:.2f}" for w, *_ in waits)
        return JudgeResult(FAILED, "a random 0 to 1 s on top of Retry-After",
                           f"every wait within {JITTER_LOW:g} s of Retry-After ({shown} s)",
                           (waits[0][2], waits[0][3]))  # fmt: skip
    shown = ", ".join(f"{w:.2f}" for w, *_ in waits)
    return JudgeResult(PASSED, expected, f"waits {shown} s")


def _chains(obs: Observation, params: Mapping[str, Any]) -> list[list[Entry]]:
    """Attempt chains that start at an injected answer: [failed, retry1, retry2, ...]."""
    chains: list[list[Entry]] = []
    used: set[int] = set()
    for entry in _injected(obs, params):
        if entry.seq in used:
            continue
        chain = [entry]
        key = request_key(entry)
        for later in obs.entries:
            if later.started > chain[-1].started and request_key(later) == key:
                chain.append(later)
        used.update(e.seq for e in chain)
        chains.append(chain)
    return chains


def _gaps(chain: Sequence[Entry]) -> list[tuple[float, Entry, Entry]]:
    return [(b.started - a.ended, a, b) for a, b in itertools.pairwise(chain)
            if a.status is None or a.status in RETRYABLE or a.status >= 500]  # fmt: skip


def backoff_window(obs: Observation, params: Mapping[str, Any]) -> JudgeResult:
    """Without Retry-After the k-th wait (k from 0) is at most min(cap, base x 2^k)."""
    base, cap, slack = float(params["base"]), float(params["cap"]), _slack(params)
    expected = f"the k-th wait at most min({cap:g}, {base:g} x 2^k) s"
    seen = []
    for chain in _chains(obs, params):
        for k, (gap, a, b) in enumerate(_gaps(chain)):
            bound = min(cap, base * 2.0**k)
            seen.append(gap)
            if gap > bound + slack:
                return JudgeResult(FAILED, f"wait {k} at most {bound:g} s (+{slack:g} s)",
                                   f"waited {gap:.2f} s", (a, b))  # fmt: skip
    if not seen:
        return JudgeResult(NOT_EXERCISED, expected, "no retry after an injected answer")
    return JudgeResult(PASSED, expected, "waits " + ", ".join(f"{g:.2f}" for g in seen) + " s")


SPREAD_WAITS = 9  # waits needed to judge that backoff waits fill their whole window
SPREAD_LOW = 0.10  # a wait under this share of its bound (plus overhead) is "low"
SPREAD_OVERHEAD = 0.05  # seconds of client and proxy overhead in a measured wait
SPREAD_HIGH = 0.90  # a wait of at least this share of its bound (as measured) is "high"


def backoff_spread(obs: Observation, params: Mapping[str, Any]) -> JudgeResult:
    """The waits are random over the whole of [0, bound], seen from both ends over 9 waits or
    more. From below, a base ten times too small: not every wait is under 10 % of its bound
    (plus 0.05 s of overhead). A uniform wait is that low with probability 0.1 + 0.05 / bound;
    for the interactive bounds 0.5, 1 and 2 s met three times each, all nine are with
    probability (0.2 x 0.15 x 0.125)^3 = 5e-8. A client with a tenth of the base always is.
    From above, no jitter at all (every wait the whole bound): not every measured wait is at
    least 90 % of its bound. Overhead only lengthens a measured wait, so a uniform wait gets
    there with probability 0.1 + overhead / bound: with 0.05 s the same 5e-8, with 0.2 s of a
    loaded machine (0.5 x 0.3 x 0.2)^3 = 2.7e-5. A client waiting the whole bound always does."""
    base, cap = float(params["base"]), float(params["cap"])
    needed = int(params.get("waits", SPREAD_WAITS))
    expected = "waits drawn at random between 0 and min(cap, base x 2^k)"
    ratios: list[tuple[float, float, Entry, Entry]] = []
    for chain in _chains(obs, params):
        for k, (gap, a, b) in enumerate(_gaps(chain)):
            bound = min(cap, base * 2.0**k)
            ratios.append((gap / bound, (gap - SPREAD_OVERHEAD) / bound, a, b))
    if len(ratios) < needed:
        return JudgeResult(NOT_EXERCISED, expected, f"{len(ratios)} waits ({needed} needed)")
    shown = ", ".join(f"{r:.3f}" for r, *_ in ratios)
    if all(low < SPREAD_LOW for _, low, _, _ in ratios):
        low = f"every wait under {SPREAD_LOW * 100:g} % of its bound ({shown})"
        return JudgeResult(FAILED, expected, low, (ratios[0][2], ratios[0][3]))
    if all(ratio >= SPREAD_HIGH for ratio, _, _, _ in ratios):
        high = f"every wait at least {SPREAD_HIGH * 100:g} % of its bound, no jitter ({shown})"
        return JudgeResult(FAILED, expected, high, (ratios[0][2], ratios[0][3]))
    return JudgeResult(PASSED, expected, f"wait / bound {shown}")


def max_retries(obs: Observation, params: Mapping[str, Any]) -> JudgeResult:
    most = int(params["max"])
    expected = f"at most {most} retries of one call"
    chains = _chains(obs, params)
    if not chains or max(len(c) for c in chains) < 2:
        return JudgeResult(NOT_EXERCISED, expected, "no retry was made")
    for chain in chains:
        if len(chain) - 1 > most:
            return JudgeResult(FAILED, expected, f"{len(chain) - 1} retries",
                               (chain[0], chain[-1]))  # fmt: skip
    return JudgeResult(PASSED, expected, f"{max(len(c) for c in chains) - 1} retries at most")


def total_time(obs: Observation, params: Mapping[str, Any]) -> JudgeResult:
    total, slack = float(params["total"]), _slack(params)
    expected = f"one call with its retries over within {total:g} s"
    chains = [c for c in _chains(obs, params) if len(c) > 1]
    if not chains:
        return JudgeResult(NOT_EXERCISED, expected, "no retry was made")
    for chain in chains:
        span = chain[-1].ended - chain[0].started
        if span > total + slack:
            return JudgeResult(FAILED, expected, f"{len(chain)} attempts over {span:.2f} s",
                               (chain[0], chain[-1]))  # fmt: skip
    spans = ", ".join(f"{c[-1].ended - c[0].started:.2f}" for c in chains)
    return JudgeResult(PASSED, expected, f"calls took {spans} s")


def attempt_floor(obs: Observation, params: Mapping[str, Any]) -> JudgeResult:
    """A held request is not given up (and sent again) before `min` seconds."""
    floor = float(params["min"])
    expected = f"an attempt waited at least {floor:g} s before a retry"
    held = _injected(obs, params)
    if not held:
        return JudgeResult(NOT_EXERCISED, expected, "no request was held")
    for entry in held:
        retry = _next_same(obs, entry)
        if retry is not None and retry.started - entry.started < floor - 0.1:
            gap = retry.started - entry.started
            return JudgeResult(FAILED, expected, f"sent again after {gap:.2f} s", (entry, retry))
    return JudgeResult(PASSED, expected, "no early retry")


def attempt_timeout(obs: Observation, params: Mapping[str, Any]) -> JudgeResult:
    """A request held longer than the attempt timeout is given up after `seconds` (not before
    `min`, default `seconds` - 0.5): the client closes the connection, or sends it again within
    the first backoff. A client that waits for the held answer has no attempt timeout."""
    seconds, first = float(params["seconds"]), float(params.get("first_backoff", 1.0))
    least = float(params.get("min", seconds - 0.5))
    slack = _slack(params) + 0.5
    expected = f"a held attempt given up between {least:g} and {seconds:g} s"
    held = _injected(obs, params)
    if not held:
        return JudgeResult(NOT_EXERCISED, expected, "no request was held")
    for entry in held:
        retry = _next_same(obs, entry)
        gave_up = entry.extra.get("gave_up_after")
        if isinstance(gave_up, int | float):
            if not least - 0.1 <= gave_up <= seconds + slack:
                return JudgeResult(FAILED, expected, f"gave up after {gave_up:.2f} s", (entry,))
            return JudgeResult(PASSED, expected, f"gave up after {gave_up:.2f} s", (entry,))
        if retry is not None and retry.started < entry.ended:
            gap = retry.started - entry.started
            if not least - 0.1 <= gap <= seconds + first + slack:
                return JudgeResult(FAILED, expected, f"retried after {gap:.2f} s", (entry, retry))
            return JudgeResult(PASSED, expected, f"retried after {gap:.2f} s", (entry, retry))
        if entry.ended - entry.started > seconds + first + slack:
            return JudgeResult(FAILED, expected, f"waited {entry.ended - entry.started:.1f} s for "
                               "the held answer", (entry,))  # fmt: skip
    return JudgeResult(NOT_EXERCISED, expected, "no attempt held past the timeout")


def retry_budget(obs: Observation, params: Mapping[str, Any]) -> JudgeResult:
    """Retries in any 60 s: at most max(floor, ratio x requests in those 60 s)."""
    ratio, floor = float(params.get("ratio", 0.10)), int(params.get("floor", 10))
    window = float(params.get("window", 60.0))
    expected = f"retries per {window:g} s at most max({floor}, {ratio:g} x requests)"
    answered: dict[tuple[Any, ...], Entry] = {}
    times: list[float] = []
    retries: list[Entry] = []
    for entry in obs.entries:
        key = request_key(entry)
        times.append(entry.started)
        prior = answered.get(key)
        if prior is not None and (prior.status is None or prior.status in RETRYABLE):
            retries.append(entry)
        answered[key] = entry
    if len(retries) < floor:
        return JudgeResult(NOT_EXERCISED, expected, f"{len(retries)} retries: the floor of "
                           f"{floor} was not reached")  # fmt: skip
    for retry in retries:
        since = retry.started - window
        n_retries = sum(1 for r in retries if since < r.started <= retry.started)
        n_requests = sum(1 for t in times if since < t <= retry.started)
        allowed = max(floor, math.floor(ratio * n_requests + 1e-9))
        if n_retries > allowed:
            return JudgeResult(FAILED, expected, f"{n_retries} retries among {n_requests} "
                               f"requests (allowed {allowed})", (retry,))  # fmt: skip
    return JudgeResult(PASSED, expected, f"{len(retries)} retries among {len(times)} requests")


def same_key(obs: Observation, params: Mapping[str, Any]) -> JudgeResult:
    expected = "the call retried with the same key"
    injected = _injected(obs, params)
    if not injected:
        return JudgeResult(NOT_EXERCISED, expected, "no injected answer was served")
    for entry in injected:
        retry = next((e for e in obs.entries if e.started > entry.started
                      and e.method == entry.method and e.path == entry.path), None)  # fmt: skip
        if retry is None:
            return JudgeResult(FAILED, expected, "no retry at all", (entry,))
        if retry.key_id != entry.key_id:
            return JudgeResult(FAILED, expected, "the retry carried another key", (entry, retry))
    return JudgeResult(PASSED, expected, "retried with the same key")


def _list_entries(obs: Observation, params: Mapping[str, Any], phase: int) -> list[Entry]:
    path = str(params["path"])
    return [e for e in obs.entries if e.path.endswith(path) and e.method == "GET"
            and e.phase == phase]  # fmt: skip


def pages_sequential(obs: Observation, params: Mapping[str, Any]) -> JudgeResult:
    expected = "one page at a time (each page asked after the previous one was answered)"
    pages = 0
    for run in obs.runs:
        entries = sorted(_list_entries(obs, params, run.phase), key=lambda e: e.started)
        pages = max(pages, len(entries))
        for a, b in itertools.pairwise(entries):
            if b.started < a.ended - 0.001:
                return JudgeResult(FAILED, expected, "a page was asked while another was "
                                   "still being answered", (a, b))  # fmt: skip
    if pages < 2:
        return JudgeResult(NOT_EXERCISED, expected, "the walk had a single page")
    return JudgeResult(PASSED, expected, f"{pages} pages in turn")


def cursors_unchanged(obs: Observation, params: Mapping[str, Any]) -> JudgeResult:
    """Every cursor sent back is one that was handed out, byte for byte; and a run that did not
    finish (killed, or an exit other than 0) after being handed a cursor it never sent back
    failed on that cursor: the walk needed nothing else from it."""
    expected = "every cursor sent back exactly as handed out"
    sent = [e for e in obs.entries if "cursor" in e.query or "cursor_unknown" in e.notes]
    bad = [e for e in sent if "cursor_unknown" in e.notes]
    if bad:
        return JudgeResult(FAILED, expected, f"cursor {bad[0].query.get('cursor')!r} was never "
                           "handed out", tuple(bad[:2]))  # fmt: skip
    for run in obs.runs:
        if run.exit_code == 0:
            continue
        mine = sorted((e for e in obs.entries if e.phase == run.phase), key=lambda e: e.started)
        handed = [e for e in mine if isinstance(_handed(e), str)]
        if not handed:
            continue
        last = handed[-1]
        if not any(e.started > last.started and e.query.get("cursor") == _handed(last)
                   for e in mine):  # fmt: skip
            how = "was killed" if run.exit_code is None else f"exited {run.exit_code}"
            return JudgeResult(FAILED, expected, f"run {run.phase} {how} after being handed a "
                               "cursor it never sent back", (last,))  # fmt: skip
    if not sent:
        return JudgeResult(NOT_EXERCISED, expected, "no cursor was sent back")
    return JudgeResult(PASSED, expected, f"{len(sent)} cursors sent back unchanged")


def cursors_followed(obs: Observation, params: Mapping[str, Any]) -> JudgeResult:
    """A walk that ended without an error ended on a page whose next cursor is null: it was not
    stopped by a short or empty page, nor after the first page. (A run that failed is judged by
    the rule that made it fail, not here.)"""
    expected = "the walk goes on until the next cursor is null"
    paged = False
    for run in obs.runs:
        pages = [e for e in _list_entries(obs, params, run.phase) if e.status == 200]
        paged = paged or any(isinstance(_handed(e), str) for e in pages)
        if run.exit_code != 0 or not pages:
            continue
        last = max(pages, key=lambda e: e.started)
        if isinstance(_handed(last), str):
            return JudgeResult(FAILED, expected, f"the walk stopped with a next cursor after a "
                               f"page of {_count(last)} items", (last,))  # fmt: skip
    if not paged:
        return JudgeResult(NOT_EXERCISED, expected, "no page had a next cursor")
    return JudgeResult(PASSED, expected, "every finished walk ended on a null cursor")


def links_next_used(obs: Observation, params: Mapping[str, Any]) -> JudgeResult:
    """After an envelope page whose `links.next` is a link, the next page the client asks for
    is that link: the same path and every query value of the link, unchanged (the client may
    add none of its own that contradict it)."""
    expected = "the next page asked exactly as links.next gave it"
    followed = 0
    for run in obs.runs:
        pages = sorted(_list_entries(obs, params, run.phase), key=lambda e: e.started)
        for index, page in enumerate(pages):
            link = page.extra.get("links_next")
            if page.status != 200 or not isinstance(link, str):
                continue
            later = [e for e in pages[index + 1 :] if request_key(e) != request_key(page)]
            if not later:
                continue
            asked, parts = later[0], urlsplit(link)
            wanted = dict(parse_qsl(parts.query, keep_blank_values=True))
            differ = sorted(k for k, v in wanted.items() if asked.query.get(k) != v)
            if asked.path != parts.path or differ:
                shown = ", ".join(
                    f"{k}={asked.query.get(k)!r} (link {wanted[k]!r})" for k in differ
                )
                what = f"path {asked.path}" if asked.path != parts.path else shown
                return JudgeResult(FAILED, expected, f"asked {what}", (page, asked))
            followed += 1
    if not followed:
        return JudgeResult(NOT_EXERCISED, expected, "no links.next was followed")
    return JudgeResult(PASSED, expected, f"{followed} next links followed as given")


def _handed(entry: Entry) -> Any:
    return entry.extra.get("next_cursor", entry.extra.get("handed_cursor"))


def _count(entry: Entry) -> str:
    try:
        body = json.loads(entry.response_body)
    except ValueError:
        return "?"
    holder = body.get("data", body) if isinstance(body, dict) else {}
    for name in ("films", "items"):
        if isinstance(holder, dict) and isinstance(holder.get(name), list):
            return str(len(holder[name]))
    return "?"


def same_updated_since(obs: Observation, params: Mapping[str, Any]) -> JudgeResult:
    expected = "the same updated_since on every page of one sync"
    pages = 0
    for run in obs.runs:
        entries = [e for e in _list_entries(obs, params, run.phase) if e.status is not None]
        pages = max(pages, len(entries))
        values = {e.query.get("updated_since") for e in entries}
        if len(values) > 1:
            shown = ", ".join(sorted(str(v) for v in values))
            return JudgeResult(FAILED, expected, f"pages asked with {shown}",
                               tuple(entries[:2]))  # fmt: skip
    if pages < 2:
        return JudgeResult(NOT_EXERCISED, expected, "the sync had a single page")
    return JudgeResult(PASSED, expected, f"{pages} pages with one value")


def cursor_kept_updated_since(obs: Observation, params: Mapping[str, Any]) -> JudgeResult:
    """A page asked with a cursor carries the `updated_since` of the page that handed that
    cursor out: a cursor ties the pages of one sync, so a value that moved on the way is a
    sync that did not keep one value (CLI-029), whatever the server then answered. Judged in
    every scenario of the flows that list creatives (`STANDING`), not only the paging one."""
    expected = "a page asked with a cursor keeps the updated_since of the page that gave it"
    path = "/" + str(params.get("path", "creatives"))
    pages = sorted((e for e in obs.entries if e.method == "GET" and e.path.endswith(path)),
                   key=lambda e: e.started)  # fmt: skip
    linked = 0
    for index, page in enumerate(pages):
        cursor = page.query.get("cursor")
        if not cursor:
            continue
        giver = next((e for e in reversed(pages[:index]) if _handed(e) == cursor
                      and e.phase == page.phase), None)  # fmt: skip
        if giver is None:
            continue
        linked += 1
        before, after = giver.query.get("updated_since"), page.query.get("updated_since")
        if before != after:
            return JudgeResult(FAILED, expected, f"the cursor of a page asked with "
                               f"updated_since={before} sent with updated_since={after}",
                               (giver, page))  # fmt: skip
    if not linked:
        return JudgeResult(NOT_EXERCISED, expected, "no page was asked with a cursor")
    return JudgeResult(PASSED, expected, f"{linked} cursors sent with their updated_since")


# Rules judged in every scenario of a flow (runner.py), beside the scenario's own expectations:
# (flows, requirement, judge, params). A standing rule that fails also explains a flow that did
# not finish, so the judges of FINISH_JUDGES there are not exercised rather than failed.
STANDING: tuple[tuple[frozenset[str], str, str, Mapping[str, Any]], ...] = (
    (frozenset({"creatives", "download"}), "CLI-029", "cursor_kept_updated_since",
     {"path": "creatives"}),
)  # fmt: skip


def _export(obs: Observation, phase: int | None = None) -> Any:
    runs = [r for r in obs.runs if phase is None or r.phase == phase]
    return runs[-1].export if runs else None


def _path(data: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        data = data.get(part) if isinstance(data, dict) else None
    return data


def _extra(obs: Observation, name: str) -> tuple[Any, Entry | None]:
    for entry in obs.entries:
        if name in entry.extra:
            return entry.extra[name], entry
    return None, None


def export_unique(obs: Observation, params: Mapping[str, Any]) -> JudgeResult:
    items, key = str(params["items"]), str(params["key"])
    expected = f"each {key} once in the client's state"
    repeated, entry = _extra(obs, "repeated_id")
    rows = _path(_export(obs), items)
    if repeated is None or not isinstance(rows, list):
        return JudgeResult(NOT_EXERCISED, expected, "no repeated record or no exported state")
    ids = [r.get(key) for r in rows if isinstance(r, dict)]
    twice = sorted({i for i in ids if ids.count(i) > 1}, key=str)
    if twice:
        return JudgeResult(FAILED, expected, f"{len(twice)} stored twice (e.g. {twice[0]})",
                           (entry,) if entry else ())  # fmt: skip
    served = {i for e in obs.entries if e.status == 200 for i in e.extra.get("item_ids", ())}
    if served and len(ids) > len(served):
        return JudgeResult(FAILED, expected, f"{len(ids)} records stored for {len(served)} "
                           "distinct ones served", (entry,) if entry else ())  # fmt: skip
    if repeated not in ids:
        return JudgeResult(FAILED, expected, f"the repeated record {repeated} is missing")
    return JudgeResult(PASSED, expected, f"{len(ids)} records, none twice")


def export_later_copy(obs: Observation, params: Mapping[str, Any]) -> JudgeResult:
    expected = "the later copy of a repeated film kept"
    title, entry = _extra(obs, "repeated_title")
    film_id, _ = _extra(obs, "repeated_id")
    films = _path(_export(obs), str(params.get("items", "catalog.films")))
    if title is None or not isinstance(films, list):
        return JudgeResult(NOT_EXERCISED, expected, "no repeated film or no exported state")
    kept = [f.get("title") for f in films if isinstance(f, dict) and f.get("id") == film_id]
    if kept != [title]:
        return JudgeResult(FAILED, expected, f"stored {kept!r}", (entry,) if entry else ())
    return JudgeResult(PASSED, expected, f"kept {title!r}")


def export_available(obs: Observation, params: Mapping[str, Any]) -> JudgeResult:
    """After run `phase`, the film the proxy dropped is (or is not) available; with
    `untouched`, no film's missed-walk counter moved either."""
    phase, want = int(params["phase"]), bool(params["available"])
    expected = f"after run {phase} the dropped film {'still' if want else 'no longer'} available"
    dropped, entry = _extra(obs, "dropped")
    films = _path(_export(obs, phase), "catalog.films")
    if dropped is None or not isinstance(films, list):
        return JudgeResult(NOT_EXERCISED, expected, "no film was dropped or no exported state")
    rows = [f for f in films if isinstance(f, dict) and f.get("id") == dropped]
    if not rows or bool(rows[0].get("available")) != want:
        state = "missing" if not rows else f"available={rows[0].get('available')}"
        return JudgeResult(FAILED, expected, f"the film is {state}", (entry,) if entry else ())
    if params.get("untouched"):
        moved = [f for f in films if isinstance(f, dict) and f.get("missed_walks")]
        if moved:
            return JudgeResult(FAILED, "no film counted as missed after an incomplete walk",
                               f"{len(moved)} films counted as missed",
                               (entry,) if entry else ())  # fmt: skip
    return JudgeResult(PASSED, expected, f"available={want}")


def export_kept(obs: Observation, params: Mapping[str, Any]) -> JudgeResult:
    """After run 2, whose answers carried `field` null on every episode, each episode keeps
    the value run 1 stored (Episode `vid_ready`: null means unchanged)."""
    name = str(params.get("field", "vid_ready"))
    expected = f"an episode's {name} kept when an answer carries it null"
    nulled, entry = _extra(obs, "nulled")

    def values(phase: int) -> dict[tuple[Any, Any], Any]:
        films = _path(_export(obs, phase), "catalog.films")
        return {(f.get("id"), e.get("id")): e.get(name)
                for f in films if isinstance(f, dict) for e in f.get("episodes") or []
                if isinstance(e, dict)} if isinstance(films, list) else {}  # fmt: skip

    before, after = values(1), values(2)
    known = {k: v for k, v in before.items() if v is not None}
    if nulled != name or not known or not after:
        return JudgeResult(NOT_EXERCISED, expected, f"no {name} nulled or no exported state")
    lost = [k for k, v in known.items() if k in after and after[k] != v]
    if lost:
        shown = f"{len(lost)} of {len(known)} episodes lost their {name} (e.g. {lost[0][1]})"
        return JudgeResult(FAILED, expected, shown, (entry,) if entry else ())
    return JudgeResult(PASSED, expected, f"{len(known)} episodes kept their {name}")


def batch_only_failed(obs: Observation, params: Mapping[str, Any]) -> JudgeResult:
    """After a batch answer with failed items, each retry batch holds only failed items whose
    own retry_after has passed, and the first comes within the earliest retry_after plus the
    Retry policy's 0 to 1 s (and slack)."""
    slack = _slack(params)
    expected = "only failed items sent again, each after its own retry_after"
    posts = [e for e in obs.entries if e.method == "POST" and e.path.endswith("/playback")]
    judged = 0
    for index, a in enumerate(posts):
        statuses = a.extra.get("item_status") or []
        waits = a.extra.get("item_retry_after") or []
        episodes = a.extra.get("episodes") or []
        if a.status != 200 or len(episodes) != len(statuses):
            continue
        due = {episodes[i]: float(waits[i] or 0) for i, s in enumerate(statuses)
               if isinstance(s, int) and s in RETRYABLE}  # fmt: skip
        if not due:
            continue
        later = posts[index + 1 :]
        if not later:
            return JudgeResult(FAILED, expected, "failed items were never sent again", (a,))
        for b in later:
            sent = b.extra.get("episodes") or []
            gap = b.started - a.ended
            done = {episodes[i] for i, s in enumerate(statuses) if s == 200}
            extra = [e for e in sent if e in done]
            if extra:
                return JudgeResult(FAILED, expected, f"the retry also sent {len(extra)} item(s) "
                                   "that had succeeded", (a, b))  # fmt: skip
            early = [due[e] for e in sent if e in due and gap < due[e] - 0.02]
            if early:
                return JudgeResult(FAILED, expected, f"an item sent {gap:.2f} s after the "
                                   f"answer, its retry_after {early[0]:g} s", (a, b))  # fmt: skip
            for episode in sent:
                due.pop(episode, None)
            judged += 1
            if not due:
                break
        first = later[0].started - a.ended
        if first > min(float(w or 0) for w in waits if w is not None) + 1.0 + slack:
            return JudgeResult(FAILED, expected, f"first retry {first:.2f} s later", (a, later[0]))
        return JudgeResult(PASSED, expected, f"{judged} retry batch(es), failed items only")
    return JudgeResult(NOT_EXERCISED, expected, "no batch answer with a failed item")


def exit_zero(obs: Observation, params: Mapping[str, Any]) -> JudgeResult:
    """The flow finished (exit 0) on answers with unknown fields, values or codes."""
    expected = "the flow finished (exit 0) on these answers"
    touched = _injected(obs, params)
    if not touched:
        return JudgeResult(NOT_EXERCISED, expected, "no answer was changed")
    failed = [r for r in obs.runs if r.exit_code != 0]
    if failed:
        return JudgeResult(FAILED, expected, f"run {failed[0].phase} exited "
                           f"{failed[0].exit_code}", tuple(touched[:2]))  # fmt: skip
    return JudgeResult(PASSED, expected, f"{len(touched)} changed answers read")


# Errors > Playback: the not_entitled reasons the spec names today ("new reasons may be added")
KNOWN_REASONS = frozenset({"org_suspended", "entitlement_not_found", "entitlement_suspended",
                           "streaming_disabled", "outside_window"})  # fmt: skip


def _refusal_handling(obs: Observation, answer: Entry) -> tuple[str, str]:
    """How the run that got this batch answer (an item refused 403) dealt with it: ("", "")
    when it finished and asked for neither the refused item nor the one whose ticket came
    back again, else (what it did, in words)."""
    accepted = {0} | ({obs.item_failure_exit} if obs.item_failure_exit is not None else set())
    run = next((r for r in obs.runs if r.phase == answer.phase), None)
    if run is not None and run.exit_code not in accepted:
        return "exit", "was killed" if run.exit_code is None else f"exited {run.exit_code}"
    episodes, statuses = answer.extra["episodes"], answer.extra["item_status"]
    refused = {episodes[i] for i, s in enumerate(statuses) if s == 403}
    granted = {episodes[i] for i, s in enumerate(statuses) if s == 200}
    for later in obs.entries:
        if later.phase != answer.phase or later.started <= answer.started:
            continue
        if not (later.method == "POST" and later.path.endswith("/playback")):
            continue
        asked = set(later.extra.get("episodes") or [])
        if asked & refused:
            gap = later.started - answer.ended
            return "refused again", f"asked for the refused item again {gap:.2f} s later"
        if asked & granted:
            return "granted again", "asked again for the item whose ticket it got (not kept)"
    return "", ""


def refused_item_handled(obs: Observation, params: Mapping[str, Any]) -> JudgeResult:
    """A batch item refused `not_entitled` with a reason the spec does not name (Errors >
    Playback: new reasons may be added) is handled as one it names is: the run finishes (exit
    0, or the plan's `per_item_failure_exit`, which says "an item was refused"), and asks for
    neither the refused item nor the one whose ticket came back again. When a run of the same
    scenario got a named reason, the unknown one is judged against it (a client that resends
    every refused 403 breaks the rule that 4xx are not retried, not this one); else on its own."""
    accepted = {0} | ({obs.item_failure_exit} if obs.item_failure_exit is not None else set())
    shown = " or ".join(str(c) for c in sorted(accepted))
    expected = (f"an unknown not_entitled reason handled as a named one: the run finished "
                f"(exit {shown}), the refused item not asked again, the ticket kept")  # fmt: skip
    refusals = []
    for e in obs.entries:
        statuses = e.extra.get("item_status") or []
        if (
            e.status == 200
            and 403 in statuses
            and len(e.extra.get("episodes") or []) == len(statuses)
        ):
            refusals.append(e)
    reasons = {e.seq: set(e.extra.get("item_reason") or []) - {None} for e in refusals}
    unknown = [e for e in refusals if reasons[e.seq] - KNOWN_REASONS]
    named = [e for e in refusals if reasons[e.seq] and reasons[e.seq] <= KNOWN_REASONS]
    if not unknown:
        return JudgeResult(NOT_EXERCISED, expected, "no batch item was refused with an "
                           "unknown reason")  # fmt: skip
    baseline = {_refusal_handling(obs, e)[0] for e in named}
    for answer in unknown:
        kind, how = _refusal_handling(obs, answer)
        if kind and kind not in baseline:
            if baseline == {""}:
                how += " (with a named reason it did not)"
            return JudgeResult(FAILED, expected, f"run {answer.phase} {how}", (answer,))
    return JudgeResult(PASSED, expected, f"{len(unknown)} unknown-reason refusal(s) handled "
                       f"as {len(named)} named one(s)", tuple(unknown))  # fmt: skip


def _secrets_kept(
    obs: Observation, params: Mapping[str, Any], found: Sequence[tuple[str, str, int]], where: str
) -> JudgeResult:
    kinds = set(params.get("kinds", ()))
    expected = f"no {', '.join(sorted(kinds))} {where}"
    mine = [item for item in found if item[0] in kinds]
    if mine:
        kind, masked, phase = mine[0]
        return JudgeResult(FAILED, expected, f"{kind} {masked} {where.split()[0]} after run "
                           f"{phase} ({len(mine)} found)")  # fmt: skip
    if not kinds & obs.seen_kinds:
        return JudgeResult(NOT_EXERCISED, expected, "the client was handed no such secret")
    return JudgeResult(PASSED, expected, "none found")


def no_leak(obs: Observation, params: Mapping[str, Any]) -> JudgeResult:
    """None of the secrets of `kinds` the client was handed appears in its stdout or stderr."""
    return _secrets_kept(obs, params, obs.leaks, "printed in the client's output")


def not_stored(obs: Observation, params: Mapping[str, Any]) -> JudgeResult:
    """None of the links of `kinds` the client was handed is kept in its state folder or its
    exported state after a run (the runner searches them after each run)."""
    return _secrets_kept(obs, params, obs.stored, "kept in the client's state")


def details_skipped(obs: Observation, params: Mapping[str, Any]) -> JudgeResult:
    """On the second sync, no detail read of a list item whose `content_version` is the one
    the first sync listed (and read)."""
    path = str(params.get("path", "/series"))
    expected = "no detail read again for an item whose content_version did not change"

    def versions(phase: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for e in _list_entries(obs, {"path": path}, phase):
            out.update(e.extra.get("item_versions") or {})
        return out

    def details(phase: int) -> list[tuple[str, Entry]]:
        prefix = path + "/"
        return [(e.path.rsplit("/", 1)[1], e) for e in obs.entries
                if e.method == "GET" and e.phase == phase and prefix in e.path
                and "/" not in e.path.split(prefix, 1)[1]]  # fmt: skip

    first, second = versions(1), versions(2)
    read = {code for code, _ in details(1)}
    if not read or not second:
        return JudgeResult(NOT_EXERCISED, expected, "no detail read in the first sync, or no "
                           "second sync")  # fmt: skip
    again = [e for code, e in details(2)
             if code in read and code in second and first.get(code) == second[code]]  # fmt: skip
    if again:
        return JudgeResult(FAILED, expected, f"{len(again)} unchanged items read again",
                           tuple(again[:3]))  # fmt: skip
    return JudgeResult(PASSED, expected, f"{len(read)} details read in sync 1, "
                       f"{len(details(2))} in sync 2")  # fmt: skip


def unpaged_sync(obs: Observation, params: Mapping[str, Any]) -> JudgeResult:
    """Each catalog sync is one unpaged request (no `limit`, no `cursor`)."""
    expected = "the catalog read in one unpaged response"
    reads = [e for e in obs.entries if e.method == "GET" and e.path.endswith(str(params["path"]))]
    if not reads:
        return JudgeResult(NOT_EXERCISED, expected, "no catalog read")
    paged = [e for e in reads if "cursor" in e.query or "limit" in e.query]
    if paged:
        return JudgeResult(FAILED, expected, f"{len(paged)} paged reads "
                           f"(limit {paged[0].query.get('limit')})", tuple(paged[:2]))  # fmt: skip
    return JudgeResult(PASSED, expected, f"{len(reads)} unpaged reads")


BROWSER_HEADERS = frozenset({"origin", "sec-fetch-mode", "sec-fetch-site", "sec-fetch-dest"})


def _from_a_browser(headers: Iterable[str]) -> bool:
    """A browser's call: an `Origin` (every cross-origin fetch of a page carries one), or the
    `Sec-Fetch-Site` and `Sec-Fetch-Dest` a browser sends together. `Sec-Fetch-Mode` alone is
    not one: Node's built-in fetch (undici) adds it to every request of a backend."""
    names = {h.lower() for h in headers}
    return "origin" in names or {"sec-fetch-site", "sec-fetch-dest"} <= names


def backend_only(obs: Observation, params: Mapping[str, Any]) -> JudgeResult:
    """No request looks like a browser's (Origin, or Sec-Fetch-Site with Sec-Fetch-Dest)."""
    expected = "no browser call (Origin, or Sec-Fetch-Site with Sec-Fetch-Dest) on any request"
    if not obs.entries:
        return JudgeResult(NOT_EXERCISED, expected, "no request")
    browser = [e for e in obs.entries if _from_a_browser(e.request_headers)]
    if browser:
        names = sorted(BROWSER_HEADERS & {h.lower() for h in browser[0].request_headers})
        return JudgeResult(FAILED, expected, f"{len(browser)} requests with {', '.join(names)}",
                           tuple(browser[:2]))  # fmt: skip
    return JudgeResult(PASSED, expected, f"{len(obs.entries)} requests, none from a browser")


def reread_on_gone(obs: Observation, params: Mapping[str, Any]) -> JudgeResult:
    """After a 410 on a stored file link, the next request reads the creative again."""
    expected = "GET /creatives/{id} right after a 410 on the stored file link"
    gone = [e for e in _injected(obs, params) if e.status == 410]
    if not gone:
        return JudgeResult(NOT_EXERCISED, expected, "no file link answered 410")
    ordered = sorted(obs.entries, key=lambda e: e.started)
    for entry in gone:
        after = [e for e in ordered if e.started > entry.started and e.phase == entry.phase]
        following = after[0] if after else None
        if (
            following is None
            or following.method != "GET"
            or not re.search(r"/creatives/[^/]+$", following.path)
        ):
            shown = following.line() if following else "no request"
            return JudgeResult(FAILED, expected, f"next: {shown}",
                               tuple(e for e in (entry, following) if e))  # fmt: skip
    return JudgeResult(PASSED, expected, "the creative was read again")


def poll_interval(obs: Observation, params: Mapping[str, Any]) -> JudgeResult:
    """Catalog walks (a first page answered 200) start at least `min` seconds apart."""
    least = float(params["min"])
    expected = f"catalog walks at least {least:g} s apart"
    starts = sorted((e for e in obs.entries if e.method == "GET" and e.status == 200
                     and e.path.endswith("/catalog") and "cursor" not in e.query),
                    key=lambda e: e.started)  # fmt: skip
    if len(starts) < 2:
        return JudgeResult(NOT_EXERCISED, expected, f"{len(starts)} walk(s)")
    for a, b in itertools.pairwise(starts):
        if b.started - a.started < least - 0.5:
            return JudgeResult(FAILED, expected, f"walks {b.started - a.started:.1f} s apart",
                               (a, b))  # fmt: skip
    gaps = ", ".join(f"{b.started - a.started:.1f}" for a, b in itertools.pairwise(starts))
    return JudgeResult(PASSED, expected, f"walks {gaps} s apart")


def export_usable(obs: Observation, params: Mapping[str, Any]) -> JudgeResult:
    """Each creative whose `rights.ends_at` the proxy set is exported `usable` exactly while
    the wall clock is before `ends_at` + 86400 (the whole last day included); each one served
    on that page with a null `rights.ends_at` (no end on record) is exported usable."""
    grace = int(params.get("grace", 86_400))
    expected = f"usable until rights.ends_at + {grace} s"
    ends, entry = _extra(obs, "rights_ends")
    items = _path(_export(obs), "creatives.items")
    if not ends or entry is None or not isinstance(items, list):
        return JudgeResult(NOT_EXERCISED, expected, "no rights set or no exported state")
    rows = {i.get("creative_id"): i for i in items if isinstance(i, dict)}
    for creative, end in ends.items():
        want = end is None or entry.wall < end + grace
        got = rows.get(creative, {}).get("usable")
        if got is not want:
            days = 0.0 if end is None else (end - entry.wall) / 86_400
            when = ("no rights end on record (null)" if end is None
                    else f"rights ending {days:+.1f} days from now")  # fmt: skip
            return JudgeResult(FAILED, expected, f"{when}: exported usable={got}, want {want}",
                               (entry,))  # fmt: skip
    open_ended = sum(end is None for end in ends.values())
    return JudgeResult(PASSED, expected, f"{len(ends)} creatives judged, {open_ended} of them "
                       "with no rights end on record")  # fmt: skip


JUDGES: dict[str, Judge] = {
    "no_leak": no_leak,
    "retried": retried,
    "retried_after_wait": retried_after_wait,
    "not_retried": not_retried,
    "retry_after_window": retry_after_window,
    "backoff_window": backoff_window,
    "backoff_spread": backoff_spread,
    "max_retries": max_retries,
    "total_time": total_time,
    "attempt_floor": attempt_floor,
    "attempt_timeout": attempt_timeout,
    "retry_budget": retry_budget,
    "same_key": same_key,
    "pages_sequential": pages_sequential,
    "cursors_unchanged": cursors_unchanged,
    "cursors_followed": cursors_followed,
    "links_next_used": links_next_used,
    "same_updated_since": same_updated_since,
    "export_unique": export_unique,
    "export_later_copy": export_later_copy,
    "export_available": export_available,
    "batch_only_failed": batch_only_failed,
    "exit_zero": exit_zero,
    "refused_item_handled": refused_item_handled,
    "not_stored": not_stored,
    "details_skipped": details_skipped,
    "unpaged_sync": unpaged_sync,
    "backend_only": backend_only,
    "reread_on_gone": reread_on_gone,
    "poll_interval": poll_interval,
    "export_usable": export_usable,
    "export_kept": export_kept,
    "cursor_kept_updated_since": cursor_kept_updated_since,
}


def _adopted(judge: Callable[[Observation, Mapping[str, Any]], tuple[Any, ...]]) -> Judge:
    """A judge of state_judges.py, request_judges.py or refresh_judges.py, which answer (status,
    expected, actual, entries): what the app shows or decides, the shape of its requests, and
    when it walks a list again."""

    def run(obs: Observation, params: Mapping[str, Any]) -> JudgeResult:
        return JudgeResult(*judge(obs, params))

    return run


JUDGES |= {
    name: _adopted(j) for name, j in {**STATE_JUDGES, **REQUEST_JUDGES, **REFRESH_JUDGES}.items()
}

# Judges that decide from how the flow ended (its exit status, its exported state): a flow
# stopped by a standing rule's failure never showed them, so they are "not exercised" there.
FINISH_JUDGES = frozenset({"exit_zero", "export_unique", "export_later_copy", "export_available",
                           "export_kept", "export_usable", *STATE_JUDGES})  # fmt: skip
