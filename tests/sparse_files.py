"""Sparse files for the tests and benchmarks that price holes (footprint, the fuzzer's builders)."""

from __future__ import annotations

import os


def write_sparse(path, size: int, writes=()) -> bool:
    """A new file of `size` bytes, holes but for `writes` [(offset, bytes)]; made new (O_EXCL) and
    never through a symlink (O_NOFOLLOW). Whether the file system kept the holes: False when the
    file takes all its size on disk."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.ftruncate(fd, size)
        for offset, data in writes:
            os.pwrite(fd, data, offset)
    finally:
        os.close(fd)
    return os.stat(path).st_blocks * 512 < size
