"""system/diskstats.py on /proc/diskstats text, captured and live.

Field order (Linux Documentation/admin-guide/iostats.rst): major, minor, name, then
1 reads completed, 2 reads merged, 3 sectors read, 4 ms reading, 5 writes completed,
6 writes merged, 7 sectors written, 8 ms writing, 9 I/Os in flight, 10 ms doing I/O,
11 weighted ms; 4.18 adds 12-15 (discards), 5.5 adds 16-17 (flushes). A sector is 512 bytes.
"""

from __future__ import annotations

import os

import pytest

from zfslab.system.diskstats import SECTOR, Sampler, kernel_names, read_diskstats

# captured on a 6.1 kernel (17 fields after the name), plus an old 11-field line and a 2.6-era
# partition line of 4 fields, which carries no I/O time and is skipped
CAPTURED = """\
   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
 254       0 vda 90062 10902 5936106 37453 435354 55869 28807144 148001 0 37292 196023 79059 33 12588536 6558 106622 4009
 253       0 zram0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0
   8       0 sda 1200 30 96000 4000 800 12 64000 9000 2 11000 13000
   8       1 sda1 1100 88000 700 56000
"""


def write(path, text: str) -> str:
    tmp = str(path) + ".new"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)  # a reader never sees half a file
    return str(path)


def line(name: str, sectors_read: int, sectors_written: int, io_ms: int, major: int = 8, minor: int = 0) -> str:
    fields = [1, 0, sectors_read, 0, 1, 0, sectors_written, 0, 0, io_ms, io_ms, 0, 0, 0, 0, 0, 0]
    return f"{major:4d} {minor:7d} {name} " + " ".join(map(str, fields)) + "\n"


def test_sector_is_512_bytes_whatever_the_device():
    assert SECTOR == 512


def test_read_diskstats_takes_sectors_read_written_and_io_ms(tmp_path):
    stats = read_diskstats(write(tmp_path / "diskstats", CAPTURED))
    assert stats == {
        "loop0": (0, 0, 0),
        "vda": (5_936_106, 28_807_144, 37_292),
        "zram0": (0, 0, 0),
        "sda": (96_000, 64_000, 11_000),  # 11 fields: the same positions
    }
    assert "sda1" not in stats


def test_read_diskstats_of_an_empty_file_is_empty(tmp_path):
    assert read_diskstats(write(tmp_path / "diskstats", "")) == {}


def test_read_diskstats_of_this_machine_agrees_with_sys_block(tmp_path):
    # /sys/block/<disk>/stat holds the same counters without major, minor and name; read it
    # first: the counters only grow, so /proc/diskstats read after it is never below it
    disks = sorted(os.listdir("/sys/block"))
    before = {}
    for d in disks:
        with open(f"/sys/block/{d}/stat") as f:
            p = f.read().split()
        before[d] = (int(p[2]), int(p[6]), int(p[9]))
    stats = read_diskstats()
    assert set(disks) <= set(stats)
    for d in disks:
        assert all(now >= then for now, then in zip(stats[d], before[d])), (d, stats[d], before[d])
        assert all(type(v) is int for v in stats[d])


def test_kernel_names_follow_links_and_leave_out_files(tmp_path):
    by_id = tmp_path / "by-id"
    by_id.mkdir()
    os.symlink("/dev/sdb", by_id / "ata-WDC_WD4001FYYG-01SL3_WD-WMC1F0D1ABCD")
    vdev = tmp_path / "v0"
    vdev.write_bytes(b"")
    names = kernel_names([str(by_id / "ata-WDC_WD4001FYYG-01SL3_WD-WMC1F0D1ABCD"), "/dev/sda", str(vdev)])
    assert names == ["sdb", "sda"]
    assert kernel_names([]) == []


def test_kernel_names_of_a_relative_udev_link(tmp_path):
    dev = tmp_path / "dev"
    (dev / "disk" / "by-id").mkdir(parents=True)
    os.symlink("../../sdc", dev / "disk" / "by-id" / "wwn-0x5000")
    # the link resolves inside tmp_path, not /dev: a file, so no kernel name
    assert kernel_names([str(dev / "disk" / "by-id" / "wwn-0x5000")]) == []


def test_sampler_totals_over_the_whole_test_by_hand(tmp_path):
    src = write(tmp_path / "diskstats", line("sda", 1000, 2000, 0) + line("sdb", 10, 20, 0, minor=16)
                + line("sdc", 5, 5, 0, minor=32))
    # interval of an hour: the thread never samples; stop() takes the one closing sample
    s = Sampler(["sda", "sdb", "sdz"], interval_s=3600, source=src).start()
    write(src, line("sda", 1000 + 2_000_000, 2000 + 1_000_000, 0) + line("sdb", 10 + 4_000, 20, 0, minor=16)
          + line("sdc", 9_999_999, 9_999_999, 999_999, minor=32))
    out = s.stop()
    # read: (2 000 000 + 4 000) sectors x 512 B = 1 026 048 000 B; written 1 000 000 x 512 = 512 000 000 B;
    # sdc is not a member and sdz is not in the file: neither counts
    assert out["disk_read_mb"] == pytest.approx(1026.048, rel=1e-12)
    assert out["disk_write_mb"] == pytest.approx(512.0, rel=1e-12)
    assert out["disk_util_max"] == 0.0  # no ms doing I/O on a member disk
    assert set(out) == {"disk_read_mb", "disk_write_mb", "disk_util_max", "series"}
    assert set(out["series"]) == {"sda", "sdb"}
    (t, util, read_mb_s, write_mb_s), = out["series"]["sda"]
    assert util == 0.0
    # one interval for both directions: sda read twice the bytes it wrote
    assert read_mb_s == pytest.approx(2 * write_mb_s, rel=1e-3)
    (_, _, sdb_read, sdb_write), = out["series"]["sdb"]
    assert sdb_write == 0.0
    assert read_mb_s == pytest.approx(500 * sdb_read, rel=1e-2)


def test_sampler_utilisation_is_capped_at_one(tmp_path):
    src = write(tmp_path / "diskstats", line("sda", 0, 0, 0) + line("sdb", 0, 0, 0, minor=16))
    s = Sampler(["sda", "sdb"], interval_s=3600, source=src).start()
    # 10^9 ms of I/O time in the few ms the test takes: the ratio is far above 1, shown as 1
    write(src, line("sda", 0, 0, 10**9) + line("sdb", 0, 0, 0, minor=16))
    out = s.stop()
    assert out["disk_util_max"] == 1.0
    assert out["series"]["sda"][0][1] == 1.0
    assert out["series"]["sdb"][0][1] == 0.0


def test_sampler_series_has_one_point_per_sample_in_time_order(tmp_path):
    src = write(tmp_path / "diskstats", line("sda", 0, 0, 0))
    s = Sampler(["sda"], interval_s=3600, source=src).start()
    for k in (1, 2, 3):
        write(src, line("sda", 2048 * k, 0, 0))
        s._sample()  # what the thread does every interval_s
    write(src, line("sda", 2048 * 4, 1024, 0))
    out = s.stop()
    points = out["series"]["sda"]
    assert len(points) == 4
    times = [p[0] for p in points]
    assert times == sorted(times)
    assert [p[3] == 0.0 for p in points] == [True, True, True, False]  # writes only in the last interval
    # totals span first to last sample: 4 x 2048 sectors = 4 MiB read, 1024 sectors = 0.5 MiB written
    assert out["disk_read_mb"] == pytest.approx(4 * 1_048_576 / 1e6, rel=1e-12)
    assert out["disk_write_mb"] == pytest.approx(524_288 / 1e6, rel=1e-12)


def test_sampler_on_this_machine_returns_whole_sectors_and_a_bounded_utilisation():
    disk = sorted(d for d in os.listdir("/sys/block") if not d.startswith(("loop", "zram", "ram")))[0]
    out = Sampler([disk], interval_s=3600).start().stop()
    assert set(out) == {"disk_read_mb", "disk_write_mb", "disk_util_max", "series"}
    for key in ("disk_read_mb", "disk_write_mb"):
        sectors = out[key] * 1e6 / SECTOR
        assert sectors == pytest.approx(round(sectors), abs=1e-6)  # counted in 512-byte sectors
    assert 0.0 <= out["disk_util_max"] <= 1.0
    assert list(out["series"]) == [disk]
    assert len(out["series"][disk]) == 1 and len(out["series"][disk][0]) == 4


def test_a_sampler_of_no_member_disks_reports_nothing(tmp_path):
    src = write(tmp_path / "diskstats", CAPTURED)
    out = Sampler([], interval_s=3600, source=src).start().stop()
    assert out == {"disk_read_mb": 0.0, "disk_write_mb": 0.0, "disk_util_max": 0.0, "series": {}}
