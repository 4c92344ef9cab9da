"""model/validation.py: dataset rows to layouts, the rule of thumb by hand, and a fit that finds
the parameters a dataset was made from.

The dataset below is written from the speed model's own definitions (performance.py docstring),
computed here by hand rather than by predict(): with n data disks of S_w / S_r MB/s behind a
host that caps writes at C_w and reads at C_r, write = min(n S_w, C_w), read = 1 / (1/(n S_r)
+ 1/C_r), rewrite = R_1 (1 + (n - 1) rho), at most the read and the write.
"""

from __future__ import annotations

import csv
import io

import pytest

from zfslab.errors import UsageError
from zfslab.model.validation import KINDS, MAX_ROWS, METRICS, baseline, parse_dataset, row_layout, validate

S_W, S_R, C_W, C_R, R_1, RHO = 150.0, 180.0, 1000.0, 1500.0, 60.0, 0.25


def write_of(n: float) -> float:
    return min(n * S_W, C_W)


def read_of(n: float) -> float:
    return 1.0 / (1.0 / (n * S_R) + 1.0 / C_R)


def rewrite_of(n: float) -> float:
    return min(R_1 * (1 + (n - 1) * RHO), read_of(n), write_of(n))


def records(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def record(disks, kind, vdevs, width, *, write=None, rewrite=None, read=None, calibration="0") -> dict[str, str]:
    r = {"disks": str(disks), "kind": kind, "vdevs": str(vdevs), "width": str(width), "calibration": calibration}
    for name, value in (("write", write), ("rewrite", rewrite), ("read", read)):
        r[f"{name}_MBps"] = "" if value is None else repr(value)
    return r


def model_record(disks, kind, vdevs, width, *, write_disks, read_disks, calibration="0"):
    """A row measured on an ideal pool: write_disks carry data, read_disks are read from."""
    return record(disks, kind, vdevs, width, write=write_of(write_disks), read=read_of(read_disks),
                  rewrite=min(R_1 * (1 + (write_disks - 1) * RHO), read_of(read_disks), write_of(write_disks)),
                  calibration=calibration)


# ---- rows ------------------------------------------------------------------------------------

@pytest.mark.parametrize("disks,kind,vdevs,width,layout", [
    (1, "stripe", 1, 1, "disk"),
    (24, "stripe", 24, 1, "24xdisk"),
    (4, "mirror", 2, 2, "2xmirror:2"),
    (3, "mirror", 1, 3, "mirror:3"),
    (5, "raidz1", 1, 5, "raidz1:5"),
    (12, "raidz2", 2, 6, "2xraidz2:6"),
    (22, "raidz3", 2, 11, "2xraidz3:11"),
])
def test_row_layout_builds_the_pool_of_the_row(disks, kind, vdevs, width, layout):
    built = row_layout(disks, kind, vdevs, width, 0)
    assert str(built) == layout
    assert built.disks == disks


@pytest.mark.parametrize("args,message", [
    ((4, "raid5", 1, 4, 2), "row 2: kind 'raid5': use one of stripe, mirror, raidz1, raidz2, raidz3"),
    ((0, "stripe", 0, 1, 0), "row 0: vdevs and width must be at least 1, got 0 and 1"),
    ((4, "raidz1", 1, 3, 7), "row 7: 1 vdevs x width 3 is 3 disks, but disks says 4"),
    ((2, "stripe", 1, 2, 3), "row 3: a stripe has width 1 (one disk per vdev), got 2"),
    ((1, "mirror", 1, 1, 0), "row 0: mirror:1: a mirror needs at least 2 disks, got width=1"),
    ((3, "raidz3", 1, 3, 1), "row 1: raidz3:3: a raidz3 vdev needs more disks than its parity (3): at least raidz3:4"),
    ((300, "mirror", 1, 300, 0), "row 0: at most 1024 disks and 255 per vdev, got 300 and 300"),
])
def test_row_layout_refuses_a_row_that_is_no_pool(args, message):
    with pytest.raises(UsageError) as e:
        row_layout(*args)
    assert str(e.value) == message
    assert e.value.exit_code == 2


def test_kinds_and_metrics():
    assert KINDS == ("stripe", "mirror", "raidz1", "raidz2", "raidz3")
    assert METRICS == ("write", "rewrite", "read")


# ---- the dataset -----------------------------------------------------------------------------

def test_parse_dataset_reads_csv_records():
    rows = parse_dataset(records(
        "disks,kind,vdevs,width,write_MBps,rewrite_MBps,read_MBps,calibration,label\n"
        "1,stripe,1,1,108,50,204,1,single drive\n"
        " 4 , raidz1 ,1, 4 ,300.5,,1e3,0,spaces are trimmed\n"
        "2,mirror,1,2,106,50,488,,no calibration cell\n"))
    assert [(r.index, str(r.layout), r.calibration) for r in rows] == [
        (0, "disk", True), (1, "raidz1:4", False), (2, "mirror:2", False)]
    assert rows[0].measured == {"write": 108.0, "rewrite": 50.0, "read": 204.0}
    assert rows[1].measured == {"write": 300.5, "read": 1000.0}  # an empty cell is not measured
    assert rows[2].measured == {"write": 106.0, "rewrite": 50.0, "read": 488.0}


def test_parse_dataset_takes_the_measured_range_inclusive():
    rows = parse_dataset([record(1, "stripe", 1, 1, write=0.1, read=1e6, calibration="1")])
    assert rows[0].measured == {"write": 0.1, "read": 1e6}


@pytest.mark.parametrize("recs,message", [
    ([], "the dataset has no rows: give a header line and one line per measured pool"),
    ([{"disks": "1", "kind": "stripe", "width": "1", "write_MBps": "1"}],
     "the dataset needs a column 'vdevs' (disks,kind,vdevs,width)"),
    ([{"disks": "1", "kind": "stripe", "vdevs": "1", "width": "1", "calibration": "1"}],
     "the dataset has no measurements: give at least one column of write_MBps, rewrite_MBps, read_MBps"),
    ([record(1, "stripe", 1, 1, write=100.0, calibration="yes")],
     "row 0: calibration is 1 (fit on it) or 0 (predict it), got 'yes'"),
    ([record(1, "stripe", 1, 1, write=100.0), record(2, "stripe", 2, 1, write=200.0)],
     "no row has calibration=1: mark the rows the model may be fitted on"),
    ([record(1, "stripe", 1, 1, calibration="1"), record(2, "stripe", 2, 1, write=200.0)],
     "no calibration row has a measured value: nothing to fit the model on"),
    ([record(1, "stripe", 1, 1, write=0.09, calibration="1")],
     "row 0: write_MBps must be from 0.1 to 1e+06 MB/s, got 0.09"),
    ([record(1, "stripe", 1, 1, calibration="1") | {"read_MBps": "fast"}], "row 0: read_MBps 'fast' is not a number"),
    ([record(1, "stripe", 1, 1, write=1.0, calibration="1"), record("1.5", "stripe", 1, 1, write=1.0)],
     "row 1: disks, vdevs and width must be whole numbers, got '1.5', '1', '1'"),
    ([{"disks": "1", "kind": "stripe", "vdevs": None, "width": None, "write_MBps": None, "calibration": None}],
     "row 0: disks, vdevs and width must be whole numbers, got '1', '', ''"),  # csv's restval of a short line
    ([record(4, "raidz1", 1, 3, write=1.0, calibration="1")], "row 0: 1 vdevs x width 3 is 3 disks, but disks says 4"),
])
def test_parse_dataset_errors_name_the_row_and_the_value(recs, message):
    with pytest.raises(UsageError) as e:
        parse_dataset(recs)
    assert str(e.value) == message


def test_parse_dataset_takes_at_most_max_rows():
    assert MAX_ROWS == 1000
    ok = [record(1, "stripe", 1, 1, write=100.0, calibration="1")] * MAX_ROWS
    assert len(parse_dataset(ok)) == 1000
    with pytest.raises(UsageError, match="^the dataset has 1001 rows; validate takes at most 1000$"):
        parse_dataset(ok + ok[:1])


# ---- the rule of thumb -------------------------------------------------------------------------

def test_baseline_by_hand():
    rows = parse_dataset([
        record(1, "stripe", 1, 1, write=100.0, read=200.0, calibration="1"),
        record(4, "stripe", 4, 1, write=380.0, read=700.0, calibration="1"),
        record(4, "mirror", 2, 2, write=190.0, read=650.0),
        record(6, "raidz2", 1, 6, write=350.0, read=600.0),
        record(3, "raidz1", 1, 3, write=250.0),
    ])
    stripe1, stripe4, mirrors, raidz2, raidz1 = rows
    # per unit from the smallest calibration row: 100 MB/s written, 200 read per disk; capped at
    # the best calibration row: 380 written, 700 read
    assert baseline(rows, "write", mirrors, 12) == 200.0  # two vdevs write
    assert baseline(rows, "read", mirrors, 12) == 700.0  # four disks read: 800, capped
    assert baseline(rows, "write", raidz2, 12) == 380.0  # four data disks: 400, capped
    assert baseline(rows, "read", raidz2, 12) == 700.0
    assert baseline(rows, "write", raidz1, 12) == 200.0  # two data disks
    assert baseline(rows, "write", stripe1, 12) == 100.0
    assert baseline(rows, "write", stripe4, 12) == 380.0
    assert baseline(rows, "rewrite", mirrors, 12) is None  # no calibration row measured it


def test_validate_scores_the_rule_of_thumb_on_the_predicted_rows_only():
    rows = parse_dataset([
        record(1, "stripe", 1, 1, write=100.0, calibration="1"),
        record(4, "stripe", 4, 1, write=380.0, calibration="1"),
        record(4, "mirror", 2, 2, write=190.0),  # rule 200: 10 / 190 = 5.263 % off
        record(3, "raidz1", 1, 3, write=250.0),  # rule 200: 50 / 250 = 20 % off
    ])
    out = validate(rows, ashift=12)
    assert out["baseline"]["write"]["rows"] == 2
    assert out["baseline"]["write"]["median_ape_pct"] == pytest.approx((10 / 190 * 100 + 20) / 2, rel=1e-12)
    assert out["baseline"]["read"] == {"median_ape_pct": None, "rows": 0}
    assert out["metrics"]["write"]["rows"] == 2
    assert out["metrics"]["rewrite"] == {"median_ape_pct": None, "rows": 0}
    assert out["fitted_metrics"] == ["write"]
    assert out["ashift"] == 12
    assert [(r["index"], r["layout"], r["calibration"]) for r in out["rows"]] == [
        (0, "disk", True), (1, "4xdisk", True), (2, "2xmirror:2", False), (3, "raidz1:3", False)]
    assert out["rows"][2]["measured"] == {"write": 190.0}
    assert out["rows"][2]["rule_of_thumb"] == {"write": 200.0, "rewrite": None, "read": None}
    assert set(out["rows"][2]["predicted"]) == set(METRICS)


# ---- the fit -------------------------------------------------------------------------------------

def ideal_dataset() -> list[dict[str, str]]:
    """Stripes to calibrate on (the single disk, 4 and 24 disks), then pools to predict.

    raidz at ashift 12 with 128 KiB records: 32 data sectors in full rows, padded to a multiple
    of parity + 1, is exactly (width - parity) disks' worth for these widths (5/1, 6/2, 11/3).
    """
    return [
        model_record(1, "stripe", 1, 1, write_disks=1, read_disks=1, calibration="1"),
        model_record(4, "stripe", 4, 1, write_disks=4, read_disks=4, calibration="1"),
        model_record(24, "stripe", 24, 1, write_disks=24, read_disks=24, calibration="1"),
        model_record(2, "stripe", 2, 1, write_disks=2, read_disks=2),
        model_record(8, "stripe", 8, 1, write_disks=8, read_disks=8),
        model_record(4, "mirror", 2, 2, write_disks=2, read_disks=4),  # mirrors write a copy, read every child
        model_record(3, "mirror", 1, 3, write_disks=1, read_disks=3),
        model_record(5, "raidz1", 1, 5, write_disks=4, read_disks=4),
        model_record(6, "raidz2", 1, 6, write_disks=4, read_disks=4),
        model_record(12, "raidz2", 2, 6, write_disks=8, read_disks=8),
        model_record(11, "raidz3", 1, 11, write_disks=8, read_disks=8),
    ]


def test_the_hand_model_is_what_the_dataset_holds():
    # the figures the fit must find, worked once more by hand
    assert (write_of(1), write_of(4), write_of(24)) == (150.0, 600.0, 1000.0)
    assert read_of(1) == pytest.approx(180 * 1500 / 1680, rel=1e-15)  # 160.714 MB/s
    assert (rewrite_of(1), rewrite_of(4), rewrite_of(24)) == (60.0, 105.0, 405.0)


def test_the_fit_finds_the_parameters_the_dataset_was_made_from():
    out = validate(parse_dataset(records_from(ideal_dataset())), ashift=12)
    p = out["parameters"]
    assert p["disk_seq_write_mb_s"] == pytest.approx(S_W, rel=1e-6)
    assert p["disk_seq_read_mb_s"] == pytest.approx(S_R, rel=1e-6)
    assert p["host_write_mb_s"] == pytest.approx(C_W, rel=1e-6)
    assert p["host_read_mb_s"] == pytest.approx(C_R, rel=1e-6)
    assert p["disk_rewrite_mb_s"] == pytest.approx(R_1, rel=1e-6)
    assert p["rewrite_parallel"] == pytest.approx(RHO, rel=1e-6)
    assert out["fitted_metrics"] == ["write", "rewrite", "read"]
    for m in METRICS:
        assert out["metrics"][m]["rows"] == 8
        assert out["metrics"][m]["median_ape_pct"] < 1e-6
    for row in out["rows"]:
        for m in METRICS:
            assert row["predicted"][m] == pytest.approx(row["measured"][m], rel=1e-6), (row["layout"], m)


def test_the_model_beats_the_rule_of_thumb_where_the_host_caps_the_pool():
    out = validate(parse_dataset(records_from(ideal_dataset())), ashift=12)
    # the rule scales the single disk's read linearly (mirrors: every disk), capped at the 24-disk
    # stripe's. Its errors on the 8 predicted rows, sorted: 2 disks 10.7 %, 3 disks 21.4 %, 4 disks
    # 32.1 % (three rows), 8 disks capped 51.5 % (three rows): the median is a 4-disk row's
    four_disks = abs(4 * read_of(1) - read_of(4)) / read_of(4) * 100
    assert out["baseline"]["read"]["median_ape_pct"] == pytest.approx(four_disks, rel=1e-9)
    assert four_disks == pytest.approx(32.14, abs=0.01)
    assert out["metrics"]["read"]["median_ape_pct"] < four_disks / 1000


def records_from(recs: list[dict[str, str]]) -> list[dict[str, str]]:
    """The same records through a CSV file's text, as the command reads them."""
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(recs[0]))
    w.writeheader()
    w.writerows(recs)
    return records(buf.getvalue())
