"""A sandbox: sparse files standing for disks, for trying zfslab out (results not representative).

The files are checked (`sandbox_paths`, nothing created) before any plan, and made
(`make_sandbox`) only once the run goes ahead; a wipe truncates them (system/pool_safety.py).
Errors name the settings in the library's words (ParamError: sandbox, sandbox_size); the command
layer words them as its flags.
"""

from __future__ import annotations

import os

from zfslab.errors import ParamError
from zfslab.model.units import parse_size

# A sandbox file is sparse: its size is bounded by what the file system allows, not by free space
MAX_SANDBOX_BYTES = 16 << 40
MAX_SANDBOX_FILES = 65  # a sandbox is for trying zfslab out: 64 vdevs and a spare, as bench allows


def sandbox_paths(directory: str, count: int, size_text: str) -> tuple[list[str], int]:
    """The sandbox's file vdevs and their size, checked; nothing is created (see make_sandbox)."""
    size = parse_size(size_text)
    if not 64 << 20 <= size <= MAX_SANDBOX_BYTES:
        raise ParamError("sandbox_size", size_text, "give 64MiB to 16TiB (ZFS needs vdevs of at least 64 MiB)")
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise ParamError("sandbox", directory, "not a directory; give a directory for the file vdevs")
    if count > MAX_SANDBOX_FILES:
        raise ParamError("sandbox", None, f"the layout needs {count} file vdevs; a sandbox holds at most "
                         f"{MAX_SANDBOX_FILES}: choose a layout of at most {MAX_SANDBOX_FILES - 1} disks, or real "
                         "`disk_devices`")
    return [os.path.join(os.path.abspath(directory), f"vdev{i}") for i in range(count)], size


def make_sandbox(paths: list[str], size: int) -> None:
    """Create the sparse files that do not exist yet (a file already there is an earlier run's)."""
    try:
        os.makedirs(os.path.dirname(paths[0]), exist_ok=True)
        for path in paths:
            if not os.path.exists(path):
                with open(path, "wb") as f:
                    f.truncate(size)
    except OSError as e:
        raise ParamError("sandbox", os.path.dirname(paths[0]), f"cannot create {size:,}-byte sparse files there "
                         f"({e.strerror}); choose another directory or a smaller `sandbox_size`") from None
