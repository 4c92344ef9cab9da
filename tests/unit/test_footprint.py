"""footprint: OpenZFS's per-block rules on hand-computed cases, the reader on real trees
(symlinks, FIFOs, loops, zeros, shrinking files), and the command's bad input."""

import json
import os
import random
import zlib

import pytest

from zfslab.errors import UsageError
from zfslab.model.footprint import (BPE_PAYLOAD_SIZE, Compression, DataBlocks, PoolAlloc, block_cost, block_psize,
                                    clen_key, data_footprint, file_block_sizes, footprint, pool_alloc)
from zfslab.model.layout_grammar import parse_layout
from zfslab.system.footprint_reader import ReadCounts, compressor, read_file_blocks, read_sample, walk

K = 1024
ON = Compression(True)
A12 = PoolAlloc(4096, 4096)


def test_a_file_is_one_block_of_its_size_up_to_the_recordsize_then_whole_records():
    assert file_block_sizes(0, 128 * K) == (0, 0)
    assert file_block_sizes(1, 128 * K) == (1, 512)
    assert file_block_sizes(5000, 128 * K) == (1, 5120)
    assert file_block_sizes(128 * K, 128 * K) == (1, 128 * K)
    assert file_block_sizes(128 * K + 1, 128 * K) == (2, 128 * K)


def test_compression_must_save_an_eighth_rounded_down_to_the_allocation_unit():
    # 128K: at most 112K; 40,000 B rounds up to 40K
    assert block_psize(128 * K, 40_000, ON, A12) == ("compressed", 40 * K)
    assert block_psize(128 * K, 112 * K, ON, A12) == ("compressed", 112 * K)
    assert block_psize(128 * K, 112 * K + 512, ON, A12) == ("stored", 128 * K)
    # 40K block: 35K floored to 32K; 34K would round to 36K under 2.2 but is refused by 2.3+
    assert block_psize(40 * K, 34 * K, ON, A12) == ("stored", 40 * K)
    assert block_psize(40 * K, 34 * K, Compression(True, floor_to_alloc=False), A12) == ("compressed", 36 * K)
    # 4K block at ashift 12: nothing below one sector is possible, only an embedded block
    assert block_psize(4 * K, 2000, ON, A12) == ("stored", 4 * K)
    assert block_psize(4 * K, BPE_PAYLOAD_SIZE, ON, A12) == ("embedded", 0)
    assert block_psize(4 * K, 100, Compression(True, embedded_data=False), A12) == ("stored", 4 * K)


def test_zeros_are_holes_only_with_compression_on():
    assert block_psize(128 * K, 0, ON, A12) == ("hole", 0)
    assert block_psize(128 * K, 0, Compression(False), A12) == ("stored", 128 * K)


def test_a_draid_rounds_compressed_blocks_to_whole_rows():
    alloc = pool_alloc(parse_layout("draid2:8d:12c:0s"), 12)
    assert alloc == PoolAlloc(32 * K, 32 * K)
    assert block_psize(128 * K, 40_000, ON, alloc) == ("compressed", 64 * K)
    assert block_psize(128 * K, 20_000, ON, alloc) == ("compressed", 32 * K)


def test_clen_keys_keep_what_the_rules_compare():
    assert clen_key(4096, None) == 0
    assert clen_key(4096, 5000) == 4096
    assert clen_key(4096, 100) == 100
    assert clen_key(4096, 113) == 512


def test_raidz_costs_split_into_data_parity_and_padding():
    g = parse_layout("raidz2:6").groups[0]
    c = block_cost(g, 4096, 12)         # one data sector, two parity: 3 sectors, rounded to 3 (p+1)
    assert (c.data_bytes, c.parity_bytes, c.padding_bytes, c.asize_bytes) == (4096, 8192, 0, 12288)
    c = block_cost(g, 5 * 4096, 12)     # 5 data + 2*2 parity = 9 sectors -> 9 (a multiple of 3)
    assert (c.parity_bytes, c.padding_bytes) == (4 * 4096, 0)
    c = block_cost(g, 6 * 4096, 12)     # 6 + 4 = 10 -> 12: two padding sectors
    assert (c.parity_bytes, c.padding_bytes, c.asize_bytes) == (4 * 4096, 2 * 4096, 12 * 4096)
    m = block_cost(parse_layout("mirror:3").groups[0], 5000, 12)
    assert (m.asize_bytes, m.raw_bytes, m.parity_bytes) == (8192, 3 * 8192, 2 * 8192)


def test_footprint_counts_holes_embedded_and_compressed_blocks():
    blocks = {(128 * K, 128 * K): 3, (128 * K, 0): 2, (512, 60): 4, (128 * K, 30 * K): 1}
    fp = footprint(blocks, parse_layout("mirror:2"), 12, ON)
    assert (fp.holes, fp.embedded, fp.compressed, fp.stored) == (2, 4, 1, 3)
    assert fp.psize_bytes == 3 * 128 * K + 32 * K
    assert fp.alloc_bytes == fp.psize_bytes and fp.raw_bytes == 2 * fp.psize_bytes
    assert fp.zero_bytes == 2 * 128 * K and fp.stored_logical_bytes == 4 * 128 * K + 4 * 512
    off = footprint(blocks, parse_layout("mirror:2"), 12, Compression(False))
    assert off.holes == 0 and off.psize_bytes == 6 * 128 * K + 4 * 4096 - 4 * 3584


def test_a_sample_is_scaled_by_the_ratio_of_its_size_priced_allocation():
    read = {(128 * K, 64 * K): 10}
    read_as_is = {(128 * K, 128 * K): 10}
    everything = {(128 * K, 128 * K): 40}
    data = DataBlocks(read, read_as_is, everything, "lz4", 128 * K, 4, 1, 40, False)
    fp = data_footprint(data, parse_layout("raidz1:3"), 12, ON)
    whole = footprint({(128 * K, 64 * K): 40}, parse_layout("raidz1:3"), 12, ON)
    assert fp.used_bytes == pytest.approx(whole.used_bytes) and fp.logical_bytes == whole.logical_bytes


# ---- the reader on real files ----------------------------------------------------------------------

def _tree(tmp_path):
    t = tmp_path / "t"
    (t / "sub").mkdir(parents=True)
    (t / "text.txt").write_bytes(b"hello zfs " * 30_000)               # 300,000 B: 3 records, compressible
    (t / "zeros.bin").write_bytes(bytes(256 * K))                        # two all-zero records
    (t / "sub" / "random.bin").write_bytes(random.Random(1).randbytes(100_000))
    (t / "sub" / "tiny").write_bytes(b"x" * 10)
    os.symlink("/usr", t / "out-link")                                   # must not be followed
    os.symlink(t, t / "sub" / "loop-link")
    os.mkfifo(t / "fifo")
    return t


def test_walk_skips_symlinks_and_fifos_without_opening_them(tmp_path):
    w = walk([str(_tree(tmp_path))])
    names = sorted(os.path.basename(f[0]) for f in w.files)
    assert names == ["random.bin", "text.txt", "tiny", "zeros.bin"]
    assert (w.symlinks, w.special, w.directories) == (2, 1, 2)


def test_a_bind_mount_style_loop_is_walked_once(tmp_path):
    t = _tree(tmp_path)
    w = walk([str(t), str(t)])   # the same tree twice: its directories are met again
    assert len(w.files) == 4 and w.loops == 1


def test_reading_finds_holes_compression_and_incompressible_records(tmp_path):
    t = _tree(tmp_path)
    w = walk([str(t)])
    s = read_sample(w, 128 * K, compressor("lz4"), max_bytes=None, max_seconds=None, rng=random.Random(0))
    assert s.complete and len(s.read) == 4
    by_name = {os.path.basename(w.files[i][0]): b for i, b in s.read}
    assert by_name["zeros.bin"] == {(128 * K, 0): 2}
    assert by_name["random.bin"] == {(100_352, 100_352): 1}   # one block of 196 x 512 B, as is
    assert sum(by_name["text.txt"].values()) == 3 and all(0 < c < 4096 for _, c in by_name["text.txt"])
    (lsize, clen), = by_name["tiny"]                                   # 10 B in a 512 B block: embedded
    assert lsize == 512 and 4 < clen <= BPE_PAYLOAD_SIZE
    atimes = {f[0]: os.stat(f[0]).st_atime_ns for f in w.files}
    read_sample(w, 128 * K, compressor("zstd"), max_bytes=None, max_seconds=None, rng=random.Random(0))
    if os.geteuid() == 0 or all(os.stat(f[0]).st_uid == os.geteuid() for f in w.files):
        assert {f[0]: os.stat(f[0]).st_atime_ns for f in w.files} == atimes   # O_NOATIME


def test_a_file_that_shrinks_after_the_walk_is_counted_and_priced_as_read(tmp_path):
    f = tmp_path / "f"
    f.write_bytes(b"a" * 300_000)
    st = os.stat(f)
    f.write_bytes(b"a" * 1000)        # same inode, now shorter
    counts = ReadCounts()
    blocks = read_file_blocks(str(f), st.st_dev, st.st_ino, 300_000, 128 * K, compressor("lz4"), counts)
    assert counts.shrunk == 1 and "shrank" in counts.examples[0]
    assert sum(blocks.values()) == 1


def test_a_file_replaced_or_removed_after_the_walk_is_a_counted_warning(tmp_path):
    f = tmp_path / "f"
    f.write_bytes(b"a" * 1000)
    st = os.stat(f)
    os.unlink(f)
    counts = ReadCounts()
    assert read_file_blocks(str(f), st.st_dev, st.st_ino, 1000, 128 * K, compressor("lz4"), counts) is None
    os.mkfifo(f)                      # a FIFO where the file was: opened non-blocking, never read
    assert read_file_blocks(str(f), st.st_dev, st.st_ino, 1000, 128 * K, compressor("lz4"), counts) is None
    assert counts.vanished == 2


def test_compressors_add_zfs_headers():
    data = b"abc" * 10_000
    assert compressor("gzip-6")(data) == len(zlib.compress(data, 6))
    assert compressor("off") is None
    assert compressor("lz4")(data) > 4 and compressor("zstd")(data) > 8
    assert compressor("zstd-19")(data) <= compressor("zstd-1")(data)


# ---- the command -----------------------------------------------------------------------------------

def test_command_json_exact_on_a_read_tree(run_cli, tmp_path):
    t = _tree(tmp_path)
    r = run_cli("footprint", str(t), "--layouts", "raidz2:6,mirror:2", "--disk-size", "1TB", "--json")
    assert r.exit_code == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["complete"] and d["files"] == 4 and d["read"]["symlinks_skipped"] == 2
    rz, mi = d["layouts"]
    assert rz["holes"] == 2 and mi["fits_times"] > 1000
    assert rz["psize_bytes"] == mi["psize_bytes"]
    r = run_cli("footprint", str(t), "--layouts", "raidz2:6")
    assert r.exit_code == 0 and "raidz2:6" in r.stdout and "2 symlinks not followed" in r.stdout


def test_command_reads_a_size_list_with_compression_off(run_cli, tmp_path):
    f = tmp_path / "sizes.txt"
    f.write_text("4096\n5000\n300000\n")
    d = json.loads(run_cli("footprint", str(f), "--compression", "off", "--layouts", "mirror:2", "--json").stdout)
    assert d["layouts"][0]["psize_bytes"] == 4096 + 5120 + 3 * 128 * K   # 5,000 B: one 5,120 B block


@pytest.mark.parametrize("make, message", [
    (lambda p: str(p / "nope"), "no such file or directory"),
    (lambda p: (os.mkfifo(p / "fifo"), str(p / "fifo"))[1], "a FIFO, not a directory"),
    (lambda p: "/dev/null", "a device, not a directory"),
    (lambda p: ((p / "empty").mkdir(), str(p / "empty"))[1], "no regular file found"),
    (lambda p: ((p / "s.txt").write_text("12\nabc\n"), str(p / "s.txt"))[1], "'abc' is not a file size"),
    # one file of data instead of a tree: text, then binary; the junk is named before the compression
    (lambda p: ((p / "notes.txt").write_text("hello\n"), str(p / "notes.txt"))[1], "a file that is not a size list"),
    (lambda p: ((p / "blob").write_bytes(b"\x00\xff" * 99), str(p / "blob"))[1], "a file that is not a size list"),
    # a tree whose only entries are a FIFO and a symlink loop: nothing opened, nothing to price
    (lambda p: ((p / "t").mkdir(), os.mkfifo(p / "t" / "f"), os.symlink("..", p / "t" / "up"), str(p / "t"))[-1],
     "no regular file found"),
])
def test_command_bad_input_is_one_line_and_exit_2(run_cli, tmp_path, make, message):
    r = run_cli("footprint", make(tmp_path), "--layouts", "mirror:2")
    assert r.exit_code == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


@pytest.mark.parametrize("args, message", [
    (["--compression", "lz5"], "--compression 'lz5'"),
    (["--sample", "abc"], "--sample 'abc'"),
    (["--recordsize", "100K"], "--recordsize '100K'"),
    (["--layouts", "raidz9:3"], "--layouts"),
])
def test_command_bad_options_are_one_line_and_exit_2(run_cli, tmp_path, args, message):
    r = run_cli("footprint", str(tmp_path), *args)
    assert r.exit_code == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_a_size_list_needs_compression_off(run_cli, tmp_path):
    f = tmp_path / "s.txt"
    f.write_text("100\n")
    r = run_cli("footprint", str(f))
    assert r.exit_code == 2 and "size list" in r.stderr


def test_plan_data_from_a_saved_footprint_adds_the_fit_and_requires_room(run_cli, tmp_path):
    t = _tree(tmp_path)
    saved = tmp_path / "fp.json"
    r = run_cli("footprint", str(t), "--layouts", "mirror:2", "--json")
    saved.write_text(r.stdout)
    r = run_cli("plan", "4x1TB", "--data-from", str(saved), "--grow", "50%", "--no-risk", "--no-speed", "--json")
    assert r.exit_code == 0, r.stderr
    d = json.loads(r.stdout)
    for row in d["layouts"]:
        assert row["data_fits_times"] == pytest.approx(row["usable_bytes"] / row["data_used_bytes"], rel=1e-3)
        assert row["free_after_data_bytes"] == row["usable_bytes"] - row["data_used_bytes"]
    r = run_cli("plan", "4x1TB", "--data-from", str(t), "--no-risk", "--no-speed")
    assert r.exit_code == 0 and "free after your data" in r.stdout
    r = run_cli("plan", "4x100MB", "--data-from", str(saved), "--grow", "999999%", "--no-risk", "--no-speed")
    assert r.exit_code == 2 and "no layout of these disks holds your data" in r.stderr
    r = run_cli("plan", "4x1TB", "--grow", "50%")
    assert r.exit_code == 2 and "--grow needs --data-from" in r.stderr
    junk = tmp_path / "junk.json"
    junk.write_text("{}")
    r = run_cli("plan", "4x1TB", "--data-from", str(junk))
    assert r.exit_code == 2 and "not the output of zfslab footprint --json" in r.stderr


def test_footprint_disks_prices_every_layout_plan_lists(run_cli, tmp_path):
    t = _tree(tmp_path)
    d = json.loads(run_cli("footprint", str(t), "--disks", "6x4TB", "--json").stdout)
    names = [row["layout"] for row in d["layouts"]]
    assert "raidz2:6" in names and "3xmirror:2" in names and all(row["fits_times"] > 1 for row in d["layouts"])


def test_command_prices_a_pools_zdb_histogram(run_cli):
    zdb = os.path.join(os.path.dirname(__file__), "..", "data", "zdb-bb-special-2.3.txt")
    d = json.loads(run_cli("footprint", zdb, "--layouts", "mirror:2,raidz2:6", "--json").stdout)
    mirror, raidz = d["layouts"]
    assert d["compression"] == "as measured by zdb" and mirror["psize_bytes"] == raidz["psize_bytes"] > 0
    assert raidz["alloc_bytes"] > mirror["alloc_bytes"] and mirror["metadata_used_bytes_estimate"] == 0


@pytest.mark.parametrize("budget", ["130KB", "0.001s"])
def test_command_samples_by_bytes_or_time_and_gives_an_interval(run_cli, tmp_path, budget):
    t = _tree(tmp_path)
    d = json.loads(run_cli("footprint", str(t), "--layouts", "raidz2:6", "--sample", budget, "--json").stdout)
    row = d["layouts"][0]
    assert d["read"]["records_read"] >= 1 and d["read"]["records_total"] == 7   # text 3, zeros 2, random 1, tiny 1
    if not d["complete"] and d["read"]["records_read"] > 1:
        assert row["data_used_low_bytes"] <= row["data_used_bytes"] <= row["data_used_high_bytes"]


def test_indirect_blocks_per_level_and_none_over_holes():
    """dnode.h: 128K indirect blocks of 1,024 pointers; an object of one block has none (its pointer
    is in the dnode); an indirect block over holes only is not written (dbuf_write_children_ready)."""
    from zfslab.model.footprint_metadata import dense_indirect, indirect_levels
    assert dense_indirect(1) == {}
    assert dense_indirect(2) == {(1, 2): 1}
    assert dense_indirect(5000) == {(1, 1024): 4, (1, 904): 1, (2, 5): 1}
    # a 1 TiB file of 128K records with data in its first and last record: two L1s, two L2s, one L3
    last = (1 << 40) // (128 * K) - 1
    assert indirect_levels([(0, 1), (last, last + 1)], last) == {(1, 1): 2, (2, 1): 2, (3, 2): 1}
    assert indirect_levels([], 0) == {}


def test_a_directory_is_a_microzap_grown_512_bytes_at_a_time_then_a_fat_zap():
    """zap_lockdir_impl: a microzap grows by SPA_MINBLOCKSIZE (8 entries of 64 B, the first chunk its
    header) up to 128K; past 2,047 entries, or with a name of 50 bytes or more, it is a fat ZAP of
    16K blocks (a header and leaves) with an indirect block."""
    from zfslab.model.footprint_metadata import FZAP_BLOCK_BYTES, directory_blocks
    assert [lsize for (lsize, _, _) in directory_blocks(0, 0, False)] == [512]
    assert [lsize for (lsize, _, _) in directory_blocks(7, 70, False)] == [512]
    assert [lsize for (lsize, _, _) in directory_blocks(8, 80, False)] == [1024]
    assert [lsize for (lsize, _, _) in directory_blocks(2047, 20470, False)] == [128 * K]
    fat = directory_blocks(2048, 20480, False)
    leaves = sum(n for (lsize, clen, emb), n in fat.items() if lsize == FZAP_BLOCK_BYTES) - 1
    assert 2048 * 3 / 638 <= leaves <= 2 * 2048 * 3 / 638            # leaves between full and half full
    assert any(lsize == 128 * K and not emb for (lsize, _, emb) in fat)  # its L1
    assert directory_blocks(3, 60, True) != directory_blocks(3, 60, False)   # a long name: fat at once


def test_a_fat_zap_has_the_leaves_of_a_uniform_hash_split_a_power_of_two_away_from_a_boundary():
    """Entries go to leaves by the leading bits of a salted CRC-64, so the leaves of one depth fill
    together and split together. 2,600 names of 11 bytes (3 chunks each, 212 to a 638-chunk leaf)
    made 16 leaves in the 2.4.4 guest (zdb -bb, test_footprint.py's shape tree), where the ln 2
    average fill had said 18."""
    from zfslab.model.footprint_metadata import fat_zap_leaves
    assert fat_zap_leaves(2600, 3) == 16
    assert fat_zap_leaves(100, 3) == 1 and fat_zap_leaves(0, 3) == 1
    assert [fat_zap_leaves(n, 3) for n in (600, 1200, 2400, 4800)] == [4, 8, 16, 32]   # shares far from full
    assert fat_zap_leaves(800, 3) == 5      # 4 leaves of 200 of 212 on average: about one of them overflows
    counts = [fat_zap_leaves(n, 3) for n in range(1, 20000, 37)]
    assert counts == sorted(counts)                    # more entries, never fewer leaves
    near = fat_zap_leaves(212 * 8, 3)                  # mean share exactly full: about half the leaves split
    assert 8 < near < 16


def test_a_microzap_is_built_as_zap_micro_writes_it_and_small_directories_fit_in_their_pointer(tmp_path):
    """The reader gives lz4 the directory's block as ZFS writes it (mzap_phys_t, 64 B entries in
    the order added): a directory of three short names compresses to 112 B or less and is embedded,
    which the old per-entry formula missed for 22 of the shape tree's directories (a sector, twice,
    each)."""
    import struct

    from zfslab.model.footprint_metadata import MZAP_ENT_LEN, ZBT_MICRO, microzap_block
    block = microzap_block([b"a.txt", b"sub"], [8, 4], 1000)
    assert len(block) == 512 and struct.unpack_from("<Q", block)[0] == ZBT_MICRO
    value, cd, _, name = struct.unpack_from("<QIH50s", block, MZAP_ENT_LEN)
    assert (value >> 60, value & 0xFFFF, cd, name.rstrip(b"\0")) == (8, 1000, 0, b"a.txt")
    assert len(microzap_block([b"f%d" % i for i in range(8)], [8] * 8, 9)) == 1024   # grown by 512 B
    small, big = tmp_path / "small", tmp_path / "big"
    for d, n in ((small, 3), (big, 300)):
        d.mkdir()
        for i in range(n):
            (d / (f"f{i}" if n < 10 else f"file-{i:04d}-{random.Random(i).getrandbits(40):x}")).write_bytes(b"x")
    shapes = walk([str(tmp_path)]).directory_shapes
    clens = {entries: clen for (entries, _, _, clen) in shapes}
    assert 0 < clens[3] <= BPE_PAYLOAD_SIZE < clens[300] < 300 * MZAP_ENT_LEN


def test_a_long_symlink_spills_and_its_spill_is_priced_by_what_lz4_makes_of_it(tmp_path):
    """A target past the dnode's bonus goes to a 512 B spill block, which is metadata and lz4'd: a
    repetitive target (../sub/sub/...) fits in its block pointer, a random one takes an allocation.
    The shape tree's 40 repetitive spills had been priced as 40 sectors, twice."""
    from zfslab.model.footprint_metadata import SPILL_BLOCK_BYTES, spill_block
    assert len(spill_block(b"x" * 200)) == SPILL_BLOCK_BYTES and len(spill_block(b"x" * 600)) == 2 * SPILL_BLOCK_BYTES
    rng = random.Random(7)
    os.symlink("../" + "sub/" * 60 + "x", tmp_path / "repetitive")
    os.symlink("".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789/") for _ in range(300)), tmp_path / "random")
    os.symlink("short", tmp_path / "short")
    w = walk([str(tmp_path)])
    assert w.long_symlinks == 2 and sum(w.spills.values()) == 2
    assert sorted(c <= BPE_PAYLOAD_SIZE for (_, c) in w.spills) == [False, True]


def test_metadata_blocks_are_whole_allocations_twice_and_stored_as_is_where_they_cannot_shrink():
    """Every metadata block is priced like data (lz4, rounded to the allocation unit), twice. On
    dRAID a 16K dnode block compressed to 3K still takes a 16K row: stored as is (the 2.4.4 guest's
    dRAID metadata was twice the old compressed estimate)."""
    from zfslab.model.footprint import metadata_cost
    from zfslab.model.footprint_metadata import TreeShape

    def grown(text, ashift=12):    # 3,200 more files: 100 more dnode blocks of 32
        lay = parse_layout(text)
        one, many = (TreeShape(n, 0) for n in (24, 3224))
        return metadata_cost(lay, ashift, many)[1] - metadata_cost(lay, ashift, one)[1]

    def per_block(text, psize, ashift=12):
        return 2 * block_cost(parse_layout(text).groups[0], psize, ashift).used_bytes
    # beside the meta-dnode's L1, which now holds 101 pointers instead of 1 (+6.3 KB compressed)
    l1 = {"draid1:4d:6c:0s": 0, "mirror:2": per_block("mirror:2", 4096), "mirror:2 9": per_block("mirror:2", 6144, 9)}
    assert grown("draid1:4d:6c:0s") == pytest.approx(100 * per_block("draid1:4d:6c:0s", 16384))  # as is, a row
    assert grown("mirror:2") == pytest.approx(100 * per_block("mirror:2", 4096) + l1["mirror:2"])  # 32 x 88 B: 4K
    assert grown("mirror:2", 9) == pytest.approx(100 * per_block("mirror:2", 3072, 9) + l1["mirror:2 9"])  # 6 sectors


def test_symlinks_and_directories_count_and_a_big_directory_costs_more_than_many_small(run_cli, tmp_path):
    t = tmp_path / "t"
    t.mkdir()
    (t / "f").write_bytes(b"x" * 1000)
    for i in range(50):
        os.symlink("f" * (10 if i % 2 else 300), t / f"l{i}")
    d = json.loads(run_cli("footprint", str(t), "--layouts", "mirror:2", "--json").stdout)
    assert d["tree_shape"]["symlinks"] == 50 and d["tree_shape"]["long_symlinks"] == 25
    without = tmp_path / "u"
    without.mkdir()
    (without / "f").write_bytes(b"x" * 1000)
    e = json.loads(run_cli("footprint", str(without), "--layouts", "mirror:2", "--json").stdout)
    assert d["layouts"][0]["metadata_used_bytes_estimate"] > e["layouts"][0]["metadata_used_bytes_estimate"]
    assert d["layouts"][0]["data_used_bytes"] == e["layouts"][0]["data_used_bytes"]


# ---- sparse files --------------------------------------------------------------------------------

def _sparse_tree(tmp_path, size=1 << 40):
    t = tmp_path / "sparse"
    t.mkdir()
    with open(t / "big.img", "wb") as f:     # 1 TiB, 120 KB of text across 5 MiB: two records of data
        f.truncate(size)
        f.seek((5 << 20) - 20480)
        f.write(b"hello sparse world " * 6400)
    if os.stat(t / "big.img").st_blocks * 512 >= size:
        pytest.skip("this file system keeps no holes")
    return t


def test_a_sparse_file_is_priced_from_its_data_extents_and_its_holes_are_never_read(run_cli, tmp_path):
    """SEEK_DATA/SEEK_HOLE: the records in holes are counted, not read. Kept as holes (cp, rsync -S)
    they take no block whatever the compression; filled (rsync without -S) they are zeros: holes again
    with compression on, 8M records of zeros with it off."""
    t = _sparse_tree(tmp_path)

    def run(*more):
        r = run_cli("footprint", str(t), "--layouts", "mirror:2", "--json", *more)
        assert r.exit_code == 0, r.stderr
        return json.loads(r.stdout)
    keep, fill = run(), run("--sparse", "fill")
    assert keep["read"]["bytes_read"] == fill["read"]["bytes_read"] <= 2 * 128 * K   # only the data extent
    assert keep["read"]["hole_records"] == (1 << 40) // (128 * K) - 2
    assert keep["layouts"][0]["data_used_bytes"] == fill["layouts"][0]["data_used_bytes"] > 0
    assert fill["layouts"][0]["holes"] == (1 << 40) // (128 * K) - 2 and keep["layouts"][0]["holes"] == 0
    off_keep, off_fill = run("--compression", "off"), run("--compression", "off", "--sparse", "fill")
    assert off_keep["layouts"][0]["data_used_bytes"] == 2 * 128 * K      # two records (USED: one mirror copy)
    assert off_fill["layouts"][0]["data_used_bytes"] == 1 << 40
    # the 1 TiB file's indirect blocks reach its last written record only (cp's hole at the end is
    # a truncate, which writes no block): one L1 of two pointers
    assert keep["tree_shape"]["indirect_blocks"] == [[1, 2, 1]]


def test_sampling_a_sparse_file_draws_records_as_needed(run_cli, tmp_path):
    """--sample 1s --recordsize 4K on a 1 TiB sparse file: 2^28 records, none drawn ahead of need
    (it took 13.5 s and 455 MB when every draw was made first)."""
    import resource
    import time
    t = _sparse_tree(tmp_path)
    before = resource.getrusage(resource.RUSAGE_SELF)
    start = time.monotonic()
    r = run_cli("footprint", str(t), "--layouts", "mirror:2", "--sample", "1s", "--recordsize", "4K", "--json")
    took = time.monotonic() - start
    assert r.exit_code == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["read"]["records_total"] == (1 << 40) // 4096 and 0 < d["read"]["records_read"] <= 1_000_000
    cpu = resource.getrusage(resource.RUSAGE_SELF)
    assert cpu.ru_utime - before.ru_utime < took + 1 and took < 8


def test_a_special_vdev_takes_the_metadata_and_the_blocks_up_to_special_small_blocks():
    """spa_preferred_class: metadata always, a file's data block when its psize is at most
    special_small_blocks; the rest on the data vdevs."""
    from zfslab.model.footprint import footprint
    from zfslab.model.footprint_metadata import TreeShape
    blocks = {(4096, 4096): 10, (131072, 131072): 3}   # incompressible: ten 4K blocks, three records
    off = Compression(False)
    shape = TreeShape(13, 1, directory_shapes={(13, 130, False, 0): 1})
    plain = footprint(blocks, parse_layout("raidz2:6"), 12, off, shape=shape)
    special = footprint(blocks, parse_layout("raidz2:6+special=mirror:3"), 12, off, shape=shape,
                        special_small_bytes=16384)
    mirror_4k = block_cost(parse_layout("mirror:3").groups[0], 4096, 12).used_bytes
    raidz_128k = block_cost(parse_layout("raidz2:6").groups[0], 131072, 12).used_bytes
    assert special.special_data_used_bytes == pytest.approx(10 * mirror_4k)
    assert special.used_bytes == pytest.approx(10 * mirror_4k + 3 * raidz_128k)
    assert special.special_used_bytes == pytest.approx(10 * mirror_4k + special.metadata_used_bytes)
    assert plain.special_used_bytes == 0 and not plain.metadata_on_special
    # without special_small_blocks only the metadata goes there
    meta_only = footprint(blocks, parse_layout("raidz2:6+special=mirror:3"), 12, off, shape=shape)
    assert meta_only.special_data_used_bytes == 0 and meta_only.used_bytes == pytest.approx(plain.used_bytes)
    assert meta_only.special_used_bytes == meta_only.metadata_used_bytes > 0


def test_what_the_special_vdev_holds_does_not_lower_avail_from_2_4_1(run_cli, tmp_path):
    f = tmp_path / "sizes.txt"
    f.write_text("".join(f"{n}\n" for n in (3000, 9000, 400000) * 50))
    def record(version):
        r = run_cli("footprint", str(f), "--compression", "off", "--layouts", "raidz2:6+special=mirror:3@1TB",
                    "--disk-size", "4TB", "--special-small-blocks", "16K", "--zfs-version", version, "--json")
        return json.loads(r.stdout)["layouts"][0]
    new, old = record("2.4.4"), record("2.3.2")
    assert new["special_used_bytes"] > 0 and new["used_bytes"] == old["used_bytes"]
    assert old["free_after_bytes"] == old["usable_bytes"] - old["used_bytes"]
    assert new["free_after_bytes"] == new["usable_bytes"] - (new["used_bytes"] - new["special_used_bytes"])


def test_special_small_blocks_without_a_special_vdev_is_refused(run_cli, tmp_path):
    r = run_cli("footprint", str(tmp_path), "--layouts", "raidz2:6", "--special-small-blocks", "64K")
    assert r.exit_code == 2 and "no layout given has a special vdev" in r.stderr
    r = run_cli("footprint", str(tmp_path), "--layouts", "raidz2:6+special=mirror:3", "--special-small-blocks", "96K")
    assert r.exit_code == 2 and "power of two" in r.stderr


def test_lz4_is_openzfs_own_code_where_libzpool_has_it(monkeypatch):
    """libzpool 2.0-2.2's lz4_compress_zfs prices what the module writes (the lz4 package came out
    ~2 % high in the guest); ZFSLAB_LZ4=package, or no such library, falls back to the package."""
    from zfslab.system.zfs_lz4 import zfs_lz4
    own = zfs_lz4()
    if own is None:
        pytest.skip("no libzpool with lz4_compress_zfs here (Debian's libzpool5linux has it)")
    rng = random.Random(4)
    text = b" ".join(rng.choice([b"alpha", b"beta", b"gamma", b"delta"]) for _ in range(30000))[:131072]
    noise = rng.randbytes(131072)
    import lz4.block
    package = compressor("lz4")
    assert package(text) == own(text) < 131072 // 2          # the module's code, found by compressor()
    assert own(noise) > 131072                                # incompressible: the block and its header
    # text of many words: the two codes find other matches (the module's shorter here, as in the guest)
    words = [bytes(rng.choice(b"etaoinshrdlucmfw") for _ in range(rng.randint(2, 10))) for _ in range(2000)]
    prose = b" ".join(rng.choice(words) for _ in range(40000))[:131072]
    assert own(prose) < 4 + len(lz4.block.compress(prose, mode="default", store_size=False))
    monkeypatch.setenv("ZFSLAB_LZ4", "package")
    assert zfs_lz4() is None
    assert compressor("lz4")(text) == 4 + len(lz4.block.compress(text, mode="default", store_size=False))


def test_plan_data_from_a_tree_with_a_1_tib_sparse_file_reads_only_its_data(run_cli, tmp_path):
    """plan --data-from DIR reads the tree as footprint does: the holes are counted, never read."""
    import time
    t = _sparse_tree(tmp_path)
    start = time.monotonic()
    r = run_cli("plan", "6x4TB", "--data-from", str(t), "--json")
    assert r.exit_code == 0, r.stderr
    assert time.monotonic() - start < 20
    rows = json.loads(r.stdout)["layouts"]
    # 1 TiB of holes kept as holes: a few hundred KB of USED, not a TiB
    assert rows and all(0 < row["data_used_bytes"] < 4 << 20 for row in rows)
