"""The bonnie++ engine: both CSV formats, and the real bonnie++ run on a scratch directory."""

import csv
import os

import pytest

from tests.conftest import DATA
from zfslab.system.bonnie import _FIELDS_197, _SHIFT, Bonnie, BonnieFailed, BonnieJob, parse_csv_line, parse_output
from zfslab.system.runner import Runner


def _data(name):
    return open(os.path.join(DATA, "bonnie", name)).read()


def test_a_real_2_00a_line_parses_by_the_1_98_field_list():
    # captured from Debian's bonnie++ 2.00a: -s 256 -f -n 1 -c 4 -b on ext4
    r = parse_csv_line(_data("2.00a-ext4-c4.csv"))
    assert (r.format_version, r.bonnie_version, r.concurrency, r.file_size) == ("1.98", "2.00a", 4, "256M")
    assert (r.put_block_kib_s, r.put_block_cpu_pct) == (329129, 17)
    assert (r.rewrite_kib_s, r.rewrite_cpu_pct) == (496296, 22)
    assert r.get_block_kib_s is None and r.seeks_per_s is None  # "+++++": served too fast to time
    assert r.put_block_latency_ms == pytest.approx(6.209)
    assert r.rewrite_latency_ms == pytest.approx(4.045)
    assert r.get_block_latency_ms == pytest.approx(3.750)
    assert r.seeks_latency_ms == pytest.approx(5.290)


def test_an_all_too_fast_line_has_no_rates_but_its_latencies():
    r = parse_csv_line(_data("2.00a-too-fast.csv"))
    assert r.put_block_kib_s is r.rewrite_kib_s is r.get_block_kib_s is None
    assert r.put_block_latency_ms == pytest.approx(0.791)
    assert r.rewrite_latency_ms == pytest.approx(0.050)


def _calomel_197_line(row: dict) -> str:
    """A 1.97 line holding calomel's printed raw values where bon_csv2html(1) puts them."""
    f = [""] * 48
    f[0:7] = ["1.97", "1.97", "storage", "4", "1", "16G", ""]
    f[9], f[10], f[11], f[12] = row["write_KiBps"], row["write_cpu_pct"], row["rewrite_KiBps"], row["rewrite_cpu_pct"]
    f[15], f[16], f[17], f[18] = row["read_KiBps"], row["read_cpu_pct"], row["seeks_per_s"], row["seeks_cpu_pct"]
    f[19] = "1"
    f[37], f[38] = f"{row['write_latency_ms']}ms", f"{float(row['rewrite_latency_ms']) * 1000:.0f}us"
    f[40], f[41] = f"{row['read_latency_ms']}ms", f"{row['seeks_latency_ms']}ms"
    return ",".join(f)


def test_the_1_97_format_as_calomel_printed_it():
    rows = list(csv.DictReader(open(os.path.join(DATA, "calomel-hdd-24x4tb.csv"))))
    for row in rows:
        r = parse_csv_line(_calomel_197_line(row))
        assert r.format_version == "1.97"
        assert r.put_block_kib_s == float(row["write_KiBps"])
        assert r.rewrite_kib_s == float(row["rewrite_KiBps"])
        assert r.get_block_kib_s == float(row["read_KiBps"])
        assert r.seeks_per_s == float(row["seeks_per_s"])
        assert r.put_block_latency_ms == pytest.approx(float(row["write_latency_ms"]))
        assert r.rewrite_latency_ms == pytest.approx(float(row["rewrite_latency_ms"]))
        assert r.get_block_latency_ms == pytest.approx(float(row["read_latency_ms"]))
    # bonnie++'s K/sec is KiB/s: calomel's single drive wrote 108834 KiB/s = 111.4 MB/s
    assert parse_csv_line(_calomel_197_line(rows[0])).mb_s(108834) == pytest.approx(111.446, abs=1e-3)


@pytest.mark.parametrize("line, words", [
    ("2.01,2.01,x,1", "unknown CSV format '2.01'"),
    ("1.98,2.00a,x,1,1,1G", "has 6 fields"),
    ("1.97,1.97,x,1,1,16G,,,," + "fast," * 40, "unexpected number 'fast'"),
])
def test_bad_lines_are_named(line, words):
    with pytest.raises(BonnieFailed, match=words):
        parse_csv_line(line)


def test_output_without_a_csv_line_is_an_error():
    with pytest.raises(BonnieFailed, match="no CSV result line"):
        parse_output("Using uid:0, gid:0.\nWriting intelligently...done\n")


def test_calomels_command_line():
    assert BonnieJob("/storage").argv() == ["bonnie++", "-q", "-u", "root", "-r", "1024", "-s", "16384", "-d",
                                            "/storage", "-f", "-n", "1", "-c", "4", "-b"]
    with pytest.raises(ValueError, match="twice"):
        BonnieJob("/storage", size_mib=1024, ram_mib=1024)


def test_real_bonnie_runs_and_its_line_is_parsed(tmp_path, needs_bonnie):
    r = Bonnie(Runner()).run(BonnieJob(str(tmp_path), size_mib=512, ram_mib=256, concurrency=1, files=0))
    assert r.format_version in ("1.97", "1.98")
    assert r.file_size == "512M"
    # A fast virtual disk can take the fsync'd writes within bonnie++'s minimum time: it prints
    # "+++++" (too fast to time) instead of a rate, and the parser must say "not measured".
    put_block = r.raw_csv.split(",")[_FIELDS_197["put_block"] + _SHIFT[r.format_version]]
    if put_block.startswith("+"):
        assert r.put_block_kib_s is None
    else:
        assert r.put_block_kib_s is not None and r.put_block_kib_s > 0 and float(put_block) == r.put_block_kib_s
    assert r.put_block_latency_ms is not None and r.put_block_latency_ms > 0
    assert os.listdir(tmp_path) == []  # bonnie++ removes its files


def test_a_failing_bonnie_is_reported_with_its_words(tmp_path, needs_bonnie):
    with pytest.raises(BonnieFailed, match="bonnie"):
        Bonnie(Runner()).run(BonnieJob(str(tmp_path / "missing"), size_mib=64, ram_mib=32, files=0))
