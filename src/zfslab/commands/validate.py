"""`zfslab validate`: the speed model against a published table of measurements."""

from __future__ import annotations

import argparse
import io
import os

from rich.markup import escape

from zfslab.commands._common import MAX_DATASET_BYTES, add_ashift_option, console, plain
from zfslab.errors import UsageError, shown
from zfslab.report.tables import Column, print_wrapped, render_table, to_json
from zfslab.system.text_files import read_text_file


EXAMPLE = "zfslab validate tests/data/calomel-hdd-24x4tb.csv --ashift 9 --calibration auto"


def add_parser(sub) -> None:
    p = sub.add_parser("validate", epilog=f"example: {EXAMPLE}",
                       description="Fit the speed model on the calibration rows, predict the others with 90 % "
                                   "intervals, and compare with the measured MB/s and with the rule of thumb "
                                   "fitted on the same rows.")
    p.add_argument("dataset", help="a CSV with the columns disks, kind, vdevs, width, then write_MBps, rewrite_MBps, read_MBps "
                                   "(any of them) and calibration (optional)")
    add_ashift_option(p, "ashift of the measured pools (default 12)")
    p.add_argument("--calibration", choices=("csv", "auto"), default="csv",
                   help="csv: fit on the rows marked calibration=1 (default); auto: on at most a third of the "
                        "rows, chosen from their layouts by the design rule (docs/speed.md#calibration-design)")
    p.add_argument("--loo", action="store_true",
                   help="also score each row predicted from a fit on all the other rows (leave one out; one "
                        "refit per row: some 4 s of CPU at 1,000 rows, 10 s if every row is another layout)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


METRICS = ("write", "rewrite", "read")


def single_blas_thread() -> None:
    """One BLAS thread for the fits, whose matrices are ten columns wide: OpenBLAS's threads only
    spin on them (a 3,000 x 10 SVD, one per step of a refit, costs 8 ms of CPU threaded against
    0.9 ms on one; benchmarks/validate_loo.py). Read when numpy loads, so called before the model
    is imported; a value the user set is kept."""
    for name in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, "1")


def run(args: argparse.Namespace) -> int:
    single_blas_thread()
    from zfslab.model.validation import parse_dataset, validate

    records = _read_csv(args.dataset)
    result = validate(parse_dataset(records, calibration=args.calibration), ashift=args.ashift, loo=args.loo)
    if args.json:
        print(to_json(plain(result)))
        return 0
    out = console()
    _print_table(out, result, args.dataset)
    for line in _summary_lines(result) + _parameter_lines(result):
        print_wrapped(out, line)
    return 0


def _read_csv(path: str) -> list[dict]:
    """The dataset's rows, their column names stripped of spaces."""
    import csv

    text = read_text_file(path, "dataset", max_bytes=MAX_DATASET_BYTES)
    try:
        records = list(csv.DictReader(io.StringIO(text, newline="")))
    except csv.Error as e:  # a field over csv.field_size_limit() (131,072 characters), a stray NUL ...
        raise UsageError(f"dataset {shown(path, 200)}: not a readable CSV file ({shown(str(e), 80)})") from None
    return [{(k.strip() if isinstance(k, str) else k): v for k, v in r.items()} for r in records]


def _print_table(out, result: dict, dataset: str) -> None:
    def cell(r, m, key):
        v = r[key].get(m) if r[key] else None
        return "-" if v is None else f"{v:,.0f}"

    # two-line headers and no borders: 9 speed columns in 100 terminal columns; narrower, the
    # rule-of-thumb columns go (the summary below still compares with them)
    with_rule = not out.is_terminal or out.width >= 100
    kinds = (("measured", "meas."), ("predicted", "pred.")) + ((("rule_of_thumb", "rule"),) if with_rule else ())
    cols = [Column("#", lambda r: str(r["index"]), no_wrap=True),
            Column("layout", lambda r: r["layout"], "left", no_wrap=True),
            Column("cal", lambda r: "yes" if r["calibration"] else "", no_wrap=True)]
    for m in METRICS:
        cols += [Column(f"{m}\n{head}", lambda r, m=m, key=key: cell(r, m, key), no_wrap=True) for key, head in kinds]
    caption = None if with_rule else "speeds in MB/s; the rule-of-thumb columns need 100 columns (or --json)"
    render_table(result["rows"], cols, console=out, title=f"{escape(dataset)}: fitted on the calibration rows",
                 caption=caption, compact=True)


def _summary_lines(result: dict) -> list[str]:
    """Each metric's errors against the rule of thumb's, and leave one out's when asked."""
    lines = []
    for m in METRICS:
        ours, rule = result["metrics"][m], result["baseline"][m]
        if ours["median_ape_pct"] is not None:
            lines.append(f"{m:8s} median absolute error {ours['median_ape_pct']:5.1f} % over {ours['rows']} "
                         f"predicted rows (rule of thumb {_pct(rule['median_ape_pct'])}); Spearman {_num(ours['spearman'])}; "
                         f"{_coverage(ours, result['interval_level'])}")
    loo = result.get("leave_one_out")
    if loo:
        parts = [f"{m} {_pct(loo[m]['median_ape_pct'])} (Spearman {_num(loo[m]['spearman'])}; "
                 f"{_coverage(loo[m], result['interval_level'])})" for m in METRICS if loo[m]["rows"]]
        lines.append(f"leave one out over every row: {'; '.join(parts)}")
    return lines


def _parameter_lines(result: dict) -> list[str]:
    """The fitted parameters, those the priors kept, and the metrics no fit row measures."""
    from zfslab.model.speed_fit import PARAMETERS

    fitted, intervals = result["fitted_metrics"], result["parameter_intervals"]

    def shown_param(name):
        p = intervals[name]
        return f"{name} {_num(p['value'])} ({_num(p['low'])}-{_num(p['high'])})"
    mine = [p.name for p in PARAMETERS if p.metric in fitted]
    data = [n for n in mine if intervals[n]["pinned_by"] == "data"]
    prior = [n for n in mine if intervals[n]["pinned_by"] == "prior"]
    lines = []
    if data:
        lines.append("fitted: " + ", ".join(shown_param(n) for n in data))
    if prior:
        lines.append("from the priors (the calibration rows do not pin them): " + ", ".join(shown_param(n) for n in prior))
    if len(fitted) < len(METRICS):
        # only what the calibration rows measured: the rest would be the priors, not a fit
        lines.append(f"not fitted (no calibration row measures it): {', '.join(m for m in METRICS if m not in fitted)}")
    return lines


def _coverage(summary: dict, level: float) -> str:
    """How often the intervals held the rows they did not see, and how wide they were."""
    return (f"{100 * level:.0f} % intervals of median half-width {summary['median_half_width_pct']:.0f} %, "
            f"{summary['inside_interval_pct']:.0f} % of rows inside")


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f} %"


def _num(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.3g}" if abs(value) < 100 else f"{value:,.0f}"
