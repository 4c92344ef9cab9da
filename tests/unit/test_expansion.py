"""RAID-Z expansion (model/expansion.py, `zfslab expand`): hand-checked cases and the command's errors."""

import json

import pytest

from zfslab.errors import LayoutError, ParamError, VersionError
from zfslab.model.capacity import linux_whole_disk_osize, pool_capacity
from zfslab.model.expansion import expand, parse_release
from zfslab.model.layout_grammar import parse_layout

WD4001FYYG = 4000787030016  # the worked example of docs/capacity.md
GiB = 1 << 30


def test_created_step_is_capacity_of_the_empty_pool():
    layout = parse_layout("raidz2:6")
    osize = linux_whole_disk_osize(WD4001FYYG)
    e = expand(layout, osize, 2, release="2.4")
    cap = pool_capacity(layout, osize, rules="2.4")
    first = e.steps[0]
    assert (first.size_bytes, first.usable_bytes, first.slop_bytes, first.embedded_log_bytes) == \
        (cap.size_bytes, cap.usable_bytes, cap.slop_bytes, cap.embedded_log_bytes)
    assert (e.ms_shift, e.deflate_ratio) == (cap.vdevs[0].ms_shift, cap.vdevs[0].deflate_ratio)


def test_one_disk_added_to_the_worked_example_by_hand():
    e = expand(parse_layout("raidz2:6"), linux_whole_disk_osize(WD4001FYYG), 1, release="2.4")
    step = e.steps[1]
    leaf = 4_000_771_997_696  # docs/capacity.md: osize - 4.5 MiB
    assert step.asize_bytes == 7 * leaf == 28_005_403_983_872
    # the metaslab shift stays 34 (16 GiB): 28,005,403,983,872 >> 34 = 1630 metaslabs
    assert (e.ms_shift, step.metaslabs, step.size_bytes) == (34, 1630, 1630 << 34)
    per_ms = (1 << 34 >> 9) * 341  # deflated at the 6-wide ratio, 11,442,061,312
    assert step.embedded_log_bytes == per_ms and step.dspace_bytes == 1629 * per_ms
    assert step.slop_bytes == 128 * GiB - per_ms  # capped at 128 GiB, less the embedded log
    assert step.usable_bytes == 1629 * per_ms - (128 * GiB - per_ms)


def test_deflate_ratio_keeps_the_original_width_so_new_blocks_charge_less():
    """128 KiB at ashift 12: raidz2 at 6 and 7 wide is 32 data + 16 parity = 48 sectors (no gain from
    the seventh disk), 8 wide 32 + 12 = 44, padded to 45; the 6-wide ratio is 131072 / 384 = 341."""
    osize = linux_whole_disk_osize(WD4001FYYG)
    e = expand(parse_layout("raidz2:6"), osize, 2, fill=0.5, rewrite=True)
    records = e.data_bytes // (128 << 10)
    created, one, two, rewritten = e.steps
    assert e.deflate_ratio == 341
    assert created.alloc_bytes == one.alloc_bytes == two.alloc_bytes == records * 48 * 4096
    assert created.used_bytes == records * 384 * 341
    assert one.old_ratio_loss_bytes == 0 and two.old_ratio_loss_bytes > 0
    assert rewritten.alloc_bytes == records * 45 * 4096 and rewritten.used_bytes == records * 360 * 341
    charge_new = 360 * 341
    assert two.true_free_bytes == (two.usable_bytes - two.used_bytes) // charge_new * (128 << 10)
    assert rewritten.true_free_bytes - two.true_free_bytes == two.old_ratio_loss_bytes
    assert rewritten.widths_of_data == (8,) and two.widths_of_data == (6,)


def test_raidz1_small_files_by_hand():
    """Three 256 MiB files: leaf 251.5 MiB, asize 754.5 MiB, 754.5 MiB >> 29 < 16 so the shift is
    highbit(asize / 16) = 26 (64 MiB): 11 metaslabs; with 5 children 1257.5 MiB: 19."""
    e = expand(parse_layout("raidz1:3"), 256 << 20, 2, release="2.3.2")
    assert e.ms_shift == 26 and [s.metaslabs for s in e.steps] == [11, 15, 19]
    assert [s.size_bytes for s in e.steps] == [n << 26 for n in (11, 15, 19)]
    ratio = 131072 // 384  # 3-wide raidz1: 32 + 16 = 48 sectors
    assert e.deflate_ratio == ratio
    for s in e.steps:  # no embedded log below 65 metaslabs; slop is the 128 MiB floor or half
        assert s.embedded_log_bytes == 0 and s.dspace_bytes == s.metaslabs * ((1 << 26 >> 9) * ratio)
        assert s.usable_bytes == s.dspace_bytes - max(s.dspace_bytes >> 5, min(s.dspace_bytes >> 1, 128 << 20))


def test_embedded_log_appears_when_the_vdev_passes_64_metaslabs():
    """vdev_metaslab_init on expansion gives one of the NEW metaslabs to the embedded log."""
    # 28 GiB files: raidz1:3 asize ~84 GiB -> 512 MiB metaslabs, 167; small files 10 GiB: 3 x ~10 GiB >> 29 = 59
    e = expand(parse_layout("raidz1:3"), 10 * GiB + (256 << 20), 1)
    counts = [s.metaslabs for s in e.steps]
    assert counts[0] <= 64 < counts[1]
    assert e.steps[0].embedded_log_bytes == 0 and e.steps[1].embedded_log_bytes > 0


@pytest.mark.parametrize("text,message", [
    ("2.2", "RAID-Z expansion came in OpenZFS 2.3"),
    ("2.1.11", "RAID-Z expansion came in OpenZFS 2.3"),
    ("slop64", "unknown OpenZFS version"),
    ("2.9", "unknown OpenZFS version"),
])
def test_versions_before_2_3_are_refused(text, message):
    with pytest.raises((ParamError, VersionError), match=message):
        parse_release(text)


def test_rewrite_needs_2_3_4():
    assert not parse_release("2.3.2").has_rewrite and parse_release("2.3.4").has_rewrite
    assert parse_release("2.3").has_rewrite and parse_release("2.4").has_rewrite
    with pytest.raises(ParamError, match="rewrite with OpenZFS 2.3.2: zfs rewrite came in OpenZFS 2.3.4"):
        expand(parse_layout("raidz1:3"), GiB, 1, release="2.3.2", fill=0.5, rewrite=True)


@pytest.mark.parametrize("layout", ["mirror:2", "2xraidz2:6", "draid2:8d:24c:1s", "raidz2:4+raidz1:3", "4xdisk"])
def test_only_one_raidz_vdev(layout):
    with pytest.raises(LayoutError, match="zfslab expand models one raidz vdev"):
        expand(parse_layout(layout), GiB, 1)


def test_width_limits():
    with pytest.raises(ParamError, match=r"added 250: give 1 to 249 \(a raidz vdev has at most 255 disks"):
        expand(parse_layout("raidz2:6"), GiB, 250)
    assert expand(parse_layout("raidz2:6"), GiB, 249).steps[-1].width == 255
    # ashift 16: 3.5 MiB of scratch space holds 56 sectors, so 56 children at most
    with pytest.raises(ParamError, match="at ashift 16 the reflow's 3.5 MiB scratch space allows 56 disks"):
        expand(parse_layout("raidz2:6"), GiB, 51, ashift=16)


def test_cli_table_and_json(run_cli):
    r = run_cli("expand", "raidz2:6", "--add", "2", "--disk-size", str(WD4001FYYG), "--fill-before", "0.5", "--rewrite")
    assert r.exit_code == 0 and r.stderr == ""
    lines = r.stdout.splitlines()
    assert any(l.split()[:2] == ["+2", "disks"] for l in lines)
    assert any(l.split()[:2] == ["rewritten", "raidz2:8"] for l in lines)
    r = run_cli("expand", "raidz2:6", "--add", "2", "--disk-size", str(WD4001FYYG), "--json")
    record = json.loads(r.stdout)
    assert [s["size_bytes"] for s in record["steps"]][0] == 24_000_277_250_048
    assert [s["width"] for s in record["steps"]] == [6, 7, 8]


def test_cli_table_fits_80_columns(run_cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    r = run_cli("expand", "raidz3:11", "--add", "3", "--disk-size", "24TB", "--fill-before", "0.5", "--rewrite")
    lines = r.stdout.splitlines()
    assert len([l for l in lines if " raidz3:1" in l]) == 5 + 1  # the table, and the deflate line and max(len(l) for l in lines) <= 80


@pytest.mark.parametrize("args,message", [
    (["mirror:2", "--add", "1"], "mirror:2: zfslab expand models one raidz vdev"),
    (["raidz2:6", "--add", "1", "--zfs-version", "2.2"], "--zfs-version 2.2: RAID-Z expansion came in OpenZFS 2.3"),
    (["raidz2:6", "--add", "0"], "--add must be from 1 to 255, got 0"),
    (["raidz2:6", "--add", "250"], "--add 250: give 1 to 249"),
    (["raidz1:3", "--add", "1", "--zfs-version", "2.3.2", "--rewrite"], "zfs rewrite came in OpenZFS 2.3.4"),
    (["raidz1:3", "--add", "1", "--fill-before", "1.5"], "--fill-before must be from 0 to 1, got 1.5"),
])
def test_cli_errors_are_one_line_exit_2(run_cli, args, message):
    r = run_cli("expand", *args)
    assert r.exit_code == 2 and r.stdout == "" and r.stderr.count("\n") == 1 and message in r.stderr


def test_written_bytes_instead_of_a_fill():
    e = expand(parse_layout("raidz2:6"), linux_whole_disk_osize(WD4001FYYG), 1, written_bytes=10**12 + 5)
    assert e.data_bytes == 10**12 // (128 << 10) * (128 << 10)
    with pytest.raises(ParamError, match="written_bytes 20000000000000: raidz2:6 holds at most"):
        expand(parse_layout("raidz2:6"), linux_whole_disk_osize(WD4001FYYG), 1, written_bytes=20 * 10**12)
