"""The disk's own history as gate evidence (system/smart.py): smartctl's JSON parsed on reports
written from smartmontools' schema (tests/data/smartctl/), every outside number checked, and
the refusal path with a stand-in smartctl (a script on PATH printing a fake report)."""

import json
import os
import stat

import pytest

from tests.conftest import DATA
from zfslab.system.disks import DiskInfo, DisksRefused, check_wipe_allowed, disk_history, waive_history
from zfslab.system.runner import Runner
from zfslab.system.smart import TRIVIAL_POWER_ON_HOURS, TRIVIAL_WRITTEN_BYTES, parse_history, read_history


def report(name):
    with open(os.path.join(DATA, "smartctl", name)) as f:
        return json.load(f)


@pytest.mark.parametrize("name, written, hours, used", [
    ("ata-used-ssd.json", 61_440_012_345 * 512, 17_322, True),
    ("ata-new-hdd.json", 2_841_016 * 512, 11, False),  # a factory test's writes
    ("ata-hdd-hours-only.json", None, 28_712, True),  # no writes counter: the hours tell
    ("nvme-new.json", 4_210 * 512_000, 2, False),
    ("nvme-used.json", 39_876_120 * 512_000, 9_120, True),
    ("scsi-used.json", 98_211_004_000_000, 40_211, True),
    ("qemu-virtual.json", None, None, False),  # a virtual disk reports nothing
])
def test_history_from_smartctl_reports(name, written, hours, used):
    h = parse_history(report(name))
    assert (h.written_bytes, h.power_on_hours, h.used, h.problems) == (written, hours, used, ())


def test_numbers_that_are_not_counts_are_left_out_and_said():
    h = parse_history(report("hostile.json"))  # negative hours, a float count, "nan" gigabytes
    assert h.written_bytes is None and h.power_on_hours is None and not h.used
    assert len(h.problems) == 3 and any("-5" in p for p in h.problems) and any("nan" in p for p in h.problems)
    for bad in (True, 1.0, "12", float("inf"), 2**70, [], None):
        h = parse_history({"power_on_time": {"hours": bad}, "nvme_smart_health_information_log": {"data_units_written": bad}})
        assert h.written_bytes is None and h.power_on_hours is None, bad
    assert parse_history([1, 2]).problems and parse_history("x").written_bytes is None


def test_trivial_is_a_new_disks_share():
    at = lambda written, hours: parse_history(  # noqa: E731
        {"power_on_time": {"hours": hours}, "nvme_smart_health_information_log": {"data_units_written": written}})
    limit_units = TRIVIAL_WRITTEN_BYTES // 512_000
    assert not at(limit_units, 10**5).used  # writes known: the hours do not count
    assert at(limit_units + 1, 0).used
    assert not parse_history({"power_on_time": {"hours": TRIVIAL_POWER_ON_HOURS}}).used
    assert parse_history({"power_on_time": {"hours": TRIVIAL_POWER_ON_HOURS + 1}}).used


def fake_smartctl(tmp_path, name):
    """A smartctl on PATH that prints a report, as the real one does (exit status 4: some SMART
    command failed, common on real disks)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / "smartctl"
    script.write_text(f"#!/bin/sh\ncat '{os.path.join(DATA, 'smartctl', name)}'\nexit 4\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return Runner(path=f"{bin_dir}:/usr/bin:/bin")


def disk(evidence, serial="S0EXAMPLE0001"):
    return DiskInfo("/dev/disk/by-id/ata-x", "/dev/sdb", 10**12, serial, "M", False, tuple(evidence.findings),
                    (evidence.note,) if evidence.note else ())


def test_a_used_disk_whose_samples_read_zero_needs_its_serial(tmp_path):
    evidence = disk_history(fake_smartctl(tmp_path, "ata-used-ssd.json"), "/dev/sdb")
    info = disk(evidence)
    assert [f.kind for f in info.findings] == ["history"] and "31.5 GB" not in info.reasons[0]
    assert "31,457.3 GB ever written" in info.reasons[0] and "17,322 power-on hours" in info.reasons[0]
    with pytest.raises(DisksRefused, match="refusing disks that hold data"):
        check_wipe_allowed([info], wipe=False, confirmed_serials=set())
    with pytest.raises(DisksRefused, match="not confirmed"):
        check_wipe_allowed([info], wipe=True, confirmed_serials={"OTHER"})
    check_wipe_allowed([info], wipe=True, confirmed_serials={"S0EXAMPLE0001"})


def test_a_new_disk_or_one_without_history_is_let_through_and_the_weaker_evidence_said(tmp_path):
    new = disk_history(fake_smartctl(tmp_path, "nvme-new.json"), "/dev/nvme0n1")
    assert new.findings == [] and new.note == "" and new.written_bytes == 4_210 * 512_000
    virtual = disk_history(fake_smartctl(tmp_path, "qemu-virtual.json"), "/dev/sdb")
    assert virtual.findings == [] and "reports no history" in virtual.note
    missing = disk_history(Runner(path=str(tmp_path / "nowhere")), "/dev/sdb")
    assert missing.findings == [] and "smartctl is not installed" in missing.note
    hostile = disk_history(fake_smartctl(tmp_path, "hostile.json"), "/dev/sdz")
    assert hostile.findings == [] and "left out" in hostile.note
    check_wipe_allowed([disk(e) for e in (new, virtual, missing)], wipe=False, confirmed_serials=set())


def test_garbage_from_smartctl_is_no_history(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "smartctl").write_text("#!/bin/sh\necho 'not json'\n")
    (bin_dir / "smartctl").chmod(0o755)
    history, note = read_history(Runner(path=f"{bin_dir}:/usr/bin:/bin"), "/dev/sdb")
    assert history is None and "no JSON report" in note


def test_zfslabs_own_writes_are_waived_and_anyone_elses_are_not(tmp_path):
    used = disk(disk_history(fake_smartctl(tmp_path, "ata-used-ssd.json"), "/dev/sdb"))
    written = 61_440_012_345 * 512
    # zfslab recorded the counter after its own wipe; a little more since (a probe, a label) is still its own
    assert waive_history([used], {"S0EXAMPLE0001": written - 10**9})[0].safe
    # more than a trivial amount written since zfslab's wipe: someone used the disk
    assert not waive_history([used], {"S0EXAMPLE0001": written - TRIVIAL_WRITTEN_BYTES - 1})[0].safe
    assert not waive_history([used], {"OTHER": written})[0].safe
    hours_only = disk(disk_history(fake_smartctl(tmp_path, "ata-hdd-hours-only.json"), "/dev/sdd"), "WEXAMPLE0003")
    assert not waive_history([hours_only], {"WEXAMPLE0003": 0})[0].safe  # no counter to compare: never waived


def test_a_note_true_of_every_disk_names_none():
    from zfslab.commands._disks import note_lines
    from zfslab.system.disks import DiskInfo
    missing = "smartctl is not installed (smartmontools): the disk's history was not read"
    disks = [DiskInfo(f"/dev/sd{x}", f"/dev/sd{x}", 1 << 30, x, "M", False, (), (missing,)) for x in "abc"]
    assert note_lines(disks) == [f"zfslab: every disk: {missing}"]
    slow = DiskInfo("/dev/sdd", "/dev/sdd", 1 << 30, "d", "M", True, (), (missing, "read 3 of the 2,049"))
    assert note_lines([*disks, slow]) == [f"zfslab: every disk: {missing}", "zfslab: /dev/sdd: read 3 of the 2,049"]
    assert note_lines(disks[:1]) == [f"zfslab: /dev/sda: {missing}"]
    assert note_lines([DiskInfo("/dev/sde", "/dev/sde", 1, "e", "M", False)]) == []
