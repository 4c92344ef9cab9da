"""`zfslab report`: a plan, bench results and drills in one self-contained HTML page."""

from __future__ import annotations

import argparse
import json
import math
import os
import sqlite3
import stat
import statistics

from zfslab.commands._common import (DEFAULT_DISKS, add_goal_options, add_risk_options, goal_from_args, int_arg,
                                     load_disk_model, risk_params)
from zfslab.errors import UsageError, ZfslabError, clip, shown
from zfslab.model.layouts import MAX_POOL_DISKS
from zfslab.model.units import MAX_SIZE


EXAMPLE = "zfslab report --db zfslab-results.sqlite --html report.html"


def add_parser(sub) -> None:
    p = sub.add_parser("report", epilog=f"example: {EXAMPLE}", help="an HTML page with tables and charts: plan, bench results, drills",
                       description="One self-contained HTML file (no network needed to view it): the summary table, "
                                   "speed relative to one disk, space against risk with the short list marked, measured vs "
                                   "predicted, drill verdicts and run metadata; charts also as PNG/SVG.")
    p.add_argument("--db", metavar="FILE", help="bench/drill results (default: none)")
    p.add_argument("--plan", metavar="COUNTxSIZE", help="the disks to plan for (default: those of the latest bench run, else 24x4TB)")
    p.add_argument("--html", metavar="FILE", help="write the page here")
    p.add_argument("--charts", metavar="DIR", help="also write each chart to DIR")
    p.add_argument("--chart-format", choices=("png", "svg"), default="png", help="format of --charts files (default png)")
    p.add_argument("--ashift", type=int_arg("--ashift", 9, 16), default=12)
    p.add_argument("--zfs-version", default="2.1", metavar="V")
    add_risk_options(p)
    add_goal_options(p)
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print the report's data as JSON")
    out.add_argument("--csv", action="store_true", help="print the summary rows as CSV")
    p.set_defaults(func=run)


class DamagedDatabase(ZfslabError):
    """--db {}: {}; the file is damaged or was not written by zfslab"""

    exit_code = 2


# What report reads of each row, and the types a zfslab database holds there (None: NULL allowed)
_RUN_COLUMNS = {"id": (int,), "started_at": (str,), "zfs_version": (str, None), "kernel": (str, None),
                "cpu": (str, None), "ram_bytes": (int, None), "sandbox": (int,)}
_DISK_COLUMNS = {"device": (str,), "size_bytes": (int, None)}
_DRILL_COLUMNS = {"layout": (str,), "scenario": (str,), "outcome": (str,), "verdict": (str,),
                  "seconds": (int, float, None)}
_BENCH_COLUMNS = {"layout": (str,), "test": (str,), "repeats": (int,), "read_mb_s": (int, float, None),
                  "write_mb_s": (int, float, None), "read_iops": (int, float, None),
                  "write_iops": (int, float, None), "cache_suspect": (int, bool)}


def _checked(row: dict, columns: dict, what: str, path: str) -> dict:
    for name, types in columns.items():
        value = row[name]
        ok = (value is None and None in types) or (
            value is not None and isinstance(value, tuple(t for t in types if t is not None))
            and not (isinstance(value, float) and not math.isfinite(value)))
        if not ok:
            raise DamagedDatabase(shown(path, 200), f"{what} has {name} = {clip(value)}, not a zfslab value")
    return row


def _db_rows(path: str | None):
    """Runs, bench summaries, drills and the latest run with disks, read without changing the file."""
    if not path:
        return [], [], [], None
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise UsageError(f"--db {shown(path, 200)}: no such file; `zfslab bench ... --db {shown(path, 200)}` makes one") from None
    except OSError as e:
        raise UsageError(f"--db {shown(path, 200)}: cannot be read ({e.strerror})") from None
    if stat.S_ISDIR(st.st_mode):
        raise UsageError(f"--db {shown(path, 200)}: a directory; give the results file bench or drill wrote")
    if not stat.S_ISREG(st.st_mode):  # a FIFO would block the reader, a device is not ours to read
        raise UsageError(f"--db {shown(path, 200)}: not a regular file; give the results file bench or drill wrote")
    from zfslab.store.schema import has_table, open_readonly
    try:
        conn = open_readonly(path)  # SQLite mode=ro: no tables, no migration, no journal-mode switch
    except UnicodeDecodeError:  # a table name that is not UTF-8: damaged bytes in the schema
        raise DamagedDatabase(shown(path, 200), "its schema holds text that is not UTF-8") from None
    try:
        return _read(conn, path, has_table)
    except sqlite3.DatabaseError as e:  # a page damaged past the header reads as an error only now
        raise DamagedDatabase(shown(path, 200), f"SQLite cannot read it ({shown(str(e), 80)})") from None
    except UnicodeDecodeError:  # sqlite3 decodes TEXT as UTF-8 when it hands a row over
        raise DamagedDatabase(shown(path, 200), "a row holds text that is not UTF-8") from None
    except (KeyError, IndexError) as e:  # a table of ours without the columns we wrote
        raise DamagedDatabase(shown(path, 200), f"a table lacks the column {clip(str(e), 40)}") from None
    finally:
        conn.close()


def _read(conn: sqlite3.Connection, path: str, has_table):
    from zfslab.store.results import Results
    results = Results(conn)
    runs = [_checked(dict(r), _RUN_COLUMNS, f"run {clip(r['id'])}", path)
            for r in conn.execute("SELECT * FROM runs ORDER BY id")] if has_table(conn, "runs") else []
    bench = []
    for r in runs:
        disks = [_checked(dict(d), _DISK_COLUMNS, f"a disk of run {r['id']}", path) for d in conn.execute(
            "SELECT device, size_bytes FROM run_disks WHERE run_id = ? ORDER BY position", (r["id"],))]
        r["disks"] = ", ".join(d["device"] for d in disks)
        r["disk_count"], r["disk_bytes"] = len(disks), (disks[0]["size_bytes"] if disks else None)
        if has_table(conn, "measurements"):
            try:
                summary = results.summary(r["id"])
            except (TypeError, ValueError, statistics.StatisticsError):  # text where numbers belong
                raise DamagedDatabase(shown(path, 200), f"the measurements of run {r['id']} are not numbers") from None
            bench += [_checked(b, _BENCH_COLUMNS, f"a measurement of run {r['id']}", path) | {"run_id": r["id"]}
                      for b in summary]
    drills = [_checked(dict(d), _DRILL_COLUMNS, f"drill {clip(d['id'])}", path)
              for d in conn.execute("SELECT * FROM drills ORDER BY id")] if has_table(conn, "drills") else []
    # the plan's default disks: the latest run whose disks zfslab can plan for
    latest = next((r for r in reversed(runs) if r["disk_bytes"] and 0 < r["disk_bytes"] <= MAX_SIZE
                   and 1 <= r["disk_count"] <= MAX_POOL_DISKS), None)
    return runs, bench, drills, latest


def run(args: argparse.Namespace) -> int:
    from zfslab.model.capacity import rules_for
    from zfslab.model.layouts import parse_layout
    from zfslab.model.performance import predict
    from zfslab.commands._common import parse_disk_set
    from zfslab.model.plan import disk_set, plan
    from zfslab.model.recommend import budget_text, recommend
    from zfslab.report import charts
    from zfslab.report.files import check_output_path, write_atomically
    from zfslab.report.html import render
    from zfslab.report.tables import to_csv, to_json

    if not (args.html or args.charts or args.json or args.csv):  # before the work, not after
        raise UsageError("say where the report goes: --html report.html (or --charts DIR, --json, --csv)")
    if args.html and not (args.json or args.csv):
        check_output_path(args.html)  # before minutes of charts, not after
    if args.charts and not (args.json or args.csv):
        _check_charts_dir(args.charts)
    runs, bench, drills, latest = _db_rows(args.db)
    if args.plan:
        count, size = parse_disk_set(args.plan)
    elif latest:
        count, size = latest["disk_count"], latest["disk_bytes"]
    else:
        count, size = parse_disk_set(DEFAULT_DISKS)
    disks = disk_set(count, size)
    profile = load_disk_model(args.disk_type)
    goal, horizons = goal_from_args(args)
    rows = plan(disks, ashift=args.ashift, rules=rules_for(args.zfs_version), risk=risk_params(args, size, horizons),
                speed=profile)
    rec = recommend(rows, goal)
    records = [r.as_dict() for r in rows]
    pairs = []
    for b in bench:
        metric = {"seqwrite": "write_mb_s", "seqread": "read_mb_s", "rewrite": "rewrite_mb_s", "bonnie-write": "write_mb_s",
                  "bonnie-rewrite": "rewrite_mb_s", "bonnie-read": "read_mb_s"}.get(b["test"])
        if metric:
            try:
                layout = parse_layout(b["layout"])
            except ZfslabError as e:
                raise DamagedDatabase(shown(args.db, 200), f"run {b['run_id']} measured a layout zfslab cannot read ({e})") from None
            p = predict(layout, profile, ashift=args.ashift)
            value = b["write_mb_s"] if "write" in metric else b["read_mb_s"]
            if value and value > 0:
                pairs.append((b["layout"], b["test"], getattr(p, metric), value))
    # "frontier": the short list's name before issue 16, kept for scripts that read it
    recommendation = rec.as_dict() | {"budget": budget_text(goal), "frontier": list(rec.shortlist)}
    data = {"disks": disks.label, "disk_model": profile.name, "recommendation": recommendation,
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
    shortlist = set(rec.shortlist)
    horizon = next(k for k in records[0]["p_loss"] if math.isclose(float(k), goal.horizon_years, rel_tol=1e-9))
    exporters = {"relative": lambda f: charts.relative_bars(records, f, shortlist=shortlist, recommended=rec.layout),
                 "corners": lambda f: charts.corners(records, shortlist, f, recommended=rec.layout, horizon=horizon,
                                                     loss_budget=goal.loss_budget, budget_label=f"{goal.data} data",
                                                     metrics=goal.metrics)}
    if pairs:
        exporters["measured"] = lambda f: charts.measured_vs_predicted(pairs, f)
    # the page inlines SVGs; --charts alone needs none of them (each chart takes a second or two)
    made = {name: make("svg") for name, make in exporters.items()} if args.html else {}
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
        if not os.path.isdir(args.charts):
            try:
                os.mkdir(args.charts)
            except OSError as e:
                raise UsageError(f"--charts {shown(args.charts, 200)}: cannot make the folder ({e.strerror})") from None
        for name, make in exporters.items():
            image = made[name] if args.chart_format == "svg" and name in made else make(args.chart_format)
            write_atomically(os.path.join(args.charts, f"{name}.{args.chart_format}"), image)
    print(f"report written: {args.html or args.charts}")
    return 0


def _check_charts_dir(path: str) -> None:
    """--charts DIR: an existing folder, or a new one in an existing folder (never its parents)."""
    if os.path.isdir(path):
        return
    if len(os.fsencode(os.path.basename(os.path.normpath(path)))) > 255:
        raise UsageError(f"--charts {shown(path, 200)}: the name is too long (255 bytes a name)")
    if os.path.exists(path):
        raise UsageError(f"--charts {shown(path, 200)}: exists and is not a folder")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise UsageError(f"--charts {shown(path, 200)}: the folder {shown(parent, 200)} does not exist")
