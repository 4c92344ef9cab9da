"""How the speed model and its calibration design do on published tables, and what each term buys.

For each table (default: calomel's 24-disk HDD table at ashift 9): the rows the design rule
picks, the median absolute error over the other rows for the adopted model and for variants
that hold one part of the physics fixed (docs/speed.md#tried-and-not-adopted), the rule of
thumb on the same rows, and the leave-one-out error over every row. Then the coverage of the
90 % intervals on tables the model itself made, with log-normal noise.

Run: python3 benchmarks/speed_model_check.py [TABLE.csv ASHIFT ...]   (a minute; no root)
"""

from __future__ import annotations

import csv
import math
import statistics
import sys
from pathlib import Path

import numpy as np

from zfslab.model.calibration import calibration_design
from zfslab.model.performance import layout_shape, streaming_mb_s
from zfslab.model.speed_fit import METRICS, Measurement, fit_speed, predict_intervals
from zfslab.model.validation import leave_one_out, measurements, parse_dataset, validate

ROOT = Path(__file__).resolve().parent.parent
# the two hosts the model-made tables are drawn from (benchmarks/interval_check.py uses them too)
HOSTS = {
    "hdd": dict(disk_write_mb_s=150, disk_read_mb_s=180, disk_rewrite_mb_s=60, host_write_mb_s=900,
                host_read_mb_s=1500, reads_in_flight=3, rewrite_parallel=0.25, vdev_pipeline_mb_s=800,
                child_io_us=4, parity_us_per_mb=200),
    "ssd": dict(disk_write_mb_s=450, disk_read_mb_s=520, disk_rewrite_mb_s=230, host_write_mb_s=1700,
                host_read_mb_s=2100, reads_in_flight=6, rewrite_parallel=0.3, vdev_pipeline_mb_s=1200,
                child_io_us=2, parity_us_per_mb=250),
}
VARIANTS = {
    "adopted": {},
    "reads in series (Q = 1, the old model)": {"reads_in_flight": 1.0},
    "reads fully pipelined (Q = 1024)": {"reads_in_flight": 1024.0},
    "no vdev pipeline or child I/O cost": {"vdev_pipeline_mb_s": 1e6, "child_io_us": 1e-3},
    "no parity cost": {"parity_us_per_mb": 1e-2},
}


def table(path: Path, ashift: int) -> None:
    with open(path, newline="") as f:
        records = list(csv.DictReader(f))
    rows = parse_dataset(records, calibration="auto")
    cal = [r for r in rows if r.fit_row]
    print(f"{path.name} at ashift {ashift}: {len(rows)} rows, calibrated on {', '.join(str(r.layout) for r in cal)}")
    for name, fixed in VARIANTS.items():
        fit = fit_speed(measurements(cal), ashift=ashift, fixed=fixed)
        errors = {m: [] for m in METRICS}
        for r in rows:
            if r.fit_row:
                continue
            predicted = predict_intervals(fit, r.layout)
            for m, y in r.measured.items():
                errors[m].append(abs(predicted[m].mb_s - y) / y * 100)
        shown = ", ".join(f"{m} {statistics.median(e):5.1f} %" for m, e in errors.items() if e)
        print(f"  {name:40s} {shown}")
    out = validate(rows, ashift=ashift)
    print(f"  {'rule of thumb on the same rows':40s} " + ", ".join(
        f"{m} {out['baseline'][m]['median_ape_pct']:5.1f} %" for m in METRICS if out["baseline"][m]["rows"]))
    loo = leave_one_out(rows, ashift=ashift)
    print(f"  {'leave one out over every row':40s} " + ", ".join(
        f"{m} {loo[m]['median_ape_pct']:5.1f} %" for m in METRICS if loo[m]["rows"]))
    if any(r.get("calibration", "").strip() == "1" for r in records):
        csv_out = validate(parse_dataset(records), ashift=ashift)
        print(f"  {'the CSV own calibration rows':40s} " + ", ".join(
            f"{m} {csv_out['metrics'][m]['median_ape_pct']:5.1f} %" for m in METRICS if csv_out["metrics"][m]["rows"]))


def model_made_tables(layouts, sigma: float, odd: float, seeds: int):
    """The tables the model makes itself, as interval_check.py and interval_jackknife.py score
    them: for each host of HOSTS and each seed, every layout's three figures with log-normal noise
    `sigma`, and a share `odd` of them 25-70 % off either way (the far misses a published table
    shows). Yields one table (a row of figures per layout) at a time."""
    for truth in HOSTS.values():
        clean = [streaming_mb_s(layout_shape(layout, 128 * 1024, 9), **truth) for layout in layouts]
        for seed in range(seeds):
            rng = np.random.default_rng(seed)
            noisy = [{m: getattr(c, f"{m}_mb_s") * math.exp(rng.normal(0, sigma)) for m in METRICS} for c in clean]
            if odd:
                noisy = [{m: v * (math.exp(rng.choice([-1, 1]) * rng.uniform(0.25, 0.7)) if rng.random() < odd else 1.0)
                          for m, v in row.items()} for row in noisy]
            yield noisy


def coverage(seeds: int = 40, sigma: float = 0.08) -> None:
    """Tables the model makes itself (calomel's layouts, two hosts), noise sigma in log units."""
    with open(ROOT / "tests/data/calomel-hdd-24x4tb.csv", newline="") as f:
        layouts = [r.layout for r in parse_dataset(list(csv.DictReader(f)), calibration="auto")]
    picks = {p.index for p in calibration_design(layouts)}
    for name, truth in HOSTS.items():
        clean = [streaming_mb_s(layout_shape(layout, 128 * 1024, 9), **truth) for layout in layouts]
        inside = {m: [] for m in METRICS}
        widths = {m: [] for m in METRICS}
        for seed in range(seeds):
            rng = np.random.default_rng(seed)
            noisy = [{m: getattr(c, f"{m}_mb_s") * float(np.exp(rng.normal(0, sigma))) for m in METRICS} for c in clean]
            fit = fit_speed([Measurement(layouts[i], m, noisy[i][m]) for i in sorted(picks) for m in METRICS], ashift=9)
            for i, layout in enumerate(layouts):
                if i not in picks:
                    for m, iv in predict_intervals(fit, layout, level=0.9).items():
                        inside[m].append(iv.low_mb_s <= noisy[i][m] <= iv.high_mb_s)
                        widths[m].append(50 * (iv.high_mb_s - iv.low_mb_s) / iv.mb_s)
        print(f"90 % intervals, {name}-like host, noise {sigma:.0%}, {seeds} tables: " + ", ".join(
            f"{m} {100 * np.mean(v):.0f} % inside, median half-width {np.median(widths[m]):.0f} %"
            for m, v in inside.items()))


def main() -> None:
    args = sys.argv[1:] or [str(ROOT / "tests/data/calomel-hdd-24x4tb.csv"), "9"]
    for path, ashift in zip(args[::2], args[1::2]):
        table(Path(path), int(ashift))
    for sigma in (0.03, 0.08):  # calomel prints the median of 3 runs; bench's repeats scatter by a few %
        coverage(sigma=sigma)


if __name__ == "__main__":
    main()
