"""Preflight: lsblk's JSON to disk facts (captured output), each refusal one line naming the host
and the difference, and the parallel gathering on a fake fleet."""

import json
import os

import pytest

from tests.conftest import DATA
from tests.fleet_fakes import SimTransport
from zfslab.model.inventory import Host
from zfslab.model.preflight import DiskFacts, HostFacts, refusals
from zfslab.system.preflight import BadLsblk, parse_lsblk
from zfslab.system.preflight import preflight
from zfslab.system.installed import installed, package_digest

HDD = DiskFacts("/dev/sda", 4_000_787_030_016, "HGST HUS726T4TAL", "V6G1", True, 512, 4096)


def _disk(path, **change):
    fields = {"path": path, "size_bytes": HDD.size_bytes, "model": HDD.model, "serial": path[-3:],
              "rotational": True, "logical_sector_bytes": 512, "physical_sector_bytes": 4096} | change
    return DiskFacts(**fields)


def _host(name, disks=None, **change):
    fields = {"host": name, "zfslab_version": "1.0", "zfs_version": "zfs-2.1.11-1", "fio_version": "fio-3.33",
              "disks": tuple(disks if disks is not None else [_disk(f"/dev/sd{c}") for c in "abcd"])} | change
    return HostFacts(**fields)


def test_lsblk_of_util_linux_2_38_is_read():
    text = open(os.path.join(DATA, "lsblk", "vda-util-linux-2.38.json")).read()
    assert parse_lsblk(text, "st01") == (DiskFacts("/dev/vda", 274_877_906_944, None, None, True, 512, 4096),)


def test_lsblk_of_older_util_linux_with_strings_is_read():
    # util-linux 2.33-2.36 print every value as a string, rota as "0"/"1"
    text = json.dumps({"blockdevices": [{"name": "sdb", "path": "/dev/sdb", "type": "disk", "size": "4000787030016",
                                         "model": "HGST HUS726T4TAL ", "serial": "V6G1", "rota": "1",
                                         "log-sec": "512", "phy-sec": "4096"}]})
    assert parse_lsblk(text, "st02") == (DiskFacts("/dev/sdb", 4_000_787_030_016, "HGST HUS726T4TAL", "V6G1",
                                                   True, 512, 4096),)


@pytest.mark.parametrize("text, shown", [("lsblk: unknown column", "'lsblk: unknown column'"),
                                         ('{"blockdevices": [{"path": "/dev/a", "size": -1}]}', "size = -1")])
def test_bad_lsblk_is_named(text, shown):
    with pytest.raises(BadLsblk, match=rf"^host st01: lsblk printed {shown}"):
        parse_lsblk(text, "st01")


def test_identical_hosts_pass():
    assert refusals([_host("st01"), _host("st02"), _host("st03")], controller_version="1.0") == []


def test_each_difference_is_one_line_naming_host_and_difference():
    small = [_disk("/dev/sda"), _disk("/dev/sdb"), _disk("/dev/sdc", size_bytes=3_000_592_982_016), _disk("/dev/sdd")]
    facts = [_host("st01"), _host("st02", disks=small), _host("st03", zfslab_version="0.9"),
             _host("st04", disks=[_disk("/dev/sda")]), _host("st05", zfs_version="zfs-2.2.0-1", fio_version=None),
             _host("st06", disks=[_disk(f"/dev/sd{c}", physical_sector_bytes=512) for c in "abc"]
                   + [_disk("/dev/sdd")])]
    assert refusals(facts, controller_version="1.0") == [
        "st03: zfslab 0.9, the controller runs 1.0; install zfslab 1.0 on it (pip install zfslab==1.0)",
        "st05: fio is not installed; apt-get install fio",
        "st05: OpenZFS zfs-2.2.0-1, st01 and most hosts have zfs-2.1.11-1; results of different versions do not "
        "merge into one answer",
        "st02: /dev/sdc differs from st01's disks: size 3,000,592,982,016 bytes, not 4,000,787,030,016 bytes",
        "st04: 1 disks named, st01 has 4",
        "st06: /dev/sda differs from st01's disks: physical sector 512, not 4096",
        "st06: /dev/sdb differs from st01's disks: physical sector 512, not 4096",
        "st06: /dev/sdc differs from st01's disks: physical sector 512, not 4096",
    ]


def test_disks_named_in_another_order_are_still_identical():
    disks = [_disk("/dev/sda", model="A"), _disk("/dev/sdb", model="B")]
    assert refusals([_host("st01", disks=disks), _host("st02", disks=disks[::-1])], controller_version="1.0") == []


def _lsblk(path, size=HDD.size_bytes):
    return json.dumps({"blockdevices": [{"name": path[5:], "path": path, "type": "disk", "size": size,
                                         "model": "HGST", "serial": "S", "rota": True, "log-sec": 512,
                                         "phy-sec": 4096}]})


def _answers(host, argv):
    if argv == ["zfslab", "--installed"]:   # as the controller's zfslab says it, but version 0.9 on st03
        return 0, json.dumps(dict(installed(), version="0.9" if host == "st03" else "1.0")), ""
    if argv[0] == "zpool":
        return 0, "zfs-2.1.11-1\nzfs-kmod-2.1.11-1\n", ""
    if argv[0] == "fio":
        return 0, "fio-3.33\n", ""
    if argv[0] == "lsblk":
        disk = argv[-1]
        if host == "st02" and disk == "/dev/sdb":
            return 32, "", f"lsblk: {disk}: not a block device"
        return 0, _lsblk(disk, 3_000_592_982_016 if host == "st05" and disk == "/dev/sda" else HDD.size_bytes), ""
    return 127, "", "command not found"


def test_preflight_on_a_fake_fleet_reports_every_host_at_once():
    hosts = [Host(f"st0{i}", f"st0{i}.example") for i in range(1, 6)]
    t = SimTransport(_answers, down=["st04"])
    facts, lines = preflight(t, hosts, ["/dev/sda", "/dev/sdb"], controller_version="1.0", limit=2)
    assert [f.host for f in facts] == ["st01", "st02", "st03", "st05"]
    assert lines == [
        "host st04: cannot connect (Connection timed out); check `ssh st04.example` works without a password prompt "
        "(a key in ssh-agent)",
        "st02: no disk /dev/sdb",
        "st03: zfslab 0.9, the controller runs 1.0; install zfslab 1.0 on it (pip install zfslab==1.0)",
        "st02: 1 disks named, st01 has 2",
        "st05: /dev/sda differs from st01's disks: size 3,000,592,982,016 bytes, not 4,000,787,030,016 bytes",
    ]
    # preflight only reads: every program it ran is one that never writes
    assert {argv[0] for _, argv in t.log} == {"zfslab", "zpool", "fio", "lsblk"}


def test_another_checkout_of_the_same_version_is_refused_by_its_digest():
    # issue 36: preflight compared the version string only, so a modified copy of 1.0 passed
    ours = installed()["digest"]
    same = HostFacts("st01", "1.0", "zfs-2.1.11-1", "fio-3.33", (), zfslab_digest=ours)
    other = HostFacts("st02", "1.0", "zfs-2.1.11-1", "fio-3.33", (), zfslab_digest="ab" * 32, zfslab_path="/opt/z/zfslab")
    old = HostFacts("st03", "1.0", "zfs-2.1.11-1", "fio-3.33", ())   # a zfslab without --installed
    assert refusals([same, other, old], controller_version="1.0", controller_digest=ours) == [
        f"st02: zfslab 1.0 at /opt/z/zfslab is not the controller's (files digest abababababab, the controller's "
        f"{ours[:12]}): another checkout or a modified copy; install the controller's zfslab there, or give "
        "the fleet command the path of one that is (docs/fleet.md#preflight)",
        "st03: zfslab 1.0 is not the controller's (it cannot say its files' digest: an older build): another "
        "checkout or a modified copy; install the controller's zfslab there, or give the fleet command the path "
        "of one that is (docs/fleet.md#preflight)"]
    assert refusals([other], controller_version="1.0") == []   # no digest given: versions alone


def test_the_digest_is_of_the_files_in_a_stable_order_and_changes_with_one_byte(tmp_path):
    root = tmp_path / "zfslab"
    (root / "model").mkdir(parents=True)
    (root / "__pycache__").mkdir()
    (root / "__init__.py").write_text("__version__ = '1.0'\n")
    (root / "model" / "a.py").write_text("x = 1\n")
    (root / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"whatever")
    first = package_digest(str(root))
    assert first[1] == 2
    (root / "__pycache__" / "y.cpython-311.pyc").write_bytes(b"more")   # bytecode is not what was installed
    assert package_digest(str(root)) == first
    (root / "model" / "a.py").write_text("x = 2\n")
    assert package_digest(str(root))[0] != first[0]
    (root / "model" / "a.py").write_text("x = 1\n")
    assert package_digest(str(root)) == first
    (root / "model" / "b.py").write_text("")   # a file more, even empty
    assert package_digest(str(root))[0] != first[0]


def test_zfslab_installed_prints_what_preflight_compares(capsys):
    from zfslab.cli import main
    with pytest.raises(SystemExit) as done:
        main(["--installed"])
    assert done.value.code == 0
    data = json.loads(capsys.readouterr().out)
    assert data == installed() and len(data["digest"]) == 64


def test_a_host_whose_zfslab_lacks_installed_gives_its_version_and_no_digest():
    def answers(host, argv):
        if argv == ["zfslab", "--installed"]:
            return 2, "", "zfslab: error: unrecognized arguments: --installed\n"
        if argv == ["zfslab", "--version"]:
            return 0, "zfslab 1.0\n", ""
        return _answers(host, argv)
    facts, lines = preflight(SimTransport(answers), [Host("st01", "st01.example")], ["/dev/sda"],
                             controller_version="1.0")
    assert facts[0].zfslab_version == "1.0" and facts[0].zfslab_digest is None
    assert lines and lines[0].startswith("st01: zfslab 1.0 is not the controller's (it cannot say")
