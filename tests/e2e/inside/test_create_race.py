"""A create against a udev that re-reads partition tables (real module).

systemd-udevd answers the close of a disk that was written to by re-reading its partition table
(`synthesize_change()` → `blockdev_reread_partition_table()`: open read-only, `flock(LOCK_EX |
LOCK_NB)`, `ioctl(BLKRRPART)`): the kernel drops the partitions and adds them again, and udev
deletes and re-creates their links. When that lands between zpool's wait for `-part1` and the
module's open of it, the open meets ENOENT, which OpenZFS 2.3.9 and 2.4.4 do not wait out, and
the create fails "one or more devices is currently unavailable"
(docs/safety.md#a-create-right-after-a-destroy; the rounds there measure the other way to the
same failure, zpool's own re-read with udev lagging behind). Here a thread does what udevd does,
as fast as it can, for as long as the create runs, so the window is always hit:

- plain `zpool create` fails (the reproduction: this is the test that fails without the fix);
- `ZfsCli.create_pool` holds a shared lock on each disk (system/udev_lock.py), the stand-in's
  exclusive lock fails as udevd's does, and the pool is made every time.
"""

from __future__ import annotations

import errno
import fcntl
import os
import subprocess
import threading
from collections import Counter

import pytest

from zfslab.model.layout_grammar import parse_layout
from zfslab.model.zpool_syntax import zpool_create_argv
from zfslab.system.pool_safety import wipe_devices
from zfslab.system.runner import CommandFailed, Runner
from zfslab.system.udev_lock import held_against_rescan, whole_disk
from zfslab.system.zfs import ZfsCli

pytestmark = pytest.mark.e2e

BLKRRPART = 0x125F  # <linux/fs.h>: _IO(0x12, 95)
ROUNDS = 3


class RereadingUdev:
    """What systemd-udevd does after a write to a disk, in a loop: take the disk's BSD lock
    exclusively without waiting, and if it is free, ask the kernel to re-read the partitions."""

    def __init__(self, disks: list[str]) -> None:
        self.disks = [whole_disk(d) for d in disks]
        self.stop = threading.Event()
        self.counts: Counter[str] = Counter()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self.stop.is_set():
            for disk in self.disks:
                fd = os.open(disk, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    self.counts["locked out"] += 1  # as udevd: someone holds the disk, leave it
                    os.close(fd)
                    continue
                try:
                    fcntl.ioctl(fd, BLKRRPART)
                    self.counts["re-read"] += 1
                except OSError as e:  # EBUSY while a partition is open (zpool's, the pool's)
                    self.counts[errno.errorcode.get(e.errno, str(e.errno))] += 1
                finally:
                    os.close(fd)

    def __enter__(self) -> RereadingUdev:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        if self.thread.is_alive():
            self.thread.join(timeout=30)
            assert not self.thread.is_alive()


def test_plain_create_fails_while_udev_rereads(zfs, disks, pool_name):
    """The reproduction: without the lock, a re-read lands inside zpool create and fails it."""
    layout = parse_layout("mirror:2")
    argv = zpool_create_argv(pool_name, layout, disks[:2])
    outcomes = []
    for _ in range(ROUNDS):
        zfs.settle()
        with RereadingUdev(disks[:2]) as udev:
            p = subprocess.run(argv, capture_output=True, text=True, timeout=300)
        outcomes.append((p.returncode, p.stderr.strip(), dict(udev.counts)))
        if zfs.pool_exists(pool_name):
            zfs.destroy_pool(pool_name)
        if p.returncode != 0:
            # a create the re-reads broke half-way can leave the labels of a pool that was never
            # imported ("potentially active"), which the next create would refuse: zfslab's wipe
            wipe_devices(Runner(), disks[:2])
            break
    print(outcomes)
    assert outcomes[-1][0] != 0, f"zpool create passed {ROUNDS} times while udev re-read the disks: {outcomes}"
    assert outcomes[-1][2].get("re-read", 0) > 0


class StartsUdevWithZpool(Runner):
    """The real runner, which starts the stand-in when zpool create starts: after zfslab has taken
    its locks and udev has settled, as udevd's re-read follows zpool's own writes."""

    def __init__(self, udev: RereadingUdev) -> None:
        super().__init__()
        self.udev = udev

    def run(self, argv, **kw):
        if tuple(argv[:2]) == ("zpool", "create") and not self.udev.thread.is_alive():
            self.udev.__enter__()
        return super().run(argv, **kw)


def test_create_pool_holds_udev_off(zfs, disks, pool_name):
    """The fix: zfslab's create holds the disks' shared lock, udev's re-reads fail, the pool is made."""
    layout = parse_layout("mirror:2")
    for _ in range(ROUNDS):
        udev = RereadingUdev(disks[:2])
        notes: list[str] = []
        try:
            ZfsCli(StartsUdevWithZpool(udev), log=notes.append).create_pool(pool_name, layout, disks[:2])
        except CommandFailed as e:   # what the driver said it did, and what udev's stand-in did
            raise AssertionError(f"{e}\nthe driver's log: {notes}\nthe stand-in: {dict(udev.counts)}") from e
        finally:
            udev.__exit__()
        assert zfs.pool(pool_name).health == "ONLINE"
        assert udev.counts["locked out"] > 0 and udev.counts["re-read"] == 0, (udev.counts, notes)
        zfs.destroy_pool(pool_name)


def _open_fds_on(paths: list[str]) -> list[str]:
    fds = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") in paths:
                fds.append(fd)
        except OSError:
            continue
    return fds


def test_lock_is_shared_and_released(disks):
    """Two holders at once (udev's workers take shared locks too), an exclusive one kept out; the
    disks are closed, and so unlocked, when the block ends."""
    with held_against_rescan(disks[:2]) as locked, held_against_rescan(disks[:2]):
        assert locked == sorted({whole_disk(d) for d in disks[:2]}) and len(locked) == 2
        assert len(_open_fds_on(locked)) == 4
        fd = os.open(locked[0], os.O_RDONLY | os.O_NONBLOCK)
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(fd)
    assert _open_fds_on(locked) == []
