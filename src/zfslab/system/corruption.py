"""The drill's fault primitive: overwrite members of a vdev behind ZFS's back.

Borg's corrupt() in its check tests flips bytes so the checker has something to find; here the
windows lie at the same offsets on every member, so with more members than the parity the blocks
there lose too many columns to be rebuilt, and ZFS must say which files it lost.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

MIB = 1 << 20
CORRUPT_STRIDE = 8 * MIB  # one window in every 8 MiB, wherever the allocator put the data
FRONT_BYTES = 4 * MIB  # the front labels and boot area: never written
BACK_BYTES = 1 * MIB  # the back labels: never written


def corrupt_window(corrupt_mb: int) -> int:
    """Bytes overwritten in every 8 MiB: a quarter of --corrupt-mb, 64 KiB to 1 MiB."""
    return max(min(corrupt_mb * MIB, 4 * MIB) // 4, 64 << 10)


def data_region(device: str) -> tuple[str, int, int]:
    """Where ZFS keeps data on this device: (path, first byte, end): past the front labels and
    boot area, before the back labels; inside partition 1 on a whole disk."""
    real = os.path.realpath(device)
    path = device
    if real.startswith("/dev/"):
        part = real + ("p1" if real[-1].isdigit() else "1")
        path = part if os.path.exists(part) else real
    with open(path, "rb") as f:
        size = f.seek(0, os.SEEK_END)
    return path, FRONT_BYTES, size - BACK_BYTES


def overwrite(devices: Sequence[str], window: int, noise: bytes | None = None) -> int:
    """Write `noise` (random bytes, `window` of them) every 8 MiB across each device's data region,
    at the same offsets on each, synced; the bytes written."""
    noise = os.urandom(window) if noise is None else noise
    written = 0
    for device in devices:
        path, start, end = data_region(device)
        with open(path, "r+b", buffering=0) as f:
            for offset in range(start, end - window, CORRUPT_STRIDE):
                f.seek(offset)
                written += f.write(noise)
            os.fsync(f.fileno())
    return written
