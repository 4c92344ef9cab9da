"""Builds the libzpool harness (real OpenZFS code in userspace) once per test session.

Skips with a reason when the headers are missing (Debian contrib: libzfslinux-dev), unless
ZFSLAB_TEST_REQUIRE_ORACLE=1, as in CI, where a skip is a failure.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.oracle import harness
from zfslab.model.layouts import Layout, zpool_vdev_args

# tmpfs takes sparse files above 16 TiB, which ext4 refuses (docs/test-guest.md#libzpool-oracle)
SPARSE_DIR = "/dev/shm" if os.path.isdir("/dev/shm") else None


@dataclass(frozen=True)
class OracleResult:
    size_bytes: int
    used_bytes: int
    avail_bytes: int
    slop_bytes: int
    embedded_log_bytes: int
    alloc_bytes: int  # zpool list ALLOCATED: raw bytes, parity and padding included
    raw: str

    @property
    def usable_bytes(self) -> int:
        return self.used_bytes + self.avail_bytes


def _skip_or_fail(reason: str) -> None:
    if os.environ.get("ZFSLAB_TEST_REQUIRE_ORACLE") == "1":
        pytest.fail(f"ZFSLAB_TEST_REQUIRE_ORACLE=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def zspace_binary(tmp_path_factory) -> Path:
    reason = harness.missing()
    if reason:
        _skip_or_fail(reason)
    out = tmp_path_factory.mktemp("oracle") / "zspace"
    error = harness.build(out)
    if error:
        _skip_or_fail(f"the harness does not build: {error}")
    return out


@pytest.fixture(scope="session")
def zspace(zspace_binary):
    """Run the harness on sparse files: (layout, vdev_bytes, ashift[, write_mib]) -> OracleResult.

    write_mib > 0 first writes that many MiB of incompressible 128 KiB records."""

    def run(layout: Layout, vdev_bytes: int, ashift: int, write_mib: int = 0) -> OracleResult:
        with tempfile.TemporaryDirectory(dir=SPARSE_DIR, prefix="zfslab-oracle-") as d:
            files = []
            for i in range(layout.disks):
                path = os.path.join(d, f"v{i}")
                with open(path, "wb") as f:
                    f.truncate(vdev_bytes)
                files.append(path)
            argv = [str(zspace_binary), "-a", str(ashift), "-w", str(write_mib), f"zo{os.getpid()}",
                    *zpool_vdev_args(layout, files)]
            p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, f"zspace failed for {layout}: {p.stderr[-1000:]}"
        kv = dict(word.split("=", 1) for word in p.stdout.split() if "=" in word)
        return OracleResult(int(kv["SIZE"]), int(kv["USED"]), int(kv["AVAIL"]), int(kv["slop"]),
                            int(kv["embedded_log_space"]), int(kv["ALLOC"]), p.stdout)

    return run
