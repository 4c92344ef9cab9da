"""The ZfsDriver contract (tests/zfs_contract.py) against FakeZfs; the same functions run
against ZfsCli on the real module in the guest."""

import pytest

from tests.fakes import FakeZfs
from tests.zfs_contract import *  # noqa: F401,F403 - the contract's test functions


@pytest.fixture
def driver():
    return FakeZfs()


@pytest.fixture
def devices():
    return [f"/dev/disk/by-id/ata-FAKE_{i}" for i in range(6)]


@pytest.fixture
def pool_name():
    return "zfslab-e2e-contract"
