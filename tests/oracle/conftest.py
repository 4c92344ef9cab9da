"""Builds the libzpool harness (real OpenZFS code in userspace) once per test session and OpenZFS
version: the host's 2.1 (Debian 12), and 2.4 and 2.3 in the trixie chroot (tests/oracle/chroot.py).

`zspace` is parametrized by where the library comes from (harness.TARGETS), so every oracle test
runs against each version. A version that cannot run skips with a reason, unless
ZFSLAB_TEST_REQUIRE_ORACLE=1, as in CI, where a skip is a failure. As root, a missing chroot is
built first (about 80 s), as the e2e fixture builds a missing guest image.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.oracle import chroot, harness
from zfslab.model.layouts import Layout
from zfslab.model.zpool_syntax import zpool_vdev_args

# tmpfs takes sparse files above 16 TiB, which ext4 refuses (docs/test-guest.md#libzpool-oracle)
SPARSE_DIR = harness.SHARED_DIR if os.path.isdir(harness.SHARED_DIR) else None


@dataclass(frozen=True)
class OracleResult:
    size_bytes: int
    used_bytes: int
    avail_bytes: int
    slop_bytes: int
    embedded_log_bytes: int
    alloc_bytes: int  # zpool list ALLOCATED: raw bytes, parity and padding included
    raw: str
    class_dalloc_bytes: int = 0  # deflated bytes on the special and dedup vdevs (2.3+; 0 where not printed)
    kv: tuple[tuple[str, str], ...] = ()  # every key=value the harness printed

    def value(self, key: str) -> int:
        return int(dict(self.kv)[key])

    @property
    def usable_bytes(self) -> int:
        return self.used_bytes + self.avail_bytes


@dataclass(frozen=True)
class Oracle:
    """The harness built against one libzpool: oracle(layout, vdev_bytes, ashift[, write_mib]).

    write_mib > 0 first writes that many MiB of incompressible records of record_bytes (128 KiB by
    default; a block size set as a zvol's volblocksize is)."""

    target: harness.Target
    binary: Path

    @property
    def version(self) -> str:
        """The OpenZFS release it runs, e.g. 2.4.4."""
        return self.target.version

    def __call__(self, layout: Layout, vdev_bytes: int | Mapping[int, int], ashift: int,
                 write_mib: int = 0, class_vdev_bytes: Mapping[int, int] | None = None,
                 record_bytes: int = 128 * 1024) -> OracleResult:
        """vdev_bytes: each file's size; for a sized layout (disks of several sizes), a map from
        each size written in it to the file size (capacity.osizes). class_vdev_bytes: the same for
        special, dedup, log and cache disks that name a size (default: the size as written)."""
        with tempfile.TemporaryDirectory(dir=SPARSE_DIR, prefix="zfslab-oracle-") as d:
            files = []
            for i, size in enumerate(_file_sizes(layout, vdev_bytes, class_vdev_bytes)):
                path = os.path.join(d, f"v{i}")
                with open(path, "wb") as f:
                    f.truncate(size)
                files.append(path)
            argv = [str(self.binary), "-a", str(ashift), "-w", str(write_mib), "-b", str(record_bytes),
                    f"zo{os.getpid()}",
                    *zpool_vdev_args(layout, files)]
            p = subprocess.run(harness.wrap(self.target, argv), capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, f"zspace {self.version} failed for {layout}: {p.stderr[-1000:]}"
        kv = dict(word.split("=", 1) for word in p.stdout.split() if "=" in word)
        return OracleResult(int(kv["SIZE"]), int(kv["USED"]), int(kv["AVAIL"]), int(kv["slop"]),
                            int(kv["embedded_log_space"]), int(kv["ALLOC"]), f"OpenZFS {self.version}\n{p.stdout}",
                            int(kv.get("class_dalloc", 0)), tuple(kv.items()))


def _file_sizes(layout: Layout, vdev_bytes: int | Mapping[int, int],
                class_vdev_bytes: Mapping[int, int] | None = None) -> list[int]:
    """The size of each file, in zpool_vdev_args order: data vdevs child by child, the special, dedup
    and log vdevs, the spares, then the cache devices."""
    table = class_vdev_bytes or (vdev_bytes if isinstance(vdev_bytes, Mapping) else {})

    def one(b: int, lookup: Mapping[int, int]) -> int:
        return lookup.get(b, b) if b else vdev_bytes

    def group(g, lookup) -> list[int]:
        if not g.sizes:
            return [vdev_bytes] * g.disks
        return [one(b, lookup) for _ in range(g.count) for n, b in g.sizes for _ in range(n)]

    data = vdev_bytes if isinstance(vdev_bytes, Mapping) else {}
    sizes = [s for g in layout.groups for s in group(g, data)]
    sizes += [s for c in layout.classes for s in group(c.group, table)]
    sizes += [one(layout.spare_bytes, data)] * layout.hot_spares
    return sizes + [one(layout.cache_bytes, table)] * layout.cache_devices


def _skip_or_fail(reason: str) -> None:
    if os.environ.get("ZFSLAB_TEST_REQUIRE_ORACLE") == "1":
        pytest.fail(f"ZFSLAB_TEST_REQUIRE_ORACLE=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def oracle_chroot() -> Path:
    """The trixie chroot with OpenZFS 2.4 and 2.3; built first when missing and we are root."""
    if SPARSE_DIR is None:
        _skip_or_fail(f"the chroot oracle needs a tmpfs at {harness.SHARED_DIR} to share files with the chroot")
    if shutil.which("unshare") is None:
        _skip_or_fail("unshare (util-linux) is not installed")
    root = chroot.find_chroot()
    if root is None and os.geteuid() == 0:
        try:
            root = chroot.ensure_chroot()
        except (chroot.ChrootError, OSError, subprocess.SubprocessError) as e:
            _skip_or_fail(f"the oracle chroot for OpenZFS 2.3/2.4 cannot be built: {e}")
    if root is None:
        _skip_or_fail(f"no oracle chroot for OpenZFS 2.3/2.4 in {chroot.CACHE}; "
                      "build it as root: python3 tests/oracle/chroot.py --build")
    return root


@pytest.fixture(scope="session")
def shared_tmp() -> Path:
    """A directory under /dev/shm, which the chroot sees at the same path."""
    d = Path(tempfile.mkdtemp(dir=SPARSE_DIR, prefix="zfslab-oracle-bin-"))
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.fixture(scope="session", params=harness.TARGETS)
def zspace(request, tmp_path_factory) -> Oracle:
    """The harness for one OpenZFS version, built once per session."""
    if request.param == harness.HOST:
        target = harness.host_target()
        if isinstance(target, str):
            _skip_or_fail(target)
        out = tmp_path_factory.mktemp("oracle") / "zspace"
    else:
        root = request.getfixturevalue("oracle_chroot")
        target = harness.chroot_target(request.param, root, chroot.versions(root)[request.param])
        out = request.getfixturevalue("shared_tmp") / f"zspace-{request.param}"
    error = harness.build_target(target, out)
    if error:
        _skip_or_fail(f"the harness does not build against OpenZFS {target.version} ({target.name}): {error}")
    return Oracle(target, out)
