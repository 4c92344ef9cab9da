"""`zfslab report`: a plan, bench results and drills in one self-contained HTML page."""

from __future__ import annotations

import argparse
import json
import os
import sqlite3

from zfslab.errors import UsageError


def add_parser(sub, add_risk_options, size_arg, int_arg) -> None:
    p = sub.add_parser("report", help="an HTML page with tables and charts: plan, bench results, drills",
                       description="One self-contained HTML file (no network needed to view it): the summary table, "
                                   "speed relative to one disk, the three corners with the Pareto frontier, measured vs "
                                   "predicted, drill verdicts and run metadata; charts also as PNG/SVG.")
    p.add_argument("--db", metavar="FILE", help="bench/drill results (default: none)")
    p.add_argument("--plan", metavar="COUNTxSIZE", help="the disks to plan for (default: those of the latest bench run, else 24x4TB)")
    p.add_argument("--html", metavar="FILE", help="write the page here")
    p.add_argument("--charts", metavar="DIR", help="also write each chart to DIR")
    p.add_argument("--chart-format", choices=("png", "svg"), default="png", help="format of --charts files (default png)")
    p.add_argument("--disk-model", default="hdd7200", metavar="MODEL", help="speed profile (see plan --help)")
    p.add_argument("--priority", choices=("speed", "space", "safety", "balanced"), default="balanced")
    p.add_argument("--min-usable", type=size_arg, metavar="SIZE")
    p.add_argument("--min-failures", type=int_arg("--min-failures", 0, 255), default=0, metavar="N")
    p.add_argument("--ashift", type=int_arg("--ashift", 9, 16), default=12)
    p.add_argument("--zfs-version", default="2.1", metavar="V")
    add_risk_options(p)
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print the report's data as JSON")
    out.add_argument("--csv", action="store_true", help="print the summary rows as CSV")


def _db_rows(path: str | None):
    if not path:
        return [], [], [], None
    if not os.path.exists(path):
        raise UsageError(f"--db {path}: no such file; `zfslab bench ... --db {path}` makes one")
    from zfslab.store.results import Results
    from zfslab.store.schema import connect
    conn = connect(path)
    results = Results(conn)
    runs = [dict(r) for r in conn.execute("SELECT * FROM runs ORDER BY id")]
    bench = []
    for r in runs:
        disks = conn.execute("SELECT device, size_bytes FROM run_disks WHERE run_id = ? ORDER BY position", (r["id"],)).fetchall()
        r["disks"] = ", ".join(d[0] for d in disks)
        r["disk_count"], r["disk_bytes"] = len(disks), (disks[0][1] if disks else None)
        bench += [b | {"run_id": r["id"]} for b in results.summary(r["id"])]
    drills = [dict(d) for d in conn.execute("SELECT * FROM drills ORDER BY id")]
    latest = next((r for r in reversed(runs) if r["disk_bytes"]), None)
    return runs, bench, drills, latest


def cmd_report(args: argparse.Namespace) -> int:
    from zfslab.commands import _risk_params, load_disk_model
    from zfslab.model.capacity import rules_for
    from zfslab.model.layouts import parse_layout
    from zfslab.model.performance import predict
    from zfslab.model.plan import disk_set, parse_disk_set, plan
    from zfslab.model.recommend import recommend
    from zfslab.report import charts
    from zfslab.report.files import write_atomically
    from zfslab.report.html import render
    from zfslab.report.tables import to_csv, to_json

    runs, bench, drills, latest = _db_rows(args.db)
    if args.plan:
        count, size = parse_disk_set(args.plan)
    elif latest:
        count, size = latest["disk_count"], latest["disk_bytes"]
    else:
        count, size = parse_disk_set("24x4TB")
    disks = disk_set(count, size)
    profile = load_disk_model(args.disk_model)
    rows = plan(disks, ashift=args.ashift, rules=rules_for(args.zfs_version), risk=_risk_params(args, size), speed=profile)
    rec = recommend(rows, args.priority, min_usable_bytes=args.min_usable or 0, min_failures=args.min_failures)
    records = [r.as_dict() for r in rows]
    pairs = []
    for b in bench:
        metric = {"seqwrite": "write_mb_s", "seqread": "read_mb_s", "rewrite": "rewrite_mb_s", "bonnie-write": "write_mb_s",
                  "bonnie-rewrite": "rewrite_mb_s", "bonnie-read": "read_mb_s"}.get(b["test"])
        if metric:
            p = predict(parse_layout(b["layout"]), profile, ashift=args.ashift)
            value = b["write_mb_s"] if "write" in metric else b["read_mb_s"]
            if value:
                pairs.append((b["layout"], b["test"], getattr(p, metric), value))
    data = {"disks": disks.label, "disk_model": profile.name, "recommendation": rec.__dict__ | {"frontier": list(rec.frontier)},
            "layouts": records, "bench": bench, "drills": drills, "runs": runs,
            "measured_vs_predicted": [{"layout": a, "test": b, "predicted_mb_s": c, "measured_mb_s": d} for a, b, c, d in pairs]}
    if args.json:
        print(to_json(json.loads(json.dumps(data, default=str))))
        return 0
    if args.csv:
        print(to_csv(records), end="")
        return 0
    if not args.html and not args.charts:
        raise UsageError("say where the report goes: --html report.html (or --charts DIR, --json, --csv)")
    made = {"relative": charts.relative_bars(records), "corners": charts.corners(records, set(rec.frontier))}
    if pairs:
        made["measured"] = charts.measured_vs_predicted(pairs)
    notes = [f"{disks.label} disks, {profile.name} speed profile ({profile.source}); risk: exact Markov chain, "
             f"ZFS semantics; capacity: OpenZFS {args.zfs_version} accounting, ashift {args.ashift}."]
    if any(r["sandbox"] for r in runs):
        notes.append("Some bench results were measured on sandbox file vdevs: functional only, not a benchmark of disks.")
    if args.html:
        page = render(title=f"zfslab report: {disks.label} disks", plan_rows=records,
                      recommendation=data["recommendation"], charts=made, bench=bench, drills=drills, runs=runs,
                      notes=notes)
        write_atomically(args.html, page)
    if args.charts:
        os.makedirs(args.charts, exist_ok=True)
        exporters = {"relative": lambda f: charts.relative_bars(records, f),
                     "corners": lambda f: charts.corners(records, set(rec.frontier), f)}
        if pairs:
            exporters["measured"] = lambda f: charts.measured_vs_predicted(pairs, f)
        for name, make in exporters.items():
            write_atomically(os.path.join(args.charts, f"{name}.{args.chart_format}"), make(args.chart_format))
    print(f"report written: {args.html or args.charts}")
    return 0
