"""`zfslab report`: a plan, bench results and drills in one self-contained HTML page."""

from __future__ import annotations

import argparse
import json
import math
import os
from typing import TYPE_CHECKING

from zfslab.commands._common import (DEFAULT_DISKS, add_ashift_option, add_goal_options, add_risk_options,
                                     goal_from_args, load_disk_model, risk_params)
from zfslab.errors import UsageError, shown
from zfslab.store.readback import read_results

if TYPE_CHECKING:
    from zfslab.store.readback import RunRecord, StoredResults

EXAMPLE = "zfslab report --db zfslab-results.sqlite --html report.html"


def add_parser(sub) -> None:
    p = sub.add_parser("report", epilog=f"example: {EXAMPLE}",
                       description="One self-contained HTML file (no network needed to view it): the summary table, "
                                   "speed relative to one disk, space against risk with the short list marked, measured vs "
                                   "predicted, drill verdicts and run metadata; charts also as PNG/SVG.")
    p.add_argument("--db", metavar="FILE", help="bench/drill results (default: none)")
    p.add_argument("--plan", metavar="COUNTxSIZE", help="the disks to plan for, as plan takes them: 24x4TB, or several "
                                                          "sizes: 8x12TB,4x8TB (default: those of the latest bench run, else 24x4TB)")
    p.add_argument("--html", metavar="FILE", help="write the page here")
    p.add_argument("--charts", metavar="DIR", help="also write each chart to DIR")
    p.add_argument("--chart-format", choices=("png", "svg"), default="png", help="format of --charts files (default png)")
    add_ashift_option(p)
    p.add_argument("--zfs-version", default="2.1", metavar="V")
    add_risk_options(p)
    add_goal_options(p)
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true",
                     help="print one JSON object: disks, disk_model, recommendation (with its shortlist and why each "
                          "layout was left out), layouts (plan --json's rows), bench, drills, runs and "
                          "measured_vs_predicted")
    out.add_argument("--csv", action="store_true",
                     help="print plan --csv's flat rows: one line per layout, with recommended, shortlisted and "
                          "left_out_because")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from zfslab.model.bench_fit import measured_vs_predicted
    from zfslab.model.capacity import rules_for
    from zfslab.model.outliers import DEFAULT_THRESHOLD
    from zfslab.model.per_host import per_host, per_host_dict
    from zfslab.commands._common import prices_from_args
    from zfslab.model.plan import plan
    from zfslab.model.recommend import budget_text, recommend
    from zfslab.report.plan_csv import plan_csv
    from zfslab.report.tables import to_json
    from zfslab.store.bench_fit import measured_rates
    from zfslab.store.rates import streaming_rate

    _check_outputs(args)
    stored = read_results(args.db)
    disks = _disks(args, stored.latest)
    profile = load_disk_model(args.disk_type)
    goal, horizons = goal_from_args(args)
    rows = plan(disks, ashift=args.ashift, rules=rules_for(args.zfs_version),
                risk=risk_params(args, None, horizons), speed=profile,
                prices=prices_from_args(args, disks.sizes),  # plan() sizes the risk from `disks`
                space_block=goal.work.space_block_bytes)  # vm, database: as plan weighs their space
    rec = recommend(rows, goal)
    rates = measured_rates(stored.bench, streaming_rate, args.db or "")
    pairs = measured_vs_predicted(rates, profile, ashift=args.ashift)
    # runs merged from several hosts: each host beside the merged figure
    hosts = per_host([r.origin for r in stored.bench.runs], stored.bench.host_measurements())
    # "frontier": the short list's name before issue 16, kept for scripts that read it
    recommendation = rec.as_dict() | {"budget": budget_text(goal), "frontier": list(rec.shortlist)}
    if args.json:
        data = {"disks": disks.label, "disk_model": profile.name, "recommendation": recommendation,
                "layouts": [r.as_dict() for r in rows], **_stored_json(stored),
                "measured_vs_predicted": [asdict(p) for p in pairs], "per_host": per_host_dict(*hosts, DEFAULT_THRESHOLD)}
        print(to_json(json.loads(json.dumps(data, default=str))))
    elif args.csv:  # the same flat rows as plan --csv
        print(plan_csv(rows, rec, {v.layout: v.why_out or v.advice for v in rec.over_budget}), end="")
    else:
        _write_page(args, disks, profile, rows, rec, goal, recommendation, pairs, stored, hosts)
        print(f"report written: {args.html or args.charts}")
    return 0


def _stored_json(stored: StoredResults) -> dict:
    """report --json's bench, drills and runs: each record's own JSON; a measurement names its run
    here (bench --json prints its one run above the results)."""
    return {"bench": [m.as_json() | {"run_id": m.run_id} for m in stored.bench.measurements],
            "drills": [d.as_json() for d in stored.drills], "runs": [r.as_json() for r in stored.bench.runs]}


def _check_outputs(args: argparse.Namespace) -> None:
    """Where the report goes, checked before the work, not after minutes of charts."""
    from zfslab.report.files import check_output_path

    if not (args.html or args.charts or args.json or args.csv):
        raise UsageError("say where the report goes: --html report.html (or --charts DIR, --json, --csv)")
    if args.html and not (args.json or args.csv):
        check_output_path(args.html)
    if args.charts and not (args.json or args.csv):
        _check_charts_dir(args.charts)


def _disks(args: argparse.Namespace, latest: RunRecord | None):
    """--plan's disks; else the latest bench run's; else the default."""
    from zfslab.commands._common import read_disks
    from zfslab.model.plan import mixed_disk_set

    if args.plan:
        return read_disks(args.plan)
    if latest:
        return mixed_disk_set([(latest.disk_count, latest.disk_bytes)])
    return read_disks(DEFAULT_DISKS)


def _write_page(args, disks, profile, rows, rec, goal, recommendation, pairs, stored, hosts) -> None:
    """The HTML page (--html) and the chart files (--charts)."""
    from zfslab.report import charts
    from zfslab.report.files import write_atomically
    from zfslab.report.html import render

    records = [r.as_dict() for r in rows]
    shortlist = set(rec.shortlist)
    horizon = next(k for k in records[0]["p_loss"] if math.isclose(float(k), goal.horizon_years, rel_tol=1e-9))
    exporters = {"relative": lambda f: charts.relative_bars(records, f, shortlist=shortlist, recommended=rec.layout),
                 "corners": lambda f: charts.corners(records, shortlist, f, recommended=rec.layout, horizon=horizon,
                                                     loss_budget=goal.loss_budget, budget_label=f"{goal.data} data",
                                                     metrics=goal.metrics)}
    if pairs:
        points = [(p.layout, p.test, p.predicted_mb_s, p.measured_mb_s) for p in pairs]
        exporters["measured"] = lambda f: charts.measured_vs_predicted(points, f)
    # the page inlines SVGs; --charts alone needs none of them (each chart takes a second or two)
    made = {name: make("svg") for name, make in exporters.items()} if args.html else {}
    notes = [f"{disks.label} disks, {profile.name} speed profile ({profile.source}); risk: exact Markov chain, "
             f"ZFS semantics; capacity: OpenZFS {args.zfs_version} accounting, ashift {args.ashift}."]
    if any(r.sandbox for r in stored.bench.runs):
        notes.append("Some bench results were measured on sandbox file vdevs: functional only, not a benchmark of disks.")
    if args.html:
        page = render(title=f"zfslab report: {disks.label} disks", plan_rows=rows, recommendation=recommendation,
                      charts=made, bench=stored.bench.measurements, drills=stored.drills, runs=stored.bench.runs,
                      notes=notes, per_host=hosts)
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
