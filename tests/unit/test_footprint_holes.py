"""footprint on sparse files: the records in holes are counted exactly from SEEK_DATA/SEEK_HOLE,
never read nor sampled, and a sample is drawn from the records that hold data only
(docs/footprint.md#sparse-files). Every file here is a real sparse file in tmp_path."""

from __future__ import annotations

import os

import pytest

from tests.sparse_files import write_sparse
from zfslab.model.footprint import Compression, data_footprint
from zfslab.model.layout_grammar import parse_layout
from zfslab.system import footprint_reader
from zfslab.system.footprint_data import read_data
from zfslab.system.footprint_reader import record_ranges

K = 1024
RS = 128 * K
LZ4 = Compression(True)


def _sparse(path, size: int, writes) -> None:
    """A new file of `size` bytes, holes but for `writes` [(offset, bytes)]; never through a symlink."""
    if not write_sparse(path, size, writes):
        pytest.skip("this file system keeps no holes")


def _text(n: int) -> bytes:
    return (b"footprint counts holes, samples data. " * (n // 38 + 1))[:n]


# data records of the file below, at 128K records: a byte of data makes its whole record data
KNOWN_WRITES = [(0, b"x" * 10),                          # record 0
                (200 * K, os.urandom(300 * K)),            # 200K..500K: records 1, 2, 3
                (80 * RS, _text(4 * K)),                   # record 80 (at its start)
                (100 * RS - 4 * K, _text(8 * K)),          # the last 4K of record 99, the first of 100
                ((1 << 30) - 1, b"z")]                     # the last byte: record 8191
KNOWN_RANGES = [(0, 4), (80, 81), (99, 101), (8191, 8192)]


def test_the_records_that_hold_data_are_exact_from_the_extents(tmp_path):
    f = tmp_path / "known.img"
    _sparse(f, 1 << 30, KNOWN_WRITES)
    fd = os.open(f, os.O_RDONLY)
    try:
        extents = record_ranges(fd, 1 << 30, RS)
    finally:
        os.close(fd)
    assert extents.ranges == KNOWN_RANGES and extents.count == 8


def test_the_model_prices_the_holes_as_the_extents_say(tmp_path):
    """Kept, the 8,184 records in holes are no block; filled with compression on, 8,184 holes;
    filled with it off, 8,184 records of zeros stored."""
    t = tmp_path / "tree"
    t.mkdir()
    _sparse(t / "known.img", 1 << 30, KNOWN_WRITES)
    mirror = parse_layout("mirror:2")
    keep = read_data([str(t)], recordsize_bytes=RS)
    fill = read_data([str(t)], recordsize_bytes=RS, keep_holes=False)
    assert keep.notes["hole_records"] == fill.notes["hole_records"] == 8192 - 8
    assert keep.notes["bytes_read"] == fill.notes["bytes_read"] == 8 * RS   # the data records only
    fk, ff = data_footprint(keep.blocks, mirror, 12, LZ4), data_footprint(fill.blocks, mirror, 12, LZ4)
    assert fk.holes == 0 and ff.holes == 8192 - 8 and fk.used_bytes == ff.used_bytes > 0
    assert ff.logical_bytes == 1 << 30 and fk.logical_bytes == 8 * RS
    off = read_data([str(t)], recordsize_bytes=RS, compression="off")
    off_fill = read_data([str(t)], recordsize_bytes=RS, compression="off", keep_holes=False)
    assert data_footprint(off.blocks, mirror, 12, Compression(False)).used_bytes == 8 * RS
    assert data_footprint(off_fill.blocks, mirror, 12, Compression(False)).used_bytes == 1 << 30


def _mostly_holes(tmp_path, files: int = 3, size: int = 8 << 30):
    """`files` sparse files of `size` bytes, each with 3 runs of 256 KiB (text, random, text)."""
    t = tmp_path / "holes"
    t.mkdir()
    for i in range(files):
        _sparse(t / f"{i}.img", size, [(size // 7 * (k + 1) // RS * RS, (os.urandom if k == 1 else _text)(256 * K))
                                       for k in range(3)])
    return t


@pytest.mark.parametrize("keep", [True, False], ids=["keep", "fill"])
def test_a_sample_of_a_tree_mostly_holes_reads_its_data_and_is_exact(tmp_path, keep):
    """3 x 8 GiB, 3 x 768 KiB of data: 18 records of data among 196,608. The sample was drawn from
    every record, holes included, so a small budget met only holes and priced the data at 0;
    drawn from the data records only, 4 MB is enough to read them all, and the answer is exact."""
    t = _mostly_holes(tmp_path)
    layout = parse_layout("raidz2:6")
    whole = read_data([str(t)], recordsize_bytes=RS, keep_holes=keep)
    sampled = read_data([str(t)], recordsize_bytes=RS, keep_holes=keep, sample_bytes=4_000_000)
    a, b = data_footprint(whole.blocks, layout, 12, LZ4), data_footprint(sampled.blocks, layout, 12, LZ4)
    assert (a.used_bytes, a.holes, a.logical_bytes) == (b.used_bytes, b.holes, b.logical_bytes)
    assert a.used_bytes > 0 and sampled.blocks.complete
    assert sampled.notes["data_records"] == 18 and sampled.notes["records_read"] == 18
    assert sampled.notes["records_total"] == 3 * (8 << 30) // RS


def test_a_partial_sample_scales_the_data_and_adds_the_holes_as_counted(tmp_path):
    """40 records of random data in 4 GiB: a budget of 4 records reads 4 of the 40 (never a hole),
    scales them to 40, and adds the 32,728 holes a filling copy writes exactly, unscaled."""
    t = tmp_path / "t"
    t.mkdir()
    _sparse(t / "a.img", 4 << 30, [(k * (100 * RS), os.urandom(RS)) for k in range(40)])
    layout = parse_layout("raidz1:3")
    whole = data_footprint(read_data([str(t)], recordsize_bytes=RS, keep_holes=False).blocks, layout, 12, LZ4)
    r = read_data([str(t)], recordsize_bytes=RS, keep_holes=False, sample_bytes=4 * RS)
    assert not r.blocks.complete and r.notes["records_read"] == 4 and r.notes["data_records"] == 40
    assert r.notes["bytes_read"] == 4 * RS
    part = data_footprint(r.blocks, layout, 12, LZ4)
    assert part.holes == whole.holes == (4 << 30) // RS - 40
    assert part.logical_bytes == whole.logical_bytes == 4 << 30
    assert part.used_bytes == pytest.approx(whole.used_bytes)   # random records: each costs the same


def test_extents_past_the_limit_are_found_as_read_and_no_hole_is_read(tmp_path, monkeypatch):
    """A file of more extents than MAX_EXTENTS: the rest counts as data until read, and each record
    is asked (SEEK_DATA) as the read goes, so a hole there is skipped, not read as zeros."""
    t = tmp_path / "t"
    t.mkdir()
    _sparse(t / "a.img", 1 << 30, [(k * (500 * RS), _text(8 * K)) for k in range(16)])
    exact = read_data([str(t)], recordsize_bytes=RS)
    monkeypatch.setattr(footprint_reader, "MAX_EXTENTS", 3)
    capped = read_data([str(t)], recordsize_bytes=RS)
    assert capped.notes["bytes_read"] == exact.notes["bytes_read"] == 16 * RS
    assert capped.blocks.blocks == exact.blocks.blocks     # the data blocks; the indirect blocks differ
    sampled = read_data([str(t)], recordsize_bytes=RS, sample_bytes=10 * RS, seed=3)
    assert sampled.notes["bytes_read"] <= 16 * RS     # a drawn record in a hole is asked, not read


def test_the_seeks_are_at_most_two_a_record_of_data(tmp_path, monkeypatch):
    """4K of data in every other 8K of a 1 MiB run: 128 extents, 8 records of 128K. The next
    SEEK_DATA starts at the next record, so 8 pairs of calls, not 128."""
    f = tmp_path / "striped.img"
    _sparse(f, 1 << 30, [(k * 8 * K, _text(4 * K)) for k in range(128)])
    calls = []
    real = os.lseek
    monkeypatch.setattr(footprint_reader.os, "lseek", lambda fd, pos, how: calls.append(how) or real(fd, pos, how))
    fd = os.open(f, os.O_RDONLY)
    try:
        extents = record_ranges(fd, 1 << 30, RS)
    finally:
        os.close(fd)
    assert extents.ranges == [(0, 8)]
    assert len(calls) <= 2 * 8 + 1


def test_a_tree_of_only_holes_sampled_is_no_block_and_no_error(tmp_path):
    t = tmp_path / "t"
    t.mkdir()
    _sparse(t / "empty.img", 1 << 30, [])
    r = read_data([str(t)], recordsize_bytes=RS, sample_bytes=1 << 20)
    assert r.blocks.complete and r.notes["data_records"] == 0 and r.notes["bytes_read"] == 0
    assert data_footprint(r.blocks, parse_layout("mirror:2"), 12, LZ4).used_bytes == 0


def test_a_saved_partial_sample_keeps_its_counted_holes_for_plan(run_cli, tmp_path):
    """footprint --json writes the counted zero blocks (hole_blocks) beside the sample, and
    plan --data-from reads them back: the same data USED and logical bytes as footprint said."""
    import json

    from zfslab.commands._saved_footprint import load_saved
    t = tmp_path / "t"
    t.mkdir()
    _sparse(t / "a.img", 4 << 30, [(k * (100 * RS), os.urandom(RS)) for k in range(40)])
    r = run_cli("footprint", str(t), "--layouts", "raidz1:3", "--sparse", "fill", "--sample", "500KB", "--json")
    assert r.exit_code == 0, r.stderr
    saved = tmp_path / "fp.json"
    saved.write_text(r.stdout)
    d = json.loads(r.stdout)
    assert d["hole_blocks"] == [[RS, 0, (4 << 30) // RS - 40]] and not d["complete"]
    again = data_footprint(load_saved(str(saved)), parse_layout("raidz1:3"), 12, LZ4)
    assert round(again.used_bytes) == d["layouts"][0]["data_used_bytes"]   # the metadata is re-estimated
    assert again.logical_bytes == d["layouts"][0]["logical_bytes"] == 4 << 30


def test_a_record_partly_data_reads_its_data_extents_only(tmp_path, monkeypatch):
    """A record of 128K that holds 8K of data is priced whole (the rest as zeros, as ZFS writes
    it) but only the 8K is read: 70,000 such records of a 1 TiB file took 14 s of system time
    reading the zeros. What it gives is the record's bytes, as a plain read gives them."""
    f = tmp_path / "partly.img"
    writes = [(3 * RS + 60 * K, _text(4 * K)), (3 * RS + 100 * K, os.urandom(4 * K)),   # two islands in record 3
              (5 * RS - 4 * K, _text(8 * K)), (9 * RS, os.urandom(RS))]               # across 4|5, all of 9
    _sparse(f, 1 << 30, writes)
    asked = []
    real = os.pread
    monkeypatch.setattr(footprint_reader.os, "pread", lambda fd, n, at: asked.append(n) or real(fd, n, at))
    fd = os.open(f, os.O_RDONLY)
    try:
        for index, data_bytes in ((3, 8 * K), (4, 4 * K), (5, 4 * K), (9, RS), (7, 0)):
            asked.clear()
            assert footprint_reader.pread_data(fd, RS, index * RS) == real(fd, RS, index * RS)
            assert sum(asked) == data_bytes, index
        assert footprint_reader.pread_data(fd, RS, (1 << 30) - 1000) == bytes(1000)   # the file's end
    finally:
        os.close(fd)
