import os

from tests.conftest import DATA
from zfslab.system.drill import ScenarioResult, health_report, verdict
from zfslab.system.zfs_output import parse_status


def test_verdict_reads_at_a_glance():
    results = [
        ScenarioResult("degraded", "survived", 30, {"steps": [{"failed": 1, "verified": True}, {"failed": 2, "verified": True}]}),
        ScenarioResult("resilver", "survived", 240, {"how": "fresh disk", "mb_s": 120.4, "verified": True}),
        ScenarioResult("corrupt", "repaired", 20, {"members": 1, "repaired_bytes": 210e6}),
        ScenarioResult("corrupt-beyond-parity", "damaged", 20, {"members": 3, "damaged_files": ["/p/f"]}),
    ]
    assert verdict("raidz2:6", 0.5, results) == (
        "raidz2:6 at 50 % full: survived 2 failed disks, data verified; resilvered 1 disk (fresh disk) in 4 min "
        "at 120 MB/s; scrub repaired 210 MB after corruption of 1 disk; with 3 corrupted disks ZFS reports "
        "1 damaged file")


def test_verdict_of_a_loss_and_of_a_stripe():
    lost = [ScenarioResult("degraded", "lost", 5, {"steps": [{"failed": 1, "verified": False}]})]
    assert "LOST data with 1 failed disks" in verdict("raidz1:3", 0.5, lost)
    stripe = [ScenarioResult("degraded", "skipped", 0, {"why": "no redundancy: any failure loses the pool"})]
    assert verdict("4xdisk", 0.25, stripe) == "4xdisk at 25 % full: no redundancy: any failure loses the pool"


def test_health_report_from_real_status():
    text = open(os.path.join(DATA, "zfs-2.3", "status_online.txt")).read()
    report = health_report(parse_status(text), None)
    assert not report["healthy"] and report["problems"] == ["never scrubbed"]
    degraded = health_report(parse_status(open(os.path.join(DATA, "zfs-2.3", "status_degraded.txt")).read()), 3)
    assert "pool is DEGRADED" in degraded["problems"]
    old = health_report(parse_status(open(os.path.join(DATA, "zfs-2.1", "status_after_replace.txt")).read()), 90)
    assert any("90 days ago" in p for p in old["problems"])
