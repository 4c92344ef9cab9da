"""model/log_fit.py: the scatter of a metric's residuals, with the tails the residuals show
(docs/speed.md#intervals-how-often-they-hold-and-how-wide-they-are). Seeded draws."""

from __future__ import annotations

import math

import numpy as np
import pytest

from zfslab.model.log_fit import SCATTER, TAILS, tailed_scatter


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_normal_residuals_get_a_normal_s_tails_and_their_own_scatter(seed):
    r = np.random.default_rng(seed).normal(0, 0.05, 400)
    tails, scale = tailed_scatter(r, np.ones(400), SCATTER, 2.0)
    assert tails >= 30  # a t of 30 degrees of freedom is a normal but for 2 % of its scale
    assert scale == pytest.approx(math.sqrt(np.mean(r**2)), rel=0.04)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_heavy_tailed_residuals_get_heavy_tails_and_the_scale_of_their_bulk(seed):
    rng = np.random.default_rng(seed)
    r = 0.05 * rng.standard_t(3, 400)
    tails, scale = tailed_scatter(r, np.ones(400), SCATTER, 2.0)
    assert 2 <= tails <= 5
    assert scale == pytest.approx(0.05, rel=0.15)
    # the root mean square, which a normal would take for the scale, is far wider
    assert math.sqrt(np.mean(r**2)) > 1.4 * scale


def test_a_few_far_residuals_do_not_set_the_scatter():
    rng = np.random.default_rng(4)
    r = rng.normal(0, 0.05, 60)
    r[:4] = [0.9, -1.2, 0.7, -0.8]  # a handful of rows missed by 50-70 %, as in calomel's table
    tails, scale = tailed_scatter(r, np.ones(60), SCATTER, 2.0)
    assert tails <= 3
    assert scale < 0.07


def test_without_residuals_the_scatter_is_the_prior_s():
    assert tailed_scatter(np.array([]), np.array([]), 0.08, 2.0) == (math.inf, pytest.approx(0.08))


def test_a_residual_the_fit_absorbed_counts_for_little():
    """A row whose leverage is near 1 leaves a near-zero residual: with its share of a degree of
    freedom, the small residual does not shrink the scatter, as it would counted as a full row."""
    r = np.random.default_rng(5).normal(0, 0.05, 10)
    base = tailed_scatter(r, np.ones(10), SCATTER, 2.0)[1]
    absorbed = tailed_scatter(np.append(r, 1e-4), np.append(np.ones(10), 1e-3), SCATTER, 2.0)[1]
    counted = tailed_scatter(np.append(r, 1e-4), np.ones(11), SCATTER, 2.0)[1]
    assert absorbed == pytest.approx(base, rel=1e-3)
    assert counted < 0.97 * base


def test_the_tails_are_a_grid_from_cauchy_to_normal():
    assert TAILS[0] == 1 and math.isinf(TAILS[-1]) and np.all(np.diff(TAILS) > 0)
