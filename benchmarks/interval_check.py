"""How often the speed model's 90 % intervals hold on rows the fit did not see, and how wide they are
(issue 35; docs/speed.md#intervals-how-often-they-hold-and-how-wide-they-are).

Tables, each row predicted by a fit that did not see it:
  design  calomel's HDD table at ashift 9, fitted on the 9 rows the design rule picks (validate --calibration auto)
  loo     the same table, each row from the fit on the 25 others (validate --loo)
  csv2    tests/data/calomel-calibrated.csv: the file's own two calibration rows
  syn3    tables the model makes itself on calomel's layouts (two hosts, SEEDS tables each), design rows fitted,
          log-normal noise of 3 %
  syn8    the same at 8 %
  synX    8 %, and 15 % of the figures off by 25-70 % either way (a table with a few odd rows)
For each metric: the share of rows inside their interval and the median half-width. Then, for calomel,
whether the intervals' width per row (which grows with the parameters' uncertainty carried to the row)
tells the rows it misses: Spearman's rank correlation of half-width and |error|, and the median
half-width that intervals proportional to these would need to hold 85 % of the rows, the scale set with
hindsight (so a bound, not a method).

Run: PYTHONPATH=src python3 benchmarks/interval_check.py [SEEDS]   (default 40; about 20 s)
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np
from scipy.stats import spearmanr

from zfslab.model.calibration import calibration_design
from zfslab.model.speed_fit import METRICS, Measurement, fit_speed, fits_leaving_out, predict_intervals
from zfslab.model.validation import measurements, parse_dataset

from speed_model_check import model_made_tables  # noqa: E402 - the benchmark's own folder is on sys.path: run as a script

ROOT = Path(__file__).resolve().parent.parent


def scored(interval, y: float) -> tuple[bool, float, float]:
    """(inside, half-width in % of the prediction, |error| in % of the prediction)."""
    return (interval.low_mb_s <= y <= interval.high_mb_s, 50 * (interval.high_mb_s - interval.low_mb_s) / interval.mb_s,
            100 * abs(y - interval.mb_s) / interval.mb_s)


def show(name: str, rows: dict[str, list[tuple[bool, float, float]]], driver: bool = False) -> None:
    print(f"  {name:7s}" + "  ".join(f"{m:7s} {100 * np.mean([r[0] for r in rows[m]]):3.0f} % "
                                     f"±{np.median([r[1] for r in rows[m]]):4.1f} %" for m in METRICS))
    if driver:
        parts = []
        for m in METRICS:
            half, err = np.array([r[1] for r in rows[m]]), np.array([r[2] for r in rows[m]])
            k = np.quantile(err / half, 0.85, method="inverted_cdf")
            parts.append(f"{m} Spearman {spearmanr(half, err).statistic:+.2f}, at 85 % ±{np.median(k * half):4.1f} %")
        print(f"  {'':7s}width as a driver: " + "; ".join(parts))


def held_out(rows) -> dict[str, list[tuple[bool, float, float]]]:
    """Each row the table does not mark for the fit, scored against the fit on the rows it marks."""
    fit = fit_speed(measurements([r for r in rows if r.fit_row]), ashift=9)
    scores = {m: [] for m in METRICS}
    for r in rows:
        if not r.fit_row:
            p = predict_intervals(fit, r.layout)
            for m, y in r.measured.items():
                scores[m].append(scored(p[m], y))
    return scores


def calomel() -> None:
    with open(ROOT / "tests/data/calomel-hdd-24x4tb.csv", newline="") as f:
        rows = parse_dataset(list(csv.DictReader(f)), calibration="auto")
    show("design", held_out(rows), driver=True)
    table = measurements(rows)
    everything = fit_speed(table, ashift=9)
    left_out, first = [], 0
    for r in rows:
        left_out.append(range(first, first + len(r.measured)))
        first += len(r.measured)
    loo = {m: [] for m in METRICS}
    for r, refit in zip(rows, fits_leaving_out(table, left_out, start=everything, ashift=9)):
        p = predict_intervals(refit, r.layout)
        for m, y in r.measured.items():
            loo[m].append(scored(p[m], y))
    show("loo", loo, driver=True)
    with open(ROOT / "tests/data/calomel-calibrated.csv", newline="") as f:
        rows2 = parse_dataset(list(csv.DictReader(f)))
    show("csv2", held_out(rows2))


def synthetic(seeds: int) -> None:
    with open(ROOT / "tests/data/calomel-hdd-24x4tb.csv", newline="") as f:
        layouts = [r.layout for r in parse_dataset(list(csv.DictReader(f)), calibration="auto")]
    picks = {p.index for p in calibration_design(layouts)}
    for name, sigma, odd in (("syn3", 0.03, 0.0), ("syn8", 0.08, 0.0), ("synX", 0.08, 0.15)):
        out = {m: [] for m in METRICS}
        for noisy in model_made_tables(layouts, sigma, odd, seeds):
            fit = fit_speed([Measurement(layouts[i], m, noisy[i][m]) for i in sorted(picks) for m in METRICS],
                            ashift=9)
            for i, layout in enumerate(layouts):
                if i not in picks:
                    for m, p in predict_intervals(fit, layout).items():
                        out[m].append(scored(p, noisy[i][m]))
        show(name, out)


def main() -> None:
    seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    print("90 % intervals: share of unseen rows inside, median half-width")
    calomel()
    synthetic(seeds)


if __name__ == "__main__":
    main()
