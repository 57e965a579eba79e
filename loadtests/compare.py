"""`python -m loadtests.compare RUN_A RUN_B`: is run B (the candidate) worse than run A?

    python -m loadtests.compare RUN_A RUN_B [--threshold 0.10] [--latency-floor-ms 2]
                                [--out DIR]

RUN_A and RUN_B are report directories of one campaign (verdict.json and records.jsonl, as
`python -m loadtests.run` writes them). Prints every figure and latency percentile side by side
with the delta, writes compare.json and compare.html (both runs' plots overlaid) into --out
(default: RUN_B/compare), and exits:

0 no regression, 1 at least one regression beyond the threshold, 2 bad input (missing or
damaged run directory, different campaigns, bad threshold), 3 a run that is not valid (its
generator fell behind or its target failed): nothing can be concluded from it.
"""

from __future__ import annotations

import argparse
import base64
import html
import json
import sys
from pathlib import Path
from typing import Any, NoReturn

from delivery_conformance.load.compare import Comparison, compare_runs
from delivery_conformance.load.plots import write_latency_table, write_overlays
from delivery_conformance.load.records import Record, read_records
from delivery_conformance.load.sustained import latency_table
from delivery_conformance.load.verdict import ExitCode

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(ExitCode.USAGE, f"compare: {message}\n")


class _BadRun(Exception):
    def __init__(self, message: str, exit_code: int = ExitCode.USAGE) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m loadtests.compare", description=__doc__.split("\n")[0])
    p.add_argument("run_a", type=Path, help="reference run directory")
    p.add_argument("run_b", type=Path, help="candidate run directory")
    p.add_argument(
        "--threshold",
        type=float,
        default=0.10,
        help="relative change counted as a regression (0.10 = 10 %%)",
    )
    p.add_argument(
        "--latency-floor-ms",
        type=float,
        default=2.0,
        help="latency rises smaller than this many ms are noise, not regressions",
    )
    p.add_argument("--out", type=Path, default=None, help="where compare.json/html go")
    return p


def _load(directory: Path) -> tuple[dict[str, Any], list[Record]]:
    verdict_path, records_path = directory / "verdict.json", directory / "records.jsonl"
    if not verdict_path.is_file() or not records_path.is_file():
        raise _BadRun(f"{directory} is not a load run directory (verdict.json, records.jsonl)")
    try:
        verdict = json.loads(verdict_path.read_text("utf-8"))
        records = read_records(records_path)
    except ValueError as error:
        raise _BadRun(f"{directory}: damaged run ({str(error).splitlines()[0][:160]})") from None
    if not isinstance(verdict, dict) or not isinstance(verdict.get("figures"), list):
        raise _BadRun(f"{directory}/verdict.json is not a campaign verdict")
    if verdict.get("outcome") == "invalid":
        reason = verdict.get("target_failure") or verdict.get("generator", {}).get("reason")
        raise _BadRun(f"{directory}: invalid run, nothing to compare ({reason})", ExitCode.INVALID)
    return verdict, records


def _fmt(value: float | None, unit: str = "") -> str:
    if value is None:
        return "-"
    return f"{value:.4g}{' ' + unit if unit else ''}"


def text_table(result: Comparison) -> str:
    lines = [f"{'':2}{'figure / latency':58} {'A':>12} {'B':>12} {'delta':>10} {'%':>7}"]
    for row in result.rows:
        mark = "!!" if row.regression else "  "
        pct = "-" if row.delta_pct is None else f"{row.delta_pct:+.1f}"
        delta = "-" if row.delta is None else f"{row.delta:+.4g}"
        lines.append(
            f"{mark}{row.name[:58]:58} {_fmt(row.a):>12} {_fmt(row.b):>12} {delta:>10} {pct:>7}"
        )
    return "\n".join(lines)


def _img(path: Path) -> str:
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f'<img alt="{html.escape(path.name)}" src="data:image/png;base64,{data}">'


def write_html(path: Path, result: Comparison, a: Path, b: Path, images: list[Path]) -> None:
    rows = "".join(
        f'<tr class="{"bad" if r.regression else ""}"><td>{html.escape(r.kind)}</td>'
        f"<td>{html.escape(r.name)}</td><td>{_fmt(r.a, r.unit)}</td><td>{_fmt(r.b, r.unit)}</td>"
        f"<td>{'-' if r.delta is None else f'{r.delta:+.4g}'}</td>"
        f"<td>{'-' if r.delta_pct is None else f'{r.delta_pct:+.1f} %'}</td>"
        f"<td>{'REGRESSION' if r.regression else html.escape(r.note)}</td></tr>"
        for r in result.rows
    )
    body = f"""<!doctype html><html><head><meta charset="utf-8"><title>load comparison</title>
<style>body{{font-family:sans-serif;margin:2em}}
td,th{{padding:2px 8px;border-bottom:1px solid #ddd}}
tr.bad{{background:#fdd}}img{{max-width:100%;display:block;margin:1em 0}}</style></head><body>
<h1>{html.escape(result.profile_b)}: B against A</h1>
<p>A (reference): {html.escape(str(a))}<br>B (candidate): {html.escape(str(b))}<br>
threshold {result.threshold:.0%}, latency floor {result.floor_ms:g} ms;
<b>{len(result.regressions)} regression(s)</b></p>
<table><tr><th>kind</th><th>name</th><th>A</th><th>B</th><th>delta</th><th>%</th><th></th></tr>
{rows}</table>
<h2>Both runs overlaid</h2>{"".join(_img(p) for p in images)}
</body></html>
"""
    path.write_text(body, "utf-8")


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if not 0 <= args.threshold <= 10 or args.latency_floor_ms < 0:
        parser().error("--threshold must be 0 to 10 and --latency-floor-ms not negative")
    try:
        verdict_a, records_a = _load(args.run_a)
        verdict_b, records_b = _load(args.run_b)
        if verdict_a.get("profile") != verdict_b.get("profile"):
            raise _BadRun(
                f"different campaigns: {verdict_a.get('profile')} and {verdict_b.get('profile')}"
            )
    except _BadRun as error:
        print(f"compare: {error}", file=sys.stderr)
        return error.exit_code
    result = compare_runs(
        verdict_a, verdict_b, records_a, records_b, args.threshold, args.latency_floor_ms
    )
    out = args.out or args.run_b / "compare"
    out.mkdir(parents=True, exist_ok=True)
    images = write_overlays(out, {"A": records_a, "B": records_b})
    start_a = min((r.sent for r in records_a), default=0.0)
    start_b = min((r.sent for r in records_b), default=0.0)
    span = max(max((r.sent for r in records_b), default=0.0) - start_b, 1.0)
    bucket = 60.0 if span >= 300 else max(0.5, span / 10)
    images.append(
        write_latency_table(
            out / "overlay_latency_by_endpoint.png",
            latency_table(records_b, start_b, bucket),
            "latency per endpoint: B (bold) over A (pale)",
            other=latency_table(records_a, start_a, bucket),
        )
    )
    (out / "compare.json").write_text(json.dumps(result.to_json(), indent=2) + "\n", "utf-8")
    write_html(out / "compare.html", result, args.run_a, args.run_b, images)
    print(text_table(result))
    print(
        f"{len(result.regressions)} regression(s) beyond {args.threshold:.0%} "
        f"(latency floor {args.latency_floor_ms:g} ms); report: {out / 'compare.html'}"
    )
    return ExitCode.DEVIATES if result.regressions else ExitCode.WITHIN_SPEC


if __name__ == "__main__":
    sys.exit(main())
