"""The shared lock that keeps udev from re-reading partition tables (system/udev_lock.py): its
waiting and refusal, on regular files (flock behaves the same on any open file); the real disks
and udev are in tests/e2e/inside/test_create_race.py."""

from __future__ import annotations

import fcntl
import os

import pytest

from zfslab.system.udev_lock import DiskLocked, _lock_shared, held_against_rescan, whole_disk


class Clock:
    """Virtual time: each sleep advances it, so a bounded wait ends without waiting."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps = 0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps += 1
        self.now += seconds


def test_files_are_not_disks(tmp_path):
    f = tmp_path / "vdev0"
    f.write_bytes(b"")
    assert whole_disk(str(f)) is None
    assert whole_disk(str(tmp_path / "missing")) is None
    with held_against_rescan([str(f), str(tmp_path / "missing")]) as locked:
        assert locked == []


def test_shared_lock_waits_out_a_short_exclusive_one_and_refuses_a_long_one(tmp_path):
    f = tmp_path / "disk"
    f.write_bytes(b"")
    holder = os.open(f, os.O_RDONLY)
    fcntl.flock(holder, fcntl.LOCK_EX)  # a partitioning tool, or udev mid-re-read
    fd = os.open(f, os.O_RDONLY)
    clock = Clock()
    try:
        with pytest.raises(DiskLocked) as e:
            _lock_shared(fd, "/dev/sdz", 2.0, clock, clock.sleep)
        assert "/dev/sdz is locked by another program" in str(e.value) and "2 s" in str(e.value)
        assert e.value.exit_code == 10 and clock.now >= 2.0
        fcntl.flock(holder, fcntl.LOCK_UN)  # released: the next try takes it at once
        clock = Clock()
        _lock_shared(fd, "/dev/sdz", 2.0, clock, clock.sleep)
        assert clock.sleeps == 0
        other = os.open(f, os.O_RDONLY)
        try:  # shared: a second holder (udev's workers) is not kept out, an exclusive one is
            fcntl.flock(other, fcntl.LOCK_SH | fcntl.LOCK_NB)
            with pytest.raises(BlockingIOError):
                fcntl.flock(holder, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(other)
    finally:
        os.close(fd)
        os.close(holder)
