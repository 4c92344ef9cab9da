"""`zfslab pool` on damaged captures: what the pool fuzz campaign (benchmarks/fuzz_cli.py --focus pool)
found, each as the one-line error (exit 2) or the answer it must be. The capture is one of the guest's
(tests/data/pools) copied into the test's folder with one file changed; tests/cli_fuzz.py's
install_capture answers read_pool's commands from it, so no program runs."""

from __future__ import annotations

import json
import pathlib
import shutil

import pytest

from cli_fuzz import CAPTURE, install_capture
from zfslab.cli import main

POOLS = pathlib.Path(__file__).parent.parent / "data" / "pools"


def capture(tmp_path: pathlib.Path, name: str = "healthy", series: str = "zfs-2.4", **changed: str) -> pathlib.Path:
    """A copy of one captured pool in tmp_path/capture, its files named in `changed` replaced."""
    folder = tmp_path / CAPTURE
    shutil.copytree(POOLS / series / name, folder)
    (folder / "names.txt").write_text(f"{name}\n")
    shutil.copy(POOLS / series / "zfs_version.txt", folder / "zfs_version.txt")
    if not (folder / "zfs_get_rj.json").exists():
        shutil.copy(folder / "zfs_get_j.json", folder / "zfs_get_rj.json")
    (folder / "lsblk.txt").write_text("")
    for file, text in changed.items():
        (folder / file.replace("__", ".")).write_text(text)
    return folder


def run(folder: pathlib.Path, *argv: str) -> int:
    undo = install_capture(str(folder))
    try:
        return main(["pool", *argv])
    finally:
        undo()


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    assert err.startswith("zfslab: error: ") and err.count("\n") == 1, err
    return err


def test_the_captured_pool_as_it_is_answers(tmp_path, capsys):
    assert run(capture(tmp_path), "healthy", "--json") == 0
    assert json.loads(capsys.readouterr().out)["pools"][0]["model"]["agrees"] is True


@pytest.mark.parametrize("printed", ["zfs-\nzfs-kmod-\n", "18446744073709551616\nzfs-kmod-2.2.7-1\n", ""])
def test_a_zfs_version_without_its_userland_line_is_a_one_line_error(tmp_path, capsys, printed):
    assert run(capture(tmp_path, zfs_version__txt=printed), "healthy") == 2
    assert "zfs version" in one_line_error(capsys)


@pytest.mark.parametrize("add", ["1x64MiB", "2x70MiB"])
def test_new_disks_below_zfs_minimum_name_the_add_size_and_the_least_that_works(tmp_path, capsys, add):
    assert run(capture(tmp_path), "healthy", "--add", add) == 2
    err = one_line_error(capsys)
    assert "new disks of" in err and "give new disks of at least 76,562,944 bytes (73.0 MiB)" in err
    capsys.readouterr()
    assert run(capture(tmp_path / "x"), "healthy", "--add", "1x76562944") == 0   # the least that works


def test_the_least_whole_disk_is_the_first_whose_partition_reaches_64_mib():
    from zfslab.model.capacity import SPA_MINDEVSIZE, linux_whole_disk_osize, min_whole_disk_bytes
    for sector in (512, 4096):
        least = min_whole_disk_bytes(sector)
        assert linux_whole_disk_osize(least, sector) >= SPA_MINDEVSIZE > linux_whole_disk_osize(least - sector, sector)


def _with_leaf_type(vdev_type: str, top: bool) -> str:
    """xgrow_added's zpool status -j (raidz1-0 and mirror-1), the first disk of mirror-1, or mirror-1
    itself (top), of another type with no children: the trees the fuzz campaign found ended in an
    IndexError (pool_risk's attach side)."""
    data = json.loads((POOLS / "zfs-2.4" / "xgrow_added" / "zpool_status_jP.json").read_text())
    mirror = data["pools"]["xgrow"]["vdevs"]["xgrow"]["vdevs"]["mirror-1"]
    node = mirror if top else next(iter(mirror["vdevs"].values()))
    node["vdev_type"] = vdev_type
    node.pop("vdevs", None)
    return json.dumps(data)


@pytest.mark.parametrize("top", [False, True])
@pytest.mark.parametrize("vdev_type", ["mirror", "spare", "replacing", "dspare"])
def test_a_vdev_with_no_disk_under_it_is_a_one_line_error(tmp_path, capsys, vdev_type, top):
    folder = capture(tmp_path, "xgrow_added", zpool_status_jP__json=_with_leaf_type(vdev_type, top))
    (folder / "names.txt").write_text("xgrow\n")
    assert run(folder, "xgrow", "--json") == 2
    assert "no disk" in one_line_error(capsys)


SMART = pathlib.Path(__file__).parent.parent / "data" / "smartctl" / "ata-failing-hdd.json"


@pytest.mark.parametrize("key", ["id", "name"])
@pytest.mark.parametrize("value", [[5], {"a": 1}, [["Total_LBAs_Written"]]])
def test_a_smart_attribute_keyed_by_a_list_is_left_out_not_a_crash(tmp_path, capsys, key, value):
    report = json.loads(SMART.read_text())
    for row in report["ata_smart_attributes"]["table"]:
        row[key] = value
    assert run(capture(tmp_path, smart__json=json.dumps(report)), "healthy", "--json") == 0
    from zfslab.system.smart import parse_health, parse_history
    if key == "id":   # no attribute read, none trusted
        assert parse_health("/dev/sda", report).reallocated is None
    else:
        assert parse_history(report).written_bytes is None


@pytest.mark.parametrize("key", ["vdev_type", "class"])
@pytest.mark.parametrize("value", [["mirror"], {"a": 1}])
def test_a_vdev_type_or_class_that_is_no_string_is_a_one_line_error(tmp_path, capsys, key, value):
    data = json.loads((POOLS / "zfs-2.4" / "healthy" / "zpool_status_jP.json").read_text())
    top = data["pools"]["healthy"]["vdevs"]["healthy"]["vdevs"]["raidz2-0"]
    top[key] = value
    assert run(capture(tmp_path, zpool_status_jP__json=json.dumps(data)), "healthy") == 2
    assert f"raidz2-0's {'type' if key == 'vdev_type' else 'class'}" in one_line_error(capsys)


@pytest.mark.parametrize("value", [1.5, "x", ["raidz2-0"], True])
def test_root_children_that_are_no_object_are_a_one_line_error(tmp_path, capsys, value):
    data = json.loads((POOLS / "zfs-2.4" / "healthy" / "zpool_status_jP.json").read_text())
    data["pools"]["healthy"]["vdevs"]["healthy"]["vdevs"] = value
    assert run(capture(tmp_path, zpool_status_jP__json=json.dumps(data)), "healthy") == 2
    assert "the root vdev's children" in one_line_error(capsys)


def test_a_finished_scan_without_its_end_time_is_a_one_line_error(tmp_path, capsys):
    data = json.loads((POOLS / "zfs-2.4" / "replaced" / "zpool_status_jP.json").read_text())
    scan = data["pools"]["replaced"]["scan_stats"]
    assert scan["state"] == "FINISHED"
    del scan["end_time"]
    folder = capture(tmp_path, "replaced", zpool_status_jP__json=json.dumps(data))
    assert run(folder, "replaced") == 2
    assert "scan: end_time" in one_line_error(capsys)
