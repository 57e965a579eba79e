"""Side by side: plain `schemathesis run --checks all` against this harness's property tests.

    python -m benchmarks compare [--examples 25] [--seed 20261002] [--faults a,b,...]
    make compare

One embedded sandbox. For each fault (the property-only faults and a sample of 15 others, see
`FAULTS`), switched on alone through the admin API, both tools run on the operation the fault sits
on, with the same example budget and seed:

- bare: `schemathesis run spec/openapi.yaml --url <sandbox> --checks all -n N --seed S
  --continue-on-failure --include-operation-id <op> -H "Authorization: Bearer <role key>"`
  (the key of the role whose scopes open the operation); its failures are read from its JSON
  report as (code, title) kinds;
- harness: the property run of that operation (`run_operation`: harness checks as Schemathesis
  checks, the error-table judge), failures as requirement IDs.

Each tool is first run on the clean sandbox (the baseline). A fault counts as caught when the
run with the fault shows a failure kind the clean run of the same tool did not. The table gives,
fault by fault, the verdict and wall time of each, then the clean baselines (a failure on the
clean sandbox is a false alarm). Writes reports/bench/schemathesis_compare.json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from urllib.parse import urlsplit

from delivery_conformance.properties import (
    OPERATION_ROLES,
    PropertySettings,
    configure,
    load_schema,
)
from delivery_conformance.properties.runs import OPENAPI_PATH, run_operation
from delivery_conformance.target.admin import AdminClient
from delivery_conformance.target.client import DeliveryClient
from delivery_conformance.target.embedded import EmbeddedSandbox
from delivery_conformance.target.profile import TargetProfile, load_profile

ROOT = Path(__file__).resolve().parents[1]
SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")

# fault -> the operation it sits on. First the property-only faults (sandbox table, "Property
# tests" rows), then a sample of 15 others a per-response check can meet (headers, formats,
# fields, ordering, methods); limit, clock and playback-admission faults need scenarios.
PROPERTY_FAULTS = {
    "creatives_limit_max_500": "listCreatives",
    "series_since_zero_refused": "listSeries",
    "videos_bad_limit_coded": "listVideos",
    "playlists_bad_category_404": "listPlaylists",
    "cache_control_missing_on_422": "listCreatives",
    "playlists_since_2038_500": "listPlaylists",
}
SAMPLE_FAULTS = {
    "api_status_missing": "getConfig",
    "request_id_bad_format": "listSeries",
    "request_id_not_echoed": "listCreatives",
    "cache_control_public": "getCatalog",
    "cors_header_sent": "getConfig",
    "cookie_set": "getConfig",
    "envelope_code_mismatch": "listSeries",
    "wrong_method_404": "getConfig",
    "config_test_org_string": "getConfig",
    "catalog_display_order_string": "getCatalog",
    "catalog_sort_broken": "getCatalog",
    "creative_updated_at_iso": "listCreatives",
    "creatives_empty_limit_accepted": "listCreatives",
    "videos_not_ready_listed": "listVideos",
    "video_single_version_header": "getVideo",
}
FAULTS = {**PROPERTY_FAULTS, **SAMPLE_FAULTS}


@dataclass(frozen=True)
class Outcome:
    kinds: frozenset[str]
    seconds: float


@dataclass(frozen=True)
class Row:
    fault: str
    operation: str
    bare_caught: bool
    bare_seconds: float
    harness_caught: bool
    harness_seconds: float
    harness_found: tuple[str, ...]


def bare_run(profile: TargetProfile, operation: str, examples: int, seed: int) -> Outcome:
    """Plain `schemathesis run` with every built-in check on one operation."""
    key = profile.keys[OPERATION_ROLES[operation]]
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "run.json"
        command = [str(SCHEMATHESIS), "run", str(OPENAPI_PATH), "--url", profile.base_url]
        command += ["--checks", "all", "-n", str(examples), "--seed", str(seed)]
        command += ["--generation-database", "none", "--continue-on-failure", "--no-color"]
        command += ["--phases", "examples,coverage,fuzzing", "--include-operation-id", operation]
        command += ["-H", f"Authorization: Bearer {key}", "--report", "json"]
        command += ["--report-json-path", str(report)]
        started = time.monotonic()
        subprocess.run(command, capture_output=True, timeout=300, check=False, cwd=ROOT)
        seconds = time.monotonic() - started
        if not report.is_file():
            return Outcome(frozenset({"(no report: run did not finish)"}), seconds)
        data = json.loads(report.read_text())
    kinds = {f"{f['code']} {f['title']}" for f in data.get("failures", [])}
    kinds |= {f"error {e.get('title', e)}" for e in data.get("errors", [])}
    return Outcome(frozenset(kinds), seconds)


def harness_run(
    profile: TargetProfile, client: DeliveryClient, operation: str, settings: PropertySettings
) -> Outcome:
    configure(profile, dict(client.pins))
    started = time.monotonic()
    findings = run_operation(load_schema(profile, settings), client, operation)
    seconds = time.monotonic() - started
    return Outcome(findings.requirement_ids | frozenset(findings.builtin), seconds)


def compare(faults: dict[str, str], examples: int, seed: int) -> tuple[list[Row], dict]:
    settings = PropertySettings(seed=seed, examples=examples)
    with EmbeddedSandbox() as path:
        profile = load_profile(path)
        assert profile.admin is not None
        origin = urlsplit(profile.admin.url)
        transport = DeliveryClient(replace(profile, base_url=f"{origin.scheme}://{origin.netloc}"))
        admin = AdminClient(profile.admin, transport)
        client = DeliveryClient(profile)
        client.learn_config("films")
        client.learn_config("videos")
        known = {row["name"] for row in admin.faults()}
        missing = sorted(set(faults) - known)
        if missing:
            raise SystemExit(f"compare: faults not in the sandbox catalogue: {', '.join(missing)}")
        baseline: dict[str, tuple[Outcome, Outcome]] = {}
        admin.set_faults(only=[])
        for operation in sorted(set(faults.values())):
            baseline[operation] = (
                bare_run(profile, operation, examples, seed),
                harness_run(profile, client, operation, settings),
            )
        rows = []
        for fault, operation in faults.items():
            admin.set_faults(only=[fault])
            bare = bare_run(profile, operation, examples, seed)
            ours = harness_run(profile, client, operation, settings)
            clean_bare, clean_ours = baseline[operation]
            rows.append(
                Row(
                    fault,
                    operation,
                    bool(bare.kinds - clean_bare.kinds),
                    bare.seconds,
                    bool(ours.kinds - clean_ours.kinds),
                    ours.seconds,
                    tuple(sorted(ours.kinds - clean_ours.kinds)),
                )
            )
            print(f"  {fault}: bare {rows[-1].bare_caught}, harness {rows[-1].harness_caught}")
        admin.set_faults(only=[])
        client.close()
        transport.close()
    clean = {
        op: {"bare": sorted(b.kinds), "harness": sorted(h.kinds), "seconds": [b.seconds, h.seconds]}
        for op, (b, h) in baseline.items()
    }
    return rows, clean


def table(rows: Sequence[Row], clean: dict) -> str:
    yes = {True: "yes", False: "no"}
    lines = [
        "| Fault | Operation | bare `schemathesis run --checks all` | harness property run |",
        "|---|---|---|---|",
    ]
    for r in rows:
        found = f" ({', '.join(r.harness_found)})" if r.harness_found else ""
        lines.append(
            f"| `{r.fault}` | {r.operation} | {yes[r.bare_caught]} ({r.bare_seconds:.1f} s) | "
            f"{yes[r.harness_caught]} ({r.harness_seconds:.1f} s){found} |"
        )
    bare_n = sum(r.bare_caught for r in rows)
    ours_n = sum(r.harness_caught for r in rows)
    lines.append(f"| **caught** | | **{bare_n}/{len(rows)}** | **{ours_n}/{len(rows)}** |")
    lines += ["", "| Clean sandbox, operation | bare: failures reported | harness: failures |"]
    lines.append("|---|---|---|")
    for op, found in clean.items():
        bare = ", ".join(found["bare"]) or "none"
        lines.append(f"| {op} | {bare} | {', '.join(found['harness']) or 'none'} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks compare")
    parser.add_argument("--examples", type=int, default=25)
    parser.add_argument("--seed", type=int, default=20261002)
    parser.add_argument("--faults", default="", help="comma-separated subset of the faults")
    parser.add_argument("--out", type=Path, default=ROOT / "reports" / "bench")
    args = parser.parse_args(argv)
    chosen = [name for name in args.faults.split(",") if name]
    unknown = sorted(set(chosen) - set(FAULTS))
    if unknown:
        print(f"compare: unknown fault(s): {', '.join(unknown)}", file=sys.stderr)
        return 2
    faults = {name: FAULTS[name] for name in chosen} if chosen else FAULTS
    if not SCHEMATHESIS.is_file():
        print(f"compare: {SCHEMATHESIS} not found (install schemathesis)", file=sys.stderr)
        return 2
    started = time.monotonic()
    rows, clean = compare(faults, args.examples, args.seed)
    print(table(rows, clean))
    print(f"\nseed {args.seed}, {args.examples} examples; total {time.monotonic() - started:.0f} s")
    args.out.mkdir(parents=True, exist_ok=True)
    result = {"seed": args.seed, "examples": args.examples, "rows": [asdict(r) for r in rows]}
    result["clean"] = clean
    (args.out / "schemathesis_compare.json").write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
