"""What the streaming fit (speed_fit.py) and the random-path fit (iops_fit.py) share: the check of
measured rates, the soft-L1 loss, the Jacobian, each metric's scatter with the covariance it
implies, and a prediction's Student-t interval in log space (docs/speed.md#fitting).

Both fits work on logarithms of rates against a model of few physical parameters; one piece of
code here keeps their statistics the same.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
from scipy.special import gammaln, stdtrit  # Student's t quantile without importing scipy.stats (0.5 s)

from zfslab.errors import DatasetError

SCATTER = 0.10  # log-units: what one measurement of a pool is assumed to scatter by before the fit
ROBUST_SCALE = 1.5  # in SCATTER units: beyond ~15 % a row pulls linearly (soft-L1)
SCATTER_WEIGHT = 2.0  # pseudo-rows at SCATTER pooled with all residuals, and at that with each metric's
DIFF_STEP = 1e-5  # log units: the central differences' step
# Student-t degrees of freedom a metric's residuals may have (inf: normal); the likeliest is taken
# (docs/speed.md#intervals-how-often-they-hold-and-how-wide-they-are)
TAILS = np.array([1.0, 2.0, 3.0, 5.0, 10.0, 30.0, np.inf])
_SCALE_STEPS = 50  # at most: Newton's steps on the scale's likelihood equation, stopped below 1e-10 relative


class FitError(DatasetError):
    """Measurements a speed model cannot be fitted on: too few, or not finite and positive."""


@dataclass(frozen=True, slots=True)
class Parameter:
    """One model parameter: unit in its name, a log-normal prior with its source, hard bounds."""

    name: str
    metric: str  # the measured column that pins it
    prior: float  # prior median (speed_fit's disk_rewrite_mb_s: relative to the disk's read and write)
    prior_log_sd: float
    low: float
    high: float
    source: str


@dataclass(frozen=True, slots=True)
class FittedParameter:
    name: str
    value: float
    low: float  # the interval at the fit's level
    high: float
    pinned_by: str  # "data" when the measurements at least halve the prior's spread, "prior", or "fixed"
    source: str  # the prior's source


def parameter_intervals(parameters: Sequence[Parameter], log_values: Sequence[float],
                        covariance: Sequence[Sequence[float]], fitted_metrics: Sequence[str],
                        level: float) -> list[FittedParameter]:
    """Each fitted parameter with its interval (normal in log space, clipped to its bounds) and
    what pins it: the data (its sd under half its prior's), its prior, or nothing (held fixed)."""
    z = NormalDist().inv_cdf(0.5 + level / 2)
    out = []
    for i, p in enumerate(parameters):
        sd = math.sqrt(max(covariance[i][i], 0.0))
        x = log_values[i]
        pinned = "data" if p.metric in fitted_metrics and sd < 0.5 * p.prior_log_sd else "prior"
        if sd == 0.0:
            pinned = "fixed"
        low, high = max(math.exp(x - z * sd), p.low), min(math.exp(x + z * sd), p.high)
        out.append(FittedParameter(p.name, math.exp(x), low, high, pinned, p.source))
    return out


class LogParameters:
    """What a fit's frozen dataclass (log_values, covariance, fitted_metrics) gives its callers;
    the subclass names its PARAMETERS."""

    __slots__ = ()
    PARAMETERS: tuple[Parameter, ...]

    @property
    def values(self) -> dict[str, float]:
        return {p.name: math.exp(v) for p, v in zip(self.PARAMETERS, self.log_values)}

    def parameters(self, level: float = 0.9) -> list[FittedParameter]:
        """Each parameter with its interval and whether the data or the prior pins it."""
        return parameter_intervals(self.PARAMETERS, self.log_values, self.covariance, self.fitted_metrics, level)


def check_rates(rows: Sequence[tuple[object, str, object]], metrics: Sequence[str], unit: str, what: str) -> None:
    """Raise FitError naming the first (layout, metric, rate) no fit can use; `what` is what an
    empty list lacks."""
    if not rows:
        raise FitError(f"nothing to fit: give at least one {what}")
    for layout, metric, rate in rows:
        if metric not in metrics:
            raise FitError(f"{layout}: metric {metric!r}: use one of {', '.join(metrics)}")
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not math.isfinite(rate) or rate <= 0:
            raise FitError(f"{layout}: {metric} {rate!r} {unit}: a measured rate must be a finite number > 0")


def soft_l1(r: np.ndarray) -> np.ndarray:
    """Log residuals as soft-L1 residuals in SCATTER units: rho(r) = 2 c^2 (sqrt(1 + (r/c)^2) - 1)."""
    r = r / SCATTER
    c = ROBUST_SCALE
    return np.sign(r) * np.sqrt(2 * c * c * (np.sqrt(1 + (r / c) ** 2) - 1))


def soft_l1_terms(r: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each log residual's share of least_squares' cost, soft_l1(r)^2 / 2 = c^2 (sqrt(1 + (z/c)^2) - 1)
    with z = r / SCATTER, and its first and second derivatives in r: what a Newton step needs."""
    z = r / SCATTER
    root = np.sqrt(1 + (z / ROBUST_SCALE) ** 2)
    return z * z / (1 + root), z / root / SCATTER, 1 / (root**3 * SCATTER**2)


def jacobian(fun: Callable[[np.ndarray], np.ndarray], x: np.ndarray, step: float = DIFF_STEP, *,
             batched: bool = False) -> np.ndarray:
    """Central differences in log space (the models have kinks; a small step sees one side).
    batched: `fun` takes a (k, len(x)) array of points and gives one row of values per point."""
    if batched:
        e = np.eye(len(x)) * step
        values = fun(np.concatenate([x + e, x - e]))
        return ((values[:len(x)] - values[len(x):]) / (2 * step)).T
    cols = []
    for i in range(len(x)):
        e = np.zeros_like(x)
        e[i] = step
        cols.append((fun(x + e) - fun(x - e)) / (2 * step))
    return np.array(cols).T


def _log_t_density(z2: np.ndarray, tails: np.ndarray) -> np.ndarray:
    """log density of a unit Student-t with `tails` degrees of freedom (a column; inf: normal) at z, given z^2."""
    finite = np.isfinite(tails)
    nu = np.where(finite, tails, 1.0)
    t = (gammaln((nu + 1) / 2) - gammaln(nu / 2) - 0.5 * np.log(nu * np.pi) - (nu + 1) / 2 * np.log1p(z2 / nu))
    return np.where(finite, t, -0.5 * np.log(2 * np.pi) - 0.5 * z2)


def tailed_scatter(residuals: np.ndarray, share: np.ndarray, prior: float, weight: float) -> tuple[float, float]:
    """The likeliest Student-t degrees of freedom (one of TAILS) and scale of log residuals.

    share: each residual's share of a degree of freedom, 1 - its leverage (a residual the fit
    absorbs tells nothing of the scatter); weight pseudo-rows at `prior` are pooled in. The scale
    is the maximum likelihood's (a far residual counts less under heavy tails), each row's log
    density weighted by its share; with no residuals, or all absorbed, it is the prior's normal."""
    r2 = np.asarray(residuals, dtype=float) ** 2
    k = np.asarray(share, dtype=float)
    total = k.sum() + weight
    normal = (r2.sum() + weight * prior**2) / total  # the normal's scale, in closed form
    nu = TAILS[:-1, None]  # the finite ones; each scale solves F(s2) = 0 by Newton's method from the normal's:
    s2 = np.full((len(nu), 1), normal)  # F = s2 total - sum w r^2 - weight prior^2, w = (nu+1) k s2 / (nu k s2 + r^2)
    a, nk, c = (nu + 1) * k * r2, nu * k, 1 / ((nu + 1) * k)
    for _ in range(_SCALE_STEPS):
        q = a / (nk * s2 + r2)  # w r^2 / s2, and dF/ds2 = total - sum q^2 / ((nu+1) k)
        sum_w_r2 = s2 * np.sum(q, axis=1, keepdims=True)
        slope = total - np.sum(q * q * c, axis=1, keepdims=True)
        em = (sum_w_r2 + weight * prior**2) / total
        with np.errstate(divide="ignore", invalid="ignore"):
            newton = s2 - (s2 * total - sum_w_r2 - weight * prior**2) / slope
        new = np.where((slope > 0) & (newton > 0) & np.isfinite(newton), newton, em)  # else EM's step
        done = np.all(np.abs(new - s2) <= 1e-10 * s2)
        s2 = new
        if done:
            break
    s2 = np.vstack([s2, [[normal]]])
    tails = TAILS[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        log_l = np.sum(k * (_log_t_density(r2 / (k * s2), tails) - 0.5 * np.log(s2)), axis=1)
    # ties (no residuals, or all absorbed) go to the lightest tail: the normal
    best = max(range(len(TAILS)), key=lambda i: (round(float(log_l[i]), 12), i))
    return float(TAILS[best]), math.sqrt(float(s2[best, 0]))


def scatter_and_covariance(g: np.ndarray, prior_j: np.ndarray, residuals: np.ndarray, row_metrics: Sequence[str],
                           metrics: Sequence[str], *, g_of_row: np.ndarray | None = None
                           ) -> tuple[dict[str, float], dict[str, float], np.ndarray]:
    """Each metric's scatter, the degrees of freedom of the Student t a new measurement follows
    around a prediction, and the parameters' covariance the scatters imply.

    The scatter is a Student-t scale with the likeliest of TAILS for tails (tailed_scatter): over
    the metric's residuals, each counted as the share of a degree of freedom the fit left it (1 -
    leverage), pooled with SCATTER_WEIGHT pseudo-rows at the scatter of all metrics' residuals
    together (itself pooled with pseudo-rows at SCATTER). The t's degrees of freedom combine the
    tails with the scale's own uncertainty: 1/dof = 1/tails + 1/(residual dof + pseudo-rows).

    g: the log predictions' Jacobian (rows x free parameters); prior_j: the prior terms'. With
    g_of_row, g holds distinct rows and row i's is g[g_of_row[i]]: rows that repeat a (pool,
    metric) share it, and the sums over rows become sums over g's rows weighted by their count."""
    row_metrics = np.asarray(row_metrics)
    g_of_row = np.arange(len(g)) if g_of_row is None else g_of_row
    count = np.bincount(g_of_row, minlength=len(g)).astype(float)
    info0 = g.T @ (g * count[:, None]) / SCATTER**2 + prior_j.T @ prior_j
    scaled = g / SCATTER
    hat = np.sum((scaled @ np.linalg.pinv(info0)) * scaled, axis=1)[g_of_row]  # each row's leverage
    share = np.clip(1.0 - hat, 1e-3, 1.0)
    residuals = np.asarray(residuals, dtype=float)
    _, pooled = tailed_scatter(residuals, share, SCATTER, SCATTER_WEIGHT)
    scatter, scatter_dof = {}, {}
    weights = np.zeros(len(row_metrics))
    for m in metrics:
        rows = row_metrics == m
        tails, scatter[m] = tailed_scatter(residuals[rows], share[rows], pooled, SCATTER_WEIGHT)
        dof = max(rows.sum() - hat[rows].sum(), 0.0) + SCATTER_WEIGHT
        scatter_dof[m] = float(1.0 / (1.0 / tails + 1.0 / dof))
        weights[rows] = 1.0 / scatter[m] ** 2
    weight_of_g = np.bincount(g_of_row, weights, minlength=len(g))
    cov = np.linalg.pinv(g.T @ (g * weight_of_g[:, None]) + prior_j.T @ prior_j)
    return scatter, scatter_dof, cov


def check_level(level: float) -> None:
    if not 0 < level < 1:
        raise ValueError(f"level(={level!r}) must be between 0 and 1")


def log_interval(center: float, gradient: np.ndarray, covariance: np.ndarray, scatter: float, dof: float,
                 level: float) -> tuple[float, float, float]:
    """A prediction and the interval a new measurement should fall in: the parameters' covariance
    carried through the model (delta method) plus the metric's scatter, Student's t for its dof."""
    z = float(stdtrit(dof, 0.5 + level / 2))
    sd = math.sqrt(max(float(gradient @ covariance @ gradient), 0.0) + scatter**2)
    return math.exp(center), math.exp(center - z * sd), math.exp(center + z * sd)
