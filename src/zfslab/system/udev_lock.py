"""Keep udev from re-reading a disk's partition table while zpool uses it.

`zpool create` on a whole disk writes a GPT through a file it opened for writing, and closes it.
udev watches every disk for exactly that close (inotify IN_CLOSE_WRITE) and may answer it by
re-reading the partition table itself (systemd-udevd's `synthesize_change()`): the kernel drops
the disk's partitions and adds them again, and udev deletes and re-creates their links. If the
kernel module opens `-part1` meanwhile, the link is missing, and OpenZFS 2.3.9 and 2.4.4 do not
wait for it: the create fails "one or more devices is currently unavailable"
(docs/safety.md#a-create-right-after-a-destroy, which also has the other way this happens and
what zfslab does about it).

udev re-reads a partition table only when it can take a BSD lock (`flock(LOCK_EX|LOCK_NB)`) on
the whole disk; a program that holds a shared lock on it keeps udev from re-reading, and udev then
only replays change events, which remove nothing (systemd's documented "Locking Block Device
Access" protocol, systemd.io/BLOCK_DEVICE_LOCKING). A shared lock does not stop udev's own event
handling (its workers take shared locks too), nor zpool's own re-read: the kernel never looks at
BSD locks. So zfslab holds one on every whole disk for the length of a command that relabels it.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager

from zfslab.errors import ZfslabError

# udev holds its exclusive lock for one re-read (milliseconds); a lock held longer belongs to a
# program that is partitioning or formatting the disk, and zfslab must not go on
LOCK_WAIT_S = 30.0
POLL_S = 0.01


class DiskLocked(ZfslabError):
    """{} is locked by another program (a BSD lock on the disk, held for {:g} s: it is being partitioned or formatted); wait until it is done, then run again"""

    exit_code = 10


def whole_disk(path: str, sys_block: str = "/sys/class/block") -> str | None:
    """The whole disk a block device belongs to (itself for a disk, the parent for a partition), as
    /dev/NAME; None for anything that is not a block device (a file vdev)."""
    real = os.path.realpath(path)
    try:
        if not stat.S_ISBLK(os.stat(real).st_mode):
            return None
    except OSError:
        return None
    name = os.path.basename(real)
    node = os.path.join(sys_block, name)
    if os.path.exists(os.path.join(node, "partition")):
        name = os.path.basename(os.path.dirname(os.path.realpath(node)))
    return f"/dev/{name}"


def _lock_shared(fd: int, disk: str, wait_s: float, clock: Callable[[], float],
                 sleep: Callable[[float], None]) -> None:
    deadline = clock() + wait_s
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            return
        except OSError as e:
            if e.errno not in (errno.EWOULDBLOCK, errno.EAGAIN):
                raise
        if clock() >= deadline:  # someone holds LOCK_EX for longer than a re-read takes
            raise DiskLocked(disk, wait_s)
        sleep(POLL_S)


@contextmanager
def held_against_rescan(devices: Iterable[str], *, wait_s: float = LOCK_WAIT_S,
                        clock: Callable[[], float] = time.monotonic,
                        sleep: Callable[[float], None] = time.sleep) -> Iterator[list[str]]:
    """Hold a shared BSD lock on the whole disk of every block device in `devices` (files are
    skipped) until the block ends; yields the disks locked. Opening read-only writes nothing and
    its close wakes no udev event (udev watches closes after writing only)."""
    disks = sorted({d for d in (whole_disk(p) for p in devices) if d})
    fds: list[int] = []
    try:
        for disk in disks:
            fd = os.open(disk, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
            fds.append(fd)
            _lock_shared(fd, disk, wait_s, clock, sleep)
        yield disks
    finally:
        for fd in fds:
            os.close(fd)  # closing drops the lock
