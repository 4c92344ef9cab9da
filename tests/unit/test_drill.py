import os

from tests.conftest import DATA
import dataclasses

from tests.fakes import Clock, FakeRunner, FakeZfs
from zfslab.model.drill_results import (Corruption, Degraded, DegradedLevel, Resilver, ScenarioResult, Skipped)
from zfslab.model.layout_grammar import parse_layout
from zfslab.report.verdict import verdict
from zfslab.system.drill import execute_drill
from zfslab.system.drill_plan import DrillRequest, plan_drill
from zfslab.system.fio import Fio
from zfslab.system.pool_ops import Drivers
from zfslab.system.health import health_report, scan_age_days
from zfslab.system.zfs_output import parse_status


def level(failed, verified):
    return DegradedLevel(failed, "DEGRADED", verified, 100.0, "", 50.0)


def corruption(members, repaired_bytes=0, damaged_files=()):
    return Corruption(members, 1 << 20, {}, repaired_bytes, "", True, damaged_files, "")


def test_verdict_reads_at_a_glance():
    results = [
        ScenarioResult("degraded", "survived", 30, Degraded((level(1, True), level(2, True)), None, None, 2)),
        ScenarioResult("resilver", "survived", 240, Resilver("sda", "sdg", "fresh disk", 240, 28_896_000_000, 120.4,
                                                             True, "raidz", 0.5, 1 << 30)),
        ScenarioResult("corrupt", "repaired", 20, corruption(1, repaired_bytes=210_000_000)),
        ScenarioResult("corrupt-beyond-parity", "damaged", 20, corruption(3, damaged_files=("/p/f",))),
    ]
    assert verdict("raidz2:6", 0.5, results) == (
        "raidz2:6 at 50 % full: survived 2 failed disks, data verified; resilvered 1 disk (fresh disk) in 4 min "
        "at 120 MB/s; scrub repaired 210 MB after corruption of 1 disk; with 3 corrupted disks ZFS reports "
        "1 damaged file")


def test_verdict_of_a_loss_and_of_a_stripe():
    lost = [ScenarioResult("degraded", "lost", 5, Degraded((level(1, False),), None, None, 1))]
    assert "LOST data with 1 failed disk" in verdict("raidz1:3", 0.5, lost)
    stripe = [ScenarioResult("degraded", "skipped", 0, Skipped("no redundancy: any failure loses the pool"))]
    assert verdict("4xdisk", 0.25, stripe) == "4xdisk at 25 % full: no redundancy: any failure loses the pool"


def test_scan_age_from_the_status_line():
    import datetime
    status = parse_status(open(os.path.join(DATA, "zfs-2.3", "status_after_replace.txt")).read())
    # "resilvered 81.2M in 00:00:04 with 0 errors on Sun Nov 22 11:25:03 2026"
    assert scan_age_days(status, datetime.datetime(2026, 11, 24, 11, 25, 3)) == 2.0
    never = parse_status(open(os.path.join(DATA, "zfs-2.3", "status_online.txt")).read())
    assert scan_age_days(never, datetime.datetime(2026, 11, 24)) is None


def test_health_report_from_real_status():
    text = open(os.path.join(DATA, "zfs-2.3", "status_online.txt")).read()
    report = health_report(parse_status(text), None)
    assert not report["healthy"] and report["problems"] == ["never scrubbed"]
    degraded = health_report(parse_status(open(os.path.join(DATA, "zfs-2.3", "status_degraded.txt")).read()), 3)
    assert "pool is DEGRADED" in degraded["problems"]
    old = health_report(parse_status(open(os.path.join(DATA, "zfs-2.1", "status_after_replace.txt")).read()), 90)
    assert any("90 days ago" in p for p in old["problems"])


def _mirror_resilver(clock, **kw):
    """The resilver scenario of a drill on a mirror of sda and sdb in FakeZfs, whose resilver takes
    30 s and whose sequential rebuild 7 s on the clock; (the fake, the scenario's result)."""
    zfs = FakeZfs(clock=clock, resilver_seconds=30.0, rebuild_seconds=7.0)
    runner = FakeRunner()
    plan = plan_drill(DrillRequest(parse_layout("mirror:2"), ("/dev/sda", "/dev/sdb"), "/dev/sdc", 1 << 30,
                                   ("resilver",), fill=0.3, **kw))
    plan = dataclasses.replace(plan, steps=tuple(s for s in plan.steps if s.kind != "wipe"))  # no device touched
    return zfs, execute_drill(plan, Drivers(zfs, Fio(runner), runner), None, clock)[0]


def test_a_mirrors_sequential_rebuild_runs_only_when_asked():
    clock = Clock()  # passed in: FakeZfs moves it, the drill reads it
    default, r = _mirror_resilver(clock)
    assert [c for c in default.calls if c.startswith("replace")] == ["replace sda /dev/sdc healing"]
    assert "openzfs/zfs#18276" in r.detail.sequential_skipped and r.detail.sequential is None
    assert "openzfs/zfs#18276" in r.detail_dict()["sequential"]["skipped"]
    asked, r = _mirror_resilver(clock, sequential_rebuild=True)
    assert [c for c in asked.calls if c.startswith("replace")] == ["replace sda /dev/sdc healing",
                                                                   "replace /dev/sdc /dev/sda sequential"]
    assert r.detail.sequential.resilvered_bytes == 64 << 20 and r.detail.sequential.seconds == 7.0
    # the scenario's time is the healing resilver's, not the sequential rebuild's after it
    assert r.seconds == r.detail.seconds == 30.0


def test_a_sequential_rebuilds_scan_line_names_its_vdev():
    from zfslab.system.zfs_output import parse_scan
    done = parse_scan("resilvered (mirror-0) 64.0M in 00:00:03 with 0 errors on Sun Nov 22 22:40:01 2026")
    assert (done.kind, done.resilvered_bytes, done.seconds, done.errors) == ("resilver", 64 << 20, 3, 0)
    running = parse_scan("resilver (draid2:2d:6c:1s-0) in progress since Sun Nov 22 22:40:01 2026")
    assert running.kind == "resilver" and running.in_progress
