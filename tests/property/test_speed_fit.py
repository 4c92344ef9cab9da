"""model/speed_fit.py on data the model itself made: it finds the parameters, falls back to its
priors where nothing pins them, and its intervals hold about as often as they claim.

Seeded: every random draw comes from np.random.default_rng(seed) made here.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from zfslab.model.calibration import calibration_design
from zfslab.model.layout_grammar import parse_layout
from zfslab.model.log_fit import jacobian
from zfslab.model.performance import layout_shape, streaming_mb_s
from zfslab.model.speed_fit import (METRICS, NAMES, PARAMETERS, FitError, Measurement, fit_speed,
                                    predict_intervals)

ASHIFT = 9
# calomel's 26 layouts: stripes, mirrors and raidz1-3 from 3 to 24 wide, one and two vdevs
LAYOUTS = [parse_layout(t) for t in (
    "disk", "mirror:2", "2xdisk", "mirror:3", "3xdisk", "raidz1:3", "2xmirror:2", "raidz2:4", "raidz1:5", "raidz3:5",
    "3xmirror:2", "raidz2:6", "2xraidz1:5", "raidz3:11", "6xmirror:2", "2xraidz2:6", "raidz1:12", "raidz2:12",
    "raidz3:12", "2xraidz3:11", "raidz3:23", "12xmirror:2", "raidz1:24", "raidz2:24", "raidz3:24", "24xdisk")]
HDD_HOST = dict(disk_write_mb_s=150, disk_read_mb_s=180, disk_rewrite_mb_s=60, host_write_mb_s=900,
                host_read_mb_s=1500, reads_in_flight=3, rewrite_parallel=0.25, vdev_pipeline_mb_s=800,
                child_io_us=4, parity_us_per_mb=200)
SSD_HOST = dict(disk_write_mb_s=450, disk_read_mb_s=520, disk_rewrite_mb_s=230, host_write_mb_s=1700,
                host_read_mb_s=2100, reads_in_flight=6, rewrite_parallel=0.3, vdev_pipeline_mb_s=1200,
                child_io_us=2, parity_us_per_mb=250)


def measured(truth: dict, layouts, *, sigma: float, rng: np.random.Generator) -> list[Measurement]:
    out = []
    for layout in layouts:
        s = streaming_mb_s(layout_shape(layout, 128 * 1024, ASHIFT), **truth)
        for m in METRICS:
            out.append(Measurement(layout, m, getattr(s, f"{m}_mb_s") * math.exp(rng.normal(0, sigma))))
    return out


def test_the_parameters_are_the_model_s_own():
    assert NAMES == tuple(HDD_HOST) == tuple(SSD_HOST)
    for p in PARAMETERS:  # a unit or a count in every name, a prior inside its bounds
        assert p.name.endswith(("_mb_s", "_us", "_us_per_mb", "_in_flight", "_parallel")), p.name
        assert p.low <= p.prior <= p.high and p.source


@pytest.mark.parametrize("truth", [HDD_HOST, SSD_HOST], ids=["hdd", "ssd"])
def test_the_fit_finds_the_parameters_of_noisy_data_made_by_the_model(truth):
    fit = fit_speed(measured(truth, LAYOUTS, sigma=0.03, rng=np.random.default_rng(7)), ashift=ASHIFT)
    params = fit.parameters(0.95)
    misses = [p.name for p in params if not p.low <= truth[p.name] <= p.high]
    # 95 % intervals: one of ten may miss, besides reads_in_flight, whose prior at 1 pulls it below
    # a truth of 3 or 6 by more than its interval (docs/speed.md#intervals-how-often-they-hold-and-how-wide-they-are)
    assert len([name for name in misses if name != "reads_in_flight"]) <= 1, misses
    for p in params:
        assert p.pinned_by == "data", p.name
        # the records in flight shape only the knee of the read curve: the loosest of the ten
        assert p.value == pytest.approx(truth[p.name], rel=0.5 if p.name == "reads_in_flight" else 0.25), p.name
    for name in ("disk_write_mb_s", "disk_read_mb_s", "host_write_mb_s", "vdev_pipeline_mb_s"):
        assert fit.values[name] == pytest.approx(truth[name], rel=0.06), name


def test_without_a_row_that_pins_them_the_parameters_stay_at_their_priors():
    stripes = [parse_layout(t) for t in ("disk", "2xdisk", "4xdisk", "12xdisk")]
    fit = fit_speed(measured(HDD_HOST, stripes, sigma=0.02, rng=np.random.default_rng(1)), ashift=ASHIFT)
    by_name = {p.name: p for p in fit.parameters()}
    for name in ("vdev_pipeline_mb_s", "child_io_us", "parity_us_per_mb"):
        prior = next(p for p in PARAMETERS if p.name == name)
        assert by_name[name].pinned_by == "prior", name
        assert by_name[name].value == pytest.approx(prior.prior, rel=0.2), name
        # the interval is the prior's own: about e^(1.645 sd) either side
        assert by_name[name].high / by_name[name].value == pytest.approx(math.exp(1.645 * prior.prior_log_sd), rel=0.1)
    assert by_name["disk_write_mb_s"].pinned_by == by_name["host_write_mb_s"].pinned_by == "data"
    # no read measured: the read parameters are the priors, and the fit says so
    writes = [m for m in measured(HDD_HOST, stripes, sigma=0.02, rng=np.random.default_rng(1)) if m.metric == "write"]
    only_writes = fit_speed(writes, ashift=ASHIFT)
    assert only_writes.fitted_metrics == ("write",)
    assert {p.name: p.pinned_by for p in only_writes.parameters()}["disk_read_mb_s"] == "prior"


@pytest.mark.parametrize("reads", [(204, 434, 474), (204, 589, 1377), (204, 212, 215)])
def test_a_three_row_table_keeps_one_disk_physical(reads):
    """Issue 15: a three-row table once fitted a 5 GB/s read rate for one HDD."""
    layouts = [parse_layout(t) for t in ("disk", "mirror:3", "24xdisk")]
    fit = fit_speed([Measurement(layout, "read", r) for layout, r in zip(layouts, reads)], ashift=ASHIFT)
    v = fit.values
    # a flat table (the host caps even one disk) leaves the disk's own rate to the prior's pull
    assert reads[0] <= v["disk_read_mb_s"] <= 4 * reads[0]
    assert v["host_read_mb_s"] <= 10 * max(reads)
    for p in PARAMETERS:  # nothing pressed against a bound
        assert p.low * 1.01 < v[p.name] < p.high / 1.01 or p.name == "reads_in_flight", p.name


@pytest.mark.parametrize("truth", [HDD_HOST, SSD_HOST], ids=["hdd", "ssd"])
def test_intervals_from_a_calibration_design_cover_about_as_often_as_they_claim(truth):
    picks = [c.index for c in calibration_design(LAYOUTS)]
    inside = {m: [] for m in METRICS}
    for seed in range(10):
        rng = np.random.default_rng(seed)
        table = measured(truth, LAYOUTS, sigma=0.08, rng=rng)
        by_layout = {(str(m.layout), m.metric): m.mb_s for m in table}
        fit = fit_speed([m for m in table if LAYOUTS.index(m.layout) in picks], ashift=ASHIFT)
        for i, layout in enumerate(LAYOUTS):
            if i in picks:
                continue
            for m, interval in predict_intervals(fit, layout, level=0.9).items():
                inside[m].append(interval.low_mb_s <= by_layout[(str(layout), m)] <= interval.high_mb_s)
    coverage = {m: float(np.mean(v)) for m, v in inside.items()}
    assert all(0.8 <= c <= 0.995 for c in coverage.values()), coverage


def test_measurements_no_fit_can_use_are_named():
    disk = parse_layout("disk")
    for value, text in ((0.0, "write 0.0 MB/s"), (-3.0, "write -3.0 MB/s"), (math.nan, "write nan MB/s"),
                        (math.inf, "write inf MB/s")):
        with pytest.raises(FitError) as e:
            fit_speed([Measurement(disk, "write", value)])
        assert str(e.value) == f"disk: {text}: a measured rate must be a finite number > 0"
        assert e.value.exit_code == 2
    with pytest.raises(FitError, match="^nothing to fit: give at least one measured pool$"):
        fit_speed([])
    with pytest.raises(FitError, match="^disk: metric 'seeks': use one of write, rewrite, read$"):
        fit_speed([Measurement(disk, "seeks", 100.0)])


def test_a_parameter_known_beforehand_is_held_and_gets_no_interval():
    table = measured(HDD_HOST, LAYOUTS, sigma=0.03, rng=np.random.default_rng(3))
    fit = fit_speed(table, ashift=ASHIFT, fixed={"reads_in_flight": 1.0, "child_io_us": 4.0})
    by_name = {p.name: p for p in fit.parameters()}
    assert fit.values["reads_in_flight"] == pytest.approx(1.0) and by_name["reads_in_flight"].pinned_by == "fixed"
    assert by_name["child_io_us"].low == by_name["child_io_us"].high == pytest.approx(4.0)
    assert by_name["disk_write_mb_s"].pinned_by == "data"
    with pytest.raises(FitError, match="^cannot fix 'speed': the parameters are disk_write_mb_s, "):
        fit_speed(table, fixed={"speed": 1.0})
    with pytest.raises(FitError, match=r"^reads_in_flight fixed at 0.5: it must be from 1 to 1024$"):
        fit_speed(table, fixed={"reads_in_flight": 0.5})


def test_a_fit_gives_plan_a_profile_that_predicts_what_the_intervals_centre_on():
    from zfslab.model.performance import PRESETS, predict

    fit = fit_speed(measured(SSD_HOST, LAYOUTS[::2], sigma=0.05, rng=np.random.default_rng(5)), ashift=ASHIFT)
    profile = fit.profile(PRESETS["ssd"])
    assert profile.rand_read_iops_qd1 == PRESETS["ssd"].rand_read_iops_qd1  # what the fit does not touch
    for text in ("2xraidz2:12", "draid2:8d:24c:1s", "12xmirror:2+spare:1"):
        layout = parse_layout(text)
        p, iv = predict(layout, profile, ashift=ASHIFT), predict_intervals(fit, layout)
        for m in METRICS:
            assert getattr(p, f"{m}_mb_s") == pytest.approx(iv[m].mb_s, rel=1e-9), (text, m)
            assert iv[m].low_mb_s < iv[m].mb_s < iv[m].high_mb_s and iv[m].level == 0.9
    with pytest.raises(ValueError, match=r"^level\(=1\) must be between 0 and 1$"):
        predict_intervals(fit, parse_layout("disk"), level=1)


def _design_tables(truth: dict, *, sigma: float, seeds: int):
    """(fit on the design's rows, the other layouts' measured MB/s by metric) per seeded table."""
    picks = {c.index for c in calibration_design(LAYOUTS)}
    for seed in range(seeds):
        table = measured(truth, LAYOUTS, sigma=sigma, rng=np.random.default_rng(seed))
        fit = fit_speed([m for m in table if LAYOUTS.index(m.layout) in picks], ashift=ASHIFT)
        yield fit, [(m.layout, m.metric, m.mb_s) for m in table if LAYOUTS.index(m.layout) not in picks]


@pytest.mark.parametrize("truth", [HDD_HOST, SSD_HOST], ids=["hdd", "ssd"])
def test_on_a_clean_table_the_intervals_are_as_narrow_as_issue_35_asks_and_still_hold(truth):
    """Where the model is right and each measurement scatters by 3 %, the design's 9 rows give
    90 % intervals that hold for 85-99.5 % of the other rows at a median half-width under 12 %
    (measured 7-9 %, 91-99 %; before the scatter was pooled over the metrics: 11-14 %, 95-100 %)."""
    inside = {m: [] for m in METRICS}
    widths = {m: [] for m in METRICS}
    for fit, others in _design_tables(truth, sigma=0.03, seeds=10):
        intervals = {str(layout): predict_intervals(fit, layout) for layout in LAYOUTS}
        for layout, m, y in others:
            iv = intervals[str(layout)][m]
            inside[m].append(iv.low_mb_s <= y <= iv.high_mb_s)
            widths[m].append(50 * (iv.high_mb_s - iv.low_mb_s) / iv.mb_s)
    for m in METRICS:
        assert 0.85 <= np.mean(inside[m]) <= 0.995, (m, np.mean(inside[m]))
        assert np.median(widths[m]) <= 12, (m, np.median(widths[m]))


def test_an_interval_is_as_wide_as_the_prediction_is_unsure():
    """Each metric's intervals differ per layout only through the parameters' uncertainty carried
    to it, g' C g (g: the log prediction's gradient in the log parameters): ordered by it, the
    half-widths (in log) never fall, and they are widest where the fit's rows pin the least."""
    fit, _ = next(_design_tables(HDD_HOST, sigma=0.03, seeds=1))
    x = np.array(fit.log_values)
    cov = np.array(fit.covariance)

    def logs(v, layout):
        p = predict_intervals(replace(fit, log_values=tuple(v)), layout)
        return np.log([p[m].mb_s for m in METRICS])

    for k, m in enumerate(METRICS):
        rows = []
        for layout in LAYOUTS:
            g = jacobian(lambda v: logs(v, layout), x)[k]
            iv = predict_intervals(fit, layout)[m]
            rows.append((float(g @ cov @ g), math.log(iv.high_mb_s / iv.mb_s)))
        rows.sort()
        half = [h for _, h in rows]
        assert all(b >= a - 1e-9 for a, b in zip(half, half[1:])), m
        assert half[-1] > 1.05 * half[0], m  # the spread is real (rewrite's is the least: 11 %), not rounding
