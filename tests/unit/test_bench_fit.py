"""The bench fit as a library: a results file read into typed records and fitted, without the
command layer (issue 24); the database is built by the real store code (tests/unit/test_plan_db.py)."""

from __future__ import annotations

import dataclasses

import pytest

from tests.unit.test_plan_db import ars_run, bench_db
from zfslab.model.bench_fit import BenchFit, fit_ranges, measured_vs_predicted
from zfslab.model.performance import PRESETS
from zfslab.store.bench_fit import fit_bench_run, measured_rates
from zfslab.store.readback import MeasurementRecord, RunRecord, read_bench_history
from zfslab.store.rates import streaming_rate


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = bench_db(str(tmp_path_factory.mktemp("fit") / "r.sqlite"), 6)
    ars_run(path, 6)
    return path


def test_store_reads_are_frozen_records_with_the_options_decoded(db):
    history = read_bench_history(db)
    assert history.runs and all(type(r) is RunRecord for r in history.runs)
    assert all(type(m) is MeasurementRecord for m in history.measurements)
    run = history.runs[0]
    assert (run.ashift, run.recordsize_bytes, run.disk_count) == (12, 128 * 1024, 6)
    with pytest.raises(dataclasses.FrozenInstanceError):
        run.ashift = 9


def test_a_library_caller_fits_a_run_and_predicts_ranges(db):
    fit = fit_bench_run(db, PRESETS["hdd7200"])
    assert isinstance(fit, BenchFit) and fit.iops is not None and len(fit.measured) >= 2
    layout = sorted(fit.measured)[0]
    ranges = fit_ranges(fit, [layout], ashift=12, recordsize=128 * 1024)
    low, high = ranges.intervals[layout]["write_mb_s"]
    assert 0 < low <= fit.measured[layout]["write"] * 2 and low < high
    assert layout in ranges.measured


def test_each_streaming_rate_is_paired_with_its_prediction_once(db):
    history = read_bench_history(db)
    rates = measured_rates(history, streaming_rate, db)
    pairs = measured_vs_predicted(rates, PRESETS["hdd7200"], ashift=12)
    streaming = [m for m in history.measurements if streaming_rate(m) and streaming_rate(m)[1]]
    assert len(pairs) == len(streaming) > 0
    assert all(p.predicted_mb_s > 0 and p.measured_mb_s > 0 for p in pairs)
