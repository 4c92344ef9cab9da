"""Charts as real images (matplotlib, Agg): SVG to inline in the HTML page, PNG or SVG to export."""

from __future__ import annotations

import io
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.collections import PolyCollection  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter  # noqa: E402
from matplotlib.transforms import ScaledTranslation  # noqa: E402

from zfslab.model.units import odds, power_of_ten  # noqa: E402

WORKLOADS = [("write_mb_s", "seq write"), ("read_mb_s", "seq read"), ("rand_read_iops_qd1", "4K read QD1"),
             ("rand_read_iops_qd8", "4K read QD8"), ("sync_write_iops_qd8", "sync write")]
# the smallest text on a chart, in points: the page shows a chart at its own size (1 pt = 4/3 CSS px)
# or smaller, and a label under 10 px is not read (tests/browser/test_report_page.py measures it)
SMALL_PT = 8.0
WHY_ALIKE = {"rand_read_iops_qd1": "one read in flight waits on one disk, whatever the layout"}
LABEL_PT = 9.0
COLORS = {"stripe": "#9e9e9e", "mirror": "#1f77b4", "raidz1": "#ff7f0e", "raidz2": "#2ca02c", "raidz3": "#d62728",
          "draid": "#9467bd"}
GENERAL = ("write_mb_s", "read_mb_s", "rand_read_iops_qd8")  # recommend.py's general workload


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
    # SVG text stays text: the page can be searched, and labels stay sharp when the page scales the chart
    with plt.rc_context({"svg.fonttype": "none"}):
        fig.savefig(buf, format=fmt, dpi=110)
    plt.close(fig)
    return buf.getvalue()


def mark(layout: str, shortlist: set[str], recommended: str | None) -> str:
    """★ the recommended layout, ◆ one worth considering, as in plan's table."""
    return "★ " if layout == recommended else "◆ " if layout in shortlist else ""


def relative_bars(rows: list[dict], fmt: str = "svg", *, shortlist: set[str] = frozenset(),
                  recommended: str | None = None) -> bytes:
    """Ars Technica style: each workload as a multiple of one disk, one bar per layout; the short list in bold.
    A workload on which every layout is alike (4K reads one at a time: one disk answers each) is left
    out, and a line under the chart says so and why."""
    n = len(rows)
    alike = [(key, title) for key, title in WORKLOADS if _all_equal([r["speed_x_single_disk"][key] for r in rows])]
    panels = [w for w in WORKLOADS if w not in alike] or WORKLOADS[:1]
    # 2.7 in a panel, 13.5 in for five: 1,296 CSS px, shown at its own size in a 1366 px laptop window
    fig, axes = plt.subplots(1, len(panels), figsize=(2.7 * len(panels) + 0.6, 0.32 * n + 1.6 + 0.3 * bool(alike)),
                             sharey=True, squeeze=False)
    axes = axes[0]
    labels = [r["layout"] for r in rows]
    picked = [i for i, x in enumerate(labels) if x in shortlist or x == recommended]
    for ax, (key, title) in zip(axes, panels):
        for i in picked:  # a band across every panel: the short list reads as one row
            ax.axhspan(i - 0.5, i + 0.5, color="#fff1c1", zorder=0, linewidth=0)
        values = [r["speed_x_single_disk"][key] for r in rows]
        # one collection, not a Rectangle per bar: barh's patches cost matplotlib ~10 ms each in
        # transform bookkeeping (47 layouts x 5 workloads was 2 s of a report)
        bars = [[(0, i - 0.4), (v, i - 0.4), (v, i + 0.4), (0, i + 0.4)] for i, v in enumerate(values)]
        ax.add_collection(PolyCollection(bars, facecolors=[COLORS[family(x)] for x in labels], edgecolors="none"))
        ax.set_xlim(0, max(values + [1.0]) * 1.22)
        ax.set_ylim(-0.6, n - 0.4)
        ax.axvline(1.0, color="black", linewidth=0.8)
        ax.set_title(f"{title}\n(× one disk)", fontsize=LABEL_PT)
        ax.tick_params(labelsize=SMALL_PT)
        beside = ax.transData + ScaledTranslation(2 / 72, 0, fig.dpi_scale_trans)  # 2 pt right of the bar's end
        for i, v in enumerate(values):
            ax.text(v, i, f"{v:.1f}", va="center", fontsize=SMALL_PT, transform=beside)
    axes[0].set_yticks(range(n), [mark(x, shortlist, recommended) + x for x in labels])
    for tick, layout in zip(axes[0].get_yticklabels(), labels):
        if layout in shortlist or layout == recommended:
            tick.set_fontweight("bold")
    axes[0].invert_yaxis()
    title = "Predicted speed relative to a single disk"
    if shortlist:
        title += " (★ recommended, ◆ worth considering)"
    fig.suptitle(title, fontsize=11)
    bottom = 0.0
    if alike:
        said = "; ".join(f"{title}: every layout is {rows[0]['speed_x_single_disk'][key]:.1f}× one disk"
                         + (f" ({WHY_ALIKE[key]})" if key in WHY_ALIKE else "") for key, title in alike)
        fig.text(0.01, 0.01, f"Not drawn: {said}.", fontsize=LABEL_PT, ha="left", va="bottom")
        bottom = 0.35 / fig.get_figheight()
    fig.tight_layout(rect=(0, bottom, 1, 1 - 0.45 / fig.get_figheight()))  # the title's 0.45 in, however tall
    return _export(fig, fmt, laid_out=True)


def size_key(speeds: list[float]) -> list[float]:
    """Two or three round speeds that span the markers drawn: the smallest, the largest, one between."""
    if not speeds:
        return []
    lo, hi = min(speeds), max(speeds)

    def nice(v: float) -> float:  # one figure, or a half step: 8, 15, 25, 0.5
        step = 10 ** math.floor(math.log10(v)) / 2 if v > 0 else 0.5
        return max(round(v / step) * step, 0.5)
    keys = sorted({nice(lo), nice((lo + hi) / 2), nice(hi)})
    return keys


def _all_equal(values: list[float]) -> bool:
    """Alike to the one decimal the bars are labelled with."""
    return bool(values) and max(values) - min(values) < 0.05


def _odds_tick(p: float, _pos=None) -> str:
    """A decade tick as odds: '1 in 10,000', '1 in 10⁸' (odds() rounds to two figures; a tick is exact)."""
    if p >= 1:
        return "certain"
    n = round(1 / p)
    return f"1 in {power_of_ten(n)}" if n >= 10**6 else f"1 in {n:,}"


def corners(rows: list[dict], shortlist: set[str], fmt: str = "svg", *, recommended: str | None = None,
            horizon: str | None = None, loss_budget: float | None = None, budget_label: str = "",
            metrics: tuple[str, ...] = GENERAL) -> bytes:
    """The three corners: usable space (x), P(pool loss) (y, log), speed (marker size); the short list
    ringed and named, the recommended layout a labelled star, the risk budget a dashed line."""
    fig, ax = plt.subplots(figsize=(10.5, 6))
    if horizon is None:  # the computed horizon nearest the budgets' 5 years
        horizon = min(rows[0]["p_loss"], key=lambda y: abs(float(y) - 5)) if rows else "5"
    points = {}
    speeds = []
    for r in rows:
        risk = max(r["p_loss"][horizon], 1e-18)
        speed = math.prod(r["speed_x_single_disk"][k] for k in metrics) ** (1 / len(metrics))
        points[r["layout"]] = (r["usable_tb"], risk)
        speeds.append(speed)
        on = r["layout"] in shortlist
        if r["layout"] == recommended:
            ax.scatter(r["usable_tb"], risk, s=260 + 12 * speed, marker="*", color=COLORS[family(r["layout"])],
                       edgecolors="black", linewidths=1.2, zorder=4)
        else:
            ax.scatter(r["usable_tb"], risk, s=25 + 12 * speed, color=COLORS[family(r["layout"])],
                       alpha=0.9 if on else 0.3, edgecolors="black" if on else "none", linewidths=1.2,
                       zorder=3 if on else 2)
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(base=10, numticks=12))
    ax.yaxis.set_major_formatter(FuncFormatter(_odds_tick))
    ax.yaxis.set_minor_formatter(NullFormatter())
    if loss_budget is not None and loss_budget < 1:
        ax.axhline(loss_budget, color="#a33", linestyle="--", linewidth=1, zorder=1)
    ax.set_xlabel("usable TB (zfs list)", fontsize=LABEL_PT + 1)
    ax.set_ylabel(f"P(pool loss) within {horizon} years", fontsize=LABEL_PT + 1)
    ax.tick_params(labelsize=LABEL_PT)
    ax.set_title("Space, safety and speed (marker size)", fontsize=10)
    handles = [ax.scatter([], [], color=color, label=name) for name, color in COLORS.items()
               if any(family(x) == name for x in points)]
    handles.append(ax.scatter([], [], color="white", edgecolors="black", linewidths=1.2, label="◆ worth considering"))
    if recommended:
        handles.append(ax.scatter([], [], marker="*", s=120, color="white", edgecolors="black", label="★ recommended"))
    if loss_budget is not None and loss_budget < 1:
        handles.append(ax.plot([], [], color="#a33", linestyle="--", linewidth=1,
                               label=f"budget{' for ' + budget_label if budget_label else ''}: ≤ {odds(loss_budget)}")[0])
    for v in size_key(speeds):  # what a marker's size says, as scattered above: 25 + 12 per × one disk
        handles.append(ax.scatter([], [], s=25 + 12 * v, color="#bbbbbb", edgecolors="none",
                                  label=f"speed {v:g}× one disk"))
    ax.legend(handles=handles, fontsize=LABEL_PT, loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0,
              labelspacing=0.9)
    ax.grid(True, which="major", alpha=0.3)
    fig.tight_layout()
    named = [x for x in points if x in shortlist or x == recommended]
    _label(ax, fig, {x: points[x] for x in named},
           {x: ("★ " + x + " (recommended)" if x == recommended else x) for x in named})
    return _export(fig, fmt, laid_out=True)


# where a label may go around its point, in points: right, above, below, left, further out
_OFFSETS = [(7, 4, "left"), (7, -11, "left"), (-7, 4, "right"), (-7, -11, "right"), (0, 10, "center"),
            (0, -17, "center"), (12, 14, "left"), (12, -21, "left"), (-12, 14, "right"), (-12, -21, "right")]


def _label(ax, fig, points: dict[str, tuple[float, float]], texts: dict[str, str]) -> None:
    """Name each point where its label overlaps no other label, no named point and stays in the axes."""
    renderer = fig.canvas.get_renderer()
    frame = ax.get_window_extent(renderer)
    dots = [ax.transData.transform(p) for p in points.values()]
    placed = []

    def clear(box) -> bool:
        if box.x0 < frame.x0 or box.x1 > frame.x1 or box.y0 < frame.y0 or box.y1 > frame.y1:
            return False
        if any(box.overlaps(other) for other in placed):
            return False
        return not any(box.x0 - 4 < x < box.x1 + 4 and box.y0 - 4 < y < box.y1 + 4 for x, y in dots)

    # the recommended layout first: its label must never be the one pushed aside
    for layout in sorted(points, key=lambda x: not texts[x].startswith("★")):
        note = None
        for dx, dy, ha in _OFFSETS:
            if note is not None:
                note.remove()
            note = ax.annotate(texts[layout], points[layout], xytext=(dx, dy), textcoords="offset points",
                               fontsize=LABEL_PT, ha=ha, fontweight="bold" if texts[layout].startswith("★") else "normal",
                               zorder=5)
            box = note.get_window_extent(renderer)
            if clear(box):
                break
        placed.append(note.get_window_extent(renderer))  # the last try stays when none was clear


def measured_vs_predicted(pairs: list[tuple[str, str, float, float]], fmt: str = "svg") -> bytes:
    """(layout, metric, predicted, measured) as a scatter against the diagonal."""
    fig, ax = plt.subplots(figsize=(5.5, 5))
    xs = [p for _, _, p, m in pairs]
    ys = [m for _, _, p, m in pairs]
    ax.scatter(xs, ys, color="#1f77b4")
    for layout, metric, p, m in pairs:
        ax.annotate(f"{layout} {metric}", (p, m), fontsize=SMALL_PT, xytext=(3, 2), textcoords="offset points")
    top = max(xs + ys + [1.0]) * 1.1
    ax.plot([0, top], [0, top], color="gray", linewidth=0.8)
    ax.set_xlabel("predicted MB/s")
    ax.set_ylabel("measured MB/s")
    ax.set_title("Measured vs predicted", fontsize=10)
    return _export(fig, fmt)
