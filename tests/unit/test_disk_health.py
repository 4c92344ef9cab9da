"""A pool's disks' own health counters (system/smart.py parse_health) and the disk findings
(model/pool_findings.py): smartctl's JSON on reports written from smartmontools' schema
(tests/data/smartctl/; no real failing disk is at hand here), every outside number checked."""

from __future__ import annotations

import dataclasses
import json
import os

import pytest

from test_pool_read import read_both
from tests.conftest import DATA
from zfslab.model.pool_findings import findings
from zfslab.model.pool_state import DiskHealth
from zfslab.system.smart import parse_health, whole_disk


def report(name):
    with open(os.path.join(DATA, "smartctl", name)) as f:
        return json.load(f)


def test_a_failing_hdd_and_a_worn_nvme_give_their_counters():
    hdd = parse_health("/dev/sde", report("ata-failing-hdd.json"))
    assert (hdd.passed, hdd.reallocated, hdd.pending, hdd.offline_uncorrectable, hdd.reported_uncorrect) == \
        (False, 96, 8, 8, 16)
    assert hdd.temperature_c == 38 and hdd.media_errors is None
    nvme = parse_health("/dev/nvme2", report("nvme-worn.json"))
    assert (nvme.media_errors, nvme.critical_warning, nvme.percentage_used, nvme.spare_below_threshold) == \
        (3, 12, 104, True)
    assert nvme.pending is None   # an SSD has no pending sectors: not reported, not zero


@pytest.mark.parametrize("name", ["ata-new-hdd.json", "ata-used-ssd.json", "nvme-new.json", "nvme-used.json",
                                  "scsi-used.json", "qemu-virtual.json", "ata-hdd-hours-only.json"])
def test_healthy_disks_have_no_bad_counter(name):
    h = parse_health("/dev/x", report(name))
    assert not any((h.reallocated, h.pending, h.offline_uncorrectable, h.reported_uncorrect, h.media_errors,
                    h.critical_warning, h.spare_below_threshold)) and h.passed is not False


def test_hostile_values_are_left_out_never_trusted():
    bad = {"smart_status": {"passed": "yes"}, "temperature": {"current": 1e9},
           "ata_smart_attributes": {"table": [{"id": 5, "raw": {"value": -3}}, {"id": 197, "raw": {"value": True}},
                                              {"id": 198, "raw": {"value": 2**60}}, {"id": 187, "raw": "x"}, "row"]},
           "nvme_smart_health_information_log": {"percentage_used": 1.5, "available_spare": 500,
                                                 "available_spare_threshold": 10, "critical_warning": 999}}
    h = parse_health("/dev/x", bad)
    assert h == DiskHealth("/dev/x")
    assert parse_health("/dev/x", ["not", "a", "report"]) == DiskHealth("/dev/x")
    assert parse_health("/dev/x", report("hostile.json")).reallocated is None


@pytest.mark.parametrize("leaf, disk", [
    ("/dev/disk/by-id/ata-WDC_WD80-part1", "/dev/disk/by-id/ata-WDC_WD80"),
    ("/dev/disk/by-id/nvme-eui.0025-part3", "/dev/disk/by-id/nvme-eui.0025"),
    ("/dev/sda1", "/dev/sda"), ("/dev/sdab12", "/dev/sdab"), ("/dev/nvme0n1p1", "/dev/nvme0n1"),
    ("/dev/sdb", "/dev/sdb"), ("/dev/disk/by-id/wwn-0x5000c500", "/dev/disk/by-id/wwn-0x5000c500"),
])
def test_smartctl_asks_the_whole_disk_of_a_partition(leaf, disk):
    assert whole_disk(leaf) == disk


def test_a_failing_disk_and_a_worn_one_are_flagged_under_their_vdev():
    state = read_both("zfs-2.4", "healthy")[0]   # raidz2:6 and a spare
    leaves = [leaf.name for leaf in state.vdevs[0].leaves]
    health = {leaves[0]: parse_health(leaves[0], report("ata-failing-hdd.json")),
              leaves[1]: parse_health(leaves[1], report("nvme-worn.json")),
              leaves[2]: parse_health(leaves[2], report("ata-new-hdd.json"))}
    found = [f for f in findings(state, {}, 0, None, health) if f.code.startswith("disk-")]
    assert [(f.code, f.severity, f.vdev) for f in found] == [
        ("disk-failing", "warning", leaves[0]), ("disk-failing", "warning", leaves[1]),
        ("disk-worn", "warning", leaves[1])]
    assert "96 reallocated sectors, 8 pending (unreadable) sectors" in found[0].text
    assert found[0].text.count("FAILED") == 1 and "in raidz2-0" in found[0].text
    assert "3 NVMe media errors" in found[1].text and "0x0c" in found[1].text
    assert "104 %" in found[2].text and "past it" in found[2].text
    # 85 % used is a note, and a pool with no smartctl answer has no disk finding
    note = dataclasses.replace(health[leaves[1]], percentage_used=85, media_errors=0, critical_warning=0,
                               spare_below_threshold=False, passed=True)
    (only,) = [f for f in findings(state, {}, 0, None, {leaves[1]: note}) if f.code.startswith("disk-")]
    assert (only.code, only.severity) == ("disk-worn", "note")
    assert not [f for f in findings(state, {}, 0) if f.code.startswith("disk-")]


@pytest.mark.parametrize("name, hours, model", [
    ("ata-new-hdd.json", 11, "Example HDD 8TB"), ("ata-hdd-hours-only.json", 28712, "Example HDD 4TB"),
    ("nvme-used.json", 9120, "Example NVMe 1TB"), ("scsi-used.json", 40211, "EXAMPLE SAS 12TB"),
    ("qemu-virtual.json", None, "QEMU QEMU HARDDISK"), ("hostile.json", -5, ""),   # the age model judges -5 (model/disk_age.py)
])
def test_power_on_hours_and_model_are_read_for_the_risk_by_age(name, hours, model):
    h = parse_health("/dev/x", report(name))
    assert (h.power_on_hours, h.model, h.power_on_note) == (hours, model, "")


def test_power_on_hours_that_are_not_a_whole_number_are_left_out_with_the_reason():
    h = parse_health("/dev/x", {"power_on_time": {"hours": "12"}, "model_name": "bad\x1b[2J"})
    assert h.power_on_hours is None and h.model == ""
    assert h.power_on_note == "SMART power-on hours '12' is not a whole number: ignored"
