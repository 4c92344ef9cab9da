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
