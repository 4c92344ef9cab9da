"""`zfslab validate`: the speed model against a published table of measurements."""

from __future__ import annotations

import argparse
import io

from rich.markup import escape

from zfslab.commands._common import MAX_DATASET_BYTES, int_arg, console, plain, read_text_file
from zfslab.errors import UsageError, shown
from zfslab.report.tables import Column, render_table, to_json


EXAMPLE = "zfslab validate tests/data/calomel-calibrated.csv --ashift 9"


def add_parser(sub) -> None:
    p = sub.add_parser("validate", epilog=f"example: {EXAMPLE}", help="check the speed model on a published table of measurements",
                       description="Fit the speed model on the rows marked calibration=1, predict the others, and "
                                   "compare with the measured MB/s and with the rule of thumb.")
    p.add_argument("dataset", help="CSV: disks,kind,vdevs,width,[write_MBps,rewrite_MBps,read_MBps],calibration")
    p.add_argument("--ashift", type=int_arg("--ashift", 9, 16), default=12, help="ashift of the measured pools (default 12)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import csv

    from zfslab.model.validation import parse_dataset, validate

    text = read_text_file(args.dataset, "dataset", max_bytes=MAX_DATASET_BYTES)
    try:
        records = list(csv.DictReader(io.StringIO(text, newline="")))
    except csv.Error as e:  # a field over csv.field_size_limit() (131,072 characters), a stray NUL ...
        raise UsageError(f"dataset {shown(args.dataset, 200)}: not a readable CSV file ({shown(str(e), 80)})") from None
    if records:
        records = [{(k.strip() if isinstance(k, str) else k): v for k, v in r.items()} for r in records]
    result = validate(parse_dataset(records), ashift=args.ashift)
    if args.json:
        print(to_json(plain(result)))
        return 0
    out = console()
    metrics = ("write", "rewrite", "read")

    def cell(r, m, key):
        v = r[key].get(m) if r[key] else None
        return "-" if v is None else f"{v:,.0f}"

    cols = [Column("#", lambda r: str(r["index"])), Column("layout", lambda r: r["layout"], "left", no_wrap=True),
            Column("cal", lambda r: "yes" if r["calibration"] else "")]
    for m in metrics:
        cols += [Column(f"{m} measured", lambda r, m=m: cell(r, m, "measured")),
                 Column(f"{m} predicted", lambda r, m=m: cell(r, m, "predicted")),
                 Column(f"{m} rule", lambda r, m=m: cell(r, m, "rule_of_thumb"))]
    render_table(result["rows"], cols, console=out, title=f"{escape(args.dataset)}: fitted on the calibration rows")
    for m in metrics:
        ours, rule = result["metrics"][m]["median_ape_pct"], result["baseline"][m]["median_ape_pct"]
        if ours is not None:
            out.print(f"{m:8s} median absolute error {ours:5.1f} % over {result['metrics'][m]['rows']} predicted rows "
                      f"(rule of thumb {rule:5.1f} %)")
    p, fitted = result["parameters"], result["fitted_metrics"]
    if len(fitted) == len(metrics):
        out.print(f"fitted: disk {p['disk_seq_write_mb_s']:.0f} MB/s write, {p['disk_seq_read_mb_s']:.0f} MB/s read, "
                  f"{p['disk_rewrite_mb_s']:.0f} MB/s rewrite; host ceilings {p['host_write_mb_s']:.0f} MB/s write, "
                  f"{p['host_read_mb_s']:.0f} MB/s read; rewrite parallel share {p['rewrite_parallel']:.2f}")
        return 0
    # only what the calibration rows measured: the rest would be the starting guesses, not a fit
    parts = {"write": f"disk {p['disk_seq_write_mb_s']:.0f} MB/s write, host ceiling {p['host_write_mb_s']:.0f} MB/s",
             "read": f"disk {p['disk_seq_read_mb_s']:.0f} MB/s read, host ceiling {p['host_read_mb_s']:.0f} MB/s",
             "rewrite": f"disk {p['disk_rewrite_mb_s']:.0f} MB/s rewrite, parallel share {p['rewrite_parallel']:.2f}"}
    out.print("fitted: " + "; ".join(parts[m] for m in ("write", "read", "rewrite") if m in fitted))
    out.print(f"not fitted (no calibration row measures it): {', '.join(m for m in metrics if m not in fitted)}")
    return 0
