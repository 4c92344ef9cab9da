"""Preflight over real ssh: two host names for the test's private sshd on 127.0.0.1 (this machine
twice), the disk facts read by lsblk on the far side, parsed, and compared."""

import json
import subprocess

import pytest

from tests.unit.test_transport_ssh import sshd  # noqa: F401 - the private sshd fixture
from zfslab import __version__
from zfslab.model.inventory import Host
from zfslab.system.preflight import LSBLK_COLUMNS, parse_lsblk
from zfslab.system.preflight import preflight
from zfslab.system.transport import SshTransport


def _a_local_disk() -> str:
    out = subprocess.run(["lsblk", "-J", "-d", "-b", "-o", "PATH,TYPE,SIZE"], capture_output=True, text=True)
    disks = [d["path"] for d in json.loads(out.stdout or "{}").get("blockdevices", [])
             if d.get("type") == "disk" and int(d.get("size") or 0) > 0]
    if not disks:
        pytest.skip("this machine shows lsblk no disk to read facts of")
    return disks[0]


def test_preflight_over_ssh_reads_the_same_disk_twice_and_names_each_refusal(sshd):
    d, _ = sshd
    disk = _a_local_disk()
    local = parse_lsblk(subprocess.run(["lsblk", "-J", "-b", "-o", LSBLK_COLUMNS, "--nodeps", disk],
                                       capture_output=True, text=True, check=True).stdout, "local")
    (d / "ssh_config2").write_text((d / "ssh_config").read_text().replace("Host zfslab-test-node",
                                                                          "Host zfslab-test-node zfslab-test-twin"))
    transport = SshTransport(config_file=str(d / "ssh_config2"))
    try:
        hosts = [Host("node1", "zfslab-test-node"), Host("node2", "zfslab-test-twin")]
        facts, lines = preflight(transport, hosts, [disk, "/dev/zfslab-no-such-disk"],
                                 controller_version=__version__, limit=2)
    finally:
        transport.close()
    assert [f.host for f in facts] == ["node1", "node2"]
    assert facts[0].disks == facts[1].disks == local
    assert facts[0].missing_disks == ("/dev/zfslab-no-such-disk",)
    assert "node1: no disk /dev/zfslab-no-such-disk" in lines and "node2: no disk /dev/zfslab-no-such-disk" in lines
    assert all(line.startswith(("node1: ", "node2: ")) for line in lines), lines
    assert not any("differs" in line or "disks named" in line for line in lines), lines
