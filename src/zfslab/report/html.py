"""One self-contained HTML page: the recommendation first, then the layouts, charts, bench results
and drills; inline SVG and a few lines of JavaScript, no network needed to view it.

The page fits a 1366 px laptop window with no horizontal scroll: long text cells wrap, charts
scale to the width, and the secondary columns wait behind a toggle
(tests/browser/test_report_page.py measures it at 1366×768 and 1920×1080).
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from zfslab.model.recommend import METRIC_NAMES
from zfslab.model.cost import money
from zfslab.model.per_host import fleet_spread
from zfslab.model.units import odds
from zfslab.report.plan_table import SPEED_COLUMNS, _mttdl
from zfslab.report.tables import SIGNIFICANT_DIGITS, dumps

if TYPE_CHECKING:
    from zfslab.model.per_host import PerHostRow
    from zfslab.model.plan import PlanRow
    from zfslab.store.readback import DrillRecord, MeasurementRecord, RunRecord

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:1.5em auto;max-width:1400px;color:#222;padding:0 1em;line-height:1.4}
h1{font-size:1.6em;margin:0 0 .5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ddd}
.rec{background:#f6fbf6;border-left:4px solid #2ca02c;padding:.7em 1.2em;margin:0 0 1.5em}
.rec.miss{background:#fdf3f3;border-color:#a33}.rec p{margin:.3em 0}
.rec .pick{font-size:1.35em}.rec .shape{color:#555;font-size:.75em;margin-left:.4em}
.rec dl{display:flex;flex-wrap:wrap;gap:.3em 2.2em;margin:.6em 0}.rec dl div{min-width:7em}
.rec dt{font-size:.8em;color:#555}.rec dd{margin:0;font-size:1.15em;font-weight:600;white-space:nowrap}
.rec .reason{font-size:.92em;color:#333}
.controls{display:flex;flex-wrap:wrap;gap:.3em 2em;margin:.5em 0;font-size:.9em}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0}
th,td{padding:.25em .55em;border-bottom:1px solid #eee;text-align:right;vertical-align:top}
th{cursor:pointer;background:#f4f4f4;position:sticky;top:0;vertical-align:bottom}
td{white-space:nowrap}td.l,th.l{text-align:left}td.w{white-space:normal;min-width:9em}
td small{display:block;color:#555;font-weight:normal;font-size:.85em;line-height:1.25}
table.plan.more{font-size:.76em}table.plan.more th,table.plan.more td{padding:.2em .35em}
table.plan td+td,table.plan th+th{border-left:1px solid #e4e4e4}
tr.short td{background:#eef7ee}tr.recommended td{background:#cfeccf;font-weight:600}
table.plan:not(.all) tr.other,table.plan:not(.more) .more,table.plan:not(.all) .note{display:none}
.chart svg{max-width:100%;height:auto}
.meta{color:#555;font-size:.85em}.warn{color:#a33}
"""

SCRIPT = """
document.querySelectorAll('table.sortable th').forEach(function (th) {
  th.addEventListener('click', function () {
    var col = th.cellIndex, body = th.closest('table').tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    var asc = th.dataset.asc !== '1';
    rows.sort(function (a, b) {
      var x = a.cells[col].dataset.v || a.cells[col].textContent, y = b.cells[col].dataset.v || b.cells[col].textContent;
      var nx = parseFloat(x), ny = parseFloat(y);
      var c = (!isNaN(nx) && !isNaN(ny)) ? nx - ny : x.localeCompare(y);
      return asc ? c : -c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
    th.dataset.asc = asc ? '1' : '0';
  });
});
// each checkbox puts a class on the layouts' table (a reload keeps the boxes as they were)
document.querySelectorAll('input[data-shows]').forEach(function (box) {
  var table = document.getElementById('summary');
  function apply() { table.classList.toggle(box.dataset.shows, box.checked); }
  box.addEventListener('change', apply);
  apply();
});
"""


def e(text) -> str:
    return html.escape(str(text))


def _table(headers: list[tuple[str, str]], rows: list[list[tuple[str, object]]], *, table_id: str,
           row_classes: list[str] | None = None, keys: list[str] | None = None, table_class: str = "") -> str:
    """headers: (text, CSS classes: 'l' left, 'w' wraps, ...); a header's newline is a line break;
    cells: (shown text, sort value) or (shown text, sort value, a smaller second line)."""
    head = "".join(f'<th class="{cls}"{f" data-key={keys[j]}" if keys else ""}>'
                   f'{"<br>".join(e(part) for part in h.split(chr(10)))}</th>' for j, (h, cls) in enumerate(headers))
    body = []
    for i, row in enumerate(rows):
        cls = f' class="{row_classes[i]}"' if row_classes and row_classes[i] else ""
        cells = "".join(f'<td class="{headers[j][1]}" data-v="{e(_sort_value(c[1]))}">{e(c[0])}'
                        f'{f"<small>{e(c[2])}</small>" if len(c) > 2 else ""}</td>' for j, c in enumerate(row))
        body.append(f"<tr{cls}>{cells}</tr>")
    return (f'<table id="{table_id}" class="sortable {table_class}"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(body)}</tbody></table>')


def _sort_value(value: object) -> object:
    """A cell's sort value as the page's JSON writes the same figure (report/tables.py rounds floats)."""
    if isinstance(value, float) and math.isfinite(value):
        return float(f"{value:.{SIGNIFICANT_DIGITS}g}")
    return value


def _svg(data: bytes) -> str:
    text = data.decode()
    return text[text.find("<svg"):]


def _at(row: PlanRow, values: tuple[float, ...] | None, years: float) -> float | None:
    """A row's risk (p_loss or p_damage) at `years`; None when not computed."""
    return next((v for y, v in zip(row.years, values or ()) if math.isclose(y, years, rel_tol=1e-9)), None)


# The figures as the page's JSON holds them (PlanRow.as_dict rounds these), so that a cell and the
# data it sorts by agree with the JSON the page carries, to the byte
def _tb(r: PlanRow) -> float:
    return round(r.usable_tb, 4)


def _tib(r: PlanRow) -> float:
    return round(r.usable_tib, 4)


def _price(r: PlanRow) -> float | None:
    return None if r.price_per_usable_tb is None else round(r.price_per_usable_tb, 2)


def _years(h: float) -> str:
    return f"{h:g} year{'s' * (h != 1)}"


def speed_score(row: PlanRow, metrics: list[str]) -> float | None:
    """The geometric mean of the workload's figures as multiples of one disk (recommend.speed_score)."""
    x = row.speed_x
    return None if not x or not metrics else math.prod(x[k] for k in metrics) ** (1 / len(metrics))


def _recommendation(rec: dict, rows: dict[str, PlanRow]) -> str:
    """The answer, as plan gives it: the layout, the budget, its figures, the reason."""
    r, h = rows[rec["layout"]], rec["horizon_years"]
    lead = "★ Recommended:" if rec["within_budget"] else "No layout meets the budget; the closest:"
    score = speed_score(r, rec["speed_metrics"])
    figures = [("usable", f"{_tb(r):,.2f} TB ({_tib(r):,.2f} TiB)"),
               ("disks that can fail", f"{r.failures_guaranteed} at once"),
               (f"P(pool loss) in {_years(h)}", odds(_at(r, r.p_loss, h))),
               (f"P(damaged files) in {_years(h)}", odds(_at(r, r.p_damage, h)))]
    if score is not None:
        figures.append((f"speed ({rec['workload']})", f"{score:.1f}× one disk"))
    if _price(r) is not None:
        figures.append(("price per usable TB", f"{money(_price(r))} (the disks {money(round(r.disks_price, 2))})"))
    cells = "".join(f"<div><dt>{e(k)}</dt><dd>{e(v)}</dd></div>" for k, v in figures)
    return (f'<section id="recommendation" class="rec{"" if rec["within_budget"] else " miss"}">'
            f'<p class="pick">{lead} <b id="recommended-layout">{e(rec["layout"])}</b>'
            f'<span class="shape">{e(r.shape)}</span></p>'
            f'<p class="budget">For {e(rec["data"])} data [{e(rec["budget"])}], {e(rec["workload"])} workload, '
            f'priority {e(rec["priority"])}:</p><dl>{cells}</dl><p class="reason">{e(rec["reason"])}</p></section>')


def _measured(bench: Sequence[MeasurementRecord]) -> dict[str, tuple[float | None, float | None]]:
    """layout: (measured write MB/s, read MB/s), from fio's seq suite or bonnie++, whichever ran
    (the last run to measure it, when several did)."""
    by = {(b.layout, b.test): b for b in bench}
    out = {}
    for layout in {b.layout for b in bench}:
        write = by.get((layout, "seqwrite")) or by.get((layout, "bonnie-write"))
        read = by.get((layout, "seqread")) or by.get((layout, "bonnie-read"))
        w = write.write_mb_s if write else None
        r = read.read_mb_s if read else None
        if w or r:
            out[layout] = (w, r)
    return out


def _why_not(r: PlanRow, rec: dict, short: list[PlanRow]) -> str:
    """Why a layout is not on the short list: out of budget (recommend's words), or which listed one beats it."""
    if r.layout in rec["left_out"]:
        return "; ".join(rec["left_out"][r.layout])
    score = speed_score(r, rec["speed_metrics"]) or 0
    better = next((s.layout for s in short if s.usable_bytes >= r.usable_bytes
                   and (speed_score(s, rec["speed_metrics"]) or 0) >= score), None)
    return f"in budget; {better} has as much space and speed" if better else "in budget; the short list keeps 8"


def _plan_table(plan_rows: list[PlanRow], rec: dict | None, bench: Sequence[MeasurementRecord]) -> tuple[str, str, str]:
    """The layouts' table (short list first), its controls and its legend."""
    computed = plan_rows[0].years if plan_rows[0].p_loss is not None else (5.0,)
    h = rec["horizon_years"] if rec else min(computed, key=lambda y: abs(y - 5))   # 5 years, or the nearest
    metrics = list(rec["speed_metrics"]) if rec else ["write_mb_s", "read_mb_s", "rand_read_iops_qd8"]
    listed = list(rec["shortlist"]) if rec else [r.layout for r in plan_rows]
    by_layout = {r.layout: r for r in plan_rows}
    short = [by_layout[x] for x in listed if x in by_layout]
    ordered = short + [r for r in plan_rows if r.layout not in listed]
    measured = _measured(bench)
    speed = [m for m in metrics if m in SPEED_COLUMNS] + [m for m in SPEED_COLUMNS if m not in metrics]
    cols = [  # (key, header, CSS classes, cell: row -> (text, sort value))
        ("mark", "", "", lambda r: ("★", 2) if rec and r.layout == rec["layout"] else ("◆", 1) if r.layout in listed else ("", 0)),
        ("layout", "layout\nand shape", "l w", lambda r: (r.layout, r.layout, r.shape)),
        ("tb", "usable\nTB", "", lambda r: (f"{_tb(r):,.2f}", _tb(r))),
        ("tib", "usable\nTiB", "", lambda r: (f"{_tib(r):,.2f}", _tib(r))),
        ("fails", "disks\ncan fail", "", lambda r: (str(r.failures_guaranteed), r.failures_guaranteed)),
        ("loss", f"P(loss)\n{h:g} y", "", lambda r: _risk(r, r.p_loss, h)),
        ("damage", f"P(damage)\n{h:g} y", "", lambda r: _risk(r, r.p_damage, h)),
        ("speed", "speed\n×disk", "", lambda r: ("-", 0) if speed_score(r, metrics) is None else
         (f"{speed_score(r, metrics):.1f}", speed_score(r, metrics))),
    ]
    if any(_price(r) is not None for r in plan_rows):  # --disk-price
        cols.append(("cost", "price\n/TB", "", lambda r: ("-", 0) if _price(r) is None else
                     (money(_price(r)), _price(r))))
    for m in speed:
        key, header = SPEED_COLUMNS[m]
        cols.append((key, header, "" if m in metrics else "more",
                     lambda r, m=m: ("-", 0) if not r.speed else (f"{r.speed[m]:,.0f}", r.speed[m])))
    if measured:
        cols += [("measured_write", "measured\nwrite MB/s", "", lambda r: _num(measured.get(r.layout, (None,))[0])),
                 ("measured_read", "measured\nread MB/s", "", lambda r: _num(measured.get(r.layout, (None, None))[1]))]
    cols += [
        ("raw_pct", "of\nraw", "more", lambda r: (f"{100 * round(r.efficiency, 6):.0f} %", round(r.efficiency, 6))),
        ("best_case", "best\ncase", "more", lambda r: (str(r.failures_best_case), r.failures_best_case)),
        ("mttdl", "MTTDL\nyears", "more", lambda r: (_mttdl(r.mttdl_hours), r.mttdl_hours or 0)),
        ("zfs_list", "zfs\nlist", "more", lambda r: (r.zfs_list_size, r.usable_bytes)),
    ]
    if rec:
        cols.append(("note", "why not on the short list", "l w note",
                     lambda r: ("", "") if r.layout in listed else (_why_not(r, rec, short),) * 2))
    classes = ["recommended" if rec and r.layout == rec["layout"] else "short" if r.layout in listed else "other"
               for r in ordered]
    table = _table([(c[1], c[2]) for c in cols], [[c[3](r) for c in cols] for r in ordered], table_id="summary",
                   row_classes=classes, keys=[c[0] for c in cols], table_class="plan")
    more = ", ".join(c[1].replace("\n", " ") for c in cols if "more" in c[2])
    controls = [f'<label><input type="checkbox" id="more-columns" data-shows="more"> more columns ({e(more)})</label>']
    if rec and len(ordered) > len(short):
        others = [r.layout for r in ordered[len(short):]]
        out = sum(x in rec["left_out"] for x in others)
        why = [f"{out} outside the budget or against OpenZFS practice"] * bool(out) + \
            [f"{len(others) - out} in budget but not on the short list"] * bool(len(others) - out)
        controls.insert(0, f'<label><input type="checkbox" id="show-all" data-shows="all"> show all {len(ordered)} '
                           f'layouts ({len(others)} more: {", ".join(why)})</label>')
    names = ", ".join(METRIC_NAMES.get(m, m) for m in metrics)
    one = next((r for r in plan_rows if r.speed and all((r.speed_x or {}).get(m) for m in metrics)), None)
    if one is not None:  # the one disk the multiples divide by, as plan's footer names it
        names = ", ".join(f"{one.speed[m] / one.speed_x[m]:,.0f} "
                          f"{'IOPS' if '_iops_' in m else 'MB/s'} {METRIC_NAMES.get(m, m)}" for m in metrics) + \
            (" at 8 in flight" if any("_iops_" in m for m in metrics) else "")
    legend = (f"★ recommended, ◆ worth considering (the short list). usable: zfs list USED+AVAIL of the empty pool. "
              f"disks can fail: at once, whichever they are. P(loss): pool lost; P(damage): some files damaged "
              f"(read errors during resilvers); within {_years(h)}. speed ×disk: {rec['workload'] if rec else 'general'} "
              f"workload as multiples of one disk's {names}; MB/s and IOPS columns predicted"
              + ("; measured columns from bench results" if measured else "") + ". Click a heading to sort.")
    return table, f'<div class="controls">{"".join(controls)}</div>', f'<p class="meta">{e(legend)}</p>'


def _risk(r: PlanRow, values: tuple[float, ...] | None, h: float) -> tuple[str, float]:
    p = _at(r, values, h)
    return odds(p), p if p is not None else -1


def _num(v: float | None) -> tuple[str, float]:
    return (f"{v:,.0f}", v) if v else ("", 0)


def _per_host(hosts: list[str], rows: list[PerHostRow]) -> str:
    """Each host's median beside the merged figure; a host more than 15 % below its peers' median
    is marked, and said in words under the table."""
    cells = []
    for r in rows:
        flagged = {f.host: f for f in r.flags}
        cells.append([(r.layout, r.layout), (r.test, r.test), (r.unit, r.unit), (f"{r.merged:,.0f}", r.merged)]
                     + [(f"{v:,.0f}" + (f" ▼{flagged[h].below:.0%}" if h in flagged else ""), v)
                        if (v := dict(r.by_host).get(h)) is not None else ("", 0) for h in hosts]
                     + _spread_cells(r))
    lines = [line for r in rows for line in r.lines()]
    table = _table([("layout", "l"), ("test", "l"), ("unit", "l"), ("merged", "")] + [(h, "") for h in hosts]
                   + [("max/min", ""), ("CV", ""), ("slowest", "l")], cells, table_id="per-host")
    said = "".join(f'<li class="slow-host">{e(line)}</li>' for line in lines)
    spread = fleet_spread(hosts, rows)
    return (f"<h2>Per host: each host's median beside the merged figure ({len(hosts)} hosts)</h2>"
            + (f'<p class="host-spread">{e(spread.line())}.</p>' if spread else "") + table
            + (f"<p>More than 15% below the median of the other hosts:</p><ul>{said}</ul>" if lines
               else "<p>No host more than 15% below the median of its peers.</p>"))


def _spread_cells(r: PerHostRow) -> list[tuple[str, object]]:
    """The hosts' spread of one row: fastest/slowest, coefficient of variation, the slowest host."""
    s = r.spread
    if s is None:
        return [("", 0), ("", 0), ("", "")]
    return [(f"{s.max_over_min:.2f}×", s.max_over_min), (f"{s.cv:.1%}", s.cv), (s.slowest, s.slowest)]


def _bench_table(bench: Sequence[MeasurementRecord]) -> str:
    rows = [[(b.layout, b.layout), (b.test, b.test), (str(b.repeats), b.repeats),
             (f"{b.read_mb_s:,.1f}" if b.read_mb_s else "", b.read_mb_s or 0),
             (f"{b.write_mb_s:,.1f}" if b.write_mb_s else "", b.write_mb_s or 0),
             (f"{b.read_iops:,.0f}" if b.read_iops else "", b.read_iops or 0),
             (f"{b.write_iops:,.0f}" if b.write_iops else "", b.write_iops or 0),
             ("cached?" if b.cache_suspect else "", int(b.cache_suspect))] for b in bench]
    return _table([("layout", "l"), ("test", "l"), ("n", ""), ("read MB/s", ""), ("write MB/s", ""), ("read IOPS", ""),
                   ("write IOPS", ""), ("note", "l")], rows, table_id="bench")


def _drills_table(drills: Sequence[DrillRecord]) -> str:
    rows = [[(d.layout, d.layout), (d.scenario, d.scenario), (d.outcome, d.outcome),
             (f"{d.seconds:.0f} s" if d.seconds is not None else "", d.seconds or 0),
             (d.verdict, d.verdict)] for d in drills]
    return _table([("layout", "l"), ("scenario", "l"), ("outcome", "l"), ("time", ""), ("verdict", "l w")], rows,
                  table_id="drills")


def _runs_table(runs: Sequence[RunRecord]) -> str:
    # the sort value of the vdevs column is the stored flag, 0 or 1, as the page always gave it
    rows = [[(str(r.id), r.id), (r.started_at, r.started_at), (r.zfs_version or "", 0), (r.kernel or "", 0),
             (r.cpu or "", 0), (f"{(r.ram_bytes or 0) / 2**30:.0f} GiB", r.ram_bytes or 0),
             (", ".join(r.devices),) * 2, ("sandbox (files)" if r.sandbox else "disks", int(r.sandbox))] for r in runs]
    return _table([("run", ""), ("started", "l"), ("ZFS", "l"), ("kernel", "l w"), ("CPU", "l w"), ("RAM", ""),
                   ("disks", "l w"), ("vdevs", "l")], rows, table_id="runs")


def render(*, title: str, plan_rows: list[PlanRow], recommendation: dict | None, charts: dict[str, bytes],
           bench: Sequence[MeasurementRecord], drills: Sequence[DrillRecord], runs: Sequence[RunRecord],
           notes: list[str], per_host: tuple[list[str], list[PerHostRow]] = ([], [])) -> str:
    rec = recommendation
    parts = [f"<!doctype html><html lang=en><head><meta charset=utf-8>"
             f'<meta name="viewport" content="width=device-width, initial-scale=1"><title>{e(title)}</title>'
             f"<style>{CSS}</style></head><body><h1>{e(title)}</h1>"]
    if rec:  # the answer first, as plan gives it
        parts.append(_recommendation(rec, {r.layout: r for r in plan_rows}))
    if plan_rows:
        table, controls, legend = _plan_table(plan_rows, rec, bench)
        worth = rec and rec["within_budget"]
        parts.append(f"<h2>{'Layouts worth considering' if worth else 'Layouts'}: space, safety, speed</h2>")
        parts += [controls, table, legend]
    parts += [f'<p class="meta">{e(n)}</p>' for n in notes]
    for key, caption in (("corners", "Space, safety and speed: the short list ringed, the recommended layout starred"),
                         ("relative", "Speed relative to one disk (Ars Technica style)"),
                         ("measured", "Measured vs predicted")):
        if key in charts:
            parts.append(f'<h2>{e(caption)}</h2><div class="chart" id="chart-{key}">{_svg(charts[key])}</div>')
    if bench:
        parts.append("<h2>Bench results (medians of the repeats)</h2>" + _bench_table(bench))
    if per_host[1]:
        parts.append(_per_host(*per_host))
    if drills:
        parts.append("<h2>Drills</h2>" + _drills_table(drills))
    if runs:
        parts.append("<h2>Runs</h2>" + _runs_table(runs))
    data = dumps([r.as_dict() for r in plan_rows])   # the rows as plan --json gives them, for scripts
    parts.append('<script type="application/json" id="data">' + data.replace("</", "<\\/") + "</script>")
    parts.append(f"<script>{SCRIPT}</script></body></html>")
    return "\n".join(parts)
