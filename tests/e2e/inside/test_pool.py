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
    """One run of zfslab (a Python start costs seconds under TCG); the missing pool's error and the
    text output are unit tests (tests/unit/test_pool_cmd.py, test_pool_view.py)."""
    history = sh("zpool", "history", "-il", oops_pool)
    p = zfslab_pool(oops_pool, "--json")
    assert p.returncode == 0, p.stderr
    record = json.loads(p.stdout)["pools"][0]
    model = record["model"]
    # zpool create reads a bare disk after raidz2's into the raidz2: zfslab puts it first
    assert model["layout"] == "disk+raidz2:4"
    assert model["agrees"] is True, model
    assert model["size_bytes"]["difference"] == 0 and model["usable_bytes"]["difference"] == 0
    assert [f["code"] for f in record["findings"]] == ["vdev-less-redundant", "compression-off"]
    assert sh("zpool", "history", "-il", oops_pool) == history
