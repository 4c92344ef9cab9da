"""plan --db: the speed model fitted on a bench run's streaming tests predicts every layout, with
a range; the measured layouts are marked and the footer says what the figures rest on. The
database is built through store/results.py with rates the model itself makes (docs/speed.md#plan---db)."""

from __future__ import annotations

import json
import math
import os
import time
from dataclasses import replace

import pytest

from zfslab.model.calibration import calibration_design
from zfslab.model.candidates import candidate_layouts
from zfslab.model.layout_grammar import parse_layout
from zfslab.model.performance import PRESETS, HostLimits, predict
from zfslab.store.results import Measurement, Results
from zfslab.store.schema import connect

DISK_BYTES = 4_000_787_030_016
# the disks and host the synthetic bench measures: not the preset, so the fit has something to find
TRUTH = replace(PRESETS["hdd7200"], seq_write_mb_s=150.0, seq_read_mb_s=170.0,
                host=HostLimits(write_mb_s=900.0, read_mb_s=1100.0))
TESTS = {"seqwrite": "write_mb_s", "rewrite": "rewrite_mb_s", "seqread": "read_mb_s"}


def record(layout: str, test: str, mb_s: float, repeat: int = 1) -> Measurement:
    write = mb_s if test != "seqread" else 0.0
    read = mb_s if test == "seqread" else 0.0
    return Measurement(layout=layout, test=test, repeat=repeat, seconds=10.0, read_mb_s=read, write_mb_s=write,
                       read_iops=read, write_iops=write, read_clat_p50_us=None, read_clat_p99_us=None,
                       write_clat_p50_us=None, write_clat_p99_us=None, sync_mean_us=None, disk_read_mb=0.0,
                       disk_write_mb=0.0, disk_util_max=0.9, cache_suspect=False, fio_json="{}",
                       diskstats_json="{}", iostat_text="")


def bench_db(path, disks: int = 6, layouts=None, *, tests=TESTS, sandbox=False, value=None,
             disk_bytes=DISK_BYTES, rotational=None) -> str:
    """A finished bench run of `layouts` (default: the calibration design for `disks`), each test
    measured twice at what the TRUTH profile predicts (±2 %), or at `value`."""
    if layouts is None:
        layouts = [str(p.layout) for p in calibration_design(candidate_layouts(disks))]
    results = Results(connect(str(path)))
    run_id = results.start_run(key="k", command="zfslab bench", suite="seq", repeats=2,
                               options={"ashift": 12, "recordsize": "128K"}, sandbox=sandbox, facts={},
                               disks=[{"device": f"/dev/d{i}", "size_bytes": None if sandbox else disk_bytes,
                                       "rotational": rotational} for i in range(disks)])
    for text in layouts:
        p = predict(parse_layout(text), TRUTH)
        for test, field in tests.items():
            mb_s = getattr(p, field) if value is None else value
            results.add(run_id, record(text, test, mb_s * 0.98, 1), record(text, test, mb_s * 1.02, 2))
    results.finish_run(run_id)
    results.conn.close()
    return str(path)


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    return bench_db(tmp_path_factory.mktemp("db") / "r.sqlite")


def test_the_table_marks_the_measured_layouts_and_says_what_the_speed_rests_on(run_cli, db):
    r = run_cli("plan", "--db", db, "--all", "--explain")
    assert r.exit_code == 0, r.stderr
    out = r.stdout
    assert out.startswith("6 × 4.00 TB disks (whole disks, Linux partitioning)")
    assert "Speed figures: fitted on 6 layouts measured on these disks (run 1); m: measured;" in out
    measured = {str(p.layout) for p in calibration_design(candidate_layouts(6))}
    every = {str(x) for x in candidate_layouts(6)}
    table = [line.split() for line in out.splitlines() if line.split()[:2] and set(line.split()[:2]) & every]
    assert len(table) == len(every)
    for cells in table:  # the mark (★ ◆) or none, the layout, then the figures
        name = cells[0] if cells[0] in every else cells[1]
        speed_cells = [c for c in cells if c.endswith("m")]
        assert (len(speed_cells) == 3) == (name in measured), cells  # speed ×disk, write and read
    assert max(len(line) for line in out.splitlines()) <= 100


def test_json_rows_have_the_ranges_and_the_measured_medians(run_cli, db):
    r = run_cli("plan", "--db", db, "--json")
    assert r.exit_code == 0, r.stderr
    data = json.loads(r.stdout)
    assert (data["disk_count"], data["disk_bytes"]) == (6, DISK_BYTES)
    fit = data["speed_fit"]
    assert fit["run_id"] == 1 and len(fit["layouts_measured"]) == 6
    assert {p["name"] for p in fit["parameters"]} >= {"disk_write_mb_s", "host_read_mb_s"}
    rows = {row["layout"]: row for row in data["layouts"]}
    assert set(rows) == {str(x) for x in candidate_layouts(6)}
    for name, row in rows.items():
        for metric in ("write", "rewrite", "read"):
            value = row["speed"][f"{metric}_mb_s"]
            assert row[f"{metric}_mb_s_low"] < value < row[f"{metric}_mb_s_high"], (name, metric)
        assert row["measured"] == (name in fit["layouts_measured"])
        if row["measured"]:
            truth = predict(parse_layout(name), TRUTH)
            assert row["measured_write_mb_s"] == pytest.approx(truth.write_mb_s)  # the median of ±2 %
        else:
            assert row["measured_read_mb_s"] is None
    # the model's own rates come back: every layout, measured or not, within 10 % of the truth
    for name, row in rows.items():
        truth = predict(parse_layout(name), TRUTH)
        for metric in ("write", "read"):
            assert math.isclose(row["speed"][f"{metric}_mb_s"], getattr(truth, f"{metric}_mb_s"), rel_tol=0.1), \
                (name, metric)


def test_csv_rows_have_the_same_fields(run_cli, db):
    r = run_cli("plan", "--db", db, "--csv")
    assert r.exit_code == 0, r.stderr
    header = r.stdout.splitlines()[0].split(",")
    assert {"write_mb_s_low", "write_mb_s_high", "read_mb_s_low", "rewrite_mb_s_high", "measured",
            "measured_write_mb_s"} <= set(header)


def test_wide_shows_the_ranges(run_cli, db):
    r = run_cli("plan", "--db", db, "--wide")
    assert r.exit_code == 0, r.stderr
    assert "range MB/s" in r.stdout
    r = run_cli("plan", "--db", db, "--columns", "layout,write,write_range")
    assert r.exit_code == 0, r.stderr
    assert "write 90 %" in r.stdout


def test_disks_given_override_the_runs(run_cli, db):
    data = json.loads(run_cli("plan", "12x8TB", "--db", db, "--json").stdout)
    assert data["disk_count"] == 12 and data["speed_fit"]["run_id"] == 1
    assert not any(row["measured"] for row in data["layouts"] if row["layout"].startswith("12"))


def test_plan_db_takes_under_two_seconds(run_cli, db):
    # CPU seconds, a guard against a runaway fit: wall time on a loaded CI machine measured 2.1 s
    start = time.process_time()
    assert run_cli("plan", "--db", db, "--all").exit_code == 0
    assert time.process_time() - start < 2.0


def test_without_db_the_output_is_unchanged(run_cli):
    r = run_cli("plan", "6x4TB", "--all", "--explain")
    assert "Speed figures" not in r.stdout and "preset, uncalibrated" in r.stdout
    assert "write_mb_s_low" not in run_cli("plan", "6x4TB", "--json").stdout


@pytest.mark.parametrize("make, message", [
    (lambda p: Results(connect(p)).conn.close(), "no bench run in it"),
    (lambda p: bench_db(p, tests={"randread-4k-t1q1": "read_mb_s"}), "no bench run measured streaming rates"),
    (lambda p: bench_db(p, layouts=["raidz2:6"]), "run 1 measured 1 layout; the fit needs at least 2"),
    (lambda p: bench_db(p, value=float("inf")), "not a zfslab value"),
    (lambda p: bench_db(p, value=-5.0), "below 0: not a zfslab value"),   # store/readback.py, as report
    (lambda p: bench_db(p, sandbox=True), "does not say its disks' size"),
])
def test_bad_databases_get_one_line_and_exit_2(run_cli, tmp_path, make, message):
    path = str(tmp_path / "r.sqlite")
    make(path)
    r = run_cli("plan", "--db", path)
    assert r.exit_code == 2 and r.stdout == "", r.stdout
    assert r.stderr.startswith("zfslab: error: ") and r.stderr.count("\n") == 1 and message in r.stderr, r.stderr


def test_a_missing_file_and_no_speed(run_cli, tmp_path, db):
    r = run_cli("plan", "--db", str(tmp_path / "none.sqlite"))
    assert r.exit_code == 2 and "no such file" in r.stderr
    r = run_cli("plan", "--db", db, "--no-speed")
    assert r.exit_code == 2 and "--no-speed" in r.stderr
    assert not os.path.exists(tmp_path / "none.sqlite")


# --- the random path: the ars suite's 4K tests, measured in a run of their own on the same disks ---

# the disks' random path as the synthetic ars run measures it: not the preset's, so the fit has work to do
TRUTH_IOPS = replace(TRUTH, rand_read_iops_qd1=110.0, rand_read_iops_qd8=190.0, sync_write_ms=7.0,
                     host=replace(TRUTH.host, read_modify_write=0.6, sync_batch=3.0))
ARS = {"randread-4k-t1q1": "rand_read_iops_qd1", "randread-4k-t8q8": "rand_read_iops_qd8",
       "randwrite-4k-t1q1": "rand_write_iops_qd1", "randwrite-4k-t8q8": "rand_write_iops_qd8",
       "syncwrite-4k-t1q1": "sync_write_iops_qd1", "syncwrite-4k-t8q8": "sync_write_iops_qd8"}


def iops_record(layout: str, test: str, iops: float, repeat: int) -> Measurement:
    read = test.startswith("randread")
    return replace(record(layout, "seqread" if read else "seqwrite", 0.0, repeat), test=test,
                   read_iops=iops if read else 0.0, write_iops=0.0 if read else iops,
                   read_mb_s=iops * 4096e-6 if read else 0.0, write_mb_s=0.0 if read else iops * 4096e-6)


def ars_run(path, disks: int = 6, layouts=None, *, devices: str = "/dev/d", value=None) -> None:
    """A finished `bench --suite ars` run after the seq run of bench_db: each 4K test twice at what
    TRUTH_IOPS predicts (±3 %), or at `value`."""
    if layouts is None:
        layouts = [str(p.layout) for p in calibration_design(candidate_layouts(disks))]
    results = Results(connect(str(path)))
    run_id = results.start_run(key="a", command="zfslab bench --suite ars", suite="ars", repeats=2,
                               options={"ashift": 12, "recordsize": "128K"}, sandbox=False, facts={},
                               disks=[{"device": f"{devices}{i}", "size_bytes": DISK_BYTES} for i in range(disks)])
    for text in layouts:
        p = predict(parse_layout(text), TRUTH_IOPS)
        for test, field in ARS.items():
            iops = getattr(p, field) if value is None else value
            results.add(run_id, iops_record(text, test, iops * 0.97, 1), iops_record(text, test, iops * 1.03, 2))
    results.finish_run(run_id)
    results.conn.close()


@pytest.fixture(scope="module")
def ars_db(tmp_path_factory):
    path = bench_db(tmp_path_factory.mktemp("ars") / "r.sqlite")
    ars_run(path)
    return path


def test_ars_results_fit_the_iops_columns_with_ranges(run_cli, ars_db):
    r = run_cli("plan", "--db", ars_db, "--json")
    assert r.exit_code == 0, r.stderr
    data = json.loads(r.stdout)
    fit = data["speed_fit"]
    assert fit["run_id"] == 1 and fit["iops_from"] == "fit"
    iops = fit["iops_fit"]
    assert iops["run_id"] == 2 and len(iops["layouts_measured"]) == 6
    values = {p["name"]: p for p in iops["parameters"]}
    truth = {"disk_read_iops_qd1": 110.0, "disk_read_iops_qd8": 190.0, "sync_write_ms": 7.0,
             "read_modify_write": 0.6, "sync_batch": 3.0}
    for name, value in truth.items():  # the preset says 80, 140, 12 ms, 1 and 1: the data moved them
        assert values[name]["low"] <= value <= values[name]["high"], values[name]
        assert values[name]["pinned_by"] == "data"
    assert values["host_read_iops"]["pinned_by"] == "prior"  # HDDs never reach the host's read path
    for row in data["layouts"]:
        p = predict(parse_layout(row["layout"]), TRUTH_IOPS)
        for metric in ARS.values():
            value = row["speed"][metric]
            assert row[f"{metric}_low"] < value < row[f"{metric}_high"], (row["layout"], metric)
            assert math.isclose(value, getattr(p, metric), rel_tol=0.1), (row["layout"], metric)
        assert row["measured_iops"] == (row["layout"] in iops["layouts_measured"])


def test_the_footer_says_what_the_iops_rest_on(run_cli, ars_db, db):
    out = " ".join(run_cli("plan", "--db", ars_db, "--explain").stdout.split())  # the footer wraps at the page's width
    assert "IOPS: fitted on 6 layouts measured by the ars suite on these disks (run 2)" in out
    assert "IOPS fitted" in out and "IOPS from hdd)" not in out
    # streaming only: still fitted, the IOPS are the preset's
    out = " ".join(run_cli("plan", "--db", db, "--explain").stdout.split())
    assert "Speed figures: fitted on 6 layouts" in out
    assert "IOPS: from the hdd preset, uncalibrated: no ars run on these disks" in out
    data = json.loads(run_cli("plan", "--db", db, "--json").stdout)
    assert data["speed_fit"]["iops_from"] == "preset" and data["speed_fit"]["iops_fit"] is None
    assert "rand_read_iops_qd8_low" not in data["layouts"][0]


def test_the_iops_columns_are_marked_and_ranged(run_cli, ars_db):
    out = run_cli("plan", "--db", ars_db, "--all", "--columns", "layout,rand_read,rand_read_range").stdout
    assert "rand_read 90 %" in out and "range IOPS" in out
    measured = {str(p.layout) for p in calibration_design(candidate_layouts(6))}
    every = {str(x) for x in candidate_layouts(6)}
    rows = [cells[1:] if cells[0] in "★◆" else cells for cells in map(str.split, out.splitlines())
            if set(cells[:2]) & every]
    assert len(rows) == len(every)
    for name, iops, low_high in rows:  # the mark, then the fitted figure inside its range
        assert iops.endswith("m") == (name in measured), rows
        low, high = (float(x.replace(",", "")) for x in low_high.split("-"))
        assert low < float(iops.rstrip("m").replace(",", "")) < high


def test_an_ars_run_on_other_disks_is_not_used(run_cli, tmp_path):
    path = bench_db(tmp_path / "r.sqlite")
    ars_run(path, devices="/dev/other")
    out = " ".join(run_cli("plan", "--db", path, "--explain").stdout.split())
    assert "IOPS: from the hdd preset" in out


@pytest.mark.parametrize("value, message", [(-5.0, "below 0: not a zfslab value"),
                                            (float("inf"), "not a zfslab value")])
def test_bad_iops_get_one_line_and_exit_2(run_cli, tmp_path, value, message):
    path = bench_db(tmp_path / "r.sqlite")
    ars_run(path, value=value)
    r = run_cli("plan", "--db", path)
    assert r.exit_code == 2 and r.stdout == "", r.stdout
    assert r.stderr.startswith("zfslab: error: ") and r.stderr.count("\n") == 1 and message in r.stderr, r.stderr


def test_the_iops_tests_are_the_ars_suites_4k_tests():
    from zfslab.model.iops_fit import METRICS
    from zfslab.store.rates import IOPS_METRIC
    from zfslab.system.suites import SUITES
    ars = {t.name: t for t in SUITES["ars"]}
    assert IOPS_METRIC == ARS and set(IOPS_METRIC.values()) == set(METRICS)
    for name, metric in IOPS_METRIC.items():  # the point each metric names: 4K, 1 job QD1 or 8 jobs QD8
        t = ars[name]
        assert t.bs == "4k" and (t.numjobs, t.iodepth) == ((1, 1) if metric.endswith("qd1") else (8, 8))
        assert (t.fsync == 1) == metric.startswith("sync") and t.reads == metric.startswith("rand_read")


def test_a_fit_on_other_disks_says_what_was_measured_and_what_is_planned(run_cli, tmp_path):
    # the trial: runs on 2 x 1 GB SSDs, a plan for 6 x 4 TB; the footer said "measured on these disks"
    small = bench_db(tmp_path / "ssd.sqlite", 2, ["mirror:2", "2xdisk"],
                     disk_bytes=1_000_000_000, rotational=False)
    r = run_cli("plan", "6x4TB", "--db", small, "--explain")
    assert r.exit_code == 0, r.stderr
    line = ("Speed fitted on other disks: measured on 2 × 1.00 GB solid-state, planned for 6 × 4.00 TB rotational "
            "(count, size and type differ); the speed figures carry the fit over, nothing measured them.")
    assert line in " ".join(r.stdout.split())
    assert "measured on these disks" not in r.stdout and "measured on other disks (above)" in r.stdout
    data = json.loads(run_cli("plan", "6x4TB", "--db", small, "--json").stdout)
    assert data["speed_fit_other_disks"] == line
    # the table's own notes (no --explain) carry it too
    assert line in " ".join(run_cli("plan", "6x4TB", "--db", small).stdout.split())
    # the same disks planned as SSDs: only count and size differ
    ssd = json.loads(run_cli("plan", "6x4TB", "--db", small, "--disk-type", "ssd", "--json").stdout)
    assert "(count and size differ)" in ssd["speed_fit_other_disks"]


def test_the_measured_disks_planned_again_give_no_warning(run_cli, db, tmp_path):
    assert json.loads(run_cli("plan", "--db", db, "--json").stdout)["speed_fit_other_disks"] is None
    # a disk of the same nominal size from another vendor (2 % apart at most) is the same size
    assert json.loads(run_cli("plan", "6x4000225165312", "--db", db, "--json").stdout)["speed_fit_other_disks"] is None
    hdd = bench_db(tmp_path / "hdd.sqlite", rotational=True)
    assert json.loads(run_cli("plan", "--db", hdd, "--json").stdout)["speed_fit_other_disks"] is None
    assert "(type differs)" in json.loads(
        run_cli("plan", "--db", hdd, "--disk-type", "nvme", "--json").stdout)["speed_fit_other_disks"]
    assert "(count differs)" in json.loads(run_cli("plan", "8x4TB", "--db", hdd, "--json").stdout)["speed_fit_other_disks"]
