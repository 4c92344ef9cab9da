"""zpool/zfs output parsers, on output captured from real OpenZFS 2.1.11, 2.3.2 and 2.4.4 (tests/data;
tests/e2e/guest/capture-output.sh)."""

import os

import pytest

from tests.conftest import DATA
from zfslab.system.zfs_output import (
    duration_seconds, human_bytes, human_count, parse_scan, parse_status, parse_tabular, parse_version,
)

VERSIONS = ["2.1", "2.3", "2.4"]


def data(series, name):
    with open(os.path.join(DATA, f"zfs-{series}", name)) as f:
        return f.read()


@pytest.mark.parametrize("series", VERSIONS)
def test_version(series):
    v = parse_version(data(series, "zfs_version.txt"))
    assert v.series == series and v.userland.startswith(series)


@pytest.mark.parametrize("series", VERSIONS)
def test_healthy_raidz2_with_a_spare(series):
    s = parse_status(data(series, "status_online.txt"))
    assert (s.name, s.state) == ("tank", "ONLINE")
    assert [v.name for v in s.top_level] == ["raidz2-0"]
    assert [v.name for v in s.top_level[0].children] == ["sda", "sdb", "sdc", "sdd", "sde"]
    assert all(v.state == "ONLINE" and v.checksum_errors == 0 for v in s.root.walk())
    assert [(v.name, v.state) for v in s.sections["spares"]] == [("sdf", "AVAIL")]
    assert s.no_known_errors and s.scan.kind is None


@pytest.mark.parametrize("series", VERSIONS)
def test_degraded(series):
    s = parse_status(data(series, "status_degraded.txt"))
    assert s.state == "DEGRADED" and s.vdev("sdb").state == "OFFLINE"
    assert s.top_level[0].state == "DEGRADED"
    assert "taken offline" in s.status


@pytest.mark.parametrize("series", VERSIONS)
def test_resilver_in_progress(series):
    s = parse_status(data(series, "status_resilvering.txt"))
    assert s.scan.kind == "resilver" and s.scan.in_progress
    assert 0 <= s.scan.percent_done <= 100
    replacing = next(v for v in s.root.walk() if v.name.startswith("replacing"))
    assert [c.name for c in replacing.children] == ["sdd", "sdg"]
    assert "resilvering" in replacing.children[1].note
    assert s.scan.issued_bytes is not None and s.scan.total_bytes >= s.scan.issued_bytes


@pytest.mark.parametrize("series", VERSIONS)
def test_finished_resilver_and_scrub(series):
    s = parse_status(data(series, "status_after_replace.txt"))
    assert s.scan.kind == "resilver" and not s.scan.in_progress and s.scan.resilvered_bytes > 0
    assert s.scan.seconds is not None
    scrub = parse_status(data(series, "status_scrub_repaired.txt")).scan
    assert scrub.kind == "scrub" and scrub.errors == 0 and scrub.percent_done == 100.0


@pytest.mark.parametrize("series", VERSIONS)
def test_draid_with_distributed_spare_in_use(series):
    s = parse_status(data(series, "status_draid_spare.txt"))
    top = s.top_level[0]
    assert top.name.startswith("draid2:2d:6c:1s")
    spare = top.children[0]
    assert spare.name == "spare-0" and [c.name for c in spare.children] == ["sdc", "draid2-0-0"]
    assert s.sections["spares"][0].state == "INUSE"


@pytest.mark.parametrize("series", VERSIONS)
def test_list_and_get(series):
    rows = parse_tabular(data(series, "zpool_list_Hp_o.txt"), ["name", "size", "allocated", "free", "health"])
    assert rows[0]["name"] == "tank" and int(rows[0]["size"]) > 4 * 2**30
    props = parse_tabular(data(series, "zfs_get_Hp.txt"), ["name", "property", "value", "source"])
    assert {p["property"]: p["value"] for p in props}["compression"] == "off"


def test_scan_lines():
    s = parse_scan("scrub in progress since Sun Nov 22 11:24:59 2026 242M / 242M scanned, 16.5M / 241M issued at "
                   "16.5M/s 0B repaired, 6.83% done, 00:00:13 to go")
    assert s.in_progress and s.percent_done == 6.83 and s.rate_bytes_s == int(16.5 * 2**20)
    assert parse_scan("scrub canceled on Sun Nov 22 11:24:59 2026").canceled
    done = parse_scan("scrub repaired 174M in 1 days 00:00:14 with 2 errors on Sun Nov 22 2026")
    assert (done.repaired_bytes, done.errors, done.seconds) == (174 * 2**20, 2, 86414)


def test_permanent_errors_are_listed():
    text = ("  pool: t\n state: ONLINE\nstatus: One or more devices has experienced an error resulting in data\n"
            "\tcorruption.  Applications may be affected.\n  scan: scrub repaired 0B in 00:00:01 with 3 errors on x\n"
            "config:\n\n\tNAME        STATE     READ WRITE CKSUM\n\tt           ONLINE       0     0     0\n"
            "\t  sda       ONLINE       0     0    12\n\nerrors: Permanent errors have been detected in the "
            "following files:\n\n        /t/f\n        /t/g\n")
    s = parse_status(text)
    assert s.damaged_files == ("/t/f", "/t/g") and not s.no_known_errors
    assert s.vdev("sda").checksum_errors == 12 and s.scan.errors == 3


def test_units():
    assert human_bytes("16.5M") == int(16.5 * 2**20) and human_bytes("0B") == 0 and human_bytes("375K") == 375 * 1024
    assert human_count("1.2K") == 1200 and human_count("61") == 61
    assert duration_seconds("00:01:02") == 62
    with pytest.raises(ValueError):
        human_bytes("lots")
