import pytest

from zfslab.model.allocation import block_allocation, efficiency_table, file_allocation
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
