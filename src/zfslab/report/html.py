"""One self-contained HTML page: tables, inline SVG charts, no network needed to view it."""

from __future__ import annotations

import html
import math

from zfslab.report.tables import dumps

CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;max-width:1400px;color:#222;padding:0 1em}
h1{font-size:1.6em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:.85em;margin:.5em 0}th,td{padding:.25em .6em;border-bottom:1px solid #eee;text-align:right}
th{cursor:pointer;background:#f4f4f4;position:sticky;top:0}td.l,th.l{text-align:left}
tr.frontier td{background:#eef7ee}tr.recommended td{background:#cfeccf;font-weight:600}
.rec{background:#f6fbf6;border-left:4px solid #2ca02c;padding:.6em 1em}.chart{margin:1em 0;max-width:100%;overflow-x:auto}
.meta{color:#555;font-size:.85em}.warn{color:#a33}
"""

SORT_JS = """
document.querySelectorAll('table.sortable th').forEach(function (th, col) {
  th.addEventListener('click', function () {
    var body = th.closest('table').tBodies[0];
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
"""


def e(text) -> str:
    return html.escape(str(text))


def _table(headers: list[tuple[str, str]], rows: list[list[tuple[str, object]]], *, table_id: str,
           row_classes: list[str] | None = None) -> str:
    """headers: (text, 'l' or ''); cells: (shown text, sort value)."""
    head = "".join(f'<th class="{cls}">{e(h)}</th>' for h, cls in headers)
    body = []
    for i, row in enumerate(rows):
        cls = f' class="{row_classes[i]}"' if row_classes and row_classes[i] else ""
        cells = "".join(f'<td class="{headers[j][1]}" data-v="{e(v)}">{e(t)}</td>' for j, (t, v) in enumerate(row))
        body.append(f"<tr{cls}>{cells}</tr>")
    return f'<table id="{table_id}" class="sortable"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


def _svg(data: bytes) -> str:
    text = data.decode()
    return text[text.find("<svg"):]


def render(*, title: str, plan_rows: list[dict], recommendation: dict | None, charts: dict[str, bytes],
           bench: list[dict], drills: list[dict], runs: list[dict], notes: list[str]) -> str:
    rec_layout = recommendation["layout"] if recommendation else None
    frontier = set(recommendation["frontier"]) if recommendation else set()
    summary_rows, classes = [], []
    measured = {(b["layout"], b["test"]): b for b in bench}
    for r in plan_rows:
        s = r["speed"]
        horizon = min(r["p_loss"], key=lambda y: abs(float(y) - 5))  # the --years nearest 5
        mttdl = r["mttdl_hours"]
        # fio's seq suite or bonnie++ itself: whichever measured the layout
        m_write = (measured.get((r["layout"], "seqwrite")) or measured.get((r["layout"], "bonnie-write")) or {}).get("write_mb_s")
        m_read = (measured.get((r["layout"], "seqread")) or measured.get((r["layout"], "bonnie-read")) or {}).get("read_mb_s")
        summary_rows.append([
            ("★" if r["layout"] == rec_layout else "◆" if r["layout"] in frontier else "", 2 if r["layout"] == rec_layout else int(r["layout"] in frontier)),
            (r["layout"], r["layout"]), (r["shape"], r["shape"]),
            (f"{r['usable_tb']:.2f}", r["usable_tb"]), (f"{r['usable_tib']:.2f}", r["usable_tib"]),
            (f"{s['write_mb_s']:,.0f}", s["write_mb_s"]), (f"{s['rewrite_mb_s']:,.0f}", s["rewrite_mb_s"]),
            (f"{s['read_mb_s']:,.0f}", s["read_mb_s"]),
            (f"{m_write:,.0f}" if m_write else "", m_write or 0), (f"{m_read:,.0f}" if m_read else "", m_read or 0),
            (f"{r['failures_guaranteed']}", r["failures_guaranteed"]),
            (f"{r['p_loss'][horizon]:.2e}", r["p_loss"][horizon]),
            (f"{mttdl / 8760:.3g} y" if math.isfinite(mttdl) else "unbounded", mttdl if math.isfinite(mttdl) else 1e308),
        ])
        classes.append("recommended" if r["layout"] == rec_layout else "frontier" if r["layout"] in frontier else "")
    summary = _table([("", ""), ("layout", "l"), ("shape", "l"), ("usable TB", ""), ("usable TiB", ""),
                      ("write MB/s", ""), ("rewrite MB/s", ""), ("read MB/s", ""), ("measured write", ""),
                      ("measured read", ""), ("fail ok", ""),
                      (f"P(loss) {plan_rows[0]['p_loss'] and min(plan_rows[0]['p_loss'], key=lambda y: abs(float(y) - 5))} y"
                       if plan_rows else "P(loss)", ""), ("MTTDL", "")],
                     summary_rows, table_id="summary", row_classes=classes)
    parts = [f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{e(title)}</title>"
             f"<style>{CSS}</style></head><body><h1>{e(title)}</h1>"]
    parts += [f'<p class="meta">{e(n)}</p>' for n in notes]
    if recommendation:
        parts.append(f'<h2>Recommendation ({e(recommendation["priority"])})</h2><p class="rec" id="recommendation">'
                     f'{e(recommendation["reason"])}</p>')
    parts.append("<h2>Layouts: space, speed, safety</h2><p class=meta>Speed predicted from the disk profile; measured "
                 "columns from bench results where they exist. ◆ Pareto frontier, ★ recommended. Click a heading to sort.</p>")
    parts.append(summary)
    for key, caption in (("relative", "Speed relative to one disk (Ars Technica style)"),
                         ("corners", "The three corners and the Pareto frontier"),
                         ("measured", "Measured vs predicted")):
        if key in charts:
            parts.append(f'<h2>{e(caption)}</h2><div class="chart" id="chart-{key}">{_svg(charts[key])}</div>')
    if bench:
        rows = [[(b["layout"], b["layout"]), (b["test"], b["test"]), (str(b["repeats"]), b["repeats"]),
                 (f"{b['read_mb_s']:,.1f}" if b["read_mb_s"] else "", b["read_mb_s"] or 0),
                 (f"{b['write_mb_s']:,.1f}" if b["write_mb_s"] else "", b["write_mb_s"] or 0),
                 (f"{b['read_iops']:,.0f}" if b["read_iops"] else "", b["read_iops"] or 0),
                 (f"{b['write_iops']:,.0f}" if b["write_iops"] else "", b["write_iops"] or 0),
                 ("cached?" if b["cache_suspect"] else "", int(b["cache_suspect"]))] for b in bench]
        parts.append("<h2>Bench results (medians of the repeats)</h2>" + _table(
            [("layout", "l"), ("test", "l"), ("n", ""), ("read MB/s", ""), ("write MB/s", ""), ("read IOPS", ""),
             ("write IOPS", ""), ("note", "l")], rows, table_id="bench"))
    if drills:
        rows = [[(d["layout"], d["layout"]), (d["scenario"], d["scenario"]), (d["outcome"], d["outcome"]),
                 (f"{d['seconds']:.0f} s" if d["seconds"] is not None else "", d["seconds"] or 0),
                 (d["verdict"], d["verdict"])] for d in drills]
        parts.append("<h2>Drills</h2>" + _table([("layout", "l"), ("scenario", "l"), ("outcome", "l"), ("time", ""),
                                                 ("verdict", "l")], rows, table_id="drills"))
    if runs:
        rows = [[(str(r["id"]), r["id"]), (r["started_at"], r["started_at"]), (r["zfs_version"] or "", 0),
                 (r["kernel"] or "", 0), (r["cpu"] or "", 0), (f"{(r['ram_bytes'] or 0) / 2**30:.0f} GiB", r["ram_bytes"] or 0),
                 (r["disks"], r["disks"]), ("sandbox (files)" if r["sandbox"] else "disks", r["sandbox"])] for r in runs]
        parts.append("<h2>Runs</h2>" + _table([("run", ""), ("started", "l"), ("ZFS", "l"), ("kernel", "l"), ("CPU", "l"),
                                               ("RAM", ""), ("disks", "l"), ("vdevs", "l")], rows, table_id="runs"))
    parts.append('<script type="application/json" id="data">' + dumps(plan_rows).replace("</", "<\\/") + "</script>")
    parts.append(f"<script>{SORT_JS}</script></body></html>")
    return "\n".join(parts)
