"""OpenZFS's own lz4 code, where this machine has it: `lz4_compress_zfs()` in libzpool (Debian's
and Ubuntu's libzpool4linux/libzpool5linux, OpenZFS 2.0 to 2.2, which zdb and zfsutils-linux bring).

The kernel module compresses with its own copy of an old LZ4 (module/zfs/lz4.c, lz4_zfs.c), which
gives other compressed lengths than the `lz4` package's liblz4 1.10: in the 2.4.4 guest, pricing
the corpus with the package came out about 2 % high on lz4 datasets, with libzpool's code within
0.1 % (docs/footprint.md#measured). The code has not changed since, so 2.1's library prices what
2.4's module writes. From 2.3, libzpool only exports the abd interface (zfs_lz4_compress), which
this does not use; footprint then falls back to the package, and says so.
"""

from __future__ import annotations

import ctypes
import os
from typing import Callable

LIBRARIES = ("libzpool.so.5", "libzpool.so.4")  # OpenZFS 2.1-2.2, 2.0


def zfs_lz4() -> Callable[[bytes], int] | None:
    """A function giving lz4_compress_zfs's length for one record (its 4-byte header included),
    or None where no libzpool with that function loads (or ZFSLAB_LZ4=package asks for the package)."""
    if os.environ.get("ZFSLAB_LZ4") == "package":
        return None
    for name in LIBRARIES:
        try:
            lib = ctypes.CDLL(name)
        except OSError:
            continue
        compress = getattr(lib, "lz4_compress_zfs", None)
        init = getattr(lib, "lz4_init", None)
        if compress is None or init is None:
            continue
        init()  # the kmem cache of its hash tables
        compress.restype = ctypes.c_size_t
        compress.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_int]
        buffers: dict[int, ctypes.Array] = {}

        def length(data: bytes) -> int:
            bound = 2 * len(data) + 64  # above LZ4_compressBound: it never gives up on room
            if bound not in buffers:
                buffers[bound] = ctypes.create_string_buffer(bound)
            return int(compress(data, buffers[bound], len(data), bound, 0))
        return length
    return None
