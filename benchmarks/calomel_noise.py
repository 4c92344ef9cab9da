"""How much of the speed model's misses on calomel's HDD table is the source's own noise, and how
much the model's structure (issue 35 item 3; docs/speed.md#calomels-misses-noise-or-structure).

calomel prints the median of three bonnie++ runs and not their spread. The table itself still
holds repeats of a kind: layouts that physics says must measure alike. Two plain-data layouts (a
stripe or mirrors, no parity) with as many top-level vdevs write and rewrite the same bytes per
disk, and two with as many children read from as many disks; under any rule of the model's kind
they differ by nothing but the run. Their spread (the pooled within-class standard deviation of
ln MB/s, each class's mean taken out) bounds the source's noise from above: a structure that
separates mirrors from stripes would show in it too. A looser class adds the raidz layouts of the
same data disks (write, rewrite) or children (read), whose parity and padding a model must price.

Within those classes, the gap between the mirrored and the striped members: a gap of one sign
and size in every class is structure, not noise. Then the model's log residuals on the rows its
fit did not see (the design's 17, and leave one out over all 26), their robust scale (1.4826 x
MAD) and root mean square. Then the stripes' and mirrors' write per child by top-level vdevs,
against one disk, in units of the noise. Last: how many rows each metric misses by more than
12 % (intervals of +-12 % holding for 85 % of the rows leave room for 2 of 17 and 3 of 26), and
which of them the source itself calls odd.

A 90 % interval of +-12 % holds 90 % of normal scatter of sd 12 / 1.645 = 7.3 % at most: noise
and model error together. The chi-square range of each noise sd is given (few degrees of freedom).

Run: PYTHONPATH=src python3 benchmarks/calomel_noise.py   (about 2 s)
"""

from __future__ import annotations

import csv
import math
import textwrap
from collections import defaultdict
from pathlib import Path

import numpy as np
from scipy.stats import chi2

from zfslab.model.layouts import VdevKind
from zfslab.model.performance import layout_shape
from zfslab.model.speed_fit import METRICS, fit_speed, fits_leaving_out, predict_intervals
from zfslab.model.validation import measurements, parse_dataset

ROOT = Path(__file__).resolve().parent.parent
ODD = {("raidz2:4", "read"), ("raidz2:12", "write"), ("disk", "read")}  # the source's own (reference README)


def rows():
    with open(ROOT / "tests/data/calomel-hdd-24x4tb.csv", newline="") as f:
        return parse_dataset(list(csv.DictReader(f)), calibration="auto")


def key(r, metric: str) -> float:
    """What the model's disk-bound rule scales with: data disks (write, rewrite), children (read)."""
    shape = layout_shape(r.layout, 128 * 1024, 9)
    return round(shape.read_children if metric == "read" else shape.data_disks, 3)


def plain(r) -> bool:
    return all(g.parity == 0 for g in layout_shape(r.layout, 128 * 1024, 9).groups)


def within_class_sd(table, metric: str, strict: bool) -> tuple[float, int, list[str]]:
    """Pooled sd of ln MB/s about each class's mean, (n - classes) degrees of freedom."""
    classes = defaultdict(list)
    for r in table:
        if not strict or plain(r):
            classes[key(r, metric)].append(r)
    ss, dof, shown = 0.0, 0, []
    for k, members in sorted(classes.items()):
        if len(members) < 2:
            continue
        logs = np.log([r.measured[metric] for r in members])
        ss += float(np.sum((logs - logs.mean()) ** 2))
        dof += len(members) - 1
        shown.append(f"{k:g}: " + " ".join(f"{r.layout} {r.measured[metric]:.0f}" for r in members)
                     + f" (sd {100 * logs.std(ddof=1):.1f} %)")
    return math.sqrt(ss / dof), dof, shown


def gaps(table, metric: str) -> str:
    """ln(mirrors / stripes) in each plain class holding both: a gap of one sign and size in every
    class is structure the classes do not separate; gaps of either sign are noise."""
    classes = defaultdict(lambda: ([], []))
    for r in table:
        if plain(r):
            mirrored = any(g.kind is VdevKind.MIRROR for g in r.layout.groups)
            classes[key(r, metric)][mirrored].append(math.log(r.measured[metric]))
    return ", ".join(f"{k:g}: {pct(np.mean(m) - np.mean(s))} %" for k, (s, m) in sorted(classes.items()) if s and m)


def residuals(table) -> tuple[dict, dict]:
    """ln(measured / predicted): the design's predicted rows, and each row left out."""
    fit = fit_speed(measurements([r for r in table if r.fit_row]), ashift=9)
    design = {m: {str(r.layout): math.log(r.measured[m] / predict_intervals(fit, r.layout)[m].mb_s)
                  for r in table if not r.fit_row} for m in METRICS}
    everything = measurements(table)
    left_out, first = [], 0
    for r in table:
        left_out.append(range(first, first + len(r.measured)))
        first += len(r.measured)
    loo = {m: {} for m in METRICS}
    start = fit_speed(everything, ashift=9)
    for r, refit in zip(table, fits_leaving_out(everything, left_out, start=start, ashift=9)):
        p = predict_intervals(refit, r.layout)
        for m in METRICS:
            loo[m][str(r.layout)] = math.log(r.measured[m] / p[m].mb_s)
    return design, loo


def pct(x: float) -> str:
    return f"{100 * math.expm1(x):+.0f}"


def main() -> None:
    table = rows()
    print("1. The source's noise: rows physics says measure alike (pooled sd of ln MB/s)")
    noise = {}
    for m in METRICS:
        for strict in (True, False):
            sd, dof, shown = within_class_sd(table, m, strict)
            if strict:
                noise[m] = sd
            low, high = (sd * math.sqrt(dof / chi2.ppf(q, dof)) for q in (0.95, 0.05))
            print(f"  {m:7s} {'plain' if strict else 'all':5s} {100 * sd:5.1f} % ({dof} dof; 90 % from "
                  f"{100 * low:4.1f} to {100 * high:4.1f} %)")
            if strict:
                for line in shown:
                    print(f"          {line}")
                print(f"          mirrors against stripes, per class: {gaps(table, m)}")
    design, loo = residuals(table)
    print("2. The model's log residuals on unseen rows: robust sd (1.4826 x MAD) and rms")
    for name, res in (("design", design), ("loo", loo)):
        for m in METRICS:
            r = np.array(list(res[m].values()))
            robust = 1.4826 * float(np.median(np.abs(r - np.median(r))))
            rms = float(np.sqrt(np.mean(r ** 2)))
            print(f"  {name:6s} {m:7s} {len(r):2d} rows: robust {100 * robust:4.1f} %, rms {100 * rms:4.1f} % "
                  f"(the plain classes' spread: {100 * noise[m]:4.1f} %)")
    print("3. Write per child of the plain layouts by top-level vdevs (one disk = 1)")
    base = next(r for r in table if str(r.layout) == "disk").measured["write"]
    for r in table:
        if plain(r) and layout_shape(r.layout, 128 * 1024, 9).data_disks <= 6:
            n = layout_shape(r.layout, 128 * 1024, 9).data_disks
            ratio = r.measured["write"] / (n * base)
            print(f"  {str(r.layout):11s} {r.measured['write']:4.0f} MB/s = {ratio:.2f} x {n:g} disks "
                  f"({math.log(ratio) / noise['write']:+5.1f} noise sd)")
    print("4. Rows missed by over 12 % (+-12 % holding 85 % leaves room for 2 of 17, 3 of 26)")
    for name, res in (("design", design), ("loo", loo)):
        for m in METRICS:
            far = sorted(((v, k) for k, v in res[m].items() if abs(math.expm1(v)) > 0.12), key=lambda t: -abs(t[0]))
            shown = ", ".join(f"{k}{'*' if (k, m) in ODD else ''} {pct(v)}" for v, k in far)
            print(textwrap.fill(f"{name:6s} {m:7s} {len(far):2d} of {len(res[m])}: {shown}", 96,
                                initial_indent="  ", subsequent_indent=" " * 18))
    print("  * the source's named oddities; measured / predicted - 1, in %")


if __name__ == "__main__":
    main()
