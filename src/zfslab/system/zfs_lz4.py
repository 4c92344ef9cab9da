"""OpenZFS's own lz4 code, where this machine has it: libzpool, which zdb and zfsutils-linux bring
(Debian's and Ubuntu's libzpool4linux to libzpool7linux, OpenZFS 2.0 to 2.4).

The kernel module compresses with its own copy of an old LZ4 (r85 of 2012: module/zfs/lz4_zfs.c),
which gives other compressed lengths than the `lz4` package's liblz4 1.10: in the 2.4.4 guest,
pricing the corpus with the package came out about 2 % high on lz4 datasets, with libzpool's code
within 0.1 % (docs/footprint.md#measured). libzpool exports that code two ways:

- OpenZFS 2.0-2.2: `lz4_compress_zfs(src, dst, s_len, d_len, n)` on plain buffers;
- OpenZFS 2.3 and later: only `zfs_lz4_compress(abd_t *src, abd_t *dst, s_len, d_len, n)`, on ABDs
  (ZFS_COMPRESS_WRAP_DECL in include/sys/zio_compress.h). A linear ABD over our own buffer
  (`abd_get_from_buf`, after `abd_init`) is lent to it as it is, so the call compresses our bytes
  in place. On a 9 MB corpus, 69 records of 128 KiB, the lengths 2.1.11's `lz4_compress_zfs` and
  2.3.9's and 2.4.4's `zfs_lz4_compress` give are identical, record by record
  (docs/footprint.md#lz4-from-libzpool).

Each returns the record's compressed length with the 4-byte header the module stores before it.
Where no libzpool loads, footprint falls back to the package, and says so.
"""

from __future__ import annotations

import ctypes
import os
from typing import Callable

# newest first; each name is one OpenZFS series' soname (7: 2.4, 6: 2.3, 5: 2.1-2.2, 4: 2.0)
LIBRARIES = ("libzpool.so.7", "libzpool.so.6", "libzpool.so.5", "libzpool.so.4")


def zfs_lz4() -> Callable[[bytes], int] | None:
    """A function giving OpenZFS's lz4 length for one record (its 4-byte header included), or None
    where no libzpool with either interface loads (or ZFSLAB_LZ4=package asks for the package)."""
    if os.environ.get("ZFSLAB_LZ4") == "package":
        return None
    for name in LIBRARIES:
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        found = _buffers(lib) or _abds(lib)
        if found is not None:
            return found
    return None


class _Out:
    """Output buffers by size, made once: above LZ4_compressBound, so the code never gives up on room."""

    def __init__(self) -> None:
        self.buffers: dict[int, ctypes.Array] = {}

    def for_input(self, size: int) -> tuple[ctypes.Array, int]:
        room = 2 * size + 64
        if room not in self.buffers:
            self.buffers[room] = ctypes.create_string_buffer(room)
        return self.buffers[room], room


def _buffers(lib: ctypes.CDLL) -> Callable[[bytes], int] | None:
    """OpenZFS 2.0-2.2: lz4_compress_zfs on plain buffers."""
    compress, init = getattr(lib, "lz4_compress_zfs", None), getattr(lib, "lz4_init", None)
    if compress is None or init is None:
        return None
    init()  # the kmem cache of its hash tables
    compress.restype = ctypes.c_size_t
    compress.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_int]
    out = _Out()

    def length(data: bytes) -> int:
        buffer, room = out.for_input(len(data))
        return int(compress(data, buffer, len(data), room, 0))
    return length


def _abds(lib: ctypes.CDLL) -> Callable[[bytes], int] | None:
    """OpenZFS 2.3+: zfs_lz4_compress on linear ABDs that wrap our buffers."""
    names = ("zfs_lz4_compress", "lz4_init", "abd_init", "abd_get_from_buf", "abd_free")
    fns = [getattr(lib, n, None) for n in names]
    if any(f is None for f in fns):
        return None
    compress, lz4_init, abd_init, from_buf, abd_free = fns
    abd_init()  # the kmem cache of ABD headers
    lz4_init()
    from_buf.restype = ctypes.c_void_p
    from_buf.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    abd_free.restype = None
    abd_free.argtypes = [ctypes.c_void_p]
    compress.restype = ctypes.c_size_t
    compress.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_int]
    out = _Out()

    def length(data: bytes) -> int:
        buffer, room = out.for_input(len(data))
        src_buf = ctypes.create_string_buffer(data, len(data))  # our copy: the ABD never sees Python's bytes
        src, dst = from_buf(src_buf, len(data)), from_buf(buffer, room)
        try:
            return int(compress(src, dst, len(data), room, 0))
        finally:
            abd_free(src)
            abd_free(dst)
    return length
