"""zpool create racing udev: settled first, retried once after settling on the two failures a
busy udev causes (as OpenZFS words them), said through the log; anything else is not retried.
The race itself runs on the real module in tests/e2e/inside/test_udev_race.py."""

import os
from contextlib import contextmanager

import pytest

from tests.conftest import DATA
from zfslab.model.layout_grammar import parse_layout
from zfslab.system import pool_safety
from zfslab.system.runner import CommandFailed, Completed, Runner, _tail
from zfslab.system.zfs import ZfsCli

# the guest (OpenZFS 2.3.2), zpool create while udev held a partition of the disk open
RESCAN = open(os.path.join(DATA, "zfs-2.3", "create_rescan_busy.txt")).read()
# CI (OpenZFS 2.1.11, issue 19), a drill's create right after the previous scenario's wipe
UNAVAILABLE = "cannot create 'zfslab-drill': one or more devices is currently unavailable\n"
# OpenZFS 2.4.4 in CI's loaded guest, word for word (zpool_label_disk_wait() gave up after 30 s)
LABEL_WAIT = ("cannot label 'sdf': failed to detect device partitions on '/dev/sdf1': 19\n"
              "Error preparing/labeling disk.\n")
OTHER = "cannot create 'zfslab-drill': pool already exists\n"
# the 2.4.4 guest, a one-disk pool created right after a destroy: the leaf's ENOENT as the ioctl's error
VANISHED = "cannot create 'tank': no such pool or dataset\n"


@pytest.fixture(autouse=True)
def disks_as_given(monkeypatch):
    """/dev/sda and /dev/sdb stand for whole disks here: no lock is taken on this machine's devices
    (the real lock and the real race: tests/e2e/inside/test_create_race.py)."""
    @contextmanager
    def held(devices):
        yield sorted(devices)
    monkeypatch.setattr("zfslab.system.zfs.held_against_rescan", held)


class Scripted(Runner):
    """Each `zpool <verb>` fails with the next of `failures` (None: succeeds); records every argv."""

    def __init__(self, failures, partitions=(), verb="create"):
        super().__init__()
        self.failures = list(failures)
        self.partitions = list(partitions)  # what lsblk lists after each ask, in turn
        self.verb = verb
        self.argvs = []

    def which(self, program):
        return f"/sbin/{program}"

    def run(self, argv, **kw):
        argv = tuple(argv)
        self.argvs.append(argv)
        if argv[:2] == ("zpool", self.verb) and self.failures:
            stderr = self.failures.pop(0)
            if stderr is not None:
                raise CommandFailed(" ".join(argv), 1, _tail(stderr))
        out = ""
        if argv[0] == "lsblk":
            out = "\n".join([argv[-1], *(self.partitions.pop(0) if self.partitions else [])])
        return Completed(argv, 0, out, "", 0.0)


def settles(runner):
    return [i for i, a in enumerate(runner.argvs) if a[:2] == ("udevadm", "settle")]


def creates(runner):
    return [i for i, a in enumerate(runner.argvs) if a[:2] == ("zpool", "create")]


@pytest.mark.parametrize("stderr, said", [(RESCAN, "failed to rescan the partition table"),
                                          (UNAVAILABLE, "currently unavailable"),
                                          (VANISHED, "no such pool or dataset"),
                                          (LABEL_WAIT, "failed to detect device partitions")])
def test_a_udev_race_is_retried_once_after_settling_and_said(stderr, said):
    runner, notes = Scripted([stderr, None]), []
    ZfsCli(runner, log=notes.append).create_pool("p", parse_layout("mirror:2"), ["/dev/sda", "/dev/sdb"])
    first, second = creates(runner)
    assert runner.argvs[first] == runner.argvs[second]
    assert [i for i in settles(runner) if i < first] and [i for i in settles(runner) if first < i < second]
    # the partitions zpool made are dropped from the kernel's view, and udev settles after that
    dropped = [i for i, a in enumerate(runner.argvs) if a[:2] == ("partx", "--delete")]
    assert sorted(runner.argvs[i][2] for i in dropped) == ["/dev/sda", "/dev/sdb"]
    assert all(first < i < second for i in dropped) and [i for i in settles(runner) if max(dropped) < i < second]
    # ... after udev has settled: its probes of the partitions zpool just made hold them open
    assert [i for i in settles(runner) if first < i < min(dropped)]
    assert len(notes) == 1 and said in notes[0] and "retried after dropping the partitions" in notes[0]


def test_a_partition_a_probe_held_is_deleted_again_after_another_settle():
    # lsblk after the first delete: sda1 still there (EBUSY, a udev probe had it open), sdb clean
    runner, notes = Scripted([UNAVAILABLE, None], partitions=[["/dev/sda1"], []]), []
    ZfsCli(runner, log=notes.append).create_pool("p", parse_layout("mirror:2"), ["/dev/sda", "/dev/sdb"])
    first, second = creates(runner)
    dropped = [runner.argvs[i][2] for i, a in enumerate(runner.argvs) if a[:2] == ("partx", "--delete")]
    assert dropped == ["/dev/sda", "/dev/sdb", "/dev/sda"]
    last = max(i for i, a in enumerate(runner.argvs) if a[:2] == ("partx", "--delete"))
    before_last = max(i for i, a in enumerate(runner.argvs[:last]) if a[:2] == ("partx", "--delete"))
    assert [i for i in settles(runner) if before_last < i < last]


def test_a_second_race_is_not_retried_again():
    runner, notes = Scripted([RESCAN, UNAVAILABLE]), []
    with pytest.raises(CommandFailed) as e:
        ZfsCli(runner, log=notes.append).create_pool("p", parse_layout("mirror:2"), ["/dev/sda", "/dev/sdb"])
    assert "currently unavailable" in e.value.stderr_tail
    assert len(creates(runner)) == 2 and len(notes) == 1
    # where to look: the module's own log of the failed open (no module parameter helps here)
    assert "/proc/spl/kstat/zfs/dbgmsg" in e.value.stderr_tail
    assert "zfs_vdev_open_timeout_ms" not in e.value.stderr_tail


def test_other_failures_are_not_retried():
    runner, notes = Scripted([OTHER]), []
    with pytest.raises(CommandFailed):
        ZfsCli(runner, log=notes.append).create_pool("p", parse_layout("mirror:2"), ["/dev/sda", "/dev/sdb"])
    assert len(creates(runner)) == 1 and notes == []


def test_the_wipe_makes_the_kernel_forget_partitions_wipefs_left(monkeypatch):
    monkeypatch.setattr(pool_safety, "zero_samples", lambda path: None)
    # lsblk: before the wipe, then (partitions still listed) after it
    runner = Scripted([], partitions=[["/dev/sdq1", "/dev/sdq9"], ["/dev/sdq1", "/dev/sdq9"]])
    pool_safety.wipe_devices(runner, ["/dev/sdq"])
    tail = [a[:2] for a in runner.argvs[-4:]]
    assert tail == [("lsblk", "-nrpo"), ("udevadm", "settle"), ("blockdev", "--rereadpt"), ("udevadm", "settle")]


def test_a_wipe_the_kernel_followed_asks_nothing_more(monkeypatch):
    monkeypatch.setattr(pool_safety, "zero_samples", lambda path: None)
    runner = Scripted([], partitions=[["/dev/sdq1"], []])
    pool_safety.wipe_devices(runner, ["/dev/sdq"])
    assert runner.argvs[-1][:2] == ("lsblk", "-nrpo")
    assert not any(a[0] in ("blockdev", "udevadm") for a in runner.argvs)



NO_REPLICAS = "cannot offline /dev/sdb: no valid replicas\n"


def test_an_offline_refused_until_the_partner_is_resilvered_is_tried_once_more_and_said():
    notes = []
    runner = Scripted([NO_REPLICAS, None], verb="offline")
    ZfsCli(runner, log=notes.append).offline("tank", "/dev/sdb")
    offlines = [a for a in runner.argvs if a[:2] == ("zpool", "offline")]
    assert len(offlines) == 2
    # between the two: udev settled, then the resilver waited for
    between = runner.argvs[runner.argvs.index(offlines[0]) + 1:runner.argvs.index(offlines[1], 1)]
    assert ("zpool", "wait", "-t", "resilver", "tank") in between
    assert len(notes) == 1 and "no valid replicas" in notes[0] and "retried after the resilver" in notes[0]


def test_an_offline_refused_after_the_resilver_wait_is_tried_after_a_scrub():
    notes = []
    runner = Scripted([NO_REPLICAS, NO_REPLICAS, None], verb="offline")
    ZfsCli(runner, log=notes.append).offline("tank", "/dev/sdb")
    offlines = [i for i, a in enumerate(runner.argvs) if a[:2] == ("zpool", "offline")]
    assert len(offlines) == 3
    assert ("zpool", "scrub", "-w", "tank") in runner.argvs[offlines[1] + 1:offlines[2]]
    assert len(notes) == 1 and "retried after a scrub" in notes[0]


def test_an_offline_that_would_lose_the_last_copy_is_refused_as_zfs_said():
    notes = []
    runner = Scripted([NO_REPLICAS, NO_REPLICAS, NO_REPLICAS], verb="offline")
    with pytest.raises(CommandFailed, match="no valid replicas"):
        ZfsCli(runner, log=notes.append).offline("tank", "/dev/sdb")
    assert len([a for a in runner.argvs if a[:2] == ("zpool", "offline")]) == 3 and notes == []


def test_other_offline_failures_are_not_retried():
    runner = Scripted(["cannot offline /dev/sdc: no such device in pool\n"], verb="offline")
    with pytest.raises(CommandFailed, match="no such device"):
        ZfsCli(runner).offline("tank", "/dev/sdc")
    assert len([a for a in runner.argvs if a[:2] == ("zpool", "offline")]) == 1


# the 2.4.4 guest, drill mirror:2 --sequential-rebuild (CI, 2026-11-26): `zpool replace -s` back onto
# the disk replaced out raced udev like a create, and libzfs worded the leaf's ENOENT so
REPLACE_VANISHED = "cannot replace /dev/sdc with /dev/sda: no such pool or dataset\n"


def test_a_replace_that_raced_udev_is_retried_not_called_a_missing_pool():
    runner, notes = Scripted([REPLACE_VANISHED, None], verb="replace"), []
    ZfsCli(runner, log=notes.append).replace("tank", "/dev/sdc", "/dev/sda", sequential=True, wait=True)
    replaces = [i for i, a in enumerate(runner.argvs) if a[:2] == ("zpool", "replace")]
    assert len(replaces) == 2 and runner.argvs[replaces[0]] == runner.argvs[replaces[1]]
    dropped = [i for i, a in enumerate(runner.argvs) if a[:2] == ("partx", "--delete")]
    assert [runner.argvs[i][2] for i in dropped] == ["/dev/sda"] and replaces[0] < dropped[0] < replaces[1]
    assert [i for i in settles(runner) if dropped[0] < i < replaces[1]]
    assert len(notes) == 1 and notes[0].startswith("zpool replace failed while udev was handling the disks")


def test_a_replace_that_raced_twice_names_the_disk_not_the_pool():
    runner = Scripted([REPLACE_VANISHED, REPLACE_VANISHED], verb="replace")
    with pytest.raises(CommandFailed) as e:
        ZfsCli(runner).replace("tank", "/dev/sdc", "/dev/sda")
    assert "no such pool or dataset" in e.value.stderr_tail and "/proc/spl/kstat/zfs/dbgmsg" in e.value.stderr_tail


def test_a_replace_on_a_missing_pool_is_still_said_so():
    from zfslab.system.zfs import NoSuchPool
    runner = Scripted(["cannot open 'tank': no such pool\n"], verb="replace")
    with pytest.raises(NoSuchPool):
        ZfsCli(runner).replace("tank", "/dev/sdc", "/dev/sda")


def test_an_offline_retry_waits_for_a_scrub_zfs_already_runs():
    """dRAID, 2.4.4 guest (CI, 2026-11-26): the scrub ZFS starts itself was running when the
    offline fallback asked for one, and `zpool scrub` refused; that scrub ends the same way."""
    class ScrubRunning(Scripted):
        def run(self, argv, **kw):
            if tuple(argv[:2]) == ("zpool", "scrub"):
                self.argvs.append(tuple(argv))
                raise CommandFailed(" ".join(argv), 1, _tail("cannot scrub tank: currently scrubbing; "
                                                               "use 'zpool scrub -s' to cancel scrub\n"))
            return super().run(argv, **kw)
    runner = ScrubRunning([NO_REPLICAS, NO_REPLICAS, NO_REPLICAS], verb="offline")
    with pytest.raises(CommandFailed, match="no valid replicas"):   # the last copy: refused as ZFS said
        ZfsCli(runner).offline("tank", "/dev/sdb")
    offlines = [i for i, a in enumerate(runner.argvs) if a[:2] == ("zpool", "offline")]
    assert len(offlines) == 3
    assert ("zpool", "wait", "-t", "scrub", "tank") in runner.argvs[offlines[1] + 1:offlines[2]]
