"""RAID-Z expansion against the real OpenZFS code in userspace (libzpool 2.4.4 and 2.3.9 in the trixie
chroot): tests/oracle/zexpand.c attaches one file at a time as `zpool attach` does, waits for the reflow
and prints zpool/zfs list after each step; `model/expansion.py` must give the same SIZE, dspace, slop
and USED+AVAIL to the byte, and ALLOC/USED of written records within the metadata's share. 2.1 has no
expansion. The kernel-module judge is tests/e2e/inside/test_expansion.py.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.oracle import chroot, harness
from tests.oracle.conftest import SPARSE_DIR, _skip_or_fail
from zfslab.model.expansion import expand
from zfslab.model.layout_grammar import parse_layout

pytestmark = pytest.mark.oracle

SOURCE = Path(__file__).parent / "zexpand.c"
MIB = 1 << 20
GIB = 1 << 30
RECORD = 128 * 1024
METADATA_FRACTION, METADATA_BYTES = 0.01, 4 * MIB  # indirect blocks, dnodes, MOS: docs/capacity.md#allocation


@pytest.fixture(scope="module", params=("trixie-backports", "trixie"))
def zexpand(request, oracle_chroot, shared_tmp):
    """run(layout, vdev_bytes, added, ashift, write_mib, write_after_mib) -> [{step: {key: int}}]."""
    target = harness.chroot_target(request.param, oracle_chroot, chroot.versions(oracle_chroot)[request.param])
    source, binary = shared_tmp / "zexpand.c", shared_tmp / f"zexpand-{request.param}"
    shutil.copyfile(SOURCE, source)
    shutil.copyfile(harness.HEADER, shared_tmp / harness.HEADER.name)
    p = subprocess.run(harness.wrap(target, harness.compile_argv(target, str(source), str(binary))),
                       capture_output=True, text=True)
    if p.returncode != 0:
        _skip_or_fail(f"zexpand does not build against OpenZFS {target.version}: {p.stderr[-500:]}")

    def run(layout: str, vdev_bytes: int, added: int, ashift: int = 12, write_mib: int = 0,
            write_after_mib: int = 0, fill: bool = False) -> dict[str, dict[str, int]]:
        group = parse_layout(layout).groups[0]
        with tempfile.TemporaryDirectory(dir=SPARSE_DIR, prefix="zfslab-zexpand-") as d:
            files = []
            for i in range(group.width + added):
                files.append(os.path.join(d, f"v{i}"))
                with open(files[-1], "wb") as f:
                    f.truncate(vdev_bytes)
            argv = [str(binary), "-a", str(ashift), "-w", str(write_mib), "-W", str(write_after_mib),
                    *(["-F"] if fill else []), f"zx{os.getpid()}", f"raidz{group.parity}", *files[:group.width], "+", *files[group.width:]]
            out = subprocess.run(harness.wrap(target, argv), capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, f"zexpand {target.version}: {out.stderr[-1000:]}"
        steps = {}
        for line in out.stdout.splitlines():
            if line.startswith("FILL "):
                steps["fill"] = {k: int(v) for k, v in (w.split("=", 1) for w in line.split()[1:])}
            if line.startswith("STEP="):
                kv = dict(w.split("=", 1) for w in line.split())
                name = kv.pop("STEP")
                steps[name] = {k: int(v) for k, v in kv.items()}
        return steps

    run.version = target.version
    return run


@pytest.mark.parametrize("layout,vdev_bytes,added,ashift", [
    ("raidz1:3", 256 * MIB, 2, 12),
    ("raidz2:6", 256 * MIB, 2, 12),
    ("raidz3:7", 512 * MIB, 1, 12),
    ("raidz2:4", 1 * GIB, 3, 9),
    ("raidz1:3", 10 * GIB + 256 * MIB, 1, 12),  # passes 64 metaslabs: an embedded log from the new ones
    ("raidz2:8", 4 * 10**12, 2, 12),  # 16 GiB metaslabs, capped slop
])
def test_empty_pool_after_each_attach_to_the_byte(zexpand, layout, vdev_bytes, added, ashift):
    real = zexpand(layout, vdev_bytes, added, ashift)
    model = expand(parse_layout(layout), vdev_bytes, added, release=zexpand.version, ashift=ashift)
    names = ["created"] + [f"+{i}" for i in range(1, added + 1)]
    assert list(real) == names
    for name, step in zip(names, model.steps):
        r = real[name]
        got = (r["SIZE"], r["dspace"], r["slop"], r["USED"] + r["AVAIL"])
        want = (step.size_bytes, step.dspace_bytes, step.slop_bytes, step.usable_bytes)
        assert got == want, f"OpenZFS {zexpand.version} {layout} {name}: {got} != zfslab {want}"


def test_written_records_keep_their_width_and_new_ones_are_charged_less(zexpand):
    """300 MiB before two attaches, 200 MiB after: the old records stay 48 sectors (ALLOC does not
    move), the new ones take 45 and are charged 360 x 341 bytes each, at the 6-wide ratio. The
    differences carry the pool's own metadata churn both ways (a few hundred KiB), hence the
    two-sided margin; 48 sectors a record would be 19 MiB more ALLOC and 13 MiB more USED."""
    layout = parse_layout("raidz2:6")
    real = zexpand("raidz2:6", 256 * MIB, 2, write_mib=300, write_after_mib=200)
    model = expand(layout, 256 * MIB, 2, release=zexpand.version, written_bytes=300 * MIB)
    for name, step in zip(("created", "+1", "+2"), model.steps):
        r = real[name]
        assert r["SIZE"] == step.size_bytes and r["USED"] + r["AVAIL"] == step.usable_bytes
        for key, want in (("ALLOC", step.alloc_bytes), ("USED", step.used_bytes)):
            assert want <= r[key] <= want * (1 + METADATA_FRACTION) + METADATA_BYTES, (name, key, r[key], want)
    records = 200 * MIB // RECORD
    new_alloc = real["written-after"]["ALLOC"] - real["+2"]["ALLOC"]
    new_used = real["written-after"]["USED"] - real["+2"]["USED"]
    for got, want in ((new_alloc, records * 45 * 4096), (new_used, records * 360 * 341)):
        assert abs(got - want) <= want * METADATA_FRACTION / 2 + 2 * MIB, (got, want)
    assert new_used < records * RECORD  # a new file's USED is below its size: the old ratio


def test_what_fits_after_the_expansion_is_fits_not_avail(zexpand):
    """After two attaches to a raidz2:6 holding 300 MiB, write 128K records until ENOSPC: more fits
    than AVAIL says (new records are charged at the 6-wide ratio), and as many as `fits` says, less
    the metadata the new file needs."""
    real = zexpand("raidz2:6", 256 * MIB, 2, write_mib=300, fill=True)
    step = expand(parse_layout("raidz2:6"), 256 * MIB, 2, release=zexpand.version, written_bytes=300 * MIB).steps[-1]
    written = real["fill"]["records"] * RECORD
    assert written > real["+2"]["AVAIL"] + 32 * MIB  # zfs list undercounts by about 7 % here
    assert written <= step.true_free_bytes <= written * (1 + METADATA_FRACTION) + METADATA_BYTES, \
        (written, step.true_free_bytes)
    assert real["full"]["AVAIL"] == 0
