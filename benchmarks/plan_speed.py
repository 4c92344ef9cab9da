"""How long `zfslab plan` takes for 24 and 96 disks, and a Monte Carlo raidz3 estimate.

Run: python3 benchmarks/plan_speed.py   (no root, no disks). Prints medians of repeats.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

import numpy as np

from zfslab.model.layouts import parse_layout
from zfslab.model.plan import disk_set, plan
from zfslab.model.reliability.montecarlo import simulate
from zfslab.model.reliability.params import params_for_class
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
        risk = params_for_class("hdd", ds.disk_bytes)
        rows = plan(ds)
        space = median_seconds(lambda: plan(ds), 10)
        both = median_seconds(lambda: plan(ds, risk=risk), 10)
        cli = median_seconds(lambda: subprocess.run(
            [sys.executable, "-m", "zfslab", "plan", f"{disks}x4TB"], capture_output=True, check=True), 5)
        print(f"plan {disks}x4TB: {len(rows)} layouts; library: capacity {space * 1000:.0f} ms, "
              f"capacity + risk {both * 1000:.0f} ms; whole command {cli * 1000:.0f} ms (median)")
    layout = parse_layout("raidz3:11")
    params = params_for_class("hdd", 16 * TB)
    t0 = time.perf_counter()
    r = simulate(layout, params, usable_bytes=100 * TB, rng=np.random.default_rng(1), trials=4000,
                 target_relative_error=0.10)
    dt = time.perf_counter() - t0
    print(f"Monte Carlo raidz3:11, 16 TB hdd: P(loss 5 y) = {r.p_loss[1]:.3e}, relative error "
          f"{100 * r.extra['relative_error']['5']:.1f} % after {r.extra['trials']} trials in {dt:.1f} s")


if __name__ == "__main__":
    main()
