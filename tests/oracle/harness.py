"""The libzpool harness (tests/oracle/zspace.c): what it needs and how it is built, shared by the
oracle tests and benchmarks/write_cpu_cost.py."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

SOURCE = Path(__file__).parent / "zspace.c"
INCLUDES = ("/usr/include/libspl", "/usr/include/libzfs")


def missing() -> str | None:
    """Why the harness cannot be built here, or None."""
    if shutil.which("gcc") is None:
        return "gcc is not installed"
    if not os.path.exists("/usr/include/libzfs/sys/spa.h"):
        return "libzfslinux-dev is not installed (Debian contrib)"
    return None


def build(out: Path) -> str | None:
    """Compile the harness to `out`; the compiler's error tail, or None when it built."""
    argv = ["gcc", "-O1", "-w", "-D_GNU_SOURCE", *(f"-I{i}" for i in INCLUDES), "-o", str(out),
            str(SOURCE), "-lzpool", "-lnvpair"]
    p = subprocess.run(argv, capture_output=True, text=True)
    return None if p.returncode == 0 else p.stderr[-500:]
