"""The ZfsDriver contract (tests/zfs_contract.py) against ZfsCli on the real kernel module:
what FakeZfs promises in the unit tests, ZFS does."""

import pytest

from tests.zfs_contract import *  # noqa: F401,F403 - the contract's test functions


@pytest.fixture
def driver(zfs):
    return zfs


@pytest.fixture(scope="module")
def devices(disks):
    """Six disks, wiped once (earlier modules leave file systems and labels on some of them)."""
    from zfslab.system.pool_safety import wipe_devices
    from zfslab.system.runner import Runner
    wipe_devices(Runner(), disks[:6])
    return disks[:6]
