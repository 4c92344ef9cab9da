"""Capacity against real OpenZFS numbers: the golden table, calomel's published table, worked examples."""

import csv
import os

import pytest

from zfslab.errors import VersionError
from zfslab.model.capacity import (
    deflate_ratio, linux_whole_disk_osize, metaslab_shift, pool_capacity, rules_for, whole_disk_capacity, RULES,
)
from zfslab.model.layout_grammar import parse_layout
from zfslab.model.units import GiB, MiB

from tests.conftest import DATA

WD4001FYYG = 4_000_787_030_016  # calomel's 24 disks; docs/capacity.md#worked-example


def _rows(name):
    with open(os.path.join(DATA, name)) as f:
        return list(csv.DictReader(line for line in f if not line.startswith("#")))


GOLDEN = _rows("golden_capacity.csv")


@pytest.mark.parametrize("row", GOLDEN, ids=[f"{r['layout']}-a{r['ashift']}-{r['vdev_bytes']}" for r in GOLDEN])
def test_golden_table_of_real_openzfs_byte_for_byte(row):
    cap = pool_capacity(parse_layout(row["layout"]), int(row["vdev_bytes"]), ashift=int(row["ashift"]))
    assert cap.size_bytes == int(row["size_bytes"])
    assert cap.usable_bytes == int(row["usable_bytes"])


def calomel_layout(row) -> str:
    kind, vdevs, width = row["kind"], int(row["vdevs"]), int(row["width"])
    if kind == "stripe":
        return f"{vdevs}xdisk"
    if kind == "mirror":
        return f"{vdevs}xmirror:{width}"
    return f"{vdevs}x{kind}:{width}"


CALOMEL = _rows("calomel-hdd-24x4tb.csv")


@pytest.mark.parametrize("row", CALOMEL, ids=[r["label"] + f"-{r['disks']}" for r in CALOMEL])
def test_calomel_published_capacity_exactly(row):
    # docs/capacity.md#validation: FreeBSD raw disks, ashift 9, illumos-4951 era rules; the page prints
    # AVAIL in bytes / (1024 * 10^9) truncated to one decimal.
    cap = pool_capacity(parse_layout(calomel_layout(row)), WD4001FYYG, ashift=9, rules="0.6.5")
    tenths = cap.usable_bytes * 10 // (1024 * 10**9)
    assert f"{tenths // 10}.{tenths % 10}" == row["capacity_T"]


def test_worked_example_raidz2_6_whole_disks():
    cap = whole_disk_capacity(parse_layout("raidz2:6"), WD4001FYYG, ashift=12, rules="2.1")
    assert cap.vdev_bytes == 4_000_776_716_288
    assert cap.vdevs[0].asize_bytes == 24_004_631_986_176
    assert (cap.vdevs[0].ms_shift, cap.vdevs[0].ms_count) == (34, 1397)
    assert cap.size_bytes == 24_000_277_250_048
    assert cap.vdevs[0].deflate_ratio == 341
    assert cap.embedded_log_bytes == 11_442_061_312
    assert cap.normal_dspace_bytes == 15_973_117_591_552
    assert cap.slop_bytes == 125_996_892_160
    assert cap.usable_bytes == 15_847_120_699_392
    assert pool_capacity(cap.layout, cap.vdev_bytes, rules="0.8").usable_bytes == 15_485_042_163_712
    old = pool_capacity(cap.layout, cap.vdev_bytes, rules="0.6.5")
    assert (old.vdevs[0].ms_shift, old.size_bytes, old.usable_bytes) == (37, 23_914_377_904_128, 15_429_619_679_232)


@pytest.mark.parametrize("layout,size,usable", [
    # 24 x WD4001FYYG, Linux whole disk, ashift 12, 2.1+ (docs/capacity.md#draid for the dRAID steps)
    ("draid2:8d:24c:1s", 92_015_203_860_480, 73_366_893_817_888),
    ("draid2:10d:24c:2s", 88_012_301_942_784, 58_480_129_332_640),
    ("draid3:8d:24c:2s", 88_012_259_962_880, 63_808_968_675_808),
    ("2xraidz2:12", 96_001_109_000_192, 72_988_405_792_768),
    ("raidz2:23+spare:1", 92_015_379_349_504, 81_634_040_741_888),
])
def test_draid_and_wide_layouts_on_whole_disks(layout, size, usable):
    cap = whole_disk_capacity(parse_layout(layout), WD4001FYYG, ashift=12)
    assert (cap.size_bytes, cap.usable_bytes) == (size, usable)


@pytest.mark.parametrize("layout,usable", [
    # calomel's hardware under current OpenZFS: Linux whole disks, ashift 12 (docs/capacity.md#validation)
    ("disk", 3_861_712_470_016), ("raidz1:3", 7_849_119_842_304), ("raidz2:4", 7_609_876_742_144),
    ("2xraidz1:5", 31_811_480_584_192), ("raidz3:11", 31_829_599_977_472), ("raidz3:23", 73_367_034_003_456),
    ("12xmirror:2", 47_553_877_901_312), ("24xdisk", 95_176_475_279_360), ("raidz3:24", 76_564_670_709_760),
])
def test_calomel_hardware_under_current_openzfs(layout, usable):
    assert whole_disk_capacity(parse_layout(layout), WD4001FYYG, ashift=12).usable_bytes == usable


def test_wintelguy_1000gib_disk_size():
    # docs/capacity.md#validation: ZoL on a 1000 GiB disk shows zpool get -p size = 1,065,151,889,408
    assert linux_whole_disk_osize(1000 * GiB) == 1_073_731_338_240
    assert whole_disk_capacity(parse_layout("disk"), 1000 * GiB).size_bytes == 1_065_151_889_408


def test_small_pool_slop_floor():
    # docs/capacity.md#worked-example: a 1 GiB disk gives SIZE 960 MiB and USED+AVAIL 832 MiB
    cap = pool_capacity(parse_layout("disk"), GiB)
    assert (cap.size_bytes, cap.usable_bytes, cap.embedded_log_bytes) == (960 * MiB, 832 * MiB, 0)


def test_4k_sector_partitioning():
    # 4Kn disks: GPT of 5 sectors; the partition still ends 8 MiB + alignment before the end
    osize = linux_whole_disk_osize(WD4001FYYG, 4096)
    assert osize % (1 << 20) == 0 and WD4001FYYG - osize > 9 * MiB - 1


@pytest.mark.parametrize("layout,ashift,ratio", [
    ("raidz1:3", 12, 341), ("raidz1:4", 12, 372), ("raidz2:8", 12, 364), ("raidz2:13", 12, 420),
    ("raidz3:11", 12, 372), ("raidz3:24", 9, 442), ("raidz3:24", 12, 409), ("raidz3:23", 12, 409),
    ("draid2:10d:24c", 12, 341), ("draid2:8d:24c", 12, 409), ("mirror:2", 12, 512),
])
def test_deflate_ratio(layout, ashift, ratio):
    assert deflate_ratio(parse_layout(layout).groups[0], ashift) == ratio


def test_metaslab_sizing_rules():
    assert metaslab_shift(8 * GiB, RULES["2.1"]) == 29  # 8-100 GB: 512 MiB metaslabs
    assert metaslab_shift(GiB, RULES["2.1"]) == 27  # below 8 GB: asize / 16 rounded up to a power of 2
    assert metaslab_shift(100 * 2**50, RULES["2.1"]) > 34  # beyond 2^17 metaslabs of 16 GiB


@pytest.mark.parametrize("version,key", [
    ("2.1", "2.1"), ("2.3.2", "2.1"), ("2.2.0", "2.1"), ("2.1-2.3", "2.1"), ("2.4.1", "2.4"), ("0.8.6", "0.8"),
    ("2.0", "0.8"), ("0.8-2.0", "0.8"), ("0.7.13", "0.7"), ("0.6.5.11", "0.6.5"), ("0.6.4", "slop64"),
    ("slop64", "slop64"), ("zfs-2.1.11-1", "2.1"), ("2.3.6", "2.1"), ("2.3.7", "2.3.7"), ("2.3.9", "2.3.7"),
    ("2.3", "2.3.7"), ("2.4.0", "2.4.0"), ("2.4", "2.4"), ("2.4.4", "2.4"),
])
def test_rules_for_version(version, key):
    assert rules_for(version).key == key


def test_unknown_version_says_which_are_known():
    with pytest.raises(VersionError, match=r"unknown OpenZFS version '3.0'; use one of: slop64, 0.6.5"):
        rules_for("3.0")


def test_version_changes_follow_the_source_history():
    layout, vdev = parse_layout("24xdisk"), 4 * 10**12
    usable = {k: pool_capacity(layout, vdev, rules=k).usable_bytes for k in RULES}
    assert usable["slop64"] > usable["0.6.5"]  # 1/64 -> 1/32 reserve
    assert usable["2.1"] > usable["0.8"]  # 128 GiB cap on the reserve
    assert usable["2.4"] == usable["2.1"]  # no special vdevs: 2.4 only adds a special-class log


def test_created_with_older_version_keeps_its_metaslabs():
    layout = parse_layout("raidz2:6")
    cap = pool_capacity(layout, 4_000_776_716_288, rules="2.1", created_with="0.7")
    assert cap.vdevs[0].ms_shift == 37
    assert cap.size_bytes == 23_914_377_904_128
