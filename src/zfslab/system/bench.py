"""`zfslab bench`'s executor: runs a BenchPlan's steps (system/bench_plan.py) exactly as planned.

Each layout's create, its tests, then, whatever happened, its destroy and wipes. Each measurement
is committed in its own transaction; the GUID of every pool created is recorded in the database
at once, so a later run destroys a leftover pool, and wipes a leftover disk, only when its GUID
proves it was this run's (system/pool_safety.py).
"""

from __future__ import annotations

import concurrent.futures as cf
import json
from collections.abc import Callable
from dataclasses import dataclass, field

from zfslab.errors import ZfslabError
from zfslab.model.layouts import Layout
from zfslab.store.results import Measurement, Results
from zfslab.system.bench_plan import (MARK, MOUNTPOINT, POOL, BenchOptions, Step, check_bench_layouts, format_steps,
                                      plan_steps, run_key)
from zfslab.system.bonnie import Bonnie, BonnieResult
from zfslab.system.diskstats import Sampler, kernel_names
from zfslab.system.fio import Fio, FioResult
from zfslab.system.pool_ops import SYSTEM_CLOCK, Clock, Drivers, run_wipes
from zfslab.system.pool_safety import MixedReplication, destroy_own_pool
from zfslab.system.runner import Runner
from zfslab.system.suites import BONNIE_TESTS
from zfslab.system.zfs import ZfsDriver

__all__ = ["POOL", "Bench", "BenchError", "BenchOptions", "MixedReplication", "check_bench_layouts", "format_steps",
           "plan_steps", "run_key", "measurement", "bonnie_measurements"]


class BenchError(ZfslabError):
    """A bench run that cannot go on (a pool mounted elsewhere, a leftover that is not ours)."""

    exit_code = 2


@dataclass
class Bench:
    """Executes a plan against a ZFS driver, fio and a results store."""

    zfs: ZfsDriver
    fio: Fio
    results: Results
    runner: Runner
    options: BenchOptions
    layouts: list[Layout]
    devices: list[str]
    key: str
    run_id: int
    sandbox: bool = False
    bonnie: Bonnie | None = None  # the engine of suite bonnie
    progress: Callable[[str, int, int], None] = lambda text, done, total: None
    log: Callable[[str], None] = lambda text: None
    mountpoint: str = MOUNTPOINT  # where the pool mounts (ZFS's default for its name): the tests run there
    clock: Clock = SYSTEM_CLOCK
    on_wiped: Callable[[list[str]], None] = lambda devices: None  # records the disks' SMART counters
    _sampler_disks: list[str] = field(default_factory=list)

    @property
    def drivers(self) -> Drivers:
        return Drivers(self.zfs, self.fio, self.runner, self.bonnie)

    def destroy_leftovers(self) -> list[str]:
        """Destroy the pool an interrupted run of this same command left behind (see
        destroy_own_pool); returns its name if there was one."""
        return destroy_own_pool(self.zfs, POOL, self.results.pool_guids(run_id=self.run_id), "bench", self.log,
                                self.results.intents(run_id=self.run_id), MARK,
                                lambda guid, layout: self.results.record_pool(guid, POOL, "bench", layout, self.run_id))

    def plan(self) -> list[Step]:
        return plan_steps(self.layouts, self.devices, self.options, self.key, None,
                          self.results.done(self.run_id), self.mountpoint, sandbox=self.sandbox)

    def run(self, steps: list[Step] | None = None) -> None:
        """Execute the plan (by default, what is left of this run): each layout's create, its
        tests, then, whatever happened, its destroy and wipes."""
        self._sampler_disks = kernel_names(self.devices)
        steps = self.plan() if steps is None else steps
        self.wipe([s for s in steps if s.kind == "wipe" and not s.layout])  # plan_steps' dirty, before any pool
        steps = [s for s in steps if s.layout]
        per_test = len(BONNIE_TESTS) if self.options.bonnie else 1
        total = len(self.layouts) * self.options.repeats * len(self.options.test_names)
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
                self._created(run.create)
                for step in run.tests:
                    self.progress(f"{where}: {step.test}, repeat {step.repeat}/{self.options.repeats}", finished, total)
                    self.results.add(self.run_id, *self.measure(step))
                    finished += per_test
                    self.progress(f"{where}: {step.test}, repeat {step.repeat}", finished, total)
            finally:
                for step in run.cleanup:  # the destroy, then the wipes
                    if step.kind != "wipe":
                        step.op.run(self.drivers)
                self.wipe([s for s in run.cleanup if s.kind == "wipe"])
        self.results.finish_run(self.run_id)

    def wipe(self, steps: list[Step]) -> None:
        """Planned wipes, all at once (pool_ops.run_wipes); then their SMART counters are recorded."""
        if steps:
            self.on_wiped(run_wipes([s.op for s in steps], self.drivers))

    def _created(self, create: Step) -> None:
        """Record the new pool's GUID and capacity, and check it mounted where the tests run."""
        pool = create.op.pool
        self.results.record_pool(self.zfs.pool_guid(pool), pool, "bench", create.layout, self.run_id)
        self.results.add_capacity(self.run_id, create.layout, self.zfs.pool(pool).size_bytes,
                                  self.zfs.dataset(pool).usable_bytes)
        actual = self.zfs.get(pool, "mountpoint")["mountpoint"].value
        if actual != self.mountpoint:
            raise BenchError(f"pool {pool} is mounted at {actual}, not at {self.mountpoint} where the plan runs "
                             f"its tests; is an altroot or a mountpoint inherited? (zpool get altroot {pool})")

    def _monitor(self, argv: tuple[str, ...], seconds: int) -> str:
        """What the monitor beside a test printed (zpool iostat); nothing if it could not run."""
        try:
            return self.runner.run(list(argv), timeout_s=seconds + 60, check=False).stdout
        except ZfslabError:
            return ""

    def measure(self, step: Step) -> list[Measurement]:
        """Run one test step as planned; the measurements it yields (bonnie++: three)."""
        if self.options.bonnie:
            return self._measure_bonnie(step)
        sampler = Sampler(self._sampler_disks).start()
        t0 = self.clock.monotonic()
        with cf.ThreadPoolExecutor(1) as pool:
            iostat = pool.submit(self._monitor, step.op.monitor, self.options.monitor_s)
            try:
                result = step.op.run(self.drivers)
            finally:
                disk = sampler.stop()
            iostat_text = iostat.result()
        seconds = self.clock.monotonic() - t0
        return [measurement(step.layout, step.test, step.repeat, seconds, result, disk, iostat_text)]

    def _measure_bonnie(self, step: Step) -> list[Measurement]:
        """One bonnie++ run: its block write, rewrite and read, stored together."""
        sampler = Sampler(self._sampler_disks).start()
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
