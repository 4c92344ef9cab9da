"""`zfslab drill`'s plan: every step, in order, before the first write (issue 17, issue 24).

The fill size from the capacity model, and from the layout which disks each scenario fails,
replaces and corrupts. Each step holds the operation it runs (system/pool_ops.py, or Corrupt
here); `DrillPlan.render()` is what --dry-run prints, and `execute_drill(plan, ...)`
(system/drill.py) runs exactly those steps. The plan knows nothing of its executor: the executor
imports the plan.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

from zfslab.model.capacity import pool_capacity, whole_disk_capacity
from zfslab.model.layouts import Layout, VdevKind
from zfslab.system.corruption import corrupt_window, overwrite
from zfslab.system.fio import FioJob
from zfslab.system.pool_ops import (Clear, CreatePool, DestroyPool, Drivers, FioRun, Offline, Online, PoolSet, Replace,
                                    Scrub, Wait, Wipe, op_lines)

POOL = "zfslab-drill"
MARK = "zfslab:drill"
FILL_JOB = "fill"
MOUNTPOINT = f"/{POOL}"  # ZFS's default for the pool's name: where the plan's fio jobs run
FS_PROPS = {"compression": "off", "primarycache": "metadata", "atime": "off"}
MIB = 1 << 20
MIN_FILL_BYTES = 16 * MIB
SCENARIOS = ("degraded", "resilver", "corrupt")


def drill_mark(layout: Layout, devices: Sequence[str]) -> str:
    """The value of zfslab:drill on a drill's pool: its layout and disks, hashed. Recorded before
    the create (pool_intents), it lets a drill killed before the GUID was saved find its pool."""
    return hashlib.sha256(json.dumps([str(layout), list(devices)]).encode()).hexdigest()[:16]


def fs_props(layout: Layout, devices: Sequence[str]) -> dict[str, str]:
    return {**FS_PROPS, MARK: drill_mark(layout, devices)}


@dataclass(frozen=True)
class Corrupt:
    """What zfslab writes itself (system/corruption.py): random bytes over the members' data."""

    devices: tuple[str, ...]
    window: int

    argv = ()
    wrapper = ""

    @property
    def note(self) -> str:
        return (f"# corrupt {', '.join(self.devices)}: zfslab writes {self.window >> 10} KiB of random bytes in "
                f"every 8 MiB of each one's data region (after the front labels, before the back ones)")

    def run(self, d: Drivers) -> int:
        return overwrite(self.devices, self.window)


Op = CreatePool | PoolSet | FioRun | Offline | Online | Wait | Replace | Clear | Corrupt | Scrub | DestroyPool | Wipe


@dataclass(frozen=True)
class Step:
    """One thing a drill does. --dry-run prints the plan's steps and Drill.run executes exactly
    them (tests/unit/test_drill_plan.py records the argv the runner receives)."""

    # wipe create set fill offline try-offline online wait verify write replace clear corrupt scrub destroy skip
    kind: str
    op: Op | None  # what it runs, with every value it runs with; None for a skip
    scenario: str = "setup"  # setup | degraded | resilver | corrupt | corrupt-beyond-parity | cleanup
    stage: str = ""  # degraded: level | beyond | across; resilver: healing | sequential
    title: str = ""  # what the steps of one stage do together: the plan's heading for them
    note: str = ""  # replace: how; skip: the line shown

    @property
    def argv(self) -> tuple[str, ...]:
        """The command as it runs; empty for what zfslab does itself (wipe, corrupt) and a skip."""
        return self.op.argv if self.op else ()

    @property
    def devices(self) -> tuple[str, ...]:
        """offline/online: the leaf; replace: (old, new); corrupt, create: the disks; wipe: the disk."""
        op = self.op
        if isinstance(op, (CreatePool, Corrupt)):
            return op.devices
        if isinstance(op, (Offline, Online)):
            return (op.leaf,)
        if isinstance(op, Replace):
            return (op.old, op.new)
        return (op.device,) if isinstance(op, Wipe) else ()

    @property
    def job(self) -> FioJob | None:
        return self.op.job if isinstance(self.op, FioRun) else None

    @property
    def shown(self) -> str:
        """What zfslab does itself, as the plan shows it (a comment line)."""
        return getattr(self.op, "note", "") or self.note

    @property
    def line(self) -> str:
        return shlex.join(self.argv) if self.argv else self.shown


@dataclass(frozen=True)
class DrillRequest:
    """What a drill is asked to do; `vdev_bytes`: the smallest disk (the fill is planned from it),
    `dirty`: the disks holding data that the gate let through (wiped first)."""

    layout: Layout
    devices: tuple[str, ...]
    spare: str | None
    vdev_bytes: int
    scenarios: tuple[str, ...] = SCENARIOS
    fill: float = 0.5
    sandbox: bool = False
    ashift: int = 12
    corrupt_mb: int = 4
    sequential_rebuild: bool = False
    dirty: tuple[str, ...] = ()


@dataclass(frozen=True)
class DrillPlan:
    request: DrillRequest
    fill_bytes: int
    steps: tuple[Step, ...]

    @property
    def layout(self) -> Layout:
        return self.request.layout

    @property
    def devices(self) -> tuple[str, ...]:
        return self.request.devices

    @property
    def spare(self) -> str | None:
        return self.request.spare

    @property
    def fill(self) -> float:
        return self.request.fill

    def render(self) -> list[str]:
        """What --dry-run prints: a heading for each stage, then its steps, one a line."""
        return format_steps(self)

    def step_records(self) -> list[dict]:
        """The same steps as data (--dry-run --json): zfslab's own work (wipe, corrupt) has no command."""
        shown: set[str] = set()
        return [{"kind": s.kind, "scenario": s.scenario, "title": s.title or None, "devices": list(s.devices),
                 "command": list(s.argv) or None, "line": s.line, "lines": _step_lines(s, shown)} for s in self.steps]


def _step_lines(step: Step, shown: set[str]) -> list[str]:
    return op_lines(step.op, step.shown, shown) if step.op else [step.line]



def leaf_name(device: str, sandbox: bool) -> str:
    """The name zpool gives a leaf, and takes back: a file by its path, a whole disk by the last
    part of the name it was given, without the partition (zpool_vdev_name() in libzfs)."""
    return device if sandbox else os.path.basename(device)


def fill_bytes_for(layout: Layout, vdev_bytes: int, fill: float, *, sandbox: bool, ashift: int) -> int:
    """The bytes to fill: `fill` of the pool's USED+AVAIL as model/capacity.py predicts it, whole
    MiB, at least 16 MiB. Predicted, not read after the create, so the plan shows fio's exact
    --size before anything is written."""
    cap = (pool_capacity(layout, vdev_bytes, ashift=ashift) if sandbox else
           whole_disk_capacity(layout, vdev_bytes, ashift=ashift))
    return max(int(cap.usable_bytes * fill) // MIB * MIB, MIN_FILL_BYTES)


def fill_job(rw: str, fill_bytes: int) -> FioJob:
    """The checksummed data: written once, read back (and verified) after every failure."""
    return FioJob(FILL_JOB, rw, bs="1m", size=str(fill_bytes), directory=MOUNTPOINT, verify="crc32c",
                  do_verify=False if rw == "write" else None, end_fsync=rw == "write")


def degraded_write_job(fill_bytes: int) -> FioJob:
    """A short write while degraded, to a file of its own: the checksummed data stays as it is."""
    return FioJob("degraded-write", "write", bs="1m", size=str(min(fill_bytes, 32 * MIB)), directory=MOUNTPOINT,
                  end_fsync=True)


def top_level_devices(layout: Layout, devices: Sequence[str]) -> list[list[str]]:
    """The disks of each top-level vdev, in the order zpool create is given them."""
    it = iter(devices)
    return [[next(it) for _ in range(g.width)] for g in layout.groups for _ in range(g.count)]


def plan_drill(request: DrillRequest) -> DrillPlan:
    """Every step of a drill, in order: wipe the disks that hold data (the gate allowed them),
    create and fill the pool, each scenario asked for, and the clean-up that runs whatever happens."""
    r = request
    fill_bytes = fill_bytes_for(r.layout, r.vdev_bytes, r.fill, sandbox=r.sandbox, ashift=r.ashift)
    steps: list[Step] = [Step("wipe", Wipe(d, r.sandbox), title="wipe the disks that hold data (see docs/safety.md)")
                         for d in r.dirty]
    title = (f"create the pool and fill {fill_bytes // MIB:,} MiB ({r.fill:.0%} of its USED+AVAIL as "
             f"model/capacity.py predicts it) with data fio checksums")
    fill = fill_job("write", fill_bytes)
    create = CreatePool(POOL, r.layout, r.devices, r.ashift, fs_props(r.layout, r.devices))
    steps += [Step("create", create, title=title),
              # failmode=continue: a lost pool answers with errors instead of hanging
              Step("set", PoolSet(POOL, "failmode", "continue"), title=title),
              Step("fill", FioRun(fill, timeout_s=7200), title=title)]
    planner = _ScenarioPlanner(r.layout, r.devices, r.spare, r.sandbox, fill_bytes, r.corrupt_mb, r.sequential_rebuild)
    steps += planner.all(r.scenarios)
    title = "whatever happened: destroy the pool, wipe its disks"
    steps.append(Step("destroy", DestroyPool(POOL), "cleanup", title=title))
    steps += [Step("wipe", Wipe(d, r.sandbox), "cleanup", title=title)
              for d in r.devices + ((r.spare,) if r.spare else ())]
    return DrillPlan(r, fill_bytes, tuple(steps))


@dataclass
class _ScenarioPlanner:
    """The steps of each scenario; which disks they touch follows from the layout alone."""

    layout: Layout
    devices: tuple[str, ...]
    spare: str | None
    sandbox: bool
    fill_bytes: int
    corrupt_mb: int
    sequential_rebuild: bool

    def __post_init__(self) -> None:
        self.group = self.layout.groups[0]
        self.parity = self.group.parity
        self.tops = top_level_devices(self.layout, self.devices)
        self.first = self.tops[0]  # the vdev every scenario works on

    def name(self, device: str) -> str:
        return leaf_name(device, self.sandbox)

    def all(self, scenarios: Sequence[str]) -> list[Step]:
        steps: list[Step] = []
        how = None
        if "degraded" in scenarios:
            steps += self.degraded()
        if "resilver" in scenarios:
            resilver = self.resilver()
            steps += resilver
            how = next((s.note for s in resilver if s.kind == "replace" and s.stage == "healing"), None)
        if "corrupt" in scenarios:
            steps += self.corrupt(how)
        return steps

    # the pieces of a stage
    def _zpool(self, kind: str, scenario: str, stage: str, title: str, *leaves: str) -> list[Step]:
        op = Online if kind == "online" else Offline
        return [Step(kind, op(POOL, leaf), scenario, stage, title) for leaf in leaves]

    def _wait(self, scenario: str, stage: str, title: str) -> Step:
        return Step("wait", Wait(POOL, "resilver"), scenario, stage, title)

    def _verify(self, scenario: str, stage: str, title: str) -> Step:
        return Step("verify", FioRun(fill_job("read", self.fill_bytes), timeout_s=7200), scenario, stage, title)

    def degraded(self) -> list[Step]:
        p = self.parity
        if p == 0:
            return [_skip("degraded", "no redundancy: any failure loses the pool")]
        names = [self.name(d) for d in self.first]
        steps: list[Step] = []
        for k in range(1, p + 1):
            title = f"{k} failed disk{'s' if k > 1 else ''} of the first vdev; every byte read back and verified"
            write = degraded_write_job(self.fill_bytes)
            steps += (self._zpool("offline", "degraded", "level", title, *names[:k])
                      + [self._verify("degraded", "level", title),
                         Step("write", FioRun(write, timeout_s=3600), "degraded", "level", title)]
                      + self._zpool("online", "degraded", "level", title, *names[:k])
                      + [self._wait("degraded", "level", title)])
        if len(names) > p:  # p+1 disks of one vdev: ZFS refuses to take the last redundancy away
            title = (f"{p + 1} disks of the first vdev: ZFS should refuse the last offline (no valid replicas); "
                     f"if it takes it, that disk is put back online at once")
            steps += (self._zpool("offline", "degraded", "beyond", title, *names[:p])
                      + self._zpool("try-offline", "degraded", "beyond", title, names[p])
                      + self._zpool("online", "degraded", "beyond", title, *names[:p])
                      + [self._wait("degraded", "beyond", title)])
        if len(self.tops) >= 2:
            picks = [self.name(top[0]) for top in self.tops[:2]]
            title = "one failed disk in each of the first two vdevs; every byte read back and verified"
            steps += (self._zpool("offline", "degraded", "across", title, *picks)
                      + [self._verify("degraded", "across", title)]
                      + self._zpool("online", "degraded", "across", title, *picks)
                      + [self._wait("degraded", "across", title)])
        return steps

    def target(self) -> tuple[str, str] | None:
        """Where the resilver goes, and how it is named in the results."""
        g = self.group
        if g.kind is VdevKind.DRAID and g.draid_spares:
            return f"draid{g.parity}-0-0", "dRAID distributed spare (sequential rebuild)"
        if self.layout.hot_spares:
            return self.devices[-1], "hot spare"
        if self.spare:
            return self.spare, "fresh disk"
        return None

    def resilver(self) -> list[Step]:
        if self.parity == 0:
            return [_skip("resilver", "no redundancy to resilver from")]
        where = self.target()
        if where is None:
            return [_skip("resilver", "no spare disk given (--spare-disk)")]
        target, how = where
        victim = self.name(self.first[0])
        title = f"{victim} taken offline and replaced by {target} ({how}), timed; every byte verified"
        steps = (self._zpool("offline", "resilver", "healing", title, victim)
                 + [Step("replace", Replace(POOL, victim, target), "resilver", "healing", title, note=how),
                    self._verify("resilver", "healing", title)])
        if self.group.kind is VdevKind.MIRROR and how == "fresh disk" and self.sequential_rebuild:
            back = self.first[0]
            title = f"a sequential rebuild (zpool replace -s) from {target} back onto {back}, timed"
            steps.append(Step("replace", Replace(POOL, target, back, sequential=True), "resilver", "sequential", title,
                              note="sequential rebuild"))
        return steps

    def leaves_after(self, how: str | None) -> list[str]:
        """The online disks of the first vdev after the resilver scenario (or without it), in
        zpool status's order: a hot spare stands where the disk it replaced was (which stays in
        the vdev, offline); a dRAID distributed spare is no disk zfslab can write to."""
        if how == "fresh disk" and not self.sequential_rebuild:
            return [self.spare or "", *self.first[1:]]
        if how == "hot spare":
            return [self.devices[-1], *self.first[1:]]
        if how is not None and how.startswith("dRAID"):
            return self.first[1:]
        return list(self.first)

    def corrupt(self, how: str | None) -> list[Step]:
        p = self.parity
        leaves = self.leaves_after(how)
        window = corrupt_window(self.corrupt_mb)
        steps: list[Step] = []
        for scenario, members in (("corrupt", leaves[:p] if p > 0 else []),
                                  ("corrupt-beyond-parity", leaves[:p + 1] if len(leaves) > p else [])):
            if not members:
                continue
            n = len(members)
            title = (f"{n} disk{'s' if n > 1 else ''} of the first vdev overwritten behind ZFS's back, a scrub, "
                     f"every byte verified")
            steps += [Step("clear", Clear(POOL), scenario, title=title),
                      Step("corrupt", Corrupt(tuple(members), window), scenario, title=title),
                      Step("scrub", Scrub(POOL), scenario, title=title),
                      self._verify(scenario, "", title)]
        return steps


def _skip(scenario: str, why: str) -> Step:
    return Step("skip", None, scenario, note=f"# {scenario}: skipped: {why}")


def format_steps(plan: DrillPlan) -> list[str]:
    """What --dry-run prints: a heading for each stage, then its steps, one a line."""
    extra = f" and {plan.spare}" if plan.spare else ""
    lines = [f"# drill {plan.layout} on {', '.join(plan.devices)}{extra}"]
    heading = None
    shown: set[str] = set()
    for step in plan.steps:
        if step.title and (step.scenario, step.title) != heading:
            lines.append(f"# {step.scenario}: {step.title}")
        heading = (step.scenario, step.title)
        lines += _step_lines(step, shown)
    return lines


