"""The random-path fit (model/iops_fit.py): it recovers the parameters the model itself was given,
from noisy synthetic measurements on the calibration design; it keeps a parameter no measurement
pins at its prior; it refuses measurements no fit can use (docs/speed.md#fitting-iops)."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from zfslab.model.calibration import calibration_design
from zfslab.model.candidates import candidate_layouts
from zfslab.model.iops_fit import (METRICS, NAMES, FitError, IopsMeasurement, fit_iops, predict_iops_intervals)
from zfslab.model.layout_grammar import parse_layout
from zfslab.model.performance import PRESETS, HostLimits, predict

TRUTH = {"disk_read_iops_qd1": 110.0, "disk_read_iops_qd8": 190.0, "sync_write_ms": 7.0,
         "read_modify_write": 0.6, "sync_batch": 3.0}


def truth_profile(base=PRESETS["hdd7200"], **over):
    t = TRUTH | over
    return replace(base, rand_read_iops_qd1=t["disk_read_iops_qd1"], rand_read_iops_qd8=t["disk_read_iops_qd8"],
                   sync_write_ms=t["sync_write_ms"],
                   host=HostLimits(write_mb_s=900.0, read_iops=t.get("host_read_iops", math.inf),
                                   read_modify_write=t["read_modify_write"], sync_batch=t["sync_batch"]))


def measurements(truth, layouts, rng, noise=0.05):
    return [IopsMeasurement(layout, m, getattr(predict(layout, truth), m) * math.exp(rng.normal(0, noise)))
            for layout in layouts for m in METRICS]


@pytest.mark.parametrize("disks, seed", [(24, 1), (24, 2), (12, 3), (6, 4)])
def test_the_fit_recovers_the_parameters_the_model_was_given(disks, seed):
    truth = truth_profile()
    layouts = [p.layout for p in calibration_design(candidate_layouts(disks))]
    fit = fit_iops(measurements(truth, layouts, np.random.default_rng(seed)), streaming=truth)
    got = {p.name: p for p in fit.parameters(0.99)}
    for name, value in TRUTH.items():
        assert got[name].low <= value <= got[name].high, got[name]
        assert math.isclose(got[name].value, value, rel_tol=0.1), got[name]
        assert got[name].pinned_by == "data"
    # and predicts the layouts it never saw: within 10 % of the truth, inside the 90 % interval mostly
    inside = total = 0
    for layout in candidate_layouts(disks):
        true = predict(layout, truth)
        for metric, i in predict_iops_intervals(fit, layout).items():
            assert math.isclose(i.iops, getattr(true, metric), rel_tol=0.1), (str(layout), metric)
            inside += i.low_iops <= getattr(true, metric) <= i.high_iops
            total += 1
    assert inside / total >= 0.9


def test_an_ssd_host_read_path_is_found_when_the_disks_outrun_it():
    truth = truth_profile(PRESETS["ssd"], disk_read_iops_qd1=9000.0, disk_read_iops_qd8=50_000.0,
                          sync_write_ms=0.4, host_read_iops=120_000.0)
    layouts = [p.layout for p in calibration_design(candidate_layouts(24))]
    fit = fit_iops(measurements(truth, layouts, np.random.default_rng(5)), streaming=truth)
    host = next(p for p in fit.parameters() if p.name == "host_read_iops")
    assert host.pinned_by == "data" and host.low <= 120_000 <= host.high


def test_what_no_measurement_pins_stays_at_its_prior():
    base = PRESETS["hdd7200"]
    disk = parse_layout("disk")
    fit = fit_iops([IopsMeasurement(disk, "rand_read_iops_qd1", 95.0)], streaming=base)
    got = {p.name: p for p in fit.parameters()}
    assert got["disk_read_iops_qd1"].pinned_by == "data"
    assert math.isclose(got["disk_read_iops_qd1"].value, 95, rel_tol=0.05)
    # the preset's own figures are the priors of what it gives; the others their documented medians
    assert math.isclose(got["sync_write_ms"].value, base.sync_write_ms, rel_tol=1e-3)
    assert math.isclose(got["disk_read_iops_qd8"].value, base.rand_read_iops_qd8, rel_tol=0.02)
    assert math.isclose(got["sync_batch"].value, 1.0, rel_tol=1e-3)
    for name in ("disk_read_iops_qd8", "host_read_iops", "read_modify_write", "sync_write_ms", "sync_batch"):
        assert got[name].pinned_by == "prior", got[name]
    assert set(got) == set(NAMES)


@pytest.mark.parametrize("metric, value, message", [
    ("rand_read_iops_qd1", 0.0, "a measured rate must be a finite number > 0"),
    ("rand_read_iops_qd1", float("nan"), "a measured rate must be a finite number > 0"),
    ("rand_read_iops_qd1", float("inf"), "a measured rate must be a finite number > 0"),
    ("read_mb_s", 10.0, "use one of rand_read_iops_qd1"),
])
def test_measurements_no_fit_can_use_are_refused(metric, value, message):
    with pytest.raises(FitError, match=message):
        fit_iops([IopsMeasurement(parse_layout("disk"), metric, value)], streaming=PRESETS["hdd7200"])
    with pytest.raises(FitError, match="nothing to fit"):
        fit_iops([], streaming=PRESETS["hdd7200"])
