"""zpool create's refusals, as real OpenZFS words them (tests/data), become DeviceInUse naming the disk."""

import os

import pytest

from tests.conftest import DATA
from zfslab.model.layout_grammar import parse_layout
from zfslab.system.runner import CommandFailed, Runner, _tail
from zfslab.system.zfs import DeviceInUse, ZfsCli

# what OpenZFS 2.1 printed when a disk replaced out of a pool was used again (the guest, e2e)
ACTIVE = ("invalid vdev specification\nuse '-f' to override the following errors:\n"
          "/dev/disk/by-id/scsi-0QEMU_QEMU_HARDDISK_ZFSLAB0000-part1 is part of potentially active pool 'old'\n")


class Refusing(Runner):
    def __init__(self, stderr):
        super().__init__()
        self.stderr = stderr

    def which(self, program):
        return None if program == "udevadm" else f"/sbin/{program}"

    def run(self, argv, **kw):
        raise CommandFailed(" ".join(argv), 1, _tail(self.stderr))


@pytest.mark.parametrize("stderr, device", [
    (ACTIVE, "/dev/disk/by-id/scsi-0QEMU_QEMU_HARDDISK_ZFSLAB0000-part1"),
    (open(os.path.join(DATA, "zfs-2.3", "create_inuse.txt")).read(), "/dev/sda"),
    (open(os.path.join(DATA, "zfs-2.4", "create_inuse.txt")).read(), "/dev/sdc"),
])
def test_the_refused_disk_is_named(stderr, device):
    with pytest.raises(DeviceInUse) as e:
        ZfsCli(Refusing(stderr)).create_pool("p", parse_layout("mirror:2"), ["/dev/sda", "/dev/sdb"])
    assert str(e.value).startswith(f"{device} is in use (")
