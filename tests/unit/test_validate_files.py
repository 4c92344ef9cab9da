"""`zfslab validate` on files that are not what they claim (issue 19): one line on stderr, exit 2."""

import codecs
import json
import os

import pytest

from tests.conftest import DATA

HEADER = "disks,kind,vdevs,width,write_MBps,calibration\n"
GOOD = open(os.path.join(DATA, "calomel-calibrated.csv"), encoding="utf-8").read()


@pytest.mark.parametrize("name,content,message", [
    ("binary.csv", bytes(range(256)) * 8, "not UTF-8 text (byte 128); save it as UTF-8 CSV"),
    ("utf16-no-bom.csv", GOOD.encode("utf-16-le"), "holds NUL characters: a binary file, not CSV text"),
    ("nul.csv", (HEADER + "1,stripe,1,1,100\x00,1\n").encode(), "holds NUL characters"),
    ("long-field.csv", (HEADER + "1,stripe,1,1," + "9" * 131_073 + ",1\n").encode(),
     "not a readable CSV file (field larger than field limit (131072))"),
    ("short-row.csv", (HEADER + "1,stripe\n").encode(), "row 0: disks, vdevs and width must be whole numbers"),
    ("nan.csv", (HEADER + "1,stripe,1,1,nan,1\n").encode(), "row 0: write_MBps 'nan' is not a number"),
    ("inf.csv", (HEADER + "1,stripe,1,1,inf,1\n").encode(), "row 0: write_MBps 'inf' is not a number"),
    ("tiny.csv", (HEADER + "1,stripe,1,1,1e-7,1\n").encode(), "write_MBps must be from 0.1 to 1e+06 MB/s, got 1e-7"),
    ("huge.csv", (HEADER + "1,stripe,1,1,1e400,1\n").encode(), "write_MBps must be from 0.1 to 1e+06 MB/s, got 1e400"),
    ("negative.csv", (HEADER + "1,stripe,1,1,-5,1\n").encode(), "write_MBps must be from 0.1 to 1e+06 MB/s, got -5"),
    ("digits.csv", (HEADER + "²,stripe,1,1,100,1\n").encode(), "row 0: disks, vdevs and width must be whole numbers"),
    ("wide.csv", (HEADER + "300,mirror,1,300,100,1\n").encode(), "row 0: at most 1024 disks and 255 per vdev"),
    ("no-measurements.csv", b"disks,kind,vdevs,width,calibration\n1,stripe,1,1,1\n2,stripe,2,1,0\n",
     "the dataset has no measurements: give at least one column of write_MBps, rewrite_MBps, read_MBps"),
    ("empty-measurements.csv", (HEADER + "1,stripe,1,1,,1\n2,stripe,2,1,200,0\n").encode(),
     "no calibration row has a measured value"),
    ("empty.csv", b"", "the dataset has no rows"),
])
def test_bad_files_are_one_line_errors(run_cli, tmp_path, name, content, message):
    path = tmp_path / name
    path.write_bytes(content)
    r = run_cli("validate", str(path))
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr.startswith("zfslab: error: ") and message in r.stderr and r.stderr.count("\n") == 1


NO_COLUMN = ("disks,kind,vdevs,width,write_MBps,read_MBps\n1,stripe,1,1,100,200\n2,stripe,2,1,190,380\n"
             "4,stripe,4,1,350,700\n3,raidz1,1,3,190,520\n4,mirror,2,2,185,690\n")


def test_auto_calibration_needs_no_column_and_json_rows_say_which_rows_it_chose(run_cli, tmp_path):
    path = tmp_path / "table.csv"
    path.write_text(NO_COLUMN)
    r = run_cli("validate", str(path))
    assert r.exit_code == 2 and "no row has calibration=1" in r.stderr and "--calibration auto" in r.stderr
    out = json.loads(run_cli("validate", str(path), "--calibration", "auto", "--json").stdout)
    assert [row["calibration"] for row in out["rows"]] == [True, False, True, False, False]  # 2 of 5: a third
    assert out["calibration_rows"] == [0, 2]
    assert out["metrics"]["write"]["rows"] == 3 and out["baseline"]["write"]["rows"] == 3
    assert all(low <= row["predicted"]["write"] <= high for row in out["rows"]
               for low, high in [row["interval"]["write"]])
    assert "leave_one_out" not in out


def test_auto_calibration_ignores_the_csv_column(run_cli):
    out = json.loads(run_cli("validate", os.path.join(DATA, "calomel-calibrated.csv"), "--ashift", "9",
                             "--calibration", "auto", "--json").stdout)
    assert out["calibration_rows"] == [0, 3, 5, 8, 19, 22, 23, 24, 25]  # not the file's 0 and 25 alone


def test_leave_one_out_scores_every_row(run_cli, tmp_path):
    path = tmp_path / "table.csv"
    path.write_text(NO_COLUMN)
    r = run_cli("validate", str(path), "--calibration", "auto", "--loo")
    assert r.exit_code == 0 and "leave one out over every row: write" in r.stdout
    out = json.loads(run_cli("validate", str(path), "--calibration", "auto", "--loo", "--json").stdout)
    assert out["leave_one_out"]["write"]["rows"] == 5 and out["leave_one_out"]["rewrite"]["rows"] == 0


@pytest.mark.parametrize("content,message", [
    ("disks,kind,vdevs,width,write_MBps\n1,stripe,1,1,100\n2,stripe,2,1,190\n",
     "too few rows to fit and check: --calibration auto needs at least 3 measured pools, got 2"),
    ("disks,kind,vdevs,width,write_MBps\n1,stripe,1,1,0\n2,stripe,2,1,190\n4,stripe,4,1,350\n",
     "row 0: write_MBps must be from 0.1 to 1e+06 MB/s, got 0"),
    ("disks,kind,vdevs,width,write_MBps\n1,stripe,1,1,100\n2,stripe,2,1,-190\n4,stripe,4,1,350\n",
     "row 1: write_MBps must be from 0.1 to 1e+06 MB/s, got -190"),
    ("disks,kind,vdevs,width,write_MBps\n1,stripe,1,1,100\n2,stripe,2,1,190\n4,stripe,4,1,NaN\n",
     "row 2: write_MBps 'NaN' is not a number"),
    ("disks,kind,vdevs,width,write_MBps\n1,stripe,1,1,\n2,stripe,2,1,190\n4,stripe,4,1,350\n",
     "no calibration row has a measured value"),
])
def test_auto_calibration_on_bad_tables_is_one_line(run_cli, tmp_path, content, message):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    r = run_cli("validate", str(path), "--calibration", "auto")
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == f"zfslab: error: {message}\n" or (message in r.stderr and r.stderr.count("\n") == 1)


def test_a_directory_or_a_missing_file(run_cli, tmp_path):
    r = run_cli("validate", str(tmp_path))
    assert r.exit_code == 2 and "a directory; give a CSV file" in r.stderr
    r = run_cli("validate", str(tmp_path / "none.csv"))
    assert r.exit_code == 2 and "no such file" in r.stderr


def test_a_device_or_fifo_is_not_read(run_cli, tmp_path):
    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)  # opened for reading it would block forever without a writer
    for path in (str(fifo), "/dev/null", "/dev/zero"):
        r = run_cli("validate", path)
        assert r.exit_code == 2 and "not a regular file" in r.stderr


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16"])
def test_a_bom_is_accepted(run_cli, tmp_path, encoding):
    path = tmp_path / "bom.csv"
    path.write_text(GOOD, encoding=encoding)
    plain = json.loads(run_cli("validate", os.path.join(DATA, "calomel-calibrated.csv"), "--json").stdout)
    r = run_cli("validate", str(path), "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["parameters"] == plain["parameters"]
    assert codecs.BOM_UTF8 == b"\xef\xbb\xbf"


def test_only_the_fitted_parameters_are_printed(run_cli, tmp_path):
    path = tmp_path / "writes.csv"
    path.write_text(HEADER + "1,stripe,1,1,100,1\n2,stripe,2,1,190,1\n4,stripe,4,1,350,0\n")
    r = run_cli("validate", str(path))
    assert r.exit_code == 0
    fitted = next(line for line in r.stdout.splitlines() if line.startswith("fitted:"))
    assert "write" in fitted and "read" not in fitted and "rewrite" not in fitted
    assert "not fitted (no calibration row measures it): rewrite, read" in r.stdout


def test_a_file_name_that_looks_like_markup(run_cli, tmp_path):
    path = tmp_path / "[bold]x[red].csv"
    path.write_text(GOOD)
    r = run_cli("validate", str(path))
    assert r.exit_code == 0 and "[bold]x[red].csv" in r.stdout.replace("\n", "")


@pytest.mark.parametrize("content,message", [
    ("seq_read_mb_s = nan", "seq_read_mb_s(=nan) must be a finite number > 0"),
    ("seq_read_mb_s = inf", "seq_read_mb_s(=inf) must be a finite number > 0"),
    ('seq_read_mb_s = "fast"', "seq_read_mb_s(='fast') must be a finite number > 0"),
    ("seq_read_mb_s = 100\n[host]\nwrite_mb_s = nan", "write_mb_s(=nan) must be > 0"),
    ("seq_read_mb_s = 100\n[host]\ncpus = 1.5", "cpus(=1.5) must be a whole number"),
    ("a = " + "[" * 100_000 + "]" * 100_000, "nested too deeply"),
])
def test_a_disk_profile_with_bad_values(run_cli, tmp_path, content, message):
    path = tmp_path / "p.toml"
    rest = "seq_write_mb_s = 90\nrand_read_iops_qd1 = 70\nrand_read_iops_qd8 = 120\nrand_write_iops = 150\nsync_write_ms = 15\n"
    path.write_text(rest + content + "\n")
    r = run_cli("plan", "6x4TB", "--disk-model", str(path))
    assert r.exit_code == 2 and message in r.stderr and r.stderr.count("\n") == 1


def test_a_disk_profile_named_like_markup_is_printed_as_is(run_cli, tmp_path):
    path = tmp_path / "p.toml"
    path.write_text('name = "[/]"\nseq_read_mb_s = 100\nseq_write_mb_s = 90\nrand_read_iops_qd1 = 70\n'
                    'rand_read_iops_qd8 = 120\nrand_write_iops = 150\nsync_write_ms = 15\n')
    r = run_cli("plan", "6x4TB", "--disk-model", str(path))
    assert r.exit_code == 0 and "[/]" in r.stdout
