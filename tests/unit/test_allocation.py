from fractions import Fraction

import pytest

from zfslab.model.allocation import (block_allocation, block_space_fraction, efficiency_table, file_allocation,
                                    usable_at_block)
from zfslab.model.capacity import pool_capacity
from zfslab.model.layout_grammar import parse_layout
from zfslab.model.units import KiB, MiB


def group(text):
    return parse_layout(text).groups[0]


@pytest.mark.parametrize("layout,recordsize,sectors,efficiency,used_per_logical", [
    # raidz and dRAID at ashift 12, by psize_to_asize and the deflate ratio (docs/capacity.md#allocation)
    ("raidz1:4", 16 * KiB, 6, 0.667, 1.090), ("raidz1:4", 128 * KiB, 44, 0.727, 0.999),
    ("raidz1:4", MiB, 342, 0.749, 0.971), ("raidz2:6", 16 * KiB, 6, 0.667, 0.999),
    ("raidz2:8", 128 * KiB, 45, 0.711, 1.000), ("raidz3:16", MiB, 316, 0.810, 0.897),
    ("raidz3:6", 16 * KiB, 12, 0.333, 1.406), ("draid2:8d:24c", 16 * KiB, 10, 0.400, 1.997),
    ("draid2:8d:24c", 4 * KiB, 10, 0.100, None), ("draid1:4d:24c", MiB, 320, 0.800, 0.999),
])
def test_block_efficiency_matches_the_published_tables(layout, recordsize, sectors, efficiency, used_per_logical):
    b = block_allocation(group(layout), recordsize, 12)
    assert b.sectors == sectors
    assert b.efficiency == pytest.approx(efficiency, abs=5e-4)
    if used_per_logical is not None:
        assert b.used_per_logical == pytest.approx(used_per_logical, abs=5e-4)


def test_mirror_stores_every_copy():
    b = block_allocation(group("mirror:3"), 128 * KiB, 12)
    assert (b.asize_bytes, b.physical_bytes, b.dsize_bytes) == (128 * KiB, 3 * 128 * KiB, 128 * KiB)
    assert b.efficiency == pytest.approx(1 / 3)


@pytest.mark.parametrize("layout,recordsize,raw,dsize", [
    # 256 MiB of incompressible data (docs/capacity.md#allocation): predicted data allocation (one copy) and dsize
    ("raidz1:5", 16 * KiB, 402_653_184, 321_650_688), ("raidz2:8", MiB, 358_612_992, 254_951_424),
    ("raidz3:11", 16 * KiB, 536_870_912, 390_070_272), ("mirror:2", 128 * KiB, 268_435_456, 268_435_456),
])
def test_file_allocation_of_256_mib(layout, recordsize, raw, dsize):
    lay = parse_layout(layout)
    f = file_allocation(lay, 256 * MiB, recordsize, 12)
    copies = lay.groups[0].width if layout.startswith("mirror") else 1
    assert f.physical_bytes == raw * copies
    assert f.dsize_bytes == dsize


def test_small_file_is_one_block_rounded_to_512():
    f = file_allocation(parse_layout("raidz2:6"), 1000, 128 * KiB, 12)
    assert f.blocks == 1
    assert f.physical_bytes == 3 * 4096  # 1 data sector + 2 parity, already a multiple of 3


def test_efficiency_table_covers_4k_to_16m():
    rows = efficiency_table(group("raidz2:10"), 12)
    assert [r.recordsize_bytes for r in rows][0] == 4 * KiB and rows[-1].recordsize_bytes == 16 * MiB
    # bigger records never store less efficiently on raidz
    assert all(a.efficiency <= b.efficiency + 1e-12 for a, b in zip(rows, rows[1:]))


# Sectors counted by hand from vdev_raidz_psize_to_asize (docs/capacity.md#space-at-a-block-size):
# data sectors, p parity per row of (width - p) data sectors, padded to a multiple of p + 1.
# (layout, ashift, block, sectors of the block, sectors of a 128K block)
SMALL_BLOCKS = [
    ("raidz1:3", 12, 8 * KiB, 4, 48),     # 2 + 1 = 3 -> 4;        128K: 32 + 16 = 48
    ("raidz1:5", 12, 16 * KiB, 6, 40),    # 4 + 1 = 5 -> 6;        128K: 32 + 8 = 40
    ("raidz1:5", 12, 8 * KiB, 4, 40),     # 2 + 1 = 3 -> 4
    ("raidz1:5", 9, 8 * KiB, 20, 320),    # 16 + 4 = 20;           128K: 256 + 64 = 320
    ("raidz2:4", 12, 16 * KiB, 9, 66),    # 4 + 4 = 8 -> 9;        128K: 32 + 32 = 64 -> 66
    ("raidz2:4", 12, 128 * KiB, 66, 66),
    ("raidz2:4", 9, 16 * KiB, 66, 513),   # 32 + 32 = 64 -> 66;    128K: 256 + 256 = 512 -> 513
    ("raidz2:4", 9, 8 * KiB, 33, 513),    # 16 + 16 = 32 -> 33
    ("raidz2:6", 12, 16 * KiB, 6, 48),    # 4 + 2 = 6: no padding, as at 128K (32 + 16 = 48)
    ("raidz2:6", 12, 8 * KiB, 6, 48),     # 2 + 2 = 4 -> 6
    ("raidz3:9", 12, 16 * KiB, 8, 52),    # 4 + 3 = 7 -> 8;        128K: 32 + 18 = 50 -> 52
    ("raidz3:9", 12, 8 * KiB, 8, 52),     # 2 + 3 = 5 -> 8
    ("raidz3:9", 9, 16 * KiB, 52, 388),   # 32 + 3 * 6 = 50 -> 52; 128K: 256 + 3 * 43 = 385 -> 388
    ("draid2:8d:24c:1s", 12, 16 * KiB, 10, 40),  # one row of 8 + 2;   128K: 4 rows
    ("draid1:4d:6c:1s", 12, 8 * KiB, 5, 40),     # one row of 4 + 1;    128K: 8 rows
]


@pytest.mark.parametrize("layout,ashift,block,sectors,sectors_128k", SMALL_BLOCKS)
def test_small_blocks_get_their_hand_counted_share_of_usable_space(layout, ashift, block, sectors, sectors_128k):
    """zfs list's space is deflated at the 128K ratio (128K / its sectors in 512 B units, truncated);
    a block is charged its sectors times that ratio, so the share it gets is block / charge."""
    g = parse_layout(layout).groups[0]
    units = (1 << ashift) // 512
    ratio = (128 * KiB) // (sectors_128k * units)
    assert block_allocation(g, block, ashift).sectors == sectors
    assert block_space_fraction(g, block, ashift) == Fraction(block, sectors * units * ratio)


def test_the_figures_of_the_review():
    """raidz2:4 stores a 16K block in 9 sectors (4 data, 4 parity, 1 pad): 44 % efficiency where
    zfs list counts 32/66 = 48.5 %, so 16K blocks get 91.8 % of its figure; raidz1:5 6 sectors,
    67 % against 80 %; a mirror loses nothing."""
    rz2, rz1, mirror = (parse_layout(t).groups[0] for t in ("raidz2:4", "raidz1:5", "mirror:2"))
    assert block_allocation(rz2, 16 * KiB, 12).efficiency == pytest.approx(4 / 9)
    assert float(block_space_fraction(rz2, 16 * KiB, 12)) == pytest.approx(0.9176, abs=1e-4)
    assert block_allocation(rz1, 16 * KiB, 12).efficiency == pytest.approx(4 / 6)
    assert float(block_space_fraction(rz1, 16 * KiB, 12)) == pytest.approx(0.8346, abs=1e-4)
    assert block_space_fraction(mirror, 16 * KiB, 12) == 1 == block_space_fraction(mirror, 128 * KiB, 12)


def test_a_block_smaller_than_a_sector_wastes_even_on_a_mirror():
    """At ashift 14 (16K sectors) an 8K block takes a whole sector on any layout."""
    assert block_space_fraction(parse_layout("mirror:2").groups[0], 8 * KiB, 14) == Fraction(1, 2)
    assert block_space_fraction(parse_layout("disk").groups[0], 16 * KiB, 12) == 1


def test_a_pool_in_small_blocks_weighs_its_vdev_groups_by_their_space():
    """One group: zfs list's USED+AVAIL times the fraction; mirrors alone: unchanged; a mirror
    beside a raidz2: between the two, by each group's deflated space."""
    one = pool_capacity(parse_layout("raidz2:4"), 4 * 10**12, ashift=12)
    rz2 = one.layout.groups[0]
    assert usable_at_block(one, 16 * KiB) == int(one.usable_bytes * block_space_fraction(rz2, 16 * KiB, 12))
    mirrors = pool_capacity(parse_layout("3xmirror:2"), 4 * 10**12, ashift=12)
    assert usable_at_block(mirrors, 16 * KiB) == mirrors.usable_bytes
    mixed = pool_capacity(parse_layout("mirror:2+raidz2:4"), 4 * 10**12, ashift=12)
    mirror_space, raidz_space = (v.dspace_bytes for v in mixed.vdevs)
    share = (mirror_space + raidz_space * block_space_fraction(rz2, 16 * KiB, 12)) / (mirror_space + raidz_space)
    assert usable_at_block(mixed, 16 * KiB) == int(mixed.usable_bytes * share)
    assert (usable_at_block(one, 16 * KiB) / one.usable_bytes < usable_at_block(mixed, 16 * KiB) / mixed.usable_bytes
            < 1)


def test_a_block_size_must_be_positive():
    with pytest.raises(ValueError, match="block_bytes"):
        block_space_fraction(parse_layout("raidz1:3").groups[0], 0, 12)


def test_the_worked_example_of_capacity_md_is_what_the_code_gives():
    """docs/capacity.md#space-at-a-block-size: each row's sectors, deflate ratio and fraction, and the
    8 x 12 TB pools' TB in zfs list and in 16K blocks."""
    import re
    from pathlib import Path

    from zfslab.model.capacity import deflate_ratio, whole_disk_capacity
    text = (Path(__file__).parents[2] / "docs" / "capacity.md").read_text().split("## Space at a block size")[1]
    rows = re.findall(r"^\| (raidz\d:\d|draid2:8d|mirror) \| (.+?) \| (.+?) \| (.+?) \| (.+?) \|", text, re.M)
    assert len(rows) == 7
    for name, small, large, ratio, fraction in rows:
        g = parse_layout({"draid2:8d": "draid2:8d:24c:1s", "mirror": "mirror:2"}.get(name, name)).groups[0]
        assert f"{block_allocation(g, 16 * KiB, 12).sectors} sectors" in small, name
        assert large.split()[-1] == str(block_allocation(g, 128 * KiB, 12).sectors) or name == "mirror", name
        assert ratio.split()[-1] == str(deflate_ratio(g, 12)), name
        expected = "1" if name == "mirror" else f"{float(block_space_fraction(g, 16 * KiB, 12)):.3f}"
        assert fraction.split()[-1] == expected, name
    pools = {t: whole_disk_capacity(parse_layout(t), 12 * 10**12) for t in ("raidz2:8", "raidz1:8", "2xraidz2:4",
                                                                            "4xmirror:2")}
    shown = ", ".join(f"{p.usable_bytes / 1e12:.2f}" for p in pools.values())
    held = ", ".join(f"{usable_at_block(p, 16 * KiB) / 1e12:.2f}" for p in pools.values())
    flat = " ".join(text.split())
    assert "68.10 TB for raidz2:8, 80.66 TB for raidz1:8, 46.35 TB for 2 × raidz2:4 and 47.83 TB" in flat, shown
    assert "63.86, 63.88, 42.53 and 47.83 TB" in flat, held
    assert shown == "68.10, 80.66, 46.35, 47.83" and held == "63.86, 63.88, 42.53, 47.83"
