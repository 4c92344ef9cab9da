"""The ZfsDriver contract: what bench and drill rely on a driver to do, as test functions.

A test module imports these (`from tests.zfs_contract import *`) and provides three fixtures:
`driver` (a ZfsDriver), `devices` (four disks it may use) and `pool_name`. tests/unit/
test_fake_zfs.py runs them against FakeZfs; tests/e2e/inside/test_zfs_contract.py against
ZfsCli on the real kernel module, so the fake cannot drift from what ZFS does."""

import os

import pytest

from zfslab.model.layout_grammar import parse_layout
from zfslab.system.zfs import DeviceInUse, NoSuchPool

__all__ = ["test_contract_create_shows_the_pool_as_asked", "test_contract_a_missing_pool_is_named",
           "test_contract_a_disk_in_a_pool_is_refused", "test_contract_offline_online_and_replace",
           "test_contract_properties_export_and_import", "test_contract_scrub"]


def _leaves(status):
    return sorted(v.name for top in status.top_level for v in (top.leaves if top.children else [top]))


def _names(devices):
    return sorted(os.path.basename(d) for d in devices)


def test_contract_create_shows_the_pool_as_asked(driver, devices, pool_name):
    driver.create_pool(pool_name, parse_layout("raidz1:3"), devices[:3], ashift=12,
                       fs_props={"compression": "off", "zfslab:test": "contract"})
    try:
        assert driver.pool_exists(pool_name) and pool_name in [p.name for p in driver.list_pools()]
        info = driver.pool(pool_name)
        assert info.health == "ONLINE" and info.size_bytes > 0
        guid = driver.pool_guid(pool_name)
        assert guid.isdigit() and guid == driver.pool_guid(pool_name) == driver.pool_get(pool_name, "guid")["guid"].value
        assert driver.get(pool_name, "mountpoint")["mountpoint"].value == f"/{pool_name}"
        props = driver.get(pool_name, "compression", "zfslab:test")
        assert props["compression"].value == "off" and props["zfslab:test"].value == "contract"
        assert driver.pool_get(pool_name, "ashift")["ashift"].value == "12"
        status = driver.status(pool_name)
        assert status.state == "ONLINE" and _leaves(status) == _names(devices[:3])
        ds = driver.dataset(pool_name)
        assert ds.available_bytes > 0 and ds.usable_bytes == ds.used_bytes + ds.available_bytes
        assert driver.version().series in ("2.1", "2.2", "2.3", "2.4")
    finally:
        driver.destroy_pool(pool_name, force=True)
    assert not driver.pool_exists(pool_name)


def test_contract_a_missing_pool_is_named(driver):
    for call in (lambda: driver.destroy_pool("zfslab-absent"), lambda: driver.status("zfslab-absent"),
                 lambda: driver.pool("zfslab-absent"), lambda: driver.pool_guid("zfslab-absent")):
        with pytest.raises(NoSuchPool, match="'zfslab-absent' does not exist"):
            call()


def test_contract_a_disk_in_a_pool_is_refused(driver, devices, pool_name):
    driver.create_pool(pool_name, parse_layout("mirror:2"), devices[:2])
    try:
        with pytest.raises(DeviceInUse, match="zfslab never forces it"):
            driver.create_pool(pool_name + "b", parse_layout("disk"), devices[1:2])
        assert not driver.pool_exists(pool_name + "b") and driver.status(pool_name).state == "ONLINE"
    finally:
        driver.destroy_pool(pool_name, force=True)


def test_contract_offline_online_and_replace(driver, devices, pool_name):
    driver.create_pool(pool_name, parse_layout("mirror:2"), devices[:2])
    try:
        driver.offline(pool_name, devices[0])
        status = driver.status(pool_name)
        assert status.state == "DEGRADED" and status.vdev(devices[0]).state == "OFFLINE"
        driver.online(pool_name, devices[0])
        driver.wait(pool_name, "resilver", timeout_s=600)
        assert driver.status(pool_name).state == "ONLINE"
        driver.offline(pool_name, devices[0])
        driver.replace(pool_name, devices[0], devices[2], wait=True, timeout_s=600)
        status = driver.status(pool_name)
        assert status.state == "ONLINE" and _leaves(status) == _names([devices[1], devices[2]])
        assert status.scan.kind == "resilver" and not status.scan.in_progress
    finally:
        driver.destroy_pool(pool_name, force=True)


def test_contract_properties_export_and_import(driver, devices, pool_name):
    driver.create_pool(pool_name, parse_layout("disk"), devices[3:4])
    try:
        guid = driver.pool_guid(pool_name)
        driver.set(pool_name, "atime", "off")
        driver.pool_set(pool_name, "failmode", "continue")
        assert driver.get(pool_name, "atime")["atime"].value == "off"
        assert driver.pool_get(pool_name, "failmode")["failmode"].value == "continue"
        driver.export_pool(pool_name)
        assert not driver.pool_exists(pool_name)
        driver.import_pool(pool_name)
        assert driver.pool_guid(pool_name) == guid and driver.get(pool_name, "atime")["atime"].value == "off"
    finally:
        if driver.pool_exists(pool_name):
            driver.destroy_pool(pool_name, force=True)


def test_contract_scrub(driver, devices, pool_name):
    # devices[2:4]: a disk replaced out of a pool keeps that pool's label, so the real zpool would
    # call devices[0] (replaced above) part of a potentially active pool
    driver.create_pool(pool_name, parse_layout("mirror:2"), devices[2:4])
    try:
        assert driver.status(pool_name).scan.kind is None
        driver.scrub(pool_name, wait=True, timeout_s=600)
        scan = driver.status(pool_name).scan
        assert scan.kind == "scrub" and not scan.in_progress and scan.errors == 0
        driver.clear(pool_name)
    finally:
        driver.destroy_pool(pool_name, force=True)
