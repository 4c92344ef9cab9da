"""Runs inside the test guest (real kernel module), or on any host with ZFS and spare disks.

Collected only with ZFSLAB_E2E_INSIDE=1. ZFSLAB_TEST_DISKS lists whole disks that may be wiped (comma-separated); without it the
tests skip, and with ZFSLAB_TEST_REQUIRE_E2E=1 a skip fails. Sparse-file vdevs go under
ZFSLAB_TEST_FILEDIR (default /var/tmp/zfslab-e2e). Pools are named zfslab-e2e-*; leftovers of
an earlier run are destroyed first.
"""

from __future__ import annotations

import os
import shutil

import pytest

from zfslab.system.zfs import ZfsCli

PREFIX = "zfslab-e2e"


def _require(reason: str):
    if os.environ.get("ZFSLAB_TEST_REQUIRE_E2E") == "1":
        pytest.fail(f"ZFSLAB_TEST_REQUIRE_E2E=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def zfs() -> ZfsCli:
    if shutil.which("zpool") is None or not os.path.exists("/dev/zfs"):
        _require("no ZFS here (zpool or /dev/zfs missing)")
    cli = ZfsCli()
    for p in cli.list_pools():
        if p.name.startswith(PREFIX):
            cli.destroy_pool(p.name, force=True)
    return cli


@pytest.fixture(scope="session")
def disks() -> list[str]:
    listed = [d for d in os.environ.get("ZFSLAB_TEST_DISKS", "").split(",") if d]
    if len(listed) < 8:
        _require("ZFSLAB_TEST_DISKS does not name at least 8 disks that may be wiped")
    return listed


@pytest.fixture(scope="session")
def filedir() -> str:
    path = os.environ.get("ZFSLAB_TEST_FILEDIR", "/var/tmp/zfslab-e2e")
    os.makedirs(path, exist_ok=True)
    return path


@pytest.fixture
def pool_name(zfs, request):
    name = f"{PREFIX}-{abs(hash(request.node.nodeid)) % 10**6}"
    yield name
    if zfs.pool_exists(name):
        zfs.destroy_pool(name, force=True)
