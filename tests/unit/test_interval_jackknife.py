"""benchmarks/interval_jackknife.py: intervals scaled by the calibration rows' own leave-one-out
residuals, tried for issue 35 and not adopted (docs/speed.md#tried-and-not-adopted). The script's
adopted intervals are the model's own, and the calomel figures docs/speed.md quotes are pinned
here, so the text cannot drift from the script."""

from __future__ import annotations

import importlib.util
import math
import os
import sys

import pytest

from tests.conftest import REPO
from zfslab.model.speed_fit import METRICS, predict_intervals


@pytest.fixture(scope="module")
def jk():
    sys.path.insert(0, os.path.join(REPO, "benchmarks"))  # it imports speed_model_check, its neighbour
    try:
        spec = importlib.util.spec_from_file_location("interval_jackknife",
                                                      os.path.join(REPO, "benchmarks", "interval_jackknife.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules.setdefault("interval_jackknife", module)  # its dataclass looks itself up there
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(os.path.join(REPO, "benchmarks"))
    return module


@pytest.fixture(scope="module")
def design(jk):
    return jk.summary(jk.held_out(jk.calomel_rows()))


def test_the_adopted_column_is_the_models_own_interval(jk):
    rows = jk.calomel_rows()
    cal = [r for r in rows if r.fit_row]
    j = jk.jackknife([r.layout for r in cal], [dict(r.measured) for r in cal])
    for r in rows[:8]:
        ours, model = j.intervals(r.layout)["adopted"], predict_intervals(j.fit, r.layout)
        for m in METRICS:
            assert ours[m] == pytest.approx((math.log(model[m].low_mb_s), math.log(model[m].high_mb_s)), abs=1e-9)


def test_calomel_design_figures_docs_quote(design):
    def shown(variant):
        return [(round(inside), round(half, 1)) for inside, half in design[variant].values()]

    assert shown("adopted") == [(94, 25.0), (82, 19.4), (76, 28.7)]
    assert shown("jack-qp") == [(94, 33.6), (100, 30.4), (88, 50.3)]
    assert shown("jack-k") == [(94, 36.8), (82, 22.5), (82, 33.8)]
    assert shown("jack-s") == [(94, 26.2), (82, 17.9), (76, 28.9)]


def test_the_jackknife_plus_is_unbounded_on_too_few_calibration_rows(jk):
    # ceil(0.9 (n + 1)) > n below 9 rows: the csv's own 2 rows give no bound at all
    assert jk._upper_rank(9) == 9 and jk._upper_rank(8) == 9 and jk._upper_rank(25) == 24
    csv2 = jk.summary(jk.held_out(jk.calomel_rows("calomel-calibrated.csv", "csv")))
    assert all(half == math.inf for _, half in csv2["jack+"].values())
    assert all(math.isfinite(half) for _, half in csv2["adopted"].values())
