"""The certificate bundle: written only when the verdict allows it (exit 0, nothing left
unexercised), so its presence means something.

    certificate/
      SUMMARY.txt         one line a person can check (verdict, counts, date, results hash)
      certificate.json    tool and version, plan, upstream, verdict, sha256 of every file
      results.json        the run's results (same format as server runs)
      plan.toml           the plan as given (it holds no key: keys come from the environment)
      journal/*.jsonl     the proxy's journals, redacted once more with every secret it saw
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from delivery_conformance import __version__
from delivery_conformance.evidence.redact import Redactor
from delivery_conformance.reports.view import safe_url

__all__ = ["summary_line", "write_certificate"]


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def summary_line(document: Mapping[str, Any], plan_name: str, results_sha: str) -> str:
    run = document["run"]
    counts = run["requirements"]
    day = dt.datetime.fromtimestamp(run["started_at"], dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (
        f"{plan_name}: {run['verdict_word']} on Delivery API v1 client rules, "
        f"{counts['passed']} passed, {counts['failed']} failed, {counts['warning']} expected "
        f"failures, {counts['not exercised']} not exercised; delivery-conformance {__version__}; "
        f"{day}; results sha256 {results_sha[:16]}"
    )


def write_certificate(
    directory: Path,
    document: Mapping[str, Any],
    results_path: Path,
    plan_text: str,
    plan_name: str,
    journals: Iterable[Path],
    secrets: Iterable[str],
) -> Path:
    if directory.exists():
        shutil.rmtree(directory)
    (directory / "journal").mkdir(parents=True)
    shutil.copyfile(results_path, directory / "results.json")
    (directory / "plan.toml").write_text(plan_text, encoding="utf-8")
    redactor = Redactor(secrets)
    for journal in journals:
        text = journal.read_text(encoding="utf-8")
        (directory / "journal" / journal.name).write_text(redactor.text(text), encoding="utf-8")
    files = sorted(p for p in directory.rglob("*") if p.is_file())
    hashes = {str(p.relative_to(directory)): _sha256(p) for p in files}
    line = summary_line(document, plan_name, hashes["results.json"])
    run = document["run"]
    certificate = {
        "tool": {"name": "delivery-conformance", "version": __version__},
        "plan": plan_name,
        "upstream": safe_url(str(run.get("base_url", ""))),
        "verdict": run["verdict"],
        "verdict_word": run["verdict_word"],
        "summary": line,
        "sha256": hashes,
    }
    (directory / "certificate.json").write_text(json.dumps(certificate, indent=2) + "\n",
                                                encoding="utf-8")  # fmt: skip
    (directory / "SUMMARY.txt").write_text(line + "\n", encoding="utf-8")
    return directory
