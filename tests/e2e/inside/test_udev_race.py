"""zpool create right after a wipe, racing udev (issue 19; docs/safety.md#a-busy-udev).

After every write to a disk udev opens its partitions to probe them; wipefs asks the kernel to
re-read the wiped partition table but gives up if a partition is open, and the kernel then keeps
partitions that are no longer on the disk. zpool create labels the disk and asks for a re-read
in turn, and fails while udev still holds one of them. A udev rule here makes udev's hold last
(HOLD_S seconds on every change event of a test partition, longer while FLAG exists), so the
hold, not the machine's load, decides the race; udev's markers order the steps, no sleeps.
benchmarks/udev_race_rounds.py repeats these steps and variants of them and counts outcomes."""

import os
import subprocess
import time
from pathlib import Path

import pytest

from zfslab.model.layout_grammar import parse_layout
from zfslab.system.bench import partitions, wipe_devices
from zfslab.system.disks import zero_samples
from zfslab.system.runner import CommandFailed, Completed, Runner
from zfslab.system.zfs import RESCAN_FAILED, ZfsCli

POOL = "zfslab-e2e-udev-race"
HOLD_S = 2
WORK = Path("/run/zfslab-e2e-udev")
FLAG = WORK / "hold"  # while it exists, udev's holds do not end
RULE = Path("/run/udev/rules.d/99-zfslab-e2e-slow-probe.rules")
HOLD = f"""#!/bin/sh
# udev runs this for a change event on a test partition ($1): hold it open as a slow probe would
exec 3</dev/"$1" || exit 0
touch {WORK}/held-"$1"
sleep {HOLD_S}
end=$(( $(date +%s) + 120 ))
while [ -e {FLAG} ] && [ "$(date +%s)" -lt "$end" ]; do sleep 0.1; done
"""


def udevadm(*args):
    subprocess.run(["udevadm", *args], check=True, capture_output=True)


def held(part):
    return (WORK / f"held-{os.path.basename(part)}").exists()


def holds():
    return sorted(p.name[len("held-"):] for p in WORK.glob("held-*"))


def wait_for(what, predicate, timeout_s=120):
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.05)


def slow_udev_on(zfs, used):
    """Give `used` a destroyed pool's partitions, then make udev hold them on every change."""
    runner = Runner()
    wipe_devices(runner, used)  # whatever an earlier test left
    zfs.create_pool(POOL, parse_layout(f"raidz1:{len(used)}"), used)
    zfs.destroy_pool(POOL)
    udevadm("settle", "--timeout=120")
    names = [os.path.basename(os.path.realpath(d)) for d in used]
    WORK.mkdir(exist_ok=True)
    (WORK / "hold.sh").write_text(HOLD)
    (WORK / "hold.sh").chmod(0o755)
    RULE.parent.mkdir(parents=True, exist_ok=True)
    RULE.write_text(f'ACTION=="change", SUBSYSTEM=="block", ENV{{DEVTYPE}}=="partition", '
                    f'KERNEL=="{"|".join(n + "[0-9]*" for n in names)}", PROGRAM="{WORK}/hold.sh %k"\n')
    udevadm("control", "--reload")


def slow_udev_off(zfs, used):
    """Remove the rule, let the holds end, and leave the disks empty."""
    FLAG.unlink(missing_ok=True)
    RULE.unlink(missing_ok=True)
    udevadm("control", "--reload")
    udevadm("settle", "--timeout=300")
    if zfs.pool_exists(POOL):
        zfs.destroy_pool(POOL, force=True)
    wipe_devices(Runner(), used)
    for marker in WORK.glob("held-*"):
        marker.unlink()


def old_wipe(disks, *, await_holds):
    """zfslab's wipe before it made the kernel forget partitions wipefs left; with `await_holds`,
    wipefs on a disk waits until udev holds that disk's partitions (then its re-read must fail)."""
    runner = Runner()
    for disk in disks:
        real = os.path.realpath(disk)
        parts = partitions(runner, real)
        for part in parts:
            runner.run(["zpool", "labelclear", "-f", part], check=False)
            runner.run(["wipefs", "--all", "--quiet", part])
        if await_holds:
            wait_for(f"udev holding {parts}", lambda: all(held(p) for p in parts))
        runner.run(["wipefs", "--all", "--quiet", real])
        zero_samples(real)


def zpool_create(disks):
    """zpool create itself, with no settle and no retry."""
    return subprocess.run(["zpool", "create", POOL, "raidz1", *disks], capture_output=True, text=True, timeout=600)


class BusyUntilCreateFails(Runner):
    """A host where udev looks idle to zfslab's first settle but is still busy (FLAG held), and
    stops being busy once zpool create has failed: the case the retry is for."""

    def run(self, argv, **kw):
        if tuple(argv[:2]) == ("udevadm", "settle") and FLAG.exists():
            return Completed(tuple(argv), 0, "", "", 0.0)
        try:
            return super().run(argv, **kw)
        except CommandFailed:
            if tuple(argv[:2]) == ("zpool", "create"):
                FLAG.unlink(missing_ok=True)
            raise


@pytest.fixture
def racing(zfs, disks):
    used = disks[5:8]
    slow_udev_on(zfs, used)
    try:
        yield used
    finally:
        slow_udev_off(zfs, used)


def test_without_settling_zpool_create_cannot_label_a_disk_udev_holds(zfs, racing):
    FLAG.touch()
    t0 = time.monotonic()
    old_wipe(racing, await_holds=True)
    stale = {d: partitions(Runner(), os.path.realpath(d)) for d in racing}
    assert all(stale.values()), f"wipefs's re-read should have failed while udev held a partition: {stale}"

    r = zpool_create(racing)
    print(f"zpool create {time.monotonic() - t0:.1f} s after the wipe began: exit {r.returncode}: {r.stderr!r}")
    assert r.returncode == 1
    assert f"the kernel {RESCAN_FAILED}: 16" in r.stderr  # EBUSY, from libefi's efi_rescan()
    assert "cannot label 'sd" in r.stderr
    assert not zfs.pool_exists(POOL)


def test_zfslab_wipes_and_creates_while_udev_probes_slowly(zfs, racing):
    notes: list[str] = []
    t0 = time.monotonic()
    wipe_devices(Runner(), racing)
    assert holds(), "udev held no partition during the wipe: nothing raced"
    assert not any(partitions(Runner(), os.path.realpath(d)) for d in racing)
    ZfsCli(log=notes.append).create_pool(POOL, parse_layout("raidz1:3"), racing)
    assert zfs.pool(POOL).health == "ONLINE"
    print(f"wipe and create in {time.monotonic() - t0:.1f} s; retried: {notes}")


def test_zfslab_retries_a_create_that_raced_udev_and_says_so(zfs, racing):
    FLAG.touch()
    old_wipe(racing, await_holds=True)
    notes: list[str] = []
    ZfsCli(BusyUntilCreateFails(), log=notes.append).create_pool(POOL, parse_layout("raidz1:3"), racing)
    assert zfs.pool(POOL).health == "ONLINE"
    assert len(notes) == 1 and repr(RESCAN_FAILED) in notes[0] and "retried after dropping the partitions" in notes[0], notes
    print(f"retried: {notes}")
