"""`zfslab pool` on a real pool (docs/pool.md): the model against reality to the byte, the
findings expected of the pool built, and nothing written (`zpool history` unchanged). Small: one
raidz2:4 plus a single disk added by mistake, empty, in the 2.4 boot."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from zfslab.model.layout_grammar import parse_layout

POOL = "zfslab-e2e-pool"


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


def test_zfslab_pool_reads_a_real_pool_and_writes_nothing(oops_pool):
    history = sh("zpool", "history", "-il", oops_pool)
    p = zfslab_pool(oops_pool, "--json")
    assert p.returncode == 0, p.stderr
    record = json.loads(p.stdout)["pools"][0]
    model = record["model"]
    assert model["layout"] == "raidz2:4+disk"
    assert model["agrees"] is True, model
    assert model["size_bytes"]["difference"] == 0 and model["usable_bytes"]["difference"] == 0
    assert [f["code"] for f in record["findings"]] == ["vdev-less-redundant", "compression-off"]
    text = zfslab_pool(oops_pool)
    assert text.returncode == 0 and "they agree to the byte" in text.stdout
    assert sh("zpool", "history", "-il", oops_pool) == history


def test_a_pool_that_does_not_exist(zfs):
    p = zfslab_pool("zfslab-e2e-nosuchpool")
    assert p.returncode == 5
    assert p.stderr.strip().splitlines() == [
        "zfslab: error: pool 'zfslab-e2e-nosuchpool' does not exist; `zpool list` shows the pools there are"]
