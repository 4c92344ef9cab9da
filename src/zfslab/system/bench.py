"""`zfslab bench`'s executor: `execute_bench(plan, ...)` runs a BenchPlan's steps (system/bench_plan.py)
exactly as planned.

First the pool an interrupted run left (its engines ended, then destroyed) and the wipes of the
disks that hold data; then each layout's create, its tests, then, whatever happened, its destroy
and wipes. Each measurement is committed in its own transaction; the GUID of every pool created is
recorded in the database at once, so a later run destroys a leftover pool, and wipes a leftover
disk, only when its GUID proves it was this run's (system/pool_safety.py).
"""

from __future__ import annotations

import concurrent.futures as cf
import json
from collections.abc import Callable
from dataclasses import dataclass

from zfslab.errors import ZfslabError
from zfslab.store.results import Measurement, Results
from zfslab.system.bench_plan import MARK, BenchPlan, Step
from zfslab.system.bonnie import BonnieResult
from zfslab.system.diskstats import Sampler, kernel_names
from zfslab.system.fio import FioResult
from zfslab.system.pool_ops import SYSTEM_CLOCK, Clock, DestroyLeftover, Drivers, run_wipes
from zfslab.system.pool_safety import adopt_line
from zfslab.system.suites import BONNIE_TESTS

__all__ = ["BenchError", "execute_bench", "measurement", "bonnie_measurements"]


class BenchError(ZfslabError):
    """A bench run that cannot go on (a pool mounted elsewhere, a leftover that is not ours)."""

    exit_code = 2


def execute_bench(plan: BenchPlan, drivers: Drivers, results: Results, clock: Clock = SYSTEM_CLOCK, *, run_id: int,
                  progress: Callable[[str, int, int], None] = lambda text, done, total: None,
                  log: Callable[[str], None] = lambda text: None,
                  on_wiped: Callable[[list[str]], None] = lambda devices: None) -> None:
    """Run exactly the plan's steps, each measurement stored in `results` (store/results.py) under
    run_id, which finishes the run; `on_wiped` hears the disks each wipe cleared (the command
    records their SMART counters), `progress` (text, measurements done, of all) each test."""
    _Executor(plan, drivers, results, run_id, clock, progress, log, on_wiped).run()


@dataclass
class _Executor:
    plan: BenchPlan
    drivers: Drivers
    results: Results
    run_id: int
    clock: Clock
    progress: Callable[[str, int, int], None]
    log: Callable[[str], None]
    on_wiped: Callable[[list[str]], None]

    def run(self) -> None:
        request, options = self.plan.request, self.plan.request.options
        self.sampler_disks = kernel_names(list(request.devices))
        steps = list(self.plan.steps)
        for step in steps:
            if step.kind == "leftover":  # before anything else: its disks are wiped next
                self.leftover(step.op)
        self.wipe([s for s in steps if s.kind == "wipe" and not s.layout])  # the dirty disks, before any pool
        steps = [s for s in steps if s.layout]
        per_test = len(BONNIE_TESTS) if options.bonnie else 1
        total = len(request.layouts) * options.repeats * len(options.test_names)
        finished = total - per_test * sum(s.kind == "test" for s in steps)
        self.progress("resuming" if finished else "starting", finished, total)
        runs = _layout_runs(steps)
        for i, run in enumerate(runs, 1):
            where = f"layout {i}/{len(runs)} {run.layout}"
            # recorded first: a kill between the create and the GUID's record leaves a pool a resume knows
            self.results.record_intent(run.create.op.pool, "bench", run.layout, run.create.op.fs_props[MARK],
                                       self.run_id)
            run.create.op.run(self.drivers)
            try:
                self.created(run.create)
                for step in run.tests:
                    self.progress(f"{where}: {step.test}, repeat {step.repeat}/{options.repeats}", finished, total)
                    self.results.add(self.run_id, *self.measure(step))
                    finished += per_test
                    self.progress(f"{where}: {step.test}, repeat {step.repeat}", finished, total)
            finally:
                for step in run.cleanup:  # the destroy, then the wipes
                    if step.kind != "wipe":
                        step.op.run(self.drivers)
                self.wipe([s for s in run.cleanup if s.kind == "wipe"])
        self.results.finish_run(self.run_id)

    def leftover(self, op: DestroyLeftover) -> None:
        """The interrupted run's pool: its GUID recorded first if only its create was (its disks'
        labels then prove them ours), then its engines ended and the pool destroyed."""
        own = op.own
        if own.adopted:
            self.log(adopt_line(own))
            self.results.record_pool(own.guid, own.name, "bench", own.layout, self.run_id)
        op.run(self.drivers, self.log)

    def wipe(self, steps: list[Step]) -> None:
        """Planned wipes, all at once (pool_ops.run_wipes); then their SMART counters are recorded."""
        if steps:
            self.on_wiped(run_wipes([s.op for s in steps], self.drivers))

    def created(self, create: Step) -> None:
        """Record the new pool's GUID and capacity, and check it mounted where the tests run."""
        pool, zfs, mountpoint = create.op.pool, self.drivers.zfs, self.plan.request.mountpoint
        self.results.record_pool(zfs.pool_guid(pool), pool, "bench", create.layout, self.run_id)
        self.results.add_capacity(self.run_id, create.layout, zfs.pool(pool).size_bytes,
                                  zfs.dataset(pool).usable_bytes)
        actual = zfs.get(pool, "mountpoint")["mountpoint"].value
        if actual != mountpoint:
            raise BenchError(f"pool {pool} is mounted at {actual}, not at {mountpoint} where the plan runs "
                             f"its tests; is an altroot or a mountpoint inherited? (zpool get altroot {pool})")

    def monitor(self, argv: tuple[str, ...], seconds: int) -> str:
        """What the monitor beside a test printed (zpool iostat); nothing if it could not run."""
        try:
            return self.drivers.runner.run(list(argv), timeout_s=seconds + 60, check=False).stdout
        except ZfslabError:
            return ""

    def measure(self, step: Step) -> list[Measurement]:
        """Run one test step as planned; the measurements it yields (bonnie++: three)."""
        options = self.plan.request.options
        if options.bonnie:
            return self.measure_bonnie(step)
        sampler = Sampler(self.sampler_disks).start()
        t0 = self.clock.monotonic()
        with cf.ThreadPoolExecutor(1) as pool:
            iostat = pool.submit(self.monitor, step.op.monitor, options.monitor_s)
            try:
                result = step.op.run(self.drivers)
            finally:
                disk = sampler.stop()
            iostat_text = iostat.result()
        seconds = self.clock.monotonic() - t0
        return [measurement(step.layout, step.test, step.repeat, seconds, result, disk, iostat_text)]

    def measure_bonnie(self, step: Step) -> list[Measurement]:
        """One bonnie++ run: its block write, rewrite and read, stored together."""
        sampler = Sampler(self.sampler_disks).start()
        t0 = self.clock.monotonic()
        try:
            result = step.op.run(self.drivers)
        finally:
            disk = sampler.stop()
        return bonnie_measurements(step.layout, step.repeat, self.clock.monotonic() - t0, result, disk,
                                   step.job.size_mib)


@dataclass(frozen=True)
class _LayoutRun:
    create: Step
    tests: list[Step]
    cleanup: list[Step]  # destroy and wipes: run whatever happened

    @property
    def layout(self) -> str:
        return self.create.layout


def _layout_runs(steps: list[Step]) -> list[_LayoutRun]:
    runs: list[_LayoutRun] = []
    for s in steps:
        if s.kind == "create":
            runs.append(_LayoutRun(s, [], []))
        elif s.kind == "test":
            runs[-1].tests.append(s)
        else:
            runs[-1].cleanup.append(s)
    return runs


def bonnie_measurements(layout: str, repeat: int, seconds: float, result: BonnieResult, disk: dict,
                        size_mib: int) -> list[Measurement]:
    """bonnie++'s three block columns as three measurements. The disks were sampled over the
    whole run, so their figures are shared by the three."""
    def mb(kib_s: float | None) -> float | None:  # +++++ (too fast to time) is stored as not measured, never as 0
        return None if kib_s is None else BonnieResult.mb_s(kib_s)
    series = json.dumps(disk.get("series", {}))
    # rewrite and read each read the whole file: the disks must have delivered about twice it
    suspect = bool(disk.get("series")) and 2 * size_mib * 1.048576 > 1.2 * disk["disk_read_mb"] + 16

    # bonnie++'s latency is a worst case, not a percentile: it stays in the raw CSV line
    def m(test, read, write, is_read):
        return Measurement(layout, test, repeat, seconds, read, write, 0.0, 0.0, None, None, None, None, None,
                           disk["disk_read_mb"], disk["disk_write_mb"], disk["disk_util_max"], suspect and is_read,
                           result.raw_csv, series, "")
    w, rw, r = BONNIE_TESTS
    return [m(w, 0.0, mb(result.put_block_kib_s), False),
            # a rewrite reads each chunk and writes it back: bonnie++ reports the bytes rewritten
            m(rw, 0.0, mb(result.rewrite_kib_s), False),
            m(r, mb(result.get_block_kib_s), 0.0, True)]


def measurement(layout: str, test: str, repeat: int, seconds: float, result: FioResult, disk: dict,
                iostat_text: str) -> Measurement:
    """One stored result: fio's numbers summed over its jobs, the disks' view beside them."""
    jobs = result.jobs
    read_bytes = sum(j.read.io_bytes for j in jobs)
    r_mb = sum(j.read.bw_bytes_s for j in jobs) / 1e6
    w_mb = sum(j.write.bw_bytes_s for j in jobs) / 1e6

    def us(v):
        return None if v is None else v / 1000.0
    first = jobs[0]
    # more read by fio than the disks delivered (with a margin for metadata): served from a cache
    suspect = bool(disk.get("series")) and read_bytes / 1e6 > 1.2 * disk["disk_read_mb"] + 16
    return Measurement(
        layout, test, repeat, seconds, r_mb, w_mb, sum(j.read.iops for j in jobs), sum(j.write.iops for j in jobs),
        us(first.read.clat_p50_ns), us(first.read.clat_p99_ns), us(first.write.clat_p50_ns), us(first.write.clat_p99_ns),
        us(first.sync_mean_ns), disk["disk_read_mb"], disk["disk_write_mb"], disk["disk_util_max"], suspect,
        result.raw_json, json.dumps(disk.get("series", {})), iostat_text)
