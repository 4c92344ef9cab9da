"""The ZfsDriver contract (tests/zfs_contract.py) against ZfsCli on the real kernel module:
what FakeZfs promises in the unit tests, ZFS does."""

import pytest

from tests.zfs_contract import *  # noqa: F401,F403 - the contract's test functions


@pytest.fixture
def driver(zfs):
    return zfs


@pytest.fixture
def devices(disks):
    return disks[:4]
