"""Rounds of the udev race (docs/safety.md#a-busy-udev), inside the test guest: each round gives
three disks a destroyed pool's partitions, slows udev on them as tests/e2e/inside/test_udev_race.py
does, wipes them one way, creates a raidz1 one way, and prints one line. Run from the host:

    python3 tests/e2e/guest/guest.py 2.3 'ROUNDS=2 python3 /mnt/repo/benchmarks/udev_race_rounds.py'
"""

import glob
import os
import sys
import time

sys.path[:0] = ["/mnt/repo/src", "/mnt/repo"]

from tests.e2e.inside import test_udev_race as race  # noqa: E402
from zfslab.model.layout_grammar import parse_layout  # noqa: E402
from zfslab.system.bench import partitions, wipe_devices  # noqa: E402
from zfslab.system.runner import Runner  # noqa: E402
from zfslab.system.zfs import ZfsCli  # noqa: E402


def raw(disks):
    r = race.zpool_create(disks)
    return "ok" if r.returncode == 0 else "FAILED: " + " | ".join(r.stderr.strip().splitlines())


def zfslab(disks):
    notes: list[str] = []
    try:
        ZfsCli(log=notes.append).create_pool(race.POOL, parse_layout("raidz1:3"), disks)
        return f"ok, retries said: {notes}"
    except Exception as e:  # a round's outcome, printed
        return f"FAILED: {e}; retries said: {notes}"


def flagged_old_wipe(disks):
    race.FLAG.touch()
    race.old_wipe(disks, await_holds=True)


SCENARIOS = {
    "old wipe, flag held; zpool create": (flagged_old_wipe, raw),
    "old wipe, 2 s holds; zpool create": (lambda d: race.old_wipe(d, await_holds=False), raw),
    "old wipe, 2 s holds; ZfsCli.create_pool": (lambda d: race.old_wipe(d, await_holds=False), zfslab),
    "zfslab's wipe; zpool create": (lambda d: wipe_devices(Runner(), d), raw),
    "zfslab's wipe; ZfsCli.create_pool": (lambda d: wipe_devices(Runner(), d), zfslab),
}


def main() -> None:
    disks = sorted(d for d in glob.glob("/dev/disk/by-id/scsi-0QEMU_QEMU_HARDDISK_ZFSLAB*") if "-part" not in d)[5:8]
    zfs = ZfsCli()
    for name, (wipe, create) in SCENARIOS.items():
        for i in range(int(os.environ.get("ROUNDS", "2"))):
            race.slow_udev_on(zfs, disks)
            try:
                t0 = time.monotonic()
                wipe(disks)
                stale = sum(bool(partitions(Runner(), os.path.realpath(d))) for d in disks)
                outcome = create(disks)
                print(f"{name} #{i + 1}: {time.monotonic() - t0:.1f} s, disks with partitions left {stale}/3, "
                      f"partitions udev held {len(race.holds())}: {outcome}", flush=True)
            finally:
                race.slow_udev_off(zfs, disks)


if __name__ == "__main__":
    main()
