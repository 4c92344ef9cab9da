"""profile-disk --hosts over real ssh: the test's private sshd on 127.0.0.1 reached under two host
names (this machine twice), each running its installed `zfslab profile-disk DISK --json` read-only
(fio --readonly) on a real disk for 1 s a test, and a third host where nothing listens."""

import json
import subprocess

import pytest

from tests.unit.test_preflight_ssh import _a_local_disk
from tests.unit.test_transport_ssh import _free_port, sshd  # noqa: F401 - the private sshd fixture
from zfslab import __version__
from zfslab.cli import main
from zfslab.system.installed import installed


def test_profile_disk_hosts_over_ssh_measures_both_hosts_and_names_the_dead_one(sshd, capsys):
    d, _ = sshd
    disk = _a_local_disk()
    config = d / "ssh_config_twins"
    config.write_text((d / "ssh_config").read_text().replace("Host zfslab-test-node",
                                                              "Host zfslab-test-node zfslab-test-twin"))
    remote = subprocess.run(["ssh", "-F", str(config), "-o", "BatchMode=yes", "zfslab-test-node", "zfslab --installed"],
                            capture_output=True, text=True, timeout=60)
    try:   # preflight wants this checkout's zfslab there, its files' digest too (system/installed.py)
        same = json.loads(remote.stdout)["digest"] == installed()["digest"]
    except (ValueError, TypeError, KeyError):
        same = False
    if not same:
        pytest.skip(f"the ssh session finds no zfslab {__version__} of this checkout on its PATH "
                    f"({remote.stdout.strip()[:200] or remote.stderr[-200:]})")
    dead = f"127.0.0.1:{_free_port()}"
    code = main(["profile-disk", "--hosts", f"zfslab-test-node,zfslab-test-twin,{dead}", "--disks", disk,
                 "--seconds", "1", "--ssh-config", str(config), "--json"])
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert code == 4, captured.err
    assert data["failures"][0].startswith(f"host {dead}: cannot connect (ssh: connect to host 127.0.0.1 port ")
    assert f"zfslab: not measured: host {dead}: cannot connect" in captured.err
    if _readable(disk):
        assert sorted(r["host"] for r in data["disks"]) == ["zfslab-test-node", "zfslab-test-twin"]
        assert all(r["disk"] == disk and r["seq_read_mb_s"] > 0 and r["rand_read_iops_qd1"] > 0 for r in data["disks"])
        assert len(data["failures"]) == 1
    else:   # a sandbox that forbids opening its disk (a firecracker VM does): each host's fio says so, one line a host
        assert data["disks"] == [] and sorted(line.split(":")[0] for line in data["failures"][1:]) == [
            "host zfslab-test-node", "host zfslab-test-twin"]
        assert all(f"`zfslab profile-disk {disk} --json --seconds 1 --stop-with-session` failed" in line for line in data["failures"][1:])


def _readable(disk: str) -> bool:
    import os
    try:
        os.close(os.open(disk, os.O_RDONLY))
        return True
    except OSError:
        return False
