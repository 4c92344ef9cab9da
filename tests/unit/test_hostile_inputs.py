"""What a campaign of hostile command lines found (issue 26), each kept as a test: a one-line
error and exit 2 where an internal error, a wrong answer or the wrong check came first."""

import pytest

from zfslab.errors import VersionError
from zfslab.model.capacity import rules_for

HUGE = "1" * 4301   # int() refuses 4,301 digits or more (CPython's limit): ValueError, not a UsageError


def _one_line(r, code=2):
    assert r.exit_code == code, (r.exit_code, r.stderr)
    assert len(r.stderr.strip().splitlines()) == 1 and "internal error" not in r.stderr, r.stderr


@pytest.mark.parametrize("args", [
    ("plan", f"{HUGE}x4TB"), ("plan", f"2x4TB,{HUGE}x4TB"), ("report", "--json", "--plan", f"{HUGE}x4TB"),
    ("plan", "1025x4TB"), ("plan", "0x4TB"),
])
def test_a_disk_count_out_of_range_is_one_line(run_cli, args):
    r = run_cli(*args)
    _one_line(r)
    assert "zfslab plans for 1 to 1,024 disks" in r.stderr


@pytest.mark.parametrize("text", ["٢.٣", "２.４", "2.3.99999999999999999999", "2.3.2.1.1", "2..3", " ", "2.3.2-"])
def test_a_zfs_version_is_ascii_digits_of_bounded_length(text):
    with pytest.raises(VersionError):
        rules_for(text)


def test_release_spellings_still_taken():
    assert rules_for("2.3.2-1~bpo12+1") is rules_for("2.1")
    assert rules_for("v2.3.7") is rules_for("2.3.7") and rules_for("zfs-2.4.0") is rules_for("2.4.0")


def test_a_zfs_version_of_other_digits_is_refused_by_the_command(run_cli):
    r = run_cli("capacity", "raidz2:6", "--zfs-version", "٢.٣")
    _one_line(r)
    assert "unknown OpenZFS version '٢.٣'" in r.stderr


@pytest.mark.parametrize("args", [
    ("capacity", "raidz2:6", "--disk-size", "9223372036854775807"),
    ("plan", "--disks", "24", "--disk-size", "1000PB", "--layouts", "raidz2:24"),
])
def test_a_pool_of_2_64_bytes_or_more_is_refused(run_cli, args):
    r = run_cli(*args)
    _one_line(r)
    assert "OpenZFS counts a pool's space in 64 bits" in r.stderr


def test_a_pool_just_under_2_64_bytes_is_computed(run_cli):
    r = run_cli("capacity", "mirror:2", "--disk-size", "9000PB")
    assert r.exit_code == 0, r.stderr


def test_drill_checks_its_disks_before_looking_for_zpool(run_cli, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))   # no zpool anywhere: the disk is still what is wrong
    r = run_cli("drill", "--disks", ",nope,é")
    _one_line(r)
    assert "nope: no such device" in r.stderr and "install" not in r.stderr


# --- one validated path for stored values: report, plan --db and bench refuse a damaged file alike

def _damaged(tmp_path, sql: str) -> str:
    import sqlite3
    from tests.unit.test_plan_db import bench_db
    path = bench_db(tmp_path / "r.sqlite")
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute(sql)
    conn.execute("PRAGMA journal_mode = DELETE")   # no -wal left for the readers to meet
    conn.close()
    return path


@pytest.mark.parametrize("sql, message", [
    ("UPDATE measurements SET write_mb_s = -5 WHERE test = 'seqwrite'", "write_mb_s = -"),
    ("UPDATE measurements SET read_iops = 'fast' WHERE test = 'seqread'", "the measurements of run 1 (table measurements) are not numbers"),
    ("UPDATE runs SET options_json = '{\"ashift\": 1e400, \"recordsize\": \"128K\"}'",
     "the number '1e400' is too large for a double"),
    ("UPDATE runs SET options_json = '{\"ashift\": 1' || printf('%.400d', 0) || '}'", "has 401 digits"),
    ("UPDATE runs SET options_json = '{\"ashift\": NaN}'", "options_json = "),
    ("UPDATE runs SET options_json = '[1]'", "options_json = "),
    ("UPDATE runs SET options_json = '{\"ashift\": 12, \"recordsize\": \"100K\"}'", "recordsize '100K'"),
    ("UPDATE run_disks SET size_bytes = -1", "size_bytes = -1, below 0"),
    # issue 38: finite, but its mean, sum or square overflows ("math range error")
    ("UPDATE measurements SET write_mb_s = 1e308 WHERE id = 1", "write_mb_s = 1e+308, above 1e+08, more than any pool"),
    ("UPDATE measurements SET read_iops = 1e308", "read_iops = 1e+308, above 1e+10"),
])
def test_a_damaged_value_is_refused_alike_by_every_reader(run_cli, tmp_path, sql, message):
    path = _damaged(tmp_path, sql)
    errors = set()
    for args in (("report", "--db", path, "--json"), ("plan", "--db", path, "6x4TB"),
                 ("bench", "--dry-run", "--db", path, "--sandbox", str(tmp_path / "sb"), "--layouts", "mirror:2")):
        r = run_cli(*args)
        _one_line(r)
        assert message in r.stderr, (args, r.stderr)
        errors.add(r.stderr)
    assert len(errors) == 1, errors     # the same line from all three


def test_validate_loo_is_bounded_with_a_clear_message(run_cli, tmp_path):
    """--loo takes every row validate takes (3-10 s of CPU at 1,000, benchmarks/validate_loo.py);
    one more row is refused before any fit, in one line."""
    import csv
    import sys
    sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[2] / "benchmarks"))
    from validate_loo import dataset
    from zfslab.model.validation import MAX_LOO_ROWS, MAX_ROWS
    assert MAX_LOO_ROWS == MAX_ROWS
    rows = dataset(MAX_ROWS + 1)
    path = tmp_path / "big.csv"
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    r = run_cli("validate", str(path), "--loo")
    _one_line(r)
    assert f"validate takes at most {MAX_ROWS}" in r.stderr


# --- issue 38: the new inputs, bounded (each case a one-line error, exit 2)

SAVED = ('{"blocks":[[131072,131072,%s]],"read_as_is":[],"all_as_is":[],"compression":"off",'
         '"recordsize_bytes":131072,"files":1,"directories":1,"pointers":0,"complete":true}')


@pytest.mark.parametrize("text, message", [
    (SAVED % "1e400", "the number '1e400' is too large for a double"),
    (SAVED % ("1" + "0" * 400), "has 401 digits, more than 20"),
    (SAVED % "NaN", "NaN is not a JSON number"),
    (SAVED % "-1", "a blocks count = -1, not a whole number"),
    (SAVED % "2.5", "a blocks count = 2.5, not a whole number"),
    (SAVED % "true", "a blocks count = True, not a whole number"),
    (SAVED.replace("[131072,131072,", "[1099511627776,131072,") % "1", "a blocks size = 1099511627776"),
    (SAVED.replace('"recordsize_bytes":131072', '"recordsize_bytes":100000') % "1", "not a power of two"),
    (SAVED % "9223372036854775807", "holds more than 2^64 bytes"),
    ('{"a":' * 100_000 + "1" + "}" * 100_000, "nested more than 32 deep"),
    ("[" * 100_000, "nested more than 32 deep"),
    ("[[[[" * 10 + "]]]]" * 10, "nested more than 32 deep"),
    ("[1]", "a JSON list, not an object"),
])
def test_a_saved_footprint_out_of_range_is_one_line(run_cli, tmp_path, text, message):
    saved = tmp_path / "fp.json"
    saved.write_text(text)
    r = run_cli("plan", "6x4TB", "--data-from", str(saved), "--no-risk", "--no-speed")
    _one_line(r)
    assert message in r.stderr and "not the output of zfslab footprint --json" in r.stderr, r.stderr


def test_a_saved_footprint_in_range_is_read(run_cli, tmp_path):
    saved = tmp_path / "fp.json"
    saved.write_text(SAVED % "1000")
    r = run_cli("plan", "6x4TB", "--data-from", str(saved), "--no-risk", "--no-speed", "--json")
    assert r.exit_code == 0, r.stderr


def test_the_bounded_json_reader():
    from zfslab.model.json_input import JsonInputError, parse
    assert parse('{"a": [1, 2.5, "x", null, true]}') == {"a": [1, 2.5, "x", None, True]}
    assert parse("[" * 32 + "]" * 32) is not None
    for text in ("[" * 33 + "]" * 33, "1e309", "-1e309", "Infinity", "-Infinity", "9" * 21, "-" + "9" * 21, "{",
                 '{"a": ' * 5000 + "1" + "}" * 5000):
        with pytest.raises(JsonInputError):
            parse(text)


@pytest.mark.parametrize("name", ["zstd-" + "9" * 5000, "gzip-" + "9" * 4301, "zstd-²", "gzip-٣", "zstd-１", "zstd-100"])
def test_a_compression_level_of_other_digits_or_thousands_of_them_is_refused(name):
    from zfslab.errors import ParamError
    from zfslab.system.footprint_reader import compressor
    with pytest.raises(ParamError, match="give off, lz4, zstd, zstd-N"):
        compressor(name)


def test_a_compression_level_in_range_is_taken():
    from zfslab.system.footprint_reader import compressor
    assert compressor("zstd-19")(b"a" * 4096) < 4096 and compressor("gzip-1")(b"a" * 4096) < 4096
    assert compressor("zstd-01") is not None


@pytest.mark.parametrize("command", ["bench", "drill"])
@pytest.mark.parametrize("disks", ["", ",", " , "])
def test_hosts_with_an_empty_disk_list_is_refused_before_any_connection(run_cli, command, disks):
    r = run_cli(command, "--hosts", "127.0.0.1:1", "--disks", disks, "--dry-run")
    _one_line(r)
    assert "--disks: name at least one disk" in r.stderr
