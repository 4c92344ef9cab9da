"""The fuzz campaign's own machinery (tests/cli_fuzz.py): its before-and-after snapshot of a run's
folder hashes a sparse file of terabytes by its data, never reading its holes."""

import os
import signal
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
from cli_fuzz import snapshot  # noqa: E402


@pytest.fixture
def cpu_guard():
    """Fail (not hang) what spends more than 5 s of CPU: reading 8 TiB of holes would take hours."""
    def over(*_):
        raise AssertionError("more than 5 s of CPU")
    old = signal.signal(signal.SIGPROF, over)
    signal.setitimer(signal.ITIMER_PROF, 5.0)
    yield
    signal.setitimer(signal.ITIMER_PROF, 0)
    signal.signal(signal.SIGPROF, old)


def _sparse(path, size, writes=()):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.ftruncate(fd, size)
        for offset, data in writes:
            os.pwrite(fd, data, offset)
    finally:
        os.close(fd)
    if os.stat(path).st_blocks * 512 >= 1 << 30:
        pytest.skip("this file system keeps no holes")


def test_snapshot_hashes_an_8_tib_sparse_file_by_its_data_never_its_holes(tmp_path, cpu_guard):
    big = tmp_path / "big.img"
    try:
        _sparse(big, 8 << 40, [(0, b"head"), (5 << 40, b"middle" * 1000)])
    except OSError:
        pytest.skip("this file system takes no 8 TiB file")
    first = snapshot(str(tmp_path))
    assert snapshot(str(tmp_path)) == first
    fd = os.open(big, os.O_WRONLY)
    os.pwrite(fd, b"M", 5 << 40)          # one byte of its data changed
    os.close(fd)
    second = snapshot(str(tmp_path))
    assert second != first
    os.truncate(big, (8 << 40) + 1)         # one byte more of hole
    assert snapshot(str(tmp_path)) != second


def test_snapshot_of_a_plain_file_still_sees_every_byte(tmp_path):
    f = tmp_path / "x"
    f.write_bytes(b"a" * 300_000)
    before = snapshot(str(tmp_path))
    f.write_bytes(b"a" * 299_999 + b"b")
    assert snapshot(str(tmp_path)) != before
