"""`plan`'s table in a terminal: the columns that fit its width, never a number cut.

Columns have a fixed order on screen and a priority: the essential ones (layout, usable TB,
failures survived, both risks, speed) always show; the others join in priority order (the price
when given, the workload's own figures, then usable TiB, ...) while the table still fits, and the
footer names the ones left out. A cell is never wrapped or cut.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from zfslab.model.plan import PlanRow
from zfslab.model.recommend import Goal, Recommendation, damage, loss, speed_score
from zfslab.model.allocation import format_recordsize
from zfslab.model.cost import money
from zfslab.model.units import odds, power_of_ten
from zfslab.report.tables import wrapped_lines

if TYPE_CHECKING:  # only named in annotations: the fit's module stays out of plan's start
    from zfslab.model.bench_fit import FitRanges


@dataclass(frozen=True, slots=True)
class PlanColumn:
    key: str  # the name --columns takes
    header: str  # one or two lines
    text: Callable[[PlanRow], str]
    essential: bool = False
    left: bool = False
    needs: str = ""  # "risk", "speed", "interval", "cost" or "block": shown only when the plan has those figures


def _years(h: float) -> str:
    return f"{h:g} y"


def _speed(key: str) -> Callable[[PlanRow], str]:
    return lambda r: "-" if r.speed is None else f"{r.speed[key]:,.0f}"


def _marked(text: Callable[[PlanRow], str], calibrated: FitRanges | None,
            iops: bool = False) -> Callable[[PlanRow], str]:
    """With a calibration, a speed cell of a measured layout ends in "m" (the others in a space,
    so the digits stay aligned); without one, the cell as it was."""
    if calibrated is None:
        return text
    measured = calibrated.measured_iops if iops else calibrated.measured
    return lambda r: text(r) + ("m" if r.layout in measured else " ")


def _interval(key: str, calibrated: FitRanges | None) -> Callable[[PlanRow], str]:
    def text(r: PlanRow) -> str:
        low_high = (calibrated.intervals.get(r.layout) or {}).get(key) if calibrated else None
        return "-" if low_high is None else f"{low_high[0]:,.0f}-{low_high[1]:,.0f}"
    return text


INTERVAL_COLUMNS = {"write_mb_s": "write_range", "rewrite_mb_s": "rewrite_range", "read_mb_s": "read_range"}
IOPS_INTERVAL_COLUMNS = {"rand_read_iops_qd8": "rand_read_range", "rand_write_iops_qd8": "rand_write_range",
                         "sync_write_iops_qd8": "sync_write_range"}


SPEED_COLUMNS = {  # metric: (key, header)
    "write_mb_s": ("write", "write\nMB/s"),
    "read_mb_s": ("read", "read\nMB/s"),
    "rewrite_mb_s": ("rewrite", "rewrite\nMB/s"),
    "rand_read_iops_qd8": ("rand_read", "4K read\nIOPS"),
    "rand_write_iops_qd8": ("rand_write", "4K write\nIOPS"),
    "sync_write_iops_qd8": ("sync_write", "sync wr\nIOPS"),
}


def plan_columns(goal: Goal, rec: Recommendation | None, calibrated: FitRanges | None = None,
                 rows: Sequence[PlanRow] = ()) -> list[PlanColumn]:
    """Every column in screen order; `rows`, the plan's, let a row's reason name the listed layout that beats it."""
    listed = [r for r in rows if rec is not None and r.layout in rec.shortlist]
    h = goal.horizon_years
    block = next((r.space_block_bytes for r in rows if r.space_block_bytes), goal.work.space_block_bytes or 16384)
    mark = (lambda r: "★" if r.layout == rec.layout else "◆" if r.layout in rec.shortlist else "") if rec else (lambda r: "")
    cols = [
        PlanColumn("mark", "", mark, essential=True),
        PlanColumn("layout", "layout", lambda r: r.layout, essential=True, left=True),
        PlanColumn("tb", "usable\nTB", lambda r: f"{r.usable_tb:,.2f}", essential=True),
        # vm, database: the usable TB in the workload's blocks, the space plan weighs for them
        # (docs/recommend.md#space-at-the-workloads-block-size)
        PlanColumn("tb_block", f"at {format_recordsize(block)}\nTB", lambda r: f"{r.block_usable_tb:,.2f}",
                   needs="block"),
        # TiB repeats TB in other units: the workload's own figures go before it when the width is short
        PlanColumn("tib", "usable\nTiB", lambda r: f"{r.usable_tib:,.2f}"),
        PlanColumn("zfs_list", "zfs\nlist", lambda r: r.zfs_list_size),
        PlanColumn("raw_pct", "of\nraw", lambda r: f"{100 * r.efficiency:.0f} %"),
        # "can fail", not "disks can fail": 4 columns that let the workload's first figure in at 80
        PlanColumn("fails", "can\nfail", lambda r: str(r.failures_guaranteed), essential=True),
        PlanColumn("best_case", "best\ncase", lambda r: str(r.failures_best_case)),
        PlanColumn("loss", f"P(loss)\n{_years(h)}", lambda r: odds(loss(r, h)), essential=True, needs="risk"),
        PlanColumn("damage", f"P(damage)\n{_years(h)}", lambda r: odds(damage(r, h)), essential=True, needs="risk"),
        PlanColumn("mttdl", "MTTDL\nyears", lambda r: _mttdl(r.mttdl_hours), needs="risk"),
        PlanColumn("cost", "price\n/TB",
                   lambda r: "-" if r.price_per_usable_tb is None else money(r.price_per_usable_tb), needs="cost",
                   essential=goal.priority == "cost"),
        PlanColumn("speed", "speed\n×disk",
                   _marked(lambda r: f"{speed_score(r, goal.metrics):.1f}", calibrated), essential=True, needs="speed"),
    ]
    workload_first = list(goal.metrics) + [m for m in SPEED_COLUMNS if m not in goal.metrics]
    for metric in workload_first:
        key, header = SPEED_COLUMNS[metric]
        streaming = metric in INTERVAL_COLUMNS  # what the seq suite measures and the streaming fit pins
        marked = streaming or bool(calibrated and calibrated.measured_iops)  # IOPS: only once the ars suite ran
        cols.append(PlanColumn(key, header, _marked(_speed(metric), calibrated, not streaming) if marked
                               else _speed(metric), needs="speed"))
        ranges = INTERVAL_COLUMNS if streaming else IOPS_INTERVAL_COLUMNS
        if metric in ranges:  # only --wide or --columns show them: the fit's range of this metric
            level = f"{100 * calibrated.level:g} %" if calibrated else "90 %"
            unit = "MB/s" if streaming else "IOPS"
            cols.append(PlanColumn(ranges[metric], f"{key} {level}\nrange {unit}",
                                   _interval(metric, calibrated), needs="interval"))
    cols.append(PlanColumn("shape", "shape", lambda r: r.shape, left=True))
    if rec is not None:
        why = {v.layout: "; ".join(v.why_out or v.advice) for v in rec.over_budget}
        cols.append(PlanColumn("why_not", "left out because",
                               lambda r: why.get(r.layout) or in_budget_why_not(r, listed, rec, goal), left=True))
    return cols


def in_budget_why_not(row: PlanRow, listed: Sequence[PlanRow], rec: Recommendation, goal: Goal) -> str:
    """Why a layout within the budget is not on the short list (issue 33: its cell was empty):
    which listed layout has as much space, speed and safety, or that the list is full; "" for a
    listed one. Read from the rows' figures, as the short list weighs them."""
    if row.layout in rec.shortlist:
        return ""
    h = goal.horizon_years

    def figures(r: PlanRow) -> tuple:
        return (r.space_bytes, speed_score(r, goal.metrics) or 0.0, -(loss(r, h) or 0.0), -(damage(r, h) or 0.0),
                r.failures_guaranteed)
    better = next((s for s in listed if all(a >= b for a, b in zip(figures(s), figures(row)))), None)
    if better is not None:
        return f"in budget; {better.layout} has as much space, speed and safety"
    return f"in budget; the short list keeps {len(rec.shortlist)}"


def _mttdl(hours: float | None) -> str:
    if hours is None:
        return "-"
    years = hours / 8760
    if years == float("inf"):
        return "∞"
    return f"{years:,.0f}" if years < 1e5 else power_of_ten(years)  # as odds() writes large counts


def _named(header: str) -> str:
    """A two-line header on one line, as the footer names it: 'write MB/s', 'price/TB'."""
    return header.replace("\n/", "/").replace("\n", " ")


def column_keys(goal: Goal) -> list[str]:
    return [c.key for c in plan_columns(goal, None) if c.key != "mark"] + ["why_not"]


def _table(rows: Sequence[PlanRow], columns: Sequence[PlanColumn], highlight: Callable[[PlanRow], bool],
           wrap: dict[str, int] | None = None) -> Table:
    """wrap: the left-aligned text columns that may wrap between words, and their most width."""
    wrap = wrap or {}
    table = Table(box=None, padding=(0, 1), pad_edge=False, header_style="bold", show_edge=False)
    for c in columns:
        table.add_column(Text(c.header), justify="left" if c.left else "right", no_wrap=True)
    for r in rows:  # a wrapped cell cut as prose is (wrapped_lines: never inside "1 in 2,800")
        table.add_row(*(c.text(r) if c.key not in wrap else "\n".join(wrapped_lines(c.text(r), wrap[c.key], indent=0))
                        for c in columns), style="bold green" if highlight(r) else None)
    return table


def _chosen_tables(rows: Sequence[PlanRow], chosen: Sequence[PlanColumn], highlight: Callable[[PlanRow], bool],
                   width: int | None) -> Table | Group:
    """The columns --columns names, every one shown and no cell cut (issue 33: rich cut layouts to
    '12xmir…' and dropped columns): one table when it fits; else the table wrapped, as several one
    below the other, each led by the mark and the layout. A prose column (why_not) wider than
    what is left of the page wraps its cells between words."""
    widths = _column_widths(rows, chosen)
    if width is None or _sum_width(widths, chosen) <= width:
        return _table(rows, chosen, highlight)
    lead = [c for c in chosen if c.key in ("mark", "layout")]
    parts: list[list[PlanColumn]] = []
    for c in (c for c in chosen if c not in lead):
        if parts and _sum_width(widths, lead + parts[-1] + [c]) <= width:
            parts[-1].append(c)
        else:
            parts.append([c])
    room = max(10, width - _sum_width(widths, lead) - 2)
    tables = [_table(rows, lead + part, highlight, wrap={c.key: room for c in part if c.left}) for part in parts]
    return Group(*(item for t in tables for item in (t, "")))


def table_width(table: Table) -> int:
    return Console(width=10_000, color_system=None).measure(table).maximum


def _column_widths(rows: Sequence[PlanRow], columns: Sequence[PlanColumn]) -> dict[str, int]:
    """Each column's width as _table lays it out: its widest cell or header line. Counted once,
    so that trying column sets costs sums, not a rich measure of a whole table each (issue 33)."""
    return {c.key: max([cell_len(line) for line in c.header.split("\n")] + [cell_len(c.text(r)) for r in rows])
            for c in columns}


def _sum_width(widths: dict[str, int], columns: Sequence[PlanColumn]) -> int:
    """The width of _table of these columns: padding (0, 1) without edges puts 2 spaces between two."""
    return sum(widths[c.key] for c in columns) + 2 * max(0, len(columns) - 1)


@dataclass(frozen=True)
class Fitted:
    table: Table
    shown: tuple[str, ...]
    left_out: tuple[str, ...]  # headers of the columns dropped for width, in priority order


def fit_table(rows: Sequence[PlanRow], goal: Goal, rec: Recommendation | None, *, width: int | None,
              have: set[str], keys: Sequence[str] | None = None, calibrated: FitRanges | None = None) -> Fitted:
    """The table for `width` columns (None: every column). `keys` (--columns) chooses exactly;
    the intervals of a calibration show only with every column or when chosen."""
    cols = [c for c in plan_columns(goal, rec, calibrated, rows) if (not c.needs or c.needs in have)
            and (c.key != "why_not" or any(r.layout not in rec.shortlist for r in rows))]
    highlight = (lambda r: r.layout == rec.layout) if rec else (lambda r: False)
    if keys is not None:
        chosen = [c for c in cols if c.key == "mark" or c.key in keys]
        return Fitted(_chosen_tables(rows, chosen, highlight, width), tuple(c.key for c in chosen), ())
    if width is None:
        return Fitted(_table(rows, cols, highlight), tuple(c.key for c in cols), ())
    widths = _column_widths(rows, cols)
    essential = [c.key for c in cols if c.essential]
    # narrower than the essentials (under 80 columns): the least needed of them go first
    for key in ("tib", "speed", "cost", "damage", "fails", "tb", "loss"):
        if _sum_width(widths, [c for c in cols if c.key in essential]) <= width:
            break
        if key in essential:
            essential.remove(key)
    chosen = set(essential)
    # an essential column dropped for width comes back, most needed first, before any other column
    # uses the room left: long layout names (disks of two sizes) dropped P(damage) and speed ×disk
    # from 80 columns, and a narrower write MB/s took speed ×disk's place
    dropped = [k for k in ("loss", "tb", "fails", "damage", "cost", "speed", "tib")
               if any(c.key == k and c.essential for c in cols) and k not in chosen]
    order = dropped + ["cost", "tb_block"] + [SPEED_COLUMNS[m][0] for m in goal.metrics] + \
        ["why_not", "tib", "raw_pct", "mttdl", "best_case"] + \
        [SPEED_COLUMNS[m][0] for m in SPEED_COLUMNS if m not in goal.metrics] + ["zfs_list", "shape"]
    order = list(dict.fromkeys(order))
    by_key = {c.key: c for c in cols}
    left_out = []
    # --all: after the workload's own figures, room for the reasons, which wrap in it (issue 33:
    # never shown, even at 160 columns, for want of room for the longest on one line)
    reserve = 0
    for key in order:  # then the others, most useful first, while the table fits
        if key not in by_key:
            continue
        trial = [c for c in cols if c.key in chosen or c.key == key]
        if key == "why_not":
            room = width - _sum_width(widths, [c for c in cols if c.key in chosen]) - 2
            if room >= min(widths["why_not"], WHY_NOT_MIN_WIDTH):
                reserve = min(widths["why_not"], WHY_NOT_RESERVE) if room >= WHY_NOT_RESERVE else room
                reserve += 2
            else:
                left_out.append(_named(by_key[key].header))
            continue
        if _sum_width(widths, [c for c in trial if c.key != "why_not"]) <= width - reserve:
            chosen.add(key)
        else:
            left_out.append(_named(by_key[key].header))
    shown = [c for c in cols if c.key in chosen]
    wrap = {}
    room = width - _sum_width(widths, shown) - 2
    if reserve:
        shown = [c for c in cols if c.key in chosen or c.key == "why_not"]
        wrap = {"why_not": room} if widths["why_not"] > room else {}
    return Fitted(_table(rows, shown, highlight, wrap), tuple(c.key for c in shown), tuple(left_out))


WHY_NOT_MIN_WIDTH = 20  # narrower, a reason would take more lines than it is worth
WHY_NOT_RESERVE = 40     # --all keeps this much for the reasons before adding optional columns


ONE_DISK_WORDS = {
    "write_mb_s": ("streaming write", "MB/s"), "read_mb_s": ("streaming read", "MB/s"), "rewrite_mb_s": ("rewrite", "MB/s"),
    "rand_read_iops_qd8": ("4K random read", "IOPS"), "rand_write_iops_qd8": ("4K random write", "IOPS"),
    "sync_write_iops_qd8": ("sync write", "IOPS"),
}


def one_disk_figures(rows: Sequence[PlanRow], metrics: Sequence[str]) -> str:
    """The one disk the ×disk multiples divide by, figure by figure, as the table's columns count them
    (IOPS at 8 in flight, as the 4K IOPS columns): '220 MB/s streaming write, 1,200 IOPS 4K random read
    (8 in flight)'. Read back from a row (speed / speed_x), so footer and table cannot disagree."""
    row = next((r for r in rows if r.speed and r.speed_x and all(r.speed_x.get(m) for m in metrics)), None)
    if row is None:
        return ""
    parts = []
    for m in metrics:
        name, unit = ONE_DISK_WORDS.get(m, (m, ""))
        parts.append(f"{row.speed[m] / row.speed_x[m]:,.0f} {unit} {name}")
    iops = any(ONE_DISK_WORDS.get(m, ("", ""))[1] == "IOPS" for m in metrics)
    return ", ".join(parts) + (" (8 in flight)" if iops else "")
