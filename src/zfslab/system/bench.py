"""`zfslab bench`: for each layout, create the pool, run the suite, repeat, destroy, next.

Plan, show, confirm, execute: `plan_steps` lists every command in order (what --dry-run
prints); `Bench.run` executes them, committing each measurement in its own transaction and
skipping what an interrupted run of the same command already measured. The GUID of every pool
it creates is recorded in the database at once, so a later run destroys a leftover pool, and
wipes a leftover disk, only when its GUID proves it was this run's.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from zfslab.errors import UsageError, ZfslabError
from zfslab.model.layouts import Layout, replication_mismatch, zpool_create_argv
from zfslab.model.units import parse_fio_size
from zfslab.store.results import Measurement, Results
from zfslab.system.bonnie import Bonnie, BonnieJob, BonnieResult
from zfslab.system.diskstats import Sampler, kernel_names
from zfslab.system.disks import DisksRefused, udev_settle, zero_samples
from zfslab.system.fio import Fio, FioResult
from zfslab.system.processes import end_engines_on
from zfslab.system.runner import Runner
from zfslab.system.suites import BONNIE_TESTS, Test
from zfslab.system.zfs import ZfsDriver

POOL = "zfslab-bench"
MARK = "zfslab:bench"


class BenchError(ZfslabError):
    """A bench run that cannot go on (a pool mounted elsewhere, a leftover that is not ours)."""

    exit_code = 2


class MixedReplication(UsageError):
    """layout {} mixes replication levels ({}): zpool create refuses that without -f ("mismatched replication
    level"), and zfslab never passes -f; {}"""

    def __str__(self) -> str:
        return " ".join(super().__str__().split())  # one line, whatever the docstring's wrapping


def check_replication(layout: Layout, fix: str) -> None:
    """Refuse, before any disk is touched, a layout that `zpool create` would refuse without -f
    (model/layouts.py repeats zpool's get_replication()). zfslab does not force it: -f also
    overrides zpool's own checks that the disks are unused. `fix` is the next step to offer."""
    why = replication_mismatch(layout)
    if why is not None:
        raise MixedReplication(layout, why, fix)


def check_bench_layouts(layouts: list[Layout]) -> None:
    """check_replication for each layout of a bench run, offering its parts as separate layouts."""
    for layout in layouts:
        parts = ",".join(g.token for g in layout.groups)
        check_replication(layout, f"bench its parts as separate layouts: --layouts {parts}")


@dataclass(frozen=True)
class BenchOptions:
    suite: str
    tests: tuple[Test, ...]
    repeats: int = 3
    ashift: int = 12
    recordsize: str = "128K"
    compression: str = "off"
    size: str = "4g"
    runtime_s: int = 60
    ramp_s: int = 10
    job_file: str | None = None  # the user's own fio job file instead of a suite

    def fs_props(self, key: str) -> dict[str, str]:
        # primarycache=metadata: data blocks never enter the ARC, so reads come from the disks
        return {"compression": self.compression, "recordsize": self.recordsize, "primarycache": "metadata",
                "atime": "off", MARK: key}

    @property
    def engine(self) -> str:
        return "bonnie++" if self.suite == "bonnie" else "fio"

    @property
    def test_names(self) -> list[str]:
        if self.engine == "bonnie++":
            return list(BONNIE_TESTS)
        return [os.path.basename(self.job_file)] if self.job_file else [t.name for t in self.tests]

    def bonnie_job(self, directory: str) -> BonnieJob:
        # calomel's command; bonnie++ insists on a file of twice the RAM it is told about, and
        # primarycache=metadata (fs_props) keeps the file out of the ARC whatever that claim
        size_mib = max(parse_fio_size(self.size) >> 20, 2)
        return BonnieJob(directory, size_mib=size_mib, ram_mib=min(1024, size_mib // 2))

    def as_dict(self) -> dict:
        return {"suite": self.suite, "tests": self.test_names, "repeats": self.repeats, "ashift": self.ashift,
                "recordsize": self.recordsize, "compression": self.compression, "size": self.size,
                "runtime_s": self.runtime_s, "ramp_s": self.ramp_s}


def run_key(layouts: list[Layout], disk_ids: list[str], options: BenchOptions) -> str:
    """Same layouts, disks (by serial) and options: the same run, resumable."""
    text = json.dumps({"layouts": [str(x) for x in layouts], "disks": disk_ids, **options.as_dict()}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Step:
    """One thing a run does. The plan is a list of these; --dry-run prints it and Bench.run
    executes exactly it (tests/unit/test_bench.py records the argv the runner receives)."""

    kind: str  # create | test | destroy | wipe
    layout: str
    argv: tuple[str, ...]  # the command as it runs; for a wipe, what it runs on the device
    test: str = ""
    repeat: int = 0
    devices: tuple[str, ...] = ()  # create: the pool's disks; wipe: the one disk
    job: object = None  # test: the FioJob or BonnieJob whose argv this is

    @property
    def line(self) -> str:
        if self.kind == "wipe":
            return wipe_line(self.devices[0])
        return shlex.join(self.argv)


def wipe_line(device: str, *, sandbox: bool = False) -> str:
    """How a plan shows a wipe (wipe_devices): several commands, some of it done by zfslab itself."""
    if sandbox:
        return f"# wipe {device}: truncate the file to nothing and back to its size (sparse and empty again)"
    return (f"# wipe {device}: zpool labelclear -f and wipefs --all on each partition and the "
            f"disk, zero the sampled 4 KiB pages (one a MiB, up to 16,384), and make the kernel forget "
            f"partitions it still lists (docs/safety.md)")


def plan_steps(layouts: list[Layout], devices: list[str], options: BenchOptions, key: str, fio: Fio,
               done: set[tuple[str, str, int]] | frozenset = frozenset(), mnt: str = f"/{POOL}",
               dirty: tuple[str, ...] = ()) -> list[Step]:
    """Every step of the run, in order, leaving out what `done` (an interrupted run's stored
    measurements) already holds: a layout with nothing left is not even created. `dirty`: the
    disks that hold data and that the gate let through (--wipe with their serials): wiped first."""
    check_bench_layouts(layouts)
    steps = [Step("wipe", "", ("wipe", d), devices=(d,)) for d in dirty]
    for layout in layouts:
        used = tuple(devices[:layout.disks])
        name = str(layout)
        tests = []
        for repeat in range(1, options.repeats + 1):
            if options.job_file:
                argv = ("fio", "--output-format=json", options.job_file)
                tests.append(Step("test", name, argv, options.test_names[0], repeat, job=options.job_file))
            elif options.engine == "bonnie++":  # one run gives all three of calomel's columns
                job = options.bonnie_job(mnt)
                tests.append(Step("test", name, tuple(job.argv()), BONNIE_TESTS[0], repeat, job=job))
            else:
                for t in options.tests:
                    job = t.job(mnt, size=options.size, runtime_s=options.runtime_s, ramp_s=options.ramp_s)
                    tests.append(Step("test", name, tuple(fio.argv(job)), t.name, repeat, job=job))
        tests = [t for t in tests if not _measured(t, options, done)]
        if not tests:
            continue
        steps.append(Step("create", name, tuple(zpool_create_argv(POOL, layout, list(used), ashift=options.ashift,
                                                                  fs_props=options.fs_props(key))), devices=used))
        steps += tests
        steps.append(Step("destroy", name, ("zpool", "destroy", "-f", POOL)))
        steps += [Step("wipe", name, ("wipe", d), devices=(d,)) for d in used]
    return steps


def _measured(step: Step, options: BenchOptions, done) -> bool:
    names = BONNIE_TESTS if options.engine == "bonnie++" and not options.job_file else (step.test,)
    return all((step.layout, t, step.repeat) in done for t in names)


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
    mountpoint: str = f"/{POOL}"  # where the pool mounts (ZFS's default for its name): the tests run there
    on_wiped: Callable[[list[str]], None] = lambda devices: None  # records the disks' SMART counters
    _sampler_disks: list[str] = field(default_factory=list)

    def destroy_leftovers(self) -> list[str]:
        """Destroy the pool an interrupted run of this same command left behind (see
        destroy_own_pool); returns its name if there was one."""
        return destroy_own_pool(self.zfs, POOL, self.results.pool_guids(run_id=self.run_id), "bench", self.log,
                                self.results.intents(run_id=self.run_id), MARK,
                                lambda guid, layout: self.results.record_pool(guid, POOL, "bench", layout, self.run_id))

    def wipe(self, devices: list[str]) -> None:
        wipe_devices(self.runner, devices, sandbox=self.sandbox)
        self.on_wiped(devices)

    def plan(self) -> list[Step]:
        return plan_steps(self.layouts, self.devices, self.options, self.key, self.fio,
                          self.results.done(self.run_id), self.mountpoint)

    def run(self, steps: list[Step] | None = None) -> None:
        """Execute the plan (by default, what is left of this run): each layout's create, its
        tests, then, whatever happened, its destroy and wipes."""
        self._sampler_disks = kernel_names(self.devices)
        steps = self.plan() if steps is None else steps
        for step in steps:  # the disks that held data, before the first pool (plan_steps' dirty)
            if step.kind != "wipe" or step.layout:
                break
            self.wipe(list(step.devices))
        steps = [s for s in steps if s.layout]
        per_test = len(BONNIE_TESTS) if self.options.engine == "bonnie++" and not self.options.job_file else 1
        total = len(self.layouts) * self.options.repeats * len(self.options.test_names)
        finished = total - per_test * sum(s.kind == "test" for s in steps)
        self.progress("resuming" if finished else "starting", finished, total)
        runs = _layout_runs(steps)
        layouts = {str(x): x for x in self.layouts}
        for i, run in enumerate(runs, 1):
            where = f"layout {i}/{len(runs)} {run.layout}"
            # recorded first: a kill between the create and the GUID's record leaves a pool a resume knows
            self.results.record_intent(POOL, "bench", run.layout, self.key, self.run_id)
            self.zfs.create_pool(POOL, layouts[run.layout], list(run.create.devices), ashift=self.options.ashift,
                                 fs_props=self.options.fs_props(self.key))
            try:
                self.results.record_pool(self.zfs.pool_guid(POOL), POOL, "bench", run.layout, self.run_id)
                self.results.add_capacity(self.run_id, run.layout, self.zfs.pool(POOL).size_bytes,
                                          self.zfs.dataset(POOL).usable_bytes)
                self._check_mountpoint()
                for step in run.tests:
                    self.progress(f"{where}: {step.test}, repeat {step.repeat}/{self.options.repeats}", finished, total)
                    self.results.add(self.run_id, *self.measure(step))
                    finished += per_test
                    self.progress(f"{where}: {step.test}, repeat {step.repeat}", finished, total)
            finally:
                for step in run.cleanup:
                    if step.kind == "destroy" and self.zfs.pool_exists(POOL):
                        self.zfs.destroy_pool(POOL, force=True)
                    elif step.kind == "wipe":
                        self.wipe(list(step.devices))
        self.results.finish_run(self.run_id)

    def _check_mountpoint(self) -> None:
        actual = self.zfs.get(POOL, "mountpoint")["mountpoint"].value
        if actual != self.mountpoint:
            raise BenchError(f"pool {POOL} is mounted at {actual}, not at {self.mountpoint} where the plan runs "
                             f"its tests; is an altroot or a mountpoint inherited? (zpool get altroot {POOL})")

    def _iostat(self, seconds: int) -> str:
        try:
            return self.runner.run(["zpool", "iostat", "-Hpv", "-y", POOL, str(max(seconds, 1)), "1"],
                                   timeout_s=seconds + 60, check=False).stdout
        except ZfslabError:
            return ""

    def measure(self, step: Step) -> list[Measurement]:
        """Run one test step as planned; the measurements it yields (bonnie++: three)."""
        if self.options.engine == "bonnie++" and not self.options.job_file:
            return self._measure_bonnie(step)
        sampler = Sampler(self._sampler_disks).start()
        t0 = time.monotonic()
        import concurrent.futures as cf
        with cf.ThreadPoolExecutor(1) as pool:
            expected = self.options.runtime_s + self.options.ramp_s if not self.options.job_file else 5
            iostat = pool.submit(self._iostat, expected)
            try:
                if self.options.job_file:
                    result = self.fio.run_file(self.options.job_file, self.mountpoint)
                else:
                    result = self.fio.run(step.job)
            finally:
                disk = sampler.stop()
            iostat_text = iostat.result()
        return [measurement(step.layout, step.test, step.repeat, time.monotonic() - t0, result, disk, iostat_text)]

    def _measure_bonnie(self, step: Step) -> list[Measurement]:
        """One bonnie++ run: its block write, rewrite and read, stored together."""
        sampler = Sampler(self._sampler_disks).start()
        t0 = time.monotonic()
        try:
            result = (self.bonnie or Bonnie(self.runner)).run(step.job)
        finally:
            disk = sampler.stop()
        return bonnie_measurements(step.layout, step.repeat, time.monotonic() - t0, result, disk, step.job.size_mib)


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


def destroy_own_pool(zfs: ZfsDriver, name: str, guids: set[str], purpose: str, log: Callable[[str], None],
                     intents: dict[tuple[str, str], str] | None = None, mark_prop: str = "",
                     adopt: Callable[[str, str], None] = lambda guid, layout: None) -> list[str]:
    """Destroy the imported pool `name` if its GUID is one zfslab recorded (a run killed in the
    middle of a layout leaves it); first end the benchmark engines still working on it. A pool
    whose GUID was not recorded is zfslab's only when a create of that name and mark (the
    user property `mark_prop`, which the create sets) was recorded before it ran (`intents`:
    (name, mark) -> layout), i.e. the run was killed between the create and the GUID's
    record: `adopt(guid, layout)` records the GUID before the pool is destroyed, so its labels
    stay provably zfslab's. Any other pool of that name is someone else's: refused, never
    touched."""
    if not zfs.pool_exists(name):
        return []
    guid = zfs.pool_guid(name)
    if guid not in guids:
        mark = zfs.get(name, mark_prop)[mark_prop].value if intents and mark_prop else ""
        if not mark or (name, mark) not in intents:
            raise DisksRefused(f"a pool named {name} (GUID {guid}) exists, and this results database did not "
                               f"create it; zfslab never destroys it: export or rename it (zpool export {name}), "
                               f"or use the database of the run that made it")
        log(f"pool {name} (GUID {guid}) is the one this run was creating when it was interrupted "
            f"({mark_prop}={mark}, recorded before the create): recording its GUID")
        adopt(guid, intents[(name, mark)])
    mountpoint = zfs.get(name, "mountpoint")["mountpoint"].value
    if mountpoint.startswith("/"):
        for user in end_engines_on(mountpoint):
            log(f"ended {user.name} (pid {user.pid}), left running on {name} by an interrupted zfslab {purpose}")
    log(f"destroying pool {name}, left by an interrupted zfslab {purpose} run")
    zfs.destroy_pool(name, force=True)
    return [name]


def wipe_devices(runner: Runner, devices: list[str], *, sandbox: bool = False) -> None:
    """Clear the labels and partition table a destroyed pool leaves, and zero the regions the
    emptiness check samples (system/disks.py), so the disks read as empty again."""
    if sandbox:
        for d in devices:
            with open(d, "r+b") as f:
                size = f.seek(0, os.SEEK_END)
                f.truncate(0)
                f.truncate(size)
        return
    reals = [os.path.realpath(d) for d in devices]
    for real in reals:
        for part in partitions(runner, real):
            runner.run(["zpool", "labelclear", "-f", part], check=False)
            runner.run(["wipefs", "--all", "--quiet", part])
        runner.run(["wipefs", "--all", "--quiet", real])
    # every disk's pages at once: each fsync waits on its own disk, so the time is the slowest one's
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=max(1, min(16, len(reals)))) as pool:
        list(pool.map(zero_samples, reals))
    for real in reals:
        if partitions(runner, real):
            forget_partitions(runner, real)


def partitions(runner: Runner, disk: str) -> list[str]:
    """The partitions the kernel lists for `disk` now (not what its partition table says)."""
    return runner.run(["lsblk", "-nrpo", "PATH", disk]).stdout.split()[1:]


def forget_partitions(runner: Runner, disk: str) -> None:
    """Make the kernel drop the partitions of a disk whose table was wiped. wipefs asks it to
    re-read the table (BLKRRPART) but gives up after 1.25 s if a partition is open, and udev
    opens each one to probe it after every write (docs/safety.md#a-busy-udev): the kernel then
    keeps partitions that are no longer on the disk, and the next zpool create cannot label it.
    Once udev has settled nothing holds them, and one re-read drops them."""
    udev_settle(runner)
    runner.run(["blockdev", "--rereadpt", disk], check=False)
    udev_settle(runner)


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


def format_steps(steps: list[Step], skipped: int = 0) -> list[str]:
    lines = [s.line for s in steps]
    if skipped:
        lines.insert(0, f"# resuming: {skipped} measurements already stored are not run again")
    return lines
