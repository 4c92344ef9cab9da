"""The emptiness sample under a CPU hog (issue 38, docs/safety.md#measured): pages planned
against pages read, on blank devices, while busy loops at nice 19 fill every core. For each
read it also says how many pages the 4 s budget that issue 38 removed would have let through:
the sample's clock is read once before every page after the first, exactly where that budget
was checked, so the figure comes from the same read.

    python3 benchmarks/sample_under_load.py --blank-file 1G        # a sparse file on a loop device
    python3 tests/e2e/guest/guest.py 2.4 \\
        'python3 /mnt/repo/benchmarks/sample_under_load.py /dev/disk/by-id/scsi-0QEMU_QEMU_HARDDISK_ZFSLAB0007'

Read-only on devices (O_DIRECT, exclusive open), unless --island DEVICE, which first writes 4 KiB
of random data at the page the sample reads last on that device (it destroys what is there: test
disks only): the full read must find it, where the old budget would have stopped short of it.
--blank-file makes a sparse file of that size in a temporary folder and reads it through a loop
device (root; without losetup: the file itself).
"""

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src"))

from zfslab.system.disks import read_samples, sample_findings, sample_plan  # noqa: E402

OLD_BUDGET_S = 4.0  # the budget issue 38 removed: pages whose check came later were not read


class RecordingClock:
    """time.monotonic, remembering every reading."""

    def __init__(self):
        self.readings: list[float] = []

    def __call__(self) -> float:
        now = time.monotonic()
        self.readings.append(now)
        return now

    def within(self, budget_s: float) -> int:
        """Pages the old budget would have read: the first, and each whose check came in time."""
        t0, checks = self.readings[0], self.readings[1:-1]  # the start, a check a page after the first, the end
        n = 1
        for t in checks:
            if t - t0 > budget_s:
                break
            n += 1
        return n


def start_hogs(count: int) -> list[subprocess.Popen]:
    """Busy loops at nice 19, each in its own session so that one killpg ends it."""
    loop = "while True: pass"
    return [subprocess.Popen(["nice", "-n", "19", sys.executable, "-c", loop], start_new_session=True)
            for _ in range(count)]


def stop_hogs(hogs: list[subprocess.Popen]) -> None:
    for h in hogs:
        try:
            os.killpg(h.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        h.wait()


def blank_device(folder: str, size: str) -> tuple[str, str | None]:
    path = os.path.join(folder, "blank.img")
    subprocess.run(["truncate", "-s", size, path], check=True)
    done = subprocess.run(["losetup", "--find", "--show", path], capture_output=True, text=True)
    if done.returncode != 0:
        return path, None
    return done.stdout.strip(), done.stdout.strip()


def write_island(device: str) -> int:
    """4 KiB of random data at the page the sample reads last; returns its offset."""
    fd = os.open(device, os.O_RDWR | os.O_EXCL)
    try:
        last = [o for sweep in sample_plan(os.lseek(fd, 0, os.SEEK_END)).passes() for o in sweep][-1]
        os.pwrite(fd, os.urandom(4096), last)
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    return last


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("devices", nargs="*")
    ap.add_argument("--blank-file", metavar="SIZE", help="also read a blank sparse file of SIZE (truncate -s)")
    ap.add_argument("--hogs", type=int, default=os.cpu_count() or 1, help="busy loops (default: one a core)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--island", metavar="DEVICE", help="write data at the page read last on DEVICE, then read it too")
    args = ap.parse_args()
    if args.island:
        print(f"{args.island}: 4 KiB of data written at byte {write_island(args.island):,}, the page read last")
        args.devices.append(args.island)
    with tempfile.TemporaryDirectory(prefix="zfslab-sample-") as folder:
        devices, loop = list(args.devices), None
        if args.blank_file:
            device, loop = blank_device(folder, args.blank_file)
            devices.append(device)
        try:
            for hogs_n in (0, args.hogs):
                hogs = start_hogs(hogs_n)
                try:
                    for device in devices:
                        for r in range(args.rounds):
                            clock = RecordingClock()
                            s = read_samples(device, exclusive=device.startswith("/dev/"), clock=clock)
                            found = ",".join(f.kind for f in sample_findings(s)) or "none"
                            print(f"{device} hogs={hogs_n} round={r + 1}: planned {s.planned:,}, read {s.sampled:,} "
                                  f"in {s.seconds:.2f} s; the old {OLD_BUDGET_S:g} s budget: "
                                  f"{clock.within(OLD_BUDGET_S):,} of {s.planned:,}; findings: {found}",
                                  flush=True)
                finally:
                    stop_hogs(hogs)
                print(f"load average: {os.getloadavg()[0]:.1f}", flush=True)
        finally:
            if loop:
                subprocess.run(["losetup", "--detach", loop], check=False)


if __name__ == "__main__":
    main()
