"""special-size's model on cases computed by hand, its parsers, and the command's errors."""

import json
import math
import os

import pytest

from tests.conftest import REPO
from zfslab.errors import InputError, ParamError
from zfslab.model.special_size import (
    SpecialSettings, ZdbBlockStats, block_psize, check_threshold, file_blocks, from_file_sizes, from_zdb,
    indirect_asize, meta_dnode_indirect_asize, recommended_bytes,
)
from zfslab.system.size_inputs import detect_format, parse_csv, parse_sizes, parse_zdb

K = 1024
OFF = SpecialSettings()


def test_a_file_up_to_recordsize_is_one_block_of_its_size_rounded_to_512():
    assert file_blocks(0, OFF) == {}
    assert file_blocks(1, OFF) == {512: 1}
    assert file_blocks(513, OFF) == {1024: 1}
    assert file_blocks(128 * K, OFF) == {128 * K: 1}


def test_a_larger_file_is_recordsize_blocks_its_last_one_padded_without_compression():
    assert file_blocks(128 * K + 1, OFF) == {128 * K: 2}
    assert file_blocks(300 * K, SpecialSettings(recordsize_bytes=64 * K)) == {64 * K: 5}


def test_compression_rounds_to_a_sector_and_must_save_an_eighth():
    lz4 = SpecialSettings(compression_ratio=2.0)
    # 10,000 B in a 10,240 B block: 5,000 compressed, at most 8,960 - 8,960 % 4,096 = 8,192 allowed
    assert block_psize(10_000, 10_240, lz4) == 8192
    assert block_psize(100, 512, SpecialSettings(compression_ratio=1.5)) == 0      # 67 B: embedded
    assert block_psize(4_000, 4_096, lz4) == 4_096                                  # 2,000 B > 3,584 - 3,584 % 4,096 = 0
    assert block_psize(0, 128 * K, lz4) == 0                                        # a hole
    # a 200 KiB file at 128K recordsize: a full block (64 KiB compressed) and a 72 KiB tail (36 KiB)
    assert file_blocks(200 * K, lz4) == {64 * K: 1, 36 * K: 1}


def test_indirect_blocks_hold_1024_pointers_each_and_stack_up():
    assert indirect_asize(1, OFF) == 0                     # the pointer is in the dnode
    assert indirect_asize(3, OFF) == 4096                  # 3 x 48 B: one sector
    assert indirect_asize(1025, OFF) == 48 * K + 4096 + 4096  # L1: 1,024 + 1 pointers; L2: 2 pointers
    # 2^54 pointers (2^63 B at recordsize 512): 2^44 full L1 blocks, 2^34 L2 ... in closed form
    assert indirect_asize(2**54, OFF) == sum(2**k * 48 * K for k in (44, 34, 24, 14, 4)) + 4096
    assert meta_dnode_indirect_asize(1, OFF) == 5 * 4096  # L1 to L5 exist for any number of objects


def test_small_blocks_by_threshold_are_counted_by_hand():
    sizes = {4096: 10, 5000: 2, 20_000: 1, 300 * K: 1}
    e = from_file_sizes(sizes, OFF, small_blocks_bytes=16 * K)
    by = {r.small_blocks_bytes: (r.small_block_count, r.small_asize_bytes) for r in e.rows}
    # blocks: 10 x 4,096; 2 x 5,120 (a sector and a quarter: 8,192 allocated); 20,480; 3 x 128 KiB
    assert by[0] == (0, 0)
    assert by[4 * K] == (10, 40_960)
    assert by[8 * K] == by[16 * K] == (12, 40_960 + 2 * 8192)
    assert by[32 * K] == by[64 * K] == (13, 40_960 + 2 * 8192 + 20_480)
    assert e.chosen.small_blocks_bytes == 16 * K and e.file_count == 14


def test_a_higher_threshold_never_needs_less():
    e = from_file_sizes({size: 3 for size in range(0, 300_000, 997)}, SpecialSettings(compression_ratio=1.7),
                        small_blocks_bytes=1 << 20, thresholds=tuple(512 << i for i in range(12)))
    needed = [r.needed_bytes for r in e.rows]
    assert needed == sorted(needed) and e.rows[-1].small_block_count > e.rows[1].small_block_count > 0


def test_the_chosen_threshold_joins_the_table_and_ashift_sets_the_rounding():
    e = from_file_sizes({1000: 4}, SpecialSettings(ashift=9), small_blocks_bytes=1024)
    assert [r.small_blocks_bytes for r in e.rows] == [0, 1024, 4 * K, 8 * K, 16 * K, 32 * K, 64 * K]
    assert e.chosen.small_asize_bytes == 4 * 1024  # 1,024 B blocks on 512 B sectors


def test_the_reserve_applies_to_small_blocks_and_growth_and_mirror_width_multiply():
    s = SpecialSettings(mirror_width=3, growth_fraction=0.5)
    assert recommended_bytes(3000, 0, OFF) == 3000
    assert recommended_bytes(3000, 3000, OFF) == 8000             # 6,000 / 0.75
    assert recommended_bytes(3000, 3000, s) == 12_000              # x 1.5
    e = from_file_sizes({4096: 1}, s, small_blocks_bytes=4 * K)
    assert e.chosen.raw_bytes == 3 * e.chosen.recommended_bytes
    assert e.chosen.recommended_bytes == math.ceil(math.ceil(e.chosen.needed_bytes / 0.75) * 1.5)


def test_metadata_grows_with_files_and_counts_two_copies():
    one = from_file_sizes({10: 1000}, OFF, small_blocks_bytes=0)
    two = from_file_sizes({10: 2000}, OFF, small_blocks_bytes=0)
    dn1, dn2 = (next(p.asize_bytes for p in e.metadata if p.name == "dnodes") for e in (one, two))
    assert dn2 > dn1 and dn1 % (2 * 4096) == 0
    assert not any(p.measured for p in one.metadata)


def test_settings_and_thresholds_are_checked():
    for t in (256, 3000, 32 << 20):
        with pytest.raises(ParamError):
            check_threshold(t)
    assert check_threshold(0) == 0 and check_threshold(16 << 20) == 16 << 20
    with pytest.raises(ParamError):
        SpecialSettings(compression_ratio=float("nan"))
    with pytest.raises(ParamError):
        SpecialSettings(recordsize_bytes=3000)


def test_zdb_metadata_is_taken_as_measured_and_taken_out_of_the_histogram():
    stats = ZdbBlockStats(metadata_count=2, metadata_psize_bytes=8192, metadata_asize_bytes=16_384,
                          total_lsize_bytes=10**6,
                          psize_bins=((512, 3, 1536), (4096, 5, 20_480), (16384, 1, 16_384), (131072, 2, 262_144)))
    e = from_zdb(stats, OFF, small_blocks_bytes=16 * K)
    by = {r.small_blocks_bytes: r for r in e.rows}
    assert by[0].needed_bytes == 16_384 and e.metadata[0].measured
    # 4K bin less the 2 metadata blocks: 3 blocks, 12,288 B, each rounded by half a sector on average
    assert (by[4 * K].small_block_count, by[4 * K].small_asize_bytes) == (6, 3 * 4096 + 12_288 + 3 * 1792)
    assert not by[4 * K].exact_up_to and by[8 * K].exact_up_to
    assert by[16 * K].small_block_count == 7 and not by[16 * K].exact_up_to


# --- parsers -----------------------------------------------------------------------------------

def test_size_list_is_strict_and_names_the_line():
    assert parse_sizes("10\n10\n\n0\r\n", "input x") == {10: 2, 0: 1}
    with pytest.raises(InputError, match=r"input x line 2: '1e3' is not a file size"):
        parse_sizes("5\n1e3\n", "input x")
    for bad in ("-5", "1.5", "12 KB", "99999999999999999999"):
        with pytest.raises(InputError):
            parse_sizes(bad, "input x")
    with pytest.raises(InputError, match="no file sizes"):
        parse_sizes("\n\n", "input x")


def test_csv_takes_a_header_or_none_and_refuses_anything_else():
    assert parse_csv("size_bytes,count\n4096,3\n4096,1\n0,2\n", "h") == {4096: 4, 0: 2}
    assert parse_csv("512, 7\n", "h") == {512: 7}
    with pytest.raises(InputError, match="line 1: 'size,n' is not the header"):
        parse_csv("size,n\n1,2\n", "h")
    with pytest.raises(InputError, match="line 2"):
        parse_csv("1,2\n3,4,5\n", "h")
    with pytest.raises(InputError, match="line 1"):
        parse_csv("1,-2\n", "h")
    assert detect_format("size_bytes,count\n1,2\n") == "csv" and detect_format("12\n") == "sizes"


def data(name):
    return os.path.join(REPO, "tests", "data", name)


# captured in the test guest: a raidz1:3 + special mirror:2 pool, one special_small_blocks=16K dataset of
# tests/e2e/inside/test_special_size.py's file mix (2.3.2; 2.1.11 with an earlier mix of 3,004 files)
ZDB, ZDB_P = data("zdb-bbb-special-2.1.txt"), data("zdb-bbbP-special-2.1.txt")
ZDB_23, ZDB_23_4P = data("zdb-bb-special-2.3.txt"), data("zdb-bbbbP-special-2.3.txt")


@pytest.mark.parametrize("path", [ZDB_P, ZDB_23, ZDB_23_4P])
def test_zdb_output_parses(path):
    text = open(path).read()
    assert detect_format(text) == "zdb"
    stats = parse_zdb(text, "z")
    assert 0 < stats.metadata_asize_bytes < 10**8 and stats.metadata_count > 0
    assert [b[0] for b in stats.psize_bins][:3] == [512, 1024, 2048]
    assert sum(b[1] for b in stats.psize_bins) > stats.metadata_count


def test_zdb_nicenum_and_raw_outputs_agree_to_three_digits():
    a, b = parse_zdb(open(ZDB_23).read(), "z"), parse_zdb(open(ZDB_23_4P).read(), "z")
    assert a.metadata_count == b.metadata_count
    assert math.isclose(a.metadata_asize_bytes, b.metadata_asize_bytes, rel_tol=0.01)
    assert a.data_psize_sectors is None and b.data_psize_sectors


def test_zdb_before_2_2_needs_raw_figures_to_subtract():
    with pytest.raises(InputError, match="give the output of zdb -bbb -P POOL"):
        parse_zdb(open(ZDB).read(), "z")
    old = parse_zdb(open(ZDB_P).read(), "z")
    table = open(ZDB_P).read().split("Blocks\tLSIZE")[1]
    total = next(line for line in table.splitlines() if line.endswith("\tTotal")).split("\t")
    plain = next(line for line in table.splitlines() if line.endswith("L0 ZFS plain file")).split("\t")
    assert old.metadata_asize_bytes == int(total[3]) - int(plain[3])


def test_zdb_output_cut_short_is_refused():
    text = open(ZDB_P).read()
    with pytest.raises(InputError, match="no block statistics table"):
        parse_zdb(text.split("Blocks\tLSIZE")[0], "z")
    with pytest.raises(InputError, match="no Block Size Histogram"):
        parse_zdb(text.split("Block Size Histogram")[0], "z")
    with pytest.raises(InputError, match="is not a number"):
        parse_zdb(text.replace("Metadata Total", "x").replace("\tTotal\n", "\tTotal\n").replace(
            text.split("Blocks\tLSIZE")[1].splitlines()[3].split("\t")[0], "12Q", 1), "z")


# --- the command -------------------------------------------------------------------------------

def test_command_json_and_table(run_cli, tmp_path):
    f = tmp_path / "sizes.txt"
    f.write_bytes(b"\xef\xbb\xbf" + b"4096\n5000\n20000\n307200\n")   # a BOM is dropped
    r = run_cli("special-size", str(f), "--special-small-blocks", "8K", "--json")
    assert r.exit_code == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["chosen"]["special_small_blocks"] == 8192 and d["chosen"]["small_blocks"] == 2
    r = run_cli("special-size", str(f), "--special-small-blocks", "8K", "--special-layout", "mirror:3")
    assert r.exit_code == 0 and "needed / 0.75" in r.stdout and "mirror:3" in r.stdout


@pytest.mark.parametrize("args,message", [
    (("--special-small-blocks", "3K"), "--special-small-blocks '3K': give 0, or a power of two from 512 to 16M"),
    (("--compression", "zstd"), "--compression 'zstd': write off, or lz4-ratio R"),
    (("--recordsize", "100K"), "--recordsize '100K': give a power of two"),
])
def test_command_bad_options_are_one_line_and_exit_2(run_cli, tmp_path, args, message):
    f = tmp_path / "s.txt"
    f.write_text("1\n")
    r = run_cli("special-size", str(f), *args)
    assert r.exit_code == 2 and message in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_command_bad_input_names_the_line(run_cli, tmp_path):
    f = tmp_path / "s.txt"
    f.write_text("1\n2\nthree\n")
    r = run_cli("special-size", str(f))
    assert r.exit_code == 2 and "line 3: 'three' is not a file size" in r.stderr


def test_command_takes_a_csv_and_zdb_output(run_cli, tmp_path):
    f = tmp_path / "h.csv"
    f.write_text("size_bytes,count\r\n4096,10\r\n5000,2\r\n20000,1\r\n307200,1\r\n")
    d = json.loads(run_cli("special-size", str(f), "--special-small-blocks", "32K", "--json").stdout)
    assert (d["chosen"]["small_blocks"], d["chosen"]["small_blocks_bytes"]) == (13, 40_960 + 2 * 8192 + 20_480)
    z = json.loads(run_cli("special-size", ZDB_23_4P, "--special-small-blocks", "16K", "--json").stdout)
    assert z["source"] == "zdb" and z["metadata"][0]["measured"] and z["chosen"]["exact"]
    r = run_cli("special-size", ZDB_23, "--special-small-blocks", "16K")
    assert r.exit_code == 0 and "+: a histogram bin straddles the threshold" in r.stdout


# --- bounded on every input the limits admit (issue 26) -----------------------------------------

def _reference(sizes, s, t):
    """The per-size computation before the closed form (its loops grow with size / recordsize:
    only for small sizes), to check the vectorised tally against."""
    blocks, files, data, indirect = {}, 0, 0, 0
    for size, n in sizes.items():
        if n <= 0:
            continue
        files, data = files + n, data + size * n
        per_file = file_blocks(size, s)
        for p, k in per_file.items():
            blocks[p] = blocks.get(p, 0) + k * n
        pointers = sum(per_file.values()) if size > s.recordsize_bytes else 1
        indirect += n * indirect_asize(pointers, s)
    picked = [(p, k) for p, k in blocks.items() if t and 0 < p <= t]
    return files, data, 2 * indirect, sum(k for _, k in picked), sum(k * (-(-p // s.sector_bytes) * s.sector_bytes) for p, k in picked)


def test_the_tally_agrees_with_the_per_size_computation():
    import random
    rng = random.Random(26)
    for _ in range(300):
        s = SpecialSettings(recordsize_bytes=rng.choice([512, 4 * K, 128 * K, 1 << 20]), ashift=rng.choice([9, 12, 13]),
                            compression_ratio=rng.choice([1.0, 1.7, 3.0]))
        sizes = {rng.choice([0, 1, rng.randrange(1, 5000), rng.randrange(1, 3 << 20), rng.randrange(1, 2**30)]):
                 rng.randrange(0, 5) for _ in range(rng.randrange(1, 30))}
        t = rng.choice([0, 512, 4 * K, 16 * K, 1 << 20])
        e = from_file_sizes(sizes, s, small_blocks_bytes=t)
        row = e.chosen
        assert (e.file_count, e.data_bytes, e.metadata[1].asize_bytes, row.small_block_count, row.small_asize_bytes) \
            == _reference(sizes, s, t), (sizes, s, t)


def test_sizes_near_2_63_are_computed_in_closed_form():
    # a 2^63 - 1 byte file at recordsize 512 has 2^54 blocks: a list per block never ended
    s = SpecialSettings(recordsize_bytes=512, ashift=9)
    e = from_file_sizes({2**63 - 1: 10**12}, s, small_blocks_bytes=16 << 20)
    assert e.chosen.small_block_count == 2**54 * 10**12
    assert e.chosen.small_asize_bytes == (2**63 - 1 + 1) * 10**12       # the tail's 511 B take a sector
    assert e.data_bytes == (2**63 - 1) * 10**12 and isinstance(e.data_bytes, int)


def test_a_list_parsed_in_any_chunks_gives_the_same_and_names_the_same_line():
    from zfslab.system.size_inputs import size_chunks
    import random
    rng = random.Random(7)
    text = "".join(rng.choice(["4096\n", " 12 \r\n", "\n", "9223372036854775806\n", "0\n", "7\x0c8\n"])
                   for _ in range(400))
    whole = parse_sizes(text, "x")
    for _ in range(30):
        cuts = sorted(rng.sample(range(1, len(text)), 5))
        parts = [text[a:b] for a, b in zip([0] + cuts, cuts + [len(text)])]
        got = {}
        for sizes, counts in size_chunks(parts, "x", "sizes"):
            for size, n in zip(sizes.tolist(), counts.tolist()):
                got[size] = got.get(size, 0) + n
        assert got == whole
    bad = "1\n" * 300 + "9223372036854775808\n"
    with pytest.raises(InputError, match="line 301: '9223372036854775808' is not a file size"):
        list(size_chunks([bad[:123], bad[123:]], "x", "sizes"))
    with pytest.raises(InputError, match="line 3: '1,2,3' is not a histogram row"):
        list(size_chunks(["size_bytes,count\n1,", "2\n1,2,3\n"], "x", "csv"))
    assert parse_csv("7,1000000000000\n7,1000000000000\n", "x") == {7: 2 * 10**12}


def test_command_near_2_63_answers_instead_of_running_out_of_memory(run_cli, tmp_path):
    f = tmp_path / "big.csv"
    f.write_text("9223372036854775807,1000000000000\n")
    r = run_cli("special-size", str(f), "--recordsize", "512", "--json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["files"] == 10**12
    f.write_text("18014398509481984\n")
    assert run_cli("special-size", str(f), "--format", "sizes", "--json").exit_code == 0


def test_command_reads_a_list_a_chunk_at_a_time(run_cli, tmp_path):
    import tracemalloc
    f = tmp_path / "sizes.txt"
    f.write_text("".join(f"{n * 7919}\n" for n in range(1, 1_000_001)))   # 1 M distinct sizes, 11 MB
    tracemalloc.start()
    try:
        r = run_cli("special-size", str(f), "--recordsize", "512", "--json")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["files"] == 1_000_000
    assert peak < 40 << 20, peak      # whole, the text and its lines took over 100 MB


def test_command_refuses_a_binary_file_at_its_first_chunk(run_cli, tmp_path):
    import tracemalloc
    f = tmp_path / "zeros.bin"
    with open(f, "wb") as out:
        out.truncate(250 << 20)       # sparse: 250 MiB of zeros
    tracemalloc.start()
    try:
        r = run_cli("special-size", str(f))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert r.exit_code == 2 and "holds NUL characters: a binary file, not text" in r.stderr
    assert "text text" not in r.stderr
    assert peak < 20 << 20, peak      # one chunk read, not 250 MiB
