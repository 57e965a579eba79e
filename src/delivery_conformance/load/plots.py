"""PNG plots of a campaign (matplotlib, Agg backend; the figures are drawn from raw records).

- admitted.png: cumulative admitted units over time against the bucket's envelope C + r*t;
- refusals.png: 429s per 0.25 s bucket of time, one line per reason;
- latency.png: latency of every answered request over time, held plays stand out;
- latency_by_endpoint.png (mixed, soak): p50/p95/p99 per endpoint per time bucket.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from delivery_conformance.load.envelope import admitted_curve, bucket_envelope
from delivery_conformance.load.records import Record

__all__ = ["write_latency_table", "write_overlays", "write_plots"]

BIN_S = 0.25


def _save(fig: Figure, path: Path) -> None:
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _finish(fig: Figure, ax: Axes, path: Path, *, legend: bool) -> None:
    """The common end of a one-panel plot: legend, grid, then the PNG written and closed."""
    if legend:
        ax.legend(loc="upper left")
    ax.grid(alpha=0.3)
    _save(fig, path)


def _admitted(
    path: Path, records: Sequence[Record], start: float, capacity: float | None, rate: float | None
) -> None:
    fig, ax = plt.subplots(figsize=(8, 4.5))
    curve = admitted_curve(records, start)
    if curve:
        ax.step([t for t, _ in curve], [y for _, y in curve], where="post", label="admitted")
        if capacity is not None and rate is not None:
            end = max(t for t, _ in curve)
            xs = [0.0, end]
            ax.plot(
                xs,
                [bucket_envelope(x, capacity, rate) for x in xs],
                "r--",
                label=f"envelope {capacity:g} + {rate:g}/s x t",
            )
    ax.set_xlabel("seconds since the first request")
    ax.set_ylabel("admitted units (cumulative)")
    _finish(fig, ax, path, legend=True)


def _refusals(path: Path, records: Sequence[Record], start: float) -> None:
    fig, ax = plt.subplots(figsize=(8, 4.5))
    by_reason: dict[str, Counter[int]] = {}
    for r in records:
        if r.refused:
            key = r.reason or r.error_code or "429"
            by_reason.setdefault(key, Counter())[int((r.answered - start) / BIN_S)] += 1
        for item in r.items:
            if item.status == 429:
                key = f"item {item.reason or item.error_code or '429'}"
                by_reason.setdefault(key, Counter())[int((r.answered - start) / BIN_S)] += 1
    for reason, bins in sorted(by_reason.items()):
        xs = sorted(bins)
        ax.plot([x * BIN_S for x in xs], [bins[x] for x in xs], marker=".", label=reason)
    ax.set_xlabel("seconds since the first request")
    ax.set_ylabel(f"429s per {BIN_S} s")
    _finish(fig, ax, path, legend=bool(by_reason))


def _latency(path: Path, records: Sequence[Record], start: float) -> None:
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for label, wanted in (
        ("200", lambda r: r.status == 200),
        ("429", lambda r: r.refused),
        ("other", lambda r: r.status not in (200, 429)),
    ):
        chosen = [r for r in records if wanted(r)]
        if chosen:
            ax.scatter(
                [r.sent - start for r in chosen],
                [r.latency * 1000 for r in chosen],
                s=4,
                label=label,
            )
    ax.axhline(500, color="r", linestyle="--", linewidth=0.8, label="0.5 s hold")
    ax.set_xlabel("seconds since the first request (send time)")
    ax.set_ylabel("latency (ms)")
    _finish(fig, ax, path, legend=True)


def write_plots(
    directory: Path,
    records: Sequence[Record],
    capacity: float | None = None,
    rate: float | None = None,
) -> list[Path]:
    """Write the three PNGs into `directory`; return their paths."""
    if not records:
        return []
    start = min(r.sent for r in records)
    paths = [directory / "admitted.png", directory / "refusals.png", directory / "latency.png"]
    _admitted(paths[0], records, start, capacity, rate)
    _refusals(paths[1], records, start)
    _latency(paths[2], records, start)
    return paths


def write_latency_table(
    path: Path,
    table: dict[str, list[dict[str, float]]],
    title: str,
    other: dict[str, list[dict[str, float]]] | None = None,
) -> Path:
    """p50 (solid), p95 (dashed) and p99 (dotted) per endpoint per time bucket; with `other`
    (a second run, for comparisons) its lines are drawn thinner and paler on the same axes."""
    fig, axes = plt.subplots(
        len(table) or 1, 1, figsize=(9, 2.2 * max(1, len(table))), sharex=True, squeeze=False
    )
    for ax, (endpoint, rows) in zip(axes[:, 0], sorted(table.items()), strict=False):
        for run, data, width, alpha in (
            ("B", rows, 1.6, 1.0),
            ("A", (other or {}).get(endpoint, []), 1.0, 0.45),
        ):
            if not data:
                continue
            xs = [row["t_s"] for row in data]
            for key, style in (("p50_ms", "-"), ("p95_ms", "--"), ("p99_ms", ":")):
                label = f"{key[:3]}" if other is None else f"{run} {key[:3]}"
                ax.plot(
                    xs, [row[key] for row in data], style, linewidth=width, alpha=alpha, label=label
                )
        ax.set_ylabel(f"{endpoint}\nms")
        ax.grid(alpha=0.3)
        ax.legend(loc="upper right", fontsize=6, ncol=3)
    axes[-1, 0].set_xlabel("seconds since the first request (bucket start)")
    fig.suptitle(title, fontsize=10)
    _save(fig, path)
    return path


def write_overlays(directory: Path, runs: dict[str, Sequence[Record]]) -> list[Path]:
    """Both runs of a comparison on the same axes (time since each run's first request):
    overlay_admitted.png (cumulative admitted units) and overlay_latency.png (every answer)."""
    paths = [directory / "overlay_admitted.png", directory / "overlay_latency.png"]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    fig2, ax2 = plt.subplots(figsize=(8, 4.5))
    for label, records in runs.items():
        if not records:
            continue
        start = min(r.sent for r in records)
        curve = admitted_curve(records, start)
        if curve:
            ax.step([t for t, _ in curve], [y for _, y in curve], where="post", label=label)
        answered = [r for r in records if r.status != 0]
        ax2.scatter(
            [r.sent - start for r in answered],
            [r.latency * 1000 for r in answered],
            s=3,
            alpha=0.5,
            label=label,
        )
    for axis, ylabel in ((ax, "admitted units (cumulative)"), (ax2, "latency (ms)")):
        axis.set_xlabel("seconds since the run's first request")
        axis.set_ylabel(ylabel)
        axis.legend(loc="upper left")
        axis.grid(alpha=0.3)
    for figure, path in zip((fig, fig2), paths, strict=True):
        figure.tight_layout()
        figure.savefig(path, dpi=100)
        plt.close(figure)
    return paths
