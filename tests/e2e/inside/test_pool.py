"""`zfslab pool` on a real pool (docs/pool.md): the model against reality to the byte, the
findings expected of the pools built, and nothing written (`zpool history` unchanged). Small: one
raidz2:4 plus a single disk added by mistake, raidz1:3 beside raidz1:4 of sparse files made
with every feature but lz4 left disabled (`zpool create -d`, as an old pool is), raidz1:3 with
ashift 9 on three 512e disks of the kernel's scsi_debug module (512-byte logical, 4096-byte physical
sectors, as tests/e2e/guest/capture_4k.sh makes them), and draid1:2d:6c:1s of files of two sizes
with a child dataset of recordsize 4K (tests/e2e/guest/capture_shapes.sh's shapes in one pool), all
empty, read by one zfslab run in the 2.4 boot."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.e2e.inside.disk_digest import disk_digest
from zfslab.model.layout_grammar import parse_layout

POOL = "zfslab-e2e-pool"
OLD_POOL = "zfslab-e2e-oldpool"
ASHIFT9_POOL = "zfslab-e2e-ashift9"
SHAPES_POOL = "zfslab-e2e-shapes"


def deferred_free_bytes(pool: str) -> int:
    """The bytes of the pool's deferred-free list (the MOS's sync_bplist bpobj), as zdb prints them:
    `zdb -dddd POOL 1` names the object, `zdb -dddd POOL OBJ` gives 'bytes = 136K'."""
    import re
    obj = re.search(r"sync_bplist = ([0-9]+)", sh("zdb", "-dddd", pool, "1"))
    if obj is None:
        return 0
    m = re.search(r"^\s*bytes = ([0-9.]+)([KMG]?)\s*$", sh("zdb", "-dddd", pool, obj.group(1)), re.M)
    return int(float(m.group(1)) * {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[m.group(2)]) if m else 0


LABEL_BYTES = 256 << 10  # a vdev label (vdev_label_t): two at each end of a leaf, the last two at its size
# rounded down to a label's size; each txg synced writes its uberblock into all four


def label_digests(leaf: str) -> tuple[str, str]:
    """The digests of a leaf's two front and two back labels: what any write through the pool changes.
    (Not the whole disk: autotrim may yet trim space the pool's creation freed, which is ZFS's doing.)"""
    fd = os.open(leaf, os.O_RDONLY)
    try:
        end = os.lseek(fd, 0, os.SEEK_END) // LABEL_BYTES * LABEL_BYTES
    finally:
        os.close(fd)
    return disk_digest(leaf, 0, 2 * LABEL_BYTES), disk_digest(leaf, end - 2 * LABEL_BYTES, 2 * LABEL_BYTES)


def sh(*argv: str) -> str:
    p = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, f"{argv}: {p.stderr[-2000:]}"
    return p.stdout


def zfslab_pool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "zfslab", "pool", *args], capture_output=True, text=True,
                          timeout=300)


@pytest.fixture
def oops_pool(zfs, disks):
    zfs.create_pool(POOL, parse_layout("raidz2:4+disk"), disks[0:5], ashift=12, force=True,
                    fs_props={"compression": "off", "mountpoint": "none"})
    try:
        yield POOL
    finally:
        subprocess.run(["zpool", "destroy", "-f", POOL], capture_output=True)


@pytest.fixture
def old_pool(filedir):
    files = [f"{filedir}/old{i}" for i in range(7)]
    for f in files:
        with open(f, "wb") as out:
            out.truncate(1 << 30)
    sh("zpool", "create", "-d", "-o", "feature@lz4_compress=enabled", "-o", "ashift=12", "-O", "compression=lz4",
       "-O", "mountpoint=none", OLD_POOL, "raidz1", *files[:3], "raidz1", *files[3:])
    try:
        yield OLD_POOL
    finally:
        subprocess.run(["zpool", "destroy", "-f", OLD_POOL], capture_output=True)
        for f in files:
            os.unlink(f)


@pytest.fixture
def shapes_pool(filedir):
    """draid1:2d:6c:1s of five 1 GiB files and one of 1.5 GiB (the dRAID counts each child as its
    smallest), lz4, with a child dataset of recordsize 4K: what this pool shows only a dRAID, disks
    of two sizes and zfs get -r can tell."""
    files = [f"{filedir}/shape{i}" for i in range(6)]
    for i, f in enumerate(files):
        with open(f, "wb") as out:
            out.truncate(3 << 29 if i == 0 else 1 << 30)
    sh("zpool", "create", "-f", "-o", "ashift=12", "-O", "compression=lz4", "-O", "mountpoint=none", SHAPES_POOL,
       "draid1:2d:6c:1s", *files)
    sh("zfs", "create", "-o", "recordsize=4K", f"{SHAPES_POOL}/small")
    try:
        yield SHAPES_POOL
    finally:
        subprocess.run(["zpool", "destroy", "-f", SHAPES_POOL], capture_output=True)
        for f in files:
            os.unlink(f)


@pytest.fixture
def ashift9_pool():
    """raidz1:3, ashift 9, on three scsi_debug disks of 256 MiB in RAM, each its own store (one shared
    store would show ZFS one label three times), 4096-byte physical sectors, UNMAP as an SSD has (the
    module reports solid state: autotrim on, so the ashift is the one thing wrong). Yields the pool
    and the disks' by-id paths; the module is unloaded after."""
    sh("modprobe", "scsi_debug", "dev_size_mb=256", "num_tgts=1", "add_host=3", "per_host_store=1", "physblk_exp=3",
       "lbpu=1")
    try:
        sh("udevadm", "settle")
        devices = [line.split()[0] for line in sh("lsblk", "-d", "-n", "-o", "PATH,MODEL").splitlines()
                   if line.split()[1:] == ["scsi_debug"]]
        assert len(devices) == 3, devices
        links = [f"/dev/disk/by-id/{name}" for name in sorted(os.listdir("/dev/disk/by-id"))
                 if name.startswith("scsi-3")]
        by_id = [next(link for link in links if os.path.realpath(link) == dev) for dev in devices]
        sh("zpool", "create", "-o", "ashift=9", "-o", "autotrim=on", "-O", "compression=lz4", "-O", "mountpoint=none",
           ASHIFT9_POOL, "raidz1", *by_id)
        try:
            yield ASHIFT9_POOL, by_id
        finally:
            subprocess.run(["zpool", "destroy", "-f", ASHIFT9_POOL], capture_output=True)
    finally:
        subprocess.run(["udevadm", "settle"], capture_output=True)
        subprocess.run(["rmmod", "scsi_debug"], capture_output=True)


def test_zfslab_pool_reads_real_pools_and_writes_nothing(oops_pool, old_pool, ashift9_pool, shapes_pool):
    """One run of zfslab (a Python start costs seconds under TCG); the missing pool's error and the
    text output are unit tests (tests/unit/test_pool_cmd.py, test_pool_view.py)."""
    ashift9, ashift9_disks = ashift9_pool
    pools = (oops_pool, old_pool, ashift9, shapes_pool)
    sh("zpool", "sync", *pools)
    history = {p: sh("zpool", "history", "-il", p) for p in pools}
    digests = {d: label_digests(f"{d}-part1") for d in ashift9_disks}
    p = zfslab_pool(*pools, "--json")
    assert p.returncode == 0, p.stderr
    record, old, low, shapes = json.loads(p.stdout)["pools"]
    model = record["model"]
    # zpool create reads a bare disk after raidz2's into the raidz2: zfslab puts it first
    assert model["layout"] == "disk+raidz2:4"
    assert model["agrees"] is True, model
    assert model["size_bytes"]["difference"] == 0 and model["usable_bytes"]["difference"] == 0
    assert [f["code"] for f in record["findings"]] == ["vdev-less-redundant", "compression-off"]
    # the old pool: two raidz1 of unequal width, its features but lz4 disabled, and nothing else
    print(json.dumps(old["model"]), [f["text"] for f in old["findings"]])
    assert [f["code"] for f in old["findings"]] == ["unequal-vdevs", "features-disabled"], old["findings"]
    assert "raidz of 3, raidz of 4" in old["findings"][0]["text"]
    # SIZE agrees; USED+AVAIL of a pool made with -d is below the model by its deferred frees, which
    # dsl_pool_adjustedsize() takes out of AVAIL (138,880 B on 2.4.4 with 7 files of 1 GiB): zdb's
    # figure for them is rounded as zfs_nicenum rounds (docs/pool.md#a-pool-made-with--d)
    assert old["model"]["size_bytes"]["difference"] == 0, old["model"]
    deferred = deferred_free_bytes(old_pool)
    assert deferred > 0 and abs(old["model"]["usable_bytes"]["difference"] + deferred) <= deferred // 100 + 512, \
        (old["model"], deferred)
    # ashift 9 on 512e disks: the model to the byte, and the one finding (from lsblk and ZFS's own note)
    assert low["model"]["layout"] == "raidz1:3" and low["model"]["agrees"] is True, low["model"]
    assert [f["code"] for f in low["findings"]] == ["ashift-below-sector"], low["findings"]
    assert "ashift 9 (512 B) on disks with 4096-byte physical sectors" in low["findings"][0]["text"]
    # dRAID with a distributed spare, on disks of two sizes: to the byte; the 4K child under lz4 named
    assert shapes["model"]["layout"] == "draid1:2d:6c:1s@1x1536MiB/5x1GiB", shapes["model"]
    assert shapes["model"]["agrees"] is True, shapes["model"]
    assert [f["code"] for f in shapes["findings"]] == ["recordsize-uncompressible"], shapes["findings"]
    assert f"4K on {shapes_pool}/small," in shapes["findings"][0]["text"]
    assert {p: sh("zpool", "history", "-il", p) for p in pools} == history
    assert {d: label_digests(f"{d}-part1") for d in ashift9_disks} == digests  # no txg synced
