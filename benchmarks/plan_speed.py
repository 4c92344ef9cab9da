"""How long `zfslab plan` takes for 24 and 96 disks (library call and whole CLI process).

Run: python3 benchmarks/plan_speed.py   (no root, no disks). Prints the median of repeats.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

from zfslab.model.plan import disk_set, plan
from zfslab.model.units import TB


def median_seconds(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    for disks in (24, 96):
        ds = disk_set(disks, 4 * TB)
        rows = plan(ds)
        lib = median_seconds(lambda: plan(ds), 20)
        cli = median_seconds(lambda: subprocess.run(
            [sys.executable, "-m", "zfslab", "plan", f"{disks}x4TB"], capture_output=True, check=True), 5)
        print(f"plan {disks}x4TB: {len(rows)} layouts; library {lib * 1000:.1f} ms, whole command {cli * 1000:.0f} ms (median)")


if __name__ == "__main__":
    main()
