"""Issue 35, item 3: intervals whose scale comes from the calibration rows' own leave-one-out
prediction residuals, against the adopted ones, on every held-out check of interval_check.py
(docs/speed.md#tried-and-not-adopted).

For a fit on n calibration pools, each pool i is left out in turn (fits_leaving_out: the same
objective less its rows) and predicted: its leave-one-out log residual r_i = ln y_i - ln mu_-i(x_i)
and the predictive sd s_-i(x_i) = sqrt(g'C_-i g + sigma_-i^2) the adopted interval gives it. Then,
per metric, for a row x the fit did not see (centre c(x), the adopted sd s(x) and its t):

  adopted  c +- t(dof) s(x): sigma from the fit's own residuals, leverage-weighted (scatter_and_covariance)
  jack+    the jackknife+ of Barber, Candes, Ramdas & Tibshirani (Ann. Statist. 2021), in log space:
           from the floor(a(n+1))-th smallest of mu_-i(x) - |r_i| to the ceil((1-a)(n+1))-th smallest of
           mu_-i(x) + |r_i|; unbounded when that rank exceeds n (n < 9 at 90 %)
  jack-q   the jackknife with studentised scores: c +- q s(x), q the ceil(0.9(n+1))-th smallest of
           |r_i| / s_-i(x_i) (unbounded when that rank exceeds n)
  jack-qp  the same with one q for all three metrics, their 3n scores pooled (the adopted pools its scales)
  jack-k   the adopted interval rescaled: the scores u_i = r_i / s_-i(x_i) taken as Student t
           (tailed_scatter, pseudo-rows at 1, the adopted pooling over metrics), c +- t(nu, n) k s(x)
  jack-s   the LOO residuals set sigma alone, pooled as the adopted: sigma^2 from r_i standardised to
           their scatter share, r_i sigma_-i / s_-i(x_i); then c +- t sqrt(g'Cg + sigma^2)
  jack-r   sigma from the raw LOO residuals r_i (parameters' error counted twice: an upper end)

Run: PYTHONPATH=src nice -n 10 python3 benchmarks/interval_jackknife.py [SEEDS]
(default 40, as interval_check.py; about 30 s on one core)
"""

from __future__ import annotations

import csv
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.special import stdtrit

from zfslab.model.calibration import calibration_design
from zfslab.model.log_fit import SCATTER, SCATTER_WEIGHT, jacobian, tailed_scatter
from zfslab.model.performance import layout_shape, parity_ceiling_mb_s, streaming_mb_s
from zfslab.model.speed_fit import METRICS, Measurement, _streaming, fit_speed, fits_leaving_out
from zfslab.model.validation import measurements, parse_dataset

from speed_model_check import model_made_tables  # noqa: E402 - the benchmark's own folder is on sys.path: run as a script

ROOT = Path(__file__).resolve().parent.parent
LEVEL = 0.9
VARIANTS = ("adopted", "jack+", "jack-q", "jack-qp", "jack-k", "jack-s", "jack-r")


@dataclass(frozen=True)
class Parts:
    """One layout's log prediction under a fit, per metric: centre, g'Cg, sigma, the t's dof."""

    center: dict[str, float]
    gcg: dict[str, float]
    scatter: dict[str, float]
    dof: dict[str, float]

    def sd(self, m: str) -> float:
        return math.sqrt(self.gcg[m] + self.scatter[m] ** 2)


def parts(fit, layout) -> Parts:
    shape = layout_shape(layout, fit.recordsize, fit.ashift)
    ceiling = parity_ceiling_mb_s(layout, fit.host, fit.recordsize, fit.ashift)
    x = np.array(fit.log_values)

    def logs(v):
        s = _streaming(v, shape, ceiling)
        return np.log([s.write_mb_s, s.rewrite_mb_s, s.read_mb_s])

    c, g, cov = logs(x), jacobian(logs, x), np.array(fit.covariance)
    return Parts({m: float(c[k]) for k, m in enumerate(METRICS)},
                 {m: max(float(g[k] @ cov @ g[k]), 0.0) for k, m in enumerate(METRICS)},
                 dict(fit.scatter), dict(fit.scatter_dof))


def center(fit, layout) -> dict[str, float]:
    s = streaming_mb_s(layout_shape(layout, fit.recordsize, fit.ashift), **fit.values,
                       parity_ceiling_mb_s=parity_ceiling_mb_s(layout, fit.host, fit.recordsize, fit.ashift))
    return {m: math.log(getattr(s, f"{m}_mb_s")) for m in METRICS}


def t(dof: float) -> float:
    return float(stdtrit(dof, 0.5 + LEVEL / 2))


def _pooled_scale(scores: dict[str, list[float]], prior: float) -> dict[str, tuple[float, float]]:
    """Each metric's (t dof, scale) of `scores`, pooled as scatter_and_covariance pools: every
    metric's scores together with pseudo-rows at `prior`, then each metric with pseudo-rows at that."""
    everything = np.concatenate([np.asarray(v, dtype=float) for v in scores.values()])
    _, pooled = tailed_scatter(everything, np.ones(len(everything)), prior, SCATTER_WEIGHT)
    out = {}
    for m, v in scores.items():
        tails, scale = tailed_scatter(np.asarray(v, dtype=float), np.ones(len(v)), pooled, SCATTER_WEIGHT)
        out[m] = (1.0 / (1.0 / tails + 1.0 / (len(v) + SCATTER_WEIGHT)), scale)
    return out


def _rank(values: list[float], k: int) -> float:
    """The k-th smallest (1-based); +inf beyond the list, -inf below it."""
    if k > len(values):
        return math.inf
    if k < 1:
        return -math.inf
    return sorted(values)[k - 1]


def _upper_rank(n: int) -> int:
    """ceil(LEVEL (n + 1)), the conformal quantile's rank among n scores (rounding aside)."""
    return math.ceil(LEVEL * (n + 1) - 1e-9)


class Jackknife:
    """A fit on calibration pools and its leave-one-pool-out refits: every variant's interval."""

    def __init__(self, fit, cal_layouts, cal_measured: list[dict[str, float]], refits):
        self.fit, self.refits = fit, refits
        self.r = {m: [] for m in METRICS}  # LOO log residuals (measured - predicted)
        self.s = {m: [] for m in METRICS}  # LOO predictive sds at the left-out row
        self.sig = {m: [] for m in METRICS}  # the LOO fit's scatter
        for layout, measured, refit in zip(cal_layouts, cal_measured, refits):
            p = parts(refit, layout)
            for m, y in measured.items():
                self.r[m].append(math.log(y) - p.center[m])
                self.s[m].append(p.sd(m))
                self.sig[m].append(p.scatter[m])
        self.n = {m: len(v) for m, v in self.r.items()}
        u = {m: [r / s for r, s in zip(self.r[m], self.s[m])] for m in METRICS}
        self.q = {m: _rank([abs(v) for v in u[m]], _upper_rank(self.n[m])) for m in METRICS}
        every = [abs(v) for m in METRICS for v in u[m]]
        self.q_pooled = _rank(every, _upper_rank(len(every)))
        self.k = _pooled_scale(u, 1.0)
        self.sigma_s = _pooled_scale({m: [r * g / s for r, g, s in zip(self.r[m], self.sig[m], self.s[m])]
                                      for m in METRICS}, SCATTER)
        self.sigma_r = _pooled_scale(self.r, SCATTER)

    def intervals(self, layout) -> dict[str, dict[str, tuple[float, float]]]:
        """variant -> metric -> (low, high) in log MB/s, for a layout the fit did not see."""
        p = parts(self.fit, layout)
        mus = [center(f, layout) for f in self.refits]
        out = {v: {} for v in VARIANTS}
        for m in METRICS:
            c, sd = p.center[m], p.sd(m)
            h = t(p.dof[m]) * sd
            out["adopted"][m] = (c - h, c + h)
            n = self.n[m]
            lows = [mu[m] - abs(r) for mu, r in zip(mus, self.r[m])]
            highs = [mu[m] + abs(r) for mu, r in zip(mus, self.r[m])]
            out["jack+"][m] = (_rank(lows, n + 1 - _upper_rank(n)), _rank(highs, _upper_rank(n)))
            out["jack-q"][m] = (c - self.q[m] * sd, c + self.q[m] * sd)
            out["jack-qp"][m] = (c - self.q_pooled * sd, c + self.q_pooled * sd)
            dof, k = self.k[m]
            out["jack-k"][m] = (c - t(dof) * k * sd, c + t(dof) * k * sd)
            for name, (dof, sigma) in (("jack-s", self.sigma_s[m]), ("jack-r", self.sigma_r[m])):
                h = t(dof) * math.sqrt(p.gcg[m] + sigma**2)
                out[name][m] = (c - h, c + h)
        return out


def _pool_indices(rows_measured: list[dict[str, float]]) -> list[list[int]]:
    out, first = [], 0
    for measured in rows_measured:
        out.append(list(range(first, first + len(measured))))
        first += len(measured)
    return out


def jackknife(layouts, measured: list[dict[str, float]], *, ashift: int = 9) -> Jackknife:
    """The fit on (layouts, measured) and its refits less each pool."""
    table = [Measurement(lay, m, y) for lay, row in zip(layouts, measured) for m, y in row.items()]
    fit = fit_speed(table, ashift=ashift)
    return Jackknife(fit, layouts, measured, list(fits_leaving_out(table, _pool_indices(measured), start=fit,
                                                                   ashift=ashift)))


def empty() -> dict:
    return {v: {m: [] for m in METRICS} for v in VARIANTS}


def score(out: dict, intervals: dict, measured: dict[str, float], c: dict[str, float]) -> None:
    """Inside, and the half-width (high - low) / 2 in % of the fit's prediction exp(c)."""
    for v, per_metric in intervals.items():
        for m, y in measured.items():
            lo, hi = per_metric[m]
            half = 50 * (math.exp(hi) - math.exp(lo)) / math.exp(c[m]) if math.isfinite(hi - lo) else math.inf
            out[v][m].append((lo <= math.log(y) <= hi, half))


def summary(out: dict) -> dict[str, dict[str, tuple[float, float]]]:
    """variant -> metric -> (% of rows inside, median half-width in %)."""
    return {v: {m: (100 * float(np.mean([i for i, _ in s])), float(np.median([h for _, h in s])))
                for m, s in per_metric.items()} for v, per_metric in out.items()}


def held_out(rows) -> dict:
    """The rows the table does not mark for the fit, scored against the jackknife of the fit on those it marks."""
    out = empty()
    fit_rows = [r for r in rows if r.fit_row]
    j = jackknife([r.layout for r in fit_rows], [dict(r.measured) for r in fit_rows])
    for r in rows:
        if not r.fit_row:
            score(out, j.intervals(r.layout), dict(r.measured), parts(j.fit, r.layout).center)
    return out


def calomel_rows(name: str = "calomel-hdd-24x4tb.csv", calibration: str = "auto"):
    with open(ROOT / "tests/data" / name, newline="") as f:
        return parse_dataset(list(csv.DictReader(f)), calibration=calibration)


def leave_one_out(rows) -> dict:
    """Row j against the fit on all the others, jackknifed over those (leave two out)."""
    table = measurements(rows)
    everything = fit_speed(table, ashift=9)
    pools = _pool_indices([dict(r.measured) for r in rows])
    out = empty()
    for j, (row, fit_j) in enumerate(zip(rows, fits_leaving_out(table, pools, start=everything, ashift=9))):
        others = [i for i in range(len(rows)) if i != j]
        refits = list(fits_leaving_out(table, [pools[j] + pools[i] for i in others], start=fit_j, ashift=9))
        jk = Jackknife(fit_j, [rows[i].layout for i in others], [dict(rows[i].measured) for i in others], refits)
        score(out, jk.intervals(row.layout), dict(row.measured), parts(fit_j, row.layout).center)
    return out


def synthetic(sigma: float, odd: float, seeds: int) -> dict:
    """interval_check.py's model-made tables: calomel's layouts, two hosts, `seeds` tables each."""
    layouts = [r.layout for r in calomel_rows()]
    picks = sorted({p.index for p in calibration_design(layouts)})
    out = empty()
    for noisy in model_made_tables(layouts, sigma, odd, seeds):
        j = jackknife([layouts[i] for i in picks], [noisy[i] for i in picks])
        for i, layout in enumerate(layouts):
            if i not in picks:
                score(out, j.intervals(layout), noisy[i], parts(j.fit, layout).center)
    return out


def show(name: str, out: dict) -> None:
    for v, per_metric in summary(out).items():
        cells = [f"{m:7s} {inside:3.0f} % ±{half:5.1f} %" if math.isfinite(half) else f"{m:7s} {inside:3.0f} % ±  inf  "
                 for m, (inside, half) in per_metric.items()]
        print(f"  {name if v == 'adopted' else '':7s}{v:8s}" + "  ".join(cells))


def main() -> None:
    seeds = int(sys.argv[1]) if len(sys.argv) > 1 else 40
    print("90 % intervals: share of unseen rows inside, median half-width (% of the prediction)")
    rows = calomel_rows()
    show("design", held_out(rows))
    show("loo", leave_one_out(rows))
    show("csv2", held_out(calomel_rows("calomel-calibrated.csv", "csv")))
    for name, sigma, odd in (("syn3", 0.03, 0.0), ("syn8", 0.08, 0.0), ("synX", 0.08, 0.15)):
        show(name, synthetic(sigma, odd, seeds))


if __name__ == "__main__":
    main()
