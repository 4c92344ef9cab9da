"""The safety gate as a library (system/disk_gate.py): a typed Consent in, a refusal or a verdict
out; no argparse, no terminal. The command layer's prompt is tested through the CLI elsewhere."""

import pytest

from zfslab.system.disk_gate import (Consent, GateVerdict, dry_run_verdict, foreign_disks, gate, parse_serials,
                                     wiped_first)
from zfslab.system.disks import DiskInfo, DisksRefused, Finding

DATA = DiskInfo("/dev/sdb", "/dev/sdb", 4 * 10**12, "SER1", "disk", True, (Finding("content", "holds data"),))
OURS = DiskInfo("/dev/sdd", "/dev/sdd", 4 * 10**12, "SER3", "disk", True,
                (Finding("zfs-label", "a ZFS label of pool 77", pool_guid="77"),))
EMPTY = DiskInfo("/dev/sdc", "/dev/sdc", 4 * 10**12, "SER2", "disk", True)


def test_serials_are_parsed_in_one_place_from_the_option_and_the_prompt():
    both = {"SER1", "SER2"}
    assert parse_serials("SER1,SER2") == parse_serials(" SER1  SER2 ") == parse_serials("SER1, SER2,") == both
    assert parse_serials(None) == parse_serials("") == frozenset()


def test_a_leftover_of_a_recorded_pool_is_not_foreign_and_anything_else_is():
    assert foreign_disks([DATA, OURS, EMPTY], {"77"}) == [DATA]
    assert foreign_disks([DATA, OURS, EMPTY], set()) == [DATA, OURS]


def test_the_gate_lets_through_only_what_the_consent_confirms():
    gate([OURS, EMPTY], {"77"}, Consent(), sandbox=False)  # nothing foreign: no consent needed
    with pytest.raises(DisksRefused, match="pass --wipe and confirm their serial numbers"):
        gate([DATA, EMPTY], set(), Consent(), sandbox=False)
    with pytest.raises(DisksRefused, match="not confirmed: /dev/sdb=SER1"):
        gate([DATA], set(), Consent(wipe=True, serials=frozenset({"SERX"})), sandbox=False)
    gate([DATA], set(), Consent(wipe=True, serials=frozenset({"SER1"})), sandbox=False)
    with pytest.raises(DisksRefused, match="files in the sandbox directory that zfslab did not leave"):
        gate([DATA], set(), Consent(wipe=True, serials=frozenset({"SER1"})), sandbox=True)


def test_the_dry_run_verdict_and_the_disks_wiped_first():
    confirmed = Consent(wipe=True, serials=frozenset({"SER1"}))
    assert dry_run_verdict([DATA, EMPTY], set(), Consent(), False).exit_code == 10
    go = dry_run_verdict([DATA, EMPTY], set(), confirmed, False)
    assert go.exit_code == 0 and "wipe them first" in go.message and "/dev/sdc" not in go.message
    assert dry_run_verdict([DATA], set(), Consent(wipe=True, will_ask=True), False).exit_code == 0
    assert dry_run_verdict([DATA], set(), Consent(wipe=True), False).exit_code == 10  # no prompt to ask at
    assert dry_run_verdict([EMPTY], set(), Consent(), False) == GateVerdict(0, "")
    assert wiped_first([DATA, OURS, EMPTY], {"77"}, confirmed, False) == ("/dev/sdb",)
    assert wiped_first([DATA], set(), confirmed, True) == ()


class _ImportedPool:
    """zpool as a host that booted with a pool imported from zpool.cache shows it (reads only)."""

    def __init__(self, guid: str | None, mark: str = "-"):
        self.guid, self.mark = guid, mark

    def get(self, target: str, prop: str):
        from zfslab.system.zfs import Property
        return {prop: Property(prop, self.mark, "local" if self.mark != "-" else "-")}

    def pool_exists(self, name: str) -> bool:
        return self.guid is not None

    def pool_guid(self, name: str) -> str:
        return self.guid


def _held(guid: str, given: str = "/dev/sdb"):
    from zfslab.system.disks import DiskInfo, Finding
    return DiskInfo(given, given, 1 << 31, "S1", "QEMU", False, (
        Finding("partition-table", "holds a gpt partition table", "gpt"),
        Finding("zfs-label", f"holds a zfs_member signature of pool 'zfslab-bench' (GUID {guid})", "zfs_member", guid),
        Finding("busy", "is in use: the kernel refused an exclusive open")))


def test_a_dry_run_sees_its_own_imported_pool_as_the_gate_will_and_no_other():
    # a resumed run destroys its recorded pool first: its dry run (the fleet's --resume precheck) must
    # not refuse the disks that pool keeps busy; a pool it did not record stays refused
    from zfslab.system.disk_gate import foreign_disks
    from zfslab.system.pool_safety import as_after_own_pool
    infos = [_held("111")]
    assert foreign_disks(infos, {"111"})   # busy: refused as found
    seen, known = as_after_own_pool(_ImportedPool("111"), "zfslab-bench", {"111"}, infos)
    assert not foreign_disks(seen, known) and known == {"111"}
    for zfs, own in ((_ImportedPool("222"), {"222"}), (_ImportedPool("111"), {"333"}), (_ImportedPool(None), {"111"}),
                     (_ImportedPool("111"), set())):
        seen, known = as_after_own_pool(zfs, "zfslab-bench", own, infos)
        assert foreign_disks(seen, known), (zfs.guid, own)


def test_a_dry_run_knows_the_pool_a_kill_left_before_its_guid_was_recorded_by_the_creates_intent():
    # killed between zpool create and the GUID's record: the run recorded (name, mark) first, and the
    # real run adopts that pool's GUID before its gate; the dry run must see it the same way
    from zfslab.system.pool_safety import as_after_own_pool
    infos = [_held("111")]
    intents = {("zfslab-bench", "run7-raidz1:3"): "raidz1:3"}
    seen, known = as_after_own_pool(_ImportedPool("111", "run7-raidz1:3"), "zfslab-bench", set(), infos,
                                    intents, "zfslab:bench")
    assert not foreign_disks(seen, known) and known == {"111"}
    for mark in ("-", "run8-raidz1:3"):   # no mark (the user's pool of that name), another run's mark
        seen, known = as_after_own_pool(_ImportedPool("111", mark), "zfslab-bench", set(), infos,
                                        intents, "zfslab:bench")
        assert foreign_disks(seen, known) and known == set(), mark