"""`zfslab merge`: results databases from several hosts (or copied by hand) into one."""

from __future__ import annotations

import argparse

from zfslab.commands._common import console
from zfslab.report.tables import print_wrapped, to_json

EXAMPLE = "zfslab merge st01.sqlite st02.sqlite -o all.sqlite"


def add_parser(sub) -> None:
    p = sub.add_parser("merge", epilog=f"example: {EXAMPLE}\nthen: zfslab plan --db all.sqlite\n"
                                       "or: zfslab report --db all.sqlite --html report.html",
                       description="Merge zfslab results databases (one per host, or copies) into one, each run "
                                   "and drill once, with the host it came from. The inputs are read only and never "
                                   "changed; files of another program or a newer zfslab are refused. An existing "
                                   "OUTPUT is kept and added to, so merging again changes nothing.")
    p.add_argument("inputs", nargs="+", metavar="DB", help="results files bench, drill or merge wrote")
    p.add_argument("-o", "--output", required=True, metavar="OUTPUT",
                   help="the merged results file: a new file, or one merge wrote before (added to)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from zfslab.store.merge import merge

    summary = merge(args.inputs, args.output)
    record = {"output": args.output, "inputs": summary.inputs, "runs": summary.runs, "runs_added": summary.runs_added,
              "measurements": summary.measurements, "drills": summary.drills, "drills_added": summary.drills_added,
              "hosts": list(summary.origins)}
    if args.json:
        print(to_json(record))
        return 0
    hosts = ", ".join(summary.origins) if summary.origins else "none recorded"
    print_wrapped(console(), f"{args.output}: {summary.runs} runs ({summary.runs_added} new), "
                             f"{summary.measurements} measurements, {summary.drills} drill results "
                             f"({summary.drills_added} new) from {summary.inputs} files; hosts: {hosts}")
    return 0
