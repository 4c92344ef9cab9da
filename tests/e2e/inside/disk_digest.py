"""The whole contents of a disk (or a part of it) as one digest, in seconds rather than minutes.

The in-guest tests prove that zfslab left a disk unchanged by comparing a digest taken before
with one taken after. sha256 of a whole 2 GiB test disk took minutes of emulated CPU under TCG
(four of them made test_safety.py the longest file of the CI's critical boot); comparing a chunk
with zeros costs a memcmp. The test disks are sparse: only the few MiB a test wrote (a filesystem,
a GPT, a pool's labels and files) are not zero. So each 4 MiB chunk that reads as zeros is
recorded as "zeros, n bytes", and only the others are hashed. The encoding is prefix-free (a tag
and the length before each chunk), so two digests are equal exactly when the bytes are (up to
sha256 itself): nothing is skipped.

A block device is read with O_DIRECT: ZFS writes beneath the page cache, so a buffered read after
a test could still show the cached bytes from before it and call a changed disk unchanged.
"""

from __future__ import annotations

import errno
import hashlib
import mmap
import os
import stat

CHUNK_BYTES = 4 << 20
_ZERO = bytes(CHUNK_BYTES)


def _open(path: str) -> int:
    if stat.S_ISBLK(os.stat(path).st_mode):
        return os.open(path, os.O_RDONLY | os.O_DIRECT)
    try:
        return os.open(path, os.O_RDONLY | os.O_DIRECT)
    except OSError as e:  # a file on a filesystem without O_DIRECT: its page cache is coherent anyway
        if e.errno != errno.EINVAL:
            raise
        return os.open(path, os.O_RDONLY)


def disk_digest(path: str, start: int = 0, length: int | None = None) -> str:
    """sha256 of the bytes [start, start + length) of `path` (to its end when length is None),
    zero chunks compared rather than hashed. start and length: multiples of 4 KiB (O_DIRECT)."""
    if start % 4096 or (length is not None and length % 4096):
        raise ValueError(f"start {start} and length {length} must be multiples of 4 KiB")
    fd = _open(path)
    buf = mmap.mmap(-1, CHUNK_BYTES)  # page-aligned, as O_DIRECT needs
    h = hashlib.sha256()
    try:
        end = os.lseek(fd, 0, os.SEEK_END) if length is None else start + length
        offset = start
        while offset < end:
            n = min(os.preadv(fd, [buf], offset), end - offset)  # a whole chunk read, the part asked for kept
            if n <= 0:
                break
            data = buf[:n]  # a copy: no view left open on the mmap when it closes
            if data == _ZERO[:n]:
                h.update(b"Z" + n.to_bytes(8, "little"))
            else:
                h.update(b"D" + n.to_bytes(8, "little"))
                h.update(data)
            offset += n
        if offset != end:
            raise OSError(errno.EIO, f"{path}: read ended at byte {offset:,}, not {end:,}")
    finally:
        os.close(fd)
        buf.close()
    return h.hexdigest()
