"""Rounds of `zpool create` right after `zpool destroy` on the same disks, inside the test guest,
with the evidence of every failure kept (docs/safety.md#a-create-right-after-a-destroy).

Each round creates LAYOUT (default mirror:2, as the driver tests do) on the first disks, destroys
it, and goes on; `udevadm monitor` runs beside the rounds so that a failure's udev events can be
read with their times. MODE says how the create runs:

- `raw`: `udevadm settle`, then `zpool create` (no retry): the race as a script meets it;
- `locked`: the same with the disks' shared lock held (system/udev_lock.py), no retry: the fix alone;
- `zfslab`: `ZfsCli.create_pool` as bench and drill call it (lock, settle, one retry).

On a failure the round writes what the machine showed at that moment to
/mnt/host/race-evidence/round-N.txt: zpool's words, the module's own debug log
(/proc/spl/kstat/zfs/dbgmsg, with `open error=` lines), /proc/partitions, the by-id links, the
udev events of the last seconds, dmesg, and which processes hold the disks. Run from the host:

    python3 tests/e2e/guest/guest.py 2.4 'MODE=raw ROUNDS=20 python3 /mnt/repo/benchmarks/create_race_rounds.py'
"""

import glob
import os
import subprocess
import sys
import time

sys.path[:0] = ["/mnt/repo/src", "/mnt/repo"]

from zfslab.model.layout_grammar import parse_layout  # noqa: E402
from zfslab.model.zpool_syntax import zpool_create_argv  # noqa: E402
from zfslab.system.runner import CommandFailed  # noqa: E402
from zfslab.system.udev_lock import held_against_rescan  # noqa: E402
from zfslab.system.zfs import ZfsCli  # noqa: E402

POOL = "zfslab-race"
EVIDENCE = "/mnt/host/race-evidence"


def sh(*argv: str) -> str:
    p = subprocess.run(argv, capture_output=True, text=True)
    return p.stdout + p.stderr


def holders(disks: list[str]) -> str:
    """Which processes have a disk or one of its partitions open (no lsof or fuser in the guest)."""
    names = {os.path.realpath(d) for d in disks}
    found = []
    for fd in glob.glob("/proc/[0-9]*/fd/*"):
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if any(target.startswith(n) for n in names):
            pid = fd.split("/")[2]
            try:
                comm = open(f"/proc/{pid}/comm").read().strip()
            except OSError:
                comm = "?"
            found.append(f"{pid} {comm} {target}")
    return "\n".join(found) or "(none)"


def evidence(i: int, disks: list[str], said: str, monitor_log: str, t0: float) -> None:
    os.makedirs(EVIDENCE, exist_ok=True)
    parts = [
        ("zpool said", said),
        ("dbgmsg (last 60 lines)", "\n".join(open("/proc/spl/kstat/zfs/dbgmsg").read().splitlines()[-60:])),
        ("/proc/partitions", open("/proc/partitions").read()),
        ("by-id", sh("ls", "-l", "--time-style=+%T.%N", "/dev/disk/by-id")),
        ("udev queue", "empty" if not os.path.exists("/run/udev/queue") else "events queued"),
        ("holders", holders(disks)),
        ("udev events since the round began", tail_since(monitor_log, t0)),
        ("dmesg (last 40 lines)", "\n".join(sh("dmesg").splitlines()[-40:])),
    ]
    for d in disks:
        parts.append((f"udevadm info {d}", sh("udevadm", "info", os.path.realpath(d))))
    with open(f"{EVIDENCE}/round-{i}.txt", "w") as f:
        for title, text in parts:
            f.write(f"==== {title}\n{text}\n")


def tail_since(path: str, t0: float) -> str:
    # udevadm monitor prints `KERNEL[12345.678901] ...`: monotonic seconds since boot
    out = []
    for line in open(path, errors="replace"):
        try:
            stamp = float(line.split("[", 1)[1].split("]", 1)[0])
        except (IndexError, ValueError):
            continue
        if stamp >= t0 - 1:
            out.append(line.rstrip())
    return "\n".join(out[-200:])


def main() -> None:
    mode = os.environ.get("MODE", "raw")
    layout = parse_layout(os.environ.get("LAYOUT", "mirror:2"))
    rounds = int(os.environ.get("ROUNDS", "20"))
    all_disks = sorted(d for d in glob.glob("/dev/disk/by-id/scsi-0QEMU_QEMU_HARDDISK_ZFSLAB*") if "-part" not in d)
    disks = all_disks[:layout.all_disks]
    notes: list[str] = []
    zfs = ZfsCli(log=notes.append)
    sh("sh", "-c", "echo 0 > /proc/spl/kstat/zfs/dbgmsg")  # clear the module's log
    monitor_log = "/tmp/udev-monitor.log"
    monitor = subprocess.Popen(["udevadm", "monitor", "--kernel", "--udev", "--subsystem-match=block"],
                               stdout=open(monitor_log, "w"), stderr=subprocess.DEVNULL)
    failed = 0
    try:
        for i in range(1, rounds + 1):
            notes.clear()
            t0 = time.clock_gettime(time.CLOCK_MONOTONIC)
            try:
                if mode in ("raw", "locked"):
                    with held_against_rescan(disks if mode == "locked" else []):
                        zfs.settle()
                        zfs._run(*zpool_create_argv(POOL, layout, disks))
                else:
                    zfs.create_pool(POOL, layout, disks)
                outcome = "ok" + (f" ({'; '.join(notes)})" if notes else "")
            except CommandFailed as e:
                failed += 1
                outcome = "FAILED: " + " | ".join(e.stderr_tail.strip().splitlines())
                evidence(i, disks, e.stderr_tail, monitor_log, t0)
            took = time.clock_gettime(time.CLOCK_MONOTONIC) - t0
            print(f"{mode} {layout} round {i}: {took:.1f} s {outcome}", flush=True)
            if zfs.pool_exists(POOL):
                zfs.destroy_pool(POOL)
    finally:
        monitor.terminate()
    print(f"{mode} {layout}: {failed} of {rounds} creates failed", flush=True)


if __name__ == "__main__":
    main()
