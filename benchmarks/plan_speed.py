"""How long `zfslab plan` takes for 24 and 96 disks, `plan --db` on a calibration (streaming, then
streaming with the ars suite's IOPS and a drill's resilvers), and a Monte Carlo raidz3 estimate.

Run: python3 benchmarks/plan_speed.py   (no root, no disks; from the repository: the databases
are built by tests/unit/test_plan_db.py's helpers, through the real store code). Prints medians.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

import numpy as np

from zfslab.model.disk_types import DISK_TYPES
from zfslab.model.layout_grammar import parse_layout
from zfslab.model.plan import disk_set, plan
from zfslab.model.recommend import Goal, recommend
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
        # everything the command computes: space, risk, speed, and the recommendation over them
        full = median_seconds(lambda: recommend(plan(ds, risk=risk, speed=DISK_TYPES["hdd"].speed), Goal()), 10)
        cli = median_seconds(lambda: subprocess.run(
            [sys.executable, "-m", "zfslab", "plan", f"{disks}x4TB"], capture_output=True, check=True), 5)
        print(f"plan {disks}x4TB: {len(rows)} layouts; library: capacity {space * 1000:.0f} ms, "
              f"capacity + risk {both * 1000:.0f} ms, + speed + recommendation {full * 1000:.0f} ms; "
              f"whole command {cli * 1000:.0f} ms (median)")
    plan_db()
    layout = parse_layout("raidz3:11")
    params = params_for_class("hdd", 16 * TB)
    t0 = time.perf_counter()
    r = simulate(layout, params, usable_bytes=100 * TB, rng=np.random.default_rng(1), trials=4000,
                 target_relative_error=0.10)
    dt = time.perf_counter() - t0
    print(f"Monte Carlo raidz3:11, 16 TB hdd: P(loss 5 y) = {r.p_loss[1]:.3e}, relative error "
          f"{100 * r.extra['relative_error']['5']:.1f} % after {r.extra['trials']} trials in {dt:.1f} s")


def plan_db() -> None:
    """`plan --db` on the calibration design of 6 and 24 disks: the whole command, and the fit alone."""
    import os
    import tempfile
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from tests.unit.test_plan_db import ars_run, bench_db
    from zfslab.store.bench_fit import fit_bench_run
    from zfslab.model.performance import PRESETS
    with tempfile.TemporaryDirectory() as folder:
        for disks in (6, 24):
            seq = bench_db(os.path.join(folder, f"seq{disks}.sqlite"), disks)
            both = bench_db(os.path.join(folder, f"ars{disks}.sqlite"), disks)
            ars_run(both, disks)
            for name, db in (("streaming", seq), ("streaming + ars IOPS", both)):
                fit = median_seconds(lambda: fit_bench_run(db, PRESETS["hdd7200"]), 5)
                cli = median_seconds(lambda: subprocess.run(
                    [sys.executable, "-m", "zfslab", "plan", "--db", db, "--all"], capture_output=True, check=True), 3)
                print(f"plan --db, {disks} disks, {name}: fit {fit * 1000:.0f} ms; whole command {cli * 1000:.0f} ms "
                      "(median)")


if __name__ == "__main__":
    main()
