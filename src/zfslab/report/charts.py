"""Charts as real images (matplotlib, Agg): SVG to inline in the HTML page, PNG or SVG to export."""

from __future__ import annotations

import io
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.collections import PolyCollection  # noqa: E402

WORKLOADS = [("write_mb_s", "seq write"), ("read_mb_s", "seq read"), ("rand_read_iops_qd1", "4K read QD1"),
             ("rand_read_iops_qd8", "4K read 8×QD8"), ("sync_write_iops_qd8", "sync write")]
COLORS = {"stripe": "#9e9e9e", "mirror": "#1f77b4", "raidz1": "#ff7f0e", "raidz2": "#2ca02c", "raidz3": "#d62728",
          "draid": "#9467bd"}


def family(layout: str) -> str:
    if "draid" in layout:
        return "draid"
    for f in ("raidz1", "raidz2", "raidz3", "mirror"):
        if f in layout:
            return f
    return "stripe"


def _export(fig, fmt: str, *, laid_out: bool = False) -> bytes:
    buf = io.BytesIO()
    if not laid_out:
        fig.tight_layout()  # laid out once; bbox_inches="tight" would draw the whole figure a second time
    fig.savefig(buf, format=fmt, dpi=110)
    plt.close(fig)
    return buf.getvalue()


def relative_bars(rows: list[dict], fmt: str = "svg") -> bytes:
    """Ars Technica style: each workload as a multiple of one disk, one bar per layout."""
    n = len(rows)
    fig, axes = plt.subplots(1, len(WORKLOADS), figsize=(3.2 * len(WORKLOADS), 0.32 * n + 1.6), sharey=True)
    labels = [r["layout"] for r in rows]
    for ax, (key, title) in zip(axes, WORKLOADS):
        values = [r["speed_x_single_disk"][key] for r in rows]
        # one collection, not a Rectangle per bar: barh's patches cost matplotlib ~10 ms each in
        # transform bookkeeping (47 layouts x 5 workloads was 2 s of a report)
        bars = [[(0, i - 0.4), (v, i - 0.4), (v, i + 0.4), (0, i + 0.4)] for i, v in enumerate(values)]
        ax.add_collection(PolyCollection(bars, facecolors=[COLORS[family(x)] for x in labels], edgecolors="none"))
        ax.set_xlim(0, max(values + [1.0]) * 1.18)
        ax.set_ylim(-0.6, n - 0.4)
        ax.axvline(1.0, color="black", linewidth=0.8)
        ax.set_title(f"{title}\n(× one disk)", fontsize=9)
        ax.tick_params(labelsize=8)
        for i, v in enumerate(values):
            ax.text(v, i, f" {v:.1f}", va="center", fontsize=7)
    axes[0].set_yticks(range(n), labels)
    axes[0].invert_yaxis()
    fig.suptitle("Predicted speed relative to a single disk", fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    return _export(fig, fmt, laid_out=True)


def corners(rows: list[dict], frontier: set[str], fmt: str = "svg") -> bytes:
    """The three corners: usable space (x), risk (y, log), speed (marker size); the frontier ringed."""
    fig, ax = plt.subplots(figsize=(9, 5.5))
    horizon = min(rows[0]["p_loss"], key=lambda y: abs(float(y) - 5)) if rows else "5"  # the --years nearest 5
    for r in rows:
        risk = max(r["p_loss"][horizon], 1e-18)
        speed = math.prod(r["speed_x_single_disk"][k] for k in ("write_mb_s", "read_mb_s", "rand_read_iops_qd8")) ** (1 / 3)
        on = r["layout"] in frontier
        ax.scatter(r["usable_tb"], risk, s=25 + 12 * speed, color=COLORS[family(r["layout"])], alpha=0.85 if on else 0.35,
                   edgecolors="black" if on else "none", linewidths=1.2)
        if on:
            ax.annotate(r["layout"], (r["usable_tb"], risk), fontsize=7, xytext=(4, 3), textcoords="offset points")
    ax.set_yscale("log")
    ax.set_xlabel("usable TB (zfs list)")
    ax.set_ylabel(f"P(pool loss within {horizon} years)")
    ax.set_title("Space, safety and speed (marker size); ringed: the Pareto frontier", fontsize=10)
    for name, color in COLORS.items():
        ax.scatter([], [], color=color, label=name)
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(True, which="both", alpha=0.3)
    return _export(fig, fmt)


def measured_vs_predicted(pairs: list[tuple[str, str, float, float]], fmt: str = "svg") -> bytes:
    """(layout, metric, predicted, measured) as a scatter against the diagonal."""
    fig, ax = plt.subplots(figsize=(5.5, 5))
    xs = [p for _, _, p, m in pairs]
    ys = [m for _, _, p, m in pairs]
    ax.scatter(xs, ys, color="#1f77b4")
    for layout, metric, p, m in pairs:
        ax.annotate(f"{layout} {metric}", (p, m), fontsize=6, xytext=(3, 2), textcoords="offset points")
    top = max(xs + ys + [1.0]) * 1.1
    ax.plot([0, top], [0, top], color="gray", linewidth=0.8)
    ax.set_xlabel("predicted MB/s")
    ax.set_ylabel("measured MB/s")
    ax.set_title("Measured vs predicted", fontsize=10)
    return _export(fig, fmt)
