"""`zfslab bench`'s plan: for each layout, create the pool, run the suite, repeat, destroy, wipe.

`plan_bench(request)` lists every step in order, each holding the exact operation it runs
(system/pool_ops.py); `BenchPlan.render()` is what --dry-run prints, and `execute_bench(plan, ...)`
(system/bench.py) runs exactly those steps, as restic's prune plans, then executes. The plan knows
nothing of its executor: the executor imports the plan.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass

from zfslab.model.layouts import Layout
from zfslab.model.units import parse_fio_size
from zfslab.system.bonnie import BonnieJob
from zfslab.system.pool_ops import BonnieRun, CreatePool, DestroyLeftover, DestroyPool, FioFile, FioRun, Wipe, op_lines
from zfslab.system.pool_safety import OwnPool, check_replication
from zfslab.system.suites import BONNIE_TESTS, Test
from zfslab.system.zfs import iostat_argv

POOL = "zfslab-bench"
MARK = "zfslab:bench"
MOUNTPOINT = f"/{POOL}"  # where the pool mounts (ZFS's default for its name): the tests run there


def check_bench_layouts(layouts: list[Layout]) -> None:
    """check_replication for each layout of a bench run, offering its parts as separate layouts."""
    for layout in layouts:
        parts = ",".join(g.token for g in layout.groups)
        check_replication(layout, f"bench its parts as separate layouts: `layouts` {parts}")


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
    def bonnie(self) -> bool:
        """One bonnie++ run gives three measurements (calomel's three columns)."""
        return self.engine == "bonnie++" and not self.job_file

    @property
    def test_names(self) -> list[str]:
        if self.engine == "bonnie++":
            return list(BONNIE_TESTS)
        return [os.path.basename(self.job_file)] if self.job_file else [t.name for t in self.tests]

    @property
    def monitor_s(self) -> int:
        """How long zpool iostat watches beside each fio test: the test's time (a job file: 5 s)."""
        return 5 if self.job_file else self.runtime_s + self.ramp_s

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
    """One thing a run does: its operation (the exact values it runs with), and where it belongs."""

    kind: str  # leftover | create | test | destroy | wipe
    layout: str  # "" for what comes before the first layout: the leftover pool's destroy, the dirty disks' wipes
    op: DestroyLeftover | CreatePool | DestroyPool | Wipe | FioRun | FioFile | BonnieRun
    test: str = ""
    repeat: int = 0

    @property
    def argv(self) -> tuple[str, ...]:
        """The command as it runs; empty for a wipe (zfslab's own work, several commands)."""
        return self.op.argv

    @property
    def devices(self) -> tuple[str, ...]:
        """create: the pool's disks; wipe: the one disk."""
        if isinstance(self.op, CreatePool):
            return self.op.devices
        return (self.op.device,) if isinstance(self.op, Wipe) else ()

    @property
    def job(self):
        """test: the FioJob or BonnieJob it runs (the job file's path for --suite FILE.fio)."""
        return getattr(self.op, "job", getattr(self.op, "path", None))

    @property
    def line(self) -> str:
        return op_lines(self.op, getattr(self.op, "note", ""), {self.op.wrapper})[0]


@dataclass(frozen=True)
class BenchRequest:
    """What a bench run is asked to do. `done`: measurements an interrupted run of the same
    request stored (left out); `dirty`: disks holding data the gate let through (wiped first);
    `leftover`: the pool that interrupted run left imported (pool_safety.own_leftover), destroyed
    before anything else."""

    layouts: tuple[Layout, ...]
    devices: tuple[str, ...]
    options: BenchOptions
    disk_ids: tuple[str, ...] = ()  # serial numbers (a sandbox: the file paths): the run's key
    done: frozenset = frozenset()
    dirty: tuple[str, ...] = ()
    sandbox: bool = False
    mountpoint: str = MOUNTPOINT
    leftover: OwnPool | None = None

    @property
    def key(self) -> str:
        return run_key(list(self.layouts), list(self.disk_ids or self.devices), self.options)


@dataclass(frozen=True)
class BenchPlan:
    request: BenchRequest
    steps: tuple[Step, ...]

    def render(self) -> list[str]:
        """What --dry-run prints: every step, one a line, with the monitors and drivers' wrappers."""
        return format_steps(list(self.steps), len(self.request.done))

    def step_records(self) -> list[dict]:
        """The same steps as data (--dry-run --json): a wipe has no command; `lines` is what the
        text dry run prints for the step (the monitor beside a test, a wrapper the first time)."""
        return step_records(list(self.steps))


def plan_bench(request: BenchRequest) -> BenchPlan:
    """Every step of the run, in order: the leftover pool's destroy, the wipes of the disks that
    hold data, then each layout's create, tests, destroy and wipes, leaving out what `done` (an
    interrupted run's stored measurements) already holds: a layout with nothing left is not even
    created."""
    r = request
    check_bench_layouts(list(r.layouts))
    steps = [Step("leftover", "", DestroyLeftover(r.leftover, "bench"))] if r.leftover else []
    steps += [Step("wipe", "", Wipe(d, r.sandbox)) for d in r.dirty]
    for layout in r.layouts:
        used = tuple(r.devices[:layout.disks])
        name = str(layout)
        tests = [t for t in _tests(name, r.options, r.mountpoint, POOL) if not _measured(t, r.options, r.done)]
        if not tests:
            continue
        steps.append(Step("create", name, CreatePool(POOL, layout, used, r.options.ashift, r.options.fs_props(r.key))))
        steps += tests
        steps.append(Step("destroy", name, DestroyPool(POOL)))
        steps += [Step("wipe", name, Wipe(d, r.sandbox)) for d in used]
    return BenchPlan(r, tuple(steps))


def _tests(layout: str, options: BenchOptions, mnt: str, pool: str) -> list[Step]:
    """The test steps of one layout, every repeat, each with the zpool iostat beside it."""
    tests = []
    monitor = tuple(iostat_argv(pool, options.monitor_s))
    for repeat in range(1, options.repeats + 1):
        if options.job_file:
            tests.append(Step("test", layout, FioFile(options.job_file, mnt, monitor), options.test_names[0], repeat))
        elif options.bonnie:  # one run gives all three of calomel's columns
            tests.append(Step("test", layout, BonnieRun(options.bonnie_job(mnt)), BONNIE_TESTS[0], repeat))
        else:
            for t in options.tests:
                job = t.job(mnt, size=options.size, runtime_s=options.runtime_s, ramp_s=options.ramp_s)
                tests.append(Step("test", layout, FioRun(job, monitor=monitor), t.name, repeat))
    return tests


def _measured(step: Step, options: BenchOptions, done) -> bool:
    names = BONNIE_TESTS if options.bonnie else (step.test,)
    return all((step.layout, t, step.repeat) in done for t in names)


def step_records(steps: list[Step]) -> list[dict]:
    shown: set[str] = set()
    return [{"kind": s.kind, "layout": s.layout, "test": s.test or None, "repeat": s.repeat or None,
             "devices": list(s.devices), "command": list(s.argv) or None, "line": s.line,
             "monitor": list(getattr(s.op, "monitor", ())) or None,
             "lines": op_lines(s.op, getattr(s.op, "note", ""), shown)} for s in steps]


def format_steps(steps: list[Step], skipped: int = 0) -> list[str]:
    """The dry run's lines: each step's command, the monitor beside a test, a wrapper once."""
    shown: set[str] = set()
    lines = [line for s in steps for line in op_lines(s.op, getattr(s.op, "note", ""), shown)]
    if skipped:
        lines.insert(0, f"# resuming: {skipped} measurements already stored are not run again")
    return lines
