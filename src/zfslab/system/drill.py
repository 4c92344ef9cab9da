"""`zfslab drill`: measure the integrity corner on a real pool.

Scenarios, each on data whose checksums fio keeps (written with verify=crc32c):
- degraded: take 1..p disks of one vdev offline (and one in each of two vdevs), read every
  byte back with verification, time the degraded read;
- resilver: replace an offline disk with a fresh one (or a hot spare / dRAID distributed spare),
  time it, bytes and MB/s; on a mirror, a sequential rebuild (`replace -s`) too when asked
  (a race in OpenZFS's rebuild thread, fixed by openzfs/zfs#18276 in 2026, can crash the kernel
  of older releases: zfslab's CI saw it on Debian's 2.3.2, a general protection fault in
  zio_add_child_first under vdev_rebuild_range, so it is not run unasked);
- corrupt: overwrite regions of up to p members behind ZFS's back, scrub, count CKSUM errors
  and repaired bytes, verify the data; then corrupt p+1 members and list the files ZFS
  declares permanently damaged.

Plan, show, execute, as bench does (issue 17: a dry run that is the plan that runs):
`plan_drill` lists every step before the first write: the fill size from the capacity model,
and from the layout which disks each scenario fails, replaces and corrupts; `drill --dry-run`
prints it (`format_steps`) and `Drill.run` executes exactly those steps. What the pool does is
read as it runs (its state, the verification, CKSUM counts); what zfslab does is the plan's. A
scenario stops early only where the drill always did: after a verification that failed, the
rest of its failures are not piled on (the run says which planned steps it left out). A fact the
plan relied on that does not hold (the pool mounted elsewhere, a disk not where the plan put it)
stops the run before the step, and the clean-up steps run as always.
This module plans and runs the scenarios and records what happened; report/verdict.py words the
result, store/results.py keeps it, system/health.py judges an existing pool.
"""

from __future__ import annotations

import json
import os
import shlex
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from zfslab.errors import ZfslabError
from zfslab.model.capacity import pool_capacity, whole_disk_capacity
from zfslab.model.layouts import Layout, VdevKind, zpool_create_argv
from zfslab.system.bench import wipe_devices, wipe_line
from zfslab.system.diskstats import SECTOR, kernel_names, read_diskstats
from zfslab.system.fio import Fio, FioFailed, FioJob
from zfslab.system.runner import CommandFailed, Runner
from zfslab.system.zfs import ZfsDriver
from zfslab.system.zfs_output import PoolStatus

POOL = "zfslab-drill"
MARK = "zfslab:drill"
FILL_JOB = "fill"
MOUNTPOINT = f"/{POOL}"  # ZFS's default for the pool's name: where the plan's fio jobs run
FS_PROPS = {"compression": "off", "primarycache": "metadata", "atime": "off"}


def drill_mark(layout: Layout, devices: Sequence[str]) -> str:
    """The value of zfslab:drill on a drill's pool: its layout and disks, hashed. Recorded before
    the create (pool_intents), it lets a drill killed before the GUID was saved find its pool."""
    import hashlib
    return hashlib.sha256(json.dumps([str(layout), list(devices)]).encode()).hexdigest()[:16]


def fs_props(layout: Layout, devices: Sequence[str]) -> dict[str, str]:
    return {**FS_PROPS, MARK: drill_mark(layout, devices)}
MIB = 1 << 20
MIN_FILL_BYTES = 16 * MIB
CORRUPT_STRIDE = 8 * MIB
# the planned fill is a share (at most 0.9) of the pool's USED+AVAIL as model/capacity.py predicts
# it; beyond this share of the real one, the model and the pool disagree and fio would fill it
FILL_LIMIT = 0.95
SCENARIOS = ("degraded", "resilver", "corrupt")


class DrillError(ZfslabError):
    """A drill that cannot go on: its pool is not what the plan made, or a check failed."""

    exit_code = 2


@dataclass
class ScenarioResult:
    scenario: str
    outcome: str  # survived | lost | repaired | damaged | skipped
    seconds: float
    detail: dict = field(default_factory=dict)


def _mb_s(nbytes: int, seconds: float) -> float:
    return nbytes / 1e6 / seconds if seconds > 0 else 0.0


# --- the plan ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Step:
    """One thing a drill does. --dry-run prints the plan's steps and Drill.run executes exactly
    them (tests/unit/test_drill_plan.py records the argv the runner receives)."""

    kind: str  # wipe create set fill offline try-offline online wait verify write replace clear corrupt scrub destroy skip
    argv: tuple[str, ...] = ()  # the command as it runs; empty for what zfslab does itself (wipe, corrupt)
    scenario: str = "setup"  # setup | degraded | resilver | corrupt | corrupt-beyond-parity | cleanup
    stage: str = ""  # degraded: level | beyond | across; resilver: healing | sequential
    title: str = ""  # what the steps of one stage do together: the plan's heading for them
    devices: tuple[str, ...] = ()  # offline/online: the leaf; replace: (old, new); corrupt, wipe, create: the disks
    job: FioJob | None = None  # fill, verify, write: the job whose argv this is
    note: str = ""  # replace: how; skip: why; wipe, corrupt: the line shown

    @property
    def line(self) -> str:
        return shlex.join(self.argv) if self.argv else self.note


@dataclass(frozen=True)
class DrillPlan:
    layout: Layout
    devices: tuple[str, ...]
    spare: str | None
    fill: float  # share of the pool's USED+AVAIL
    fill_bytes: int
    steps: tuple[Step, ...]


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


def corrupt_window(corrupt_mb: int) -> int:
    """Bytes overwritten in every 8 MiB: a quarter of --corrupt-mb, 64 KiB to 1 MiB."""
    return max(min(corrupt_mb * MIB, 4 * MIB) // 4, 64 << 10)


def top_level_devices(layout: Layout, devices: Sequence[str]) -> list[list[str]]:
    """The disks of each top-level vdev, in the order zpool create is given them."""
    it = iter(devices)
    return [[next(it) for _ in range(g.width)] for g in layout.groups for _ in range(g.count)]


def plan_drill(layout: Layout, devices: Sequence[str], spare: str | None, *, scenarios: Sequence[str],
               fill: float, vdev_bytes: int, sandbox: bool, ashift: int = 12, corrupt_mb: int = 4,
               sequential_rebuild: bool = False, dirty: Sequence[str] = (), fio: Fio | None = None) -> DrillPlan:
    """Every step of a drill, in order: wipe the disks that hold data (the gate allowed them),
    create and fill the pool, each scenario asked for, and the clean-up that runs whatever happens."""
    fio = fio or Fio()
    devices = tuple(devices)
    fill_bytes = fill_bytes_for(layout, vdev_bytes, fill, sandbox=sandbox, ashift=ashift)
    steps: list[Step] = [Step("wipe", devices=(d,), note=wipe_line(d, sandbox=sandbox),
                              title="wipe the disks that hold data (see docs/safety.md)") for d in dirty]
    title = (f"create the pool and fill {fill_bytes // MIB:,} MiB ({fill:.0%} of its USED+AVAIL as "
             f"model/capacity.py predicts it) with data fio checksums")
    steps += [Step("create", tuple(zpool_create_argv(POOL, layout, list(devices), ashift=ashift,
                                                          fs_props=fs_props(layout, devices))),
                   title=title, devices=devices),
              Step("set", ("zpool", "set", "failmode=continue", POOL), title=title),
              Step("fill", tuple(fio.argv(fill_job("write", fill_bytes))), title=title, job=fill_job("write", fill_bytes))]
    scenario_steps = _ScenarioPlanner(layout, devices, spare, sandbox, fill_bytes, corrupt_mb, sequential_rebuild, fio)
    steps += scenario_steps.all(scenarios)
    title = "whatever happened: destroy the pool, wipe its disks"
    steps.append(Step("destroy", ("zpool", "destroy", "-f", POOL), "cleanup", title=title))
    steps += [Step("wipe", (), "cleanup", title=title, devices=(d,), note=wipe_line(d, sandbox=sandbox))
              for d in devices + ((spare,) if spare else ())]
    return DrillPlan(layout, devices, spare, fill, fill_bytes, tuple(steps))


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
    fio: Fio

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
        verb = {"offline": "offline", "try-offline": "offline", "online": "online"}[kind]
        return [Step(kind, ("zpool", verb, POOL, leaf), scenario, stage, title, (leaf,)) for leaf in leaves]

    def _wait(self, scenario: str, stage: str, title: str) -> Step:
        return Step("wait", ("zpool", "wait", "-t", "resilver", POOL), scenario, stage, title)

    def _verify(self, scenario: str, stage: str, title: str) -> Step:
        job = fill_job("read", self.fill_bytes)
        return Step("verify", tuple(self.fio.argv(job)), scenario, stage, title, job=job)

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
                         Step("write", tuple(self.fio.argv(write)), "degraded", "level", title, job=write)]
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
                 + [Step("replace", ("zpool", "replace", "-w", POOL, victim, target), "resilver", "healing", title,
                         (victim, target), note=how),
                    self._verify("resilver", "healing", title)])
        if self.group.kind is VdevKind.MIRROR and how == "fresh disk" and self.sequential_rebuild:
            back = self.first[0]
            title = f"a sequential rebuild (zpool replace -s) from {target} back onto {back}, timed"
            steps.append(Step("replace", ("zpool", "replace", "-s", "-w", POOL, target, back), "resilver",
                              "sequential", title, (target, back), note="sequential rebuild"))
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
            note = (f"# corrupt {', '.join(members)}: zfslab writes {window >> 10} KiB of random bytes in every 8 MiB "
                    f"of each one's data region (after the front labels, before the back ones)")
            steps += [Step("clear", ("zpool", "clear", POOL), scenario, title=title),
                      Step("corrupt", (), scenario, title=title, devices=tuple(members), note=note),
                      Step("scrub", ("zpool", "scrub", "-w", POOL), scenario, title=title),
                      self._verify(scenario, "", title)]
        return steps


def _skip(scenario: str, why: str) -> Step:
    return Step("skip", (), scenario, note=f"# {scenario}: skipped: {why}")


def format_steps(plan: DrillPlan) -> list[str]:
    """What --dry-run prints: a heading for each stage, then its steps, one a line."""
    extra = f" and {plan.spare}" if plan.spare else ""
    lines = [f"# drill {plan.layout} on {', '.join(plan.devices)}{extra}"]
    heading = None
    for step in plan.steps:
        if step.title and (step.scenario, step.title) != heading:
            lines.append(f"# {step.scenario}: {step.title}")
        heading = (step.scenario, step.title)
        lines.append(step.line)
    return lines


# --- the run -------------------------------------------------------------------------------------

@dataclass
class Drill:
    zfs: ZfsDriver
    fio: Fio
    layout: Layout
    devices: list[str]
    spare: str | None = None  # a fresh disk for replacements
    fill: float = 0.5
    ashift: int = 12
    log: Callable[[str], None] = lambda text: None
    corrupt_mb: int = 4  # sets the window: a quarter of it is overwritten every 8 MiB
    sequential_rebuild: bool = False  # also time `replace -s` on a mirror (see the module docstring)
    on_created: Callable[[str], None] = lambda guid: None  # told the pool's GUID the moment it exists
    on_creating: Callable[[str], None] = lambda mark: None  # told the pool's mark before the create
    on_wiped: Callable[[list[str]], None] = lambda devices: None  # records the disks' SMART counters
    fill_bytes: int = 0
    results: list[ScenarioResult] = field(default_factory=list)
    sandbox: bool = False  # file vdevs: zpool names them by their path, and a wipe truncates them
    runner: Runner | None = None  # for the wipes

    def run(self, plan: DrillPlan) -> list[ScenarioResult]:
        """Execute the plan: set-up, each scenario, and the clean-up whatever happened."""
        self.fill_bytes = plan.fill_bytes
        cleanup = [s for s in plan.steps if s.scenario == "cleanup"]
        try:
            for scenario, steps in _by_scenario([s for s in plan.steps if s.scenario != "cleanup"]):
                if scenario == "setup":
                    for step in steps:
                        self._do(step)
                else:
                    self._run_scenario(scenario, steps)
        finally:
            for step in cleanup:
                if step.kind == "destroy" and self.zfs.pool_exists(POOL):
                    self.zfs.destroy_pool(POOL, force=True)
                elif step.kind == "wipe":
                    self._wipe(step)
        return self.results

    # the scenarios one at a time, as before the plan existed (the plan of one scenario, run)
    def degraded(self) -> ScenarioResult:
        return self._run_scenario("degraded", self._planner().degraded())

    def resilver(self) -> ScenarioResult:
        return self._run_scenario("resilver", self._planner().resilver())

    def corrupt(self) -> list[ScenarioResult]:
        done = next((r for r in self.results if r.scenario == "resilver" and r.outcome != "skipped"), None)
        steps = self._planner().corrupt(done.detail.get("how") if done else None)
        return [self._run_scenario(name, part) for name, part in _by_scenario(steps)]

    def _planner(self) -> _ScenarioPlanner:
        return _ScenarioPlanner(self.layout, tuple(self.devices), self.spare, self.sandbox, self.fill_bytes,
                                self.corrupt_mb, self.sequential_rebuild, self.fio or Fio())

    def _run_scenario(self, scenario: str, steps: list[Step]) -> ScenarioResult:
        if steps and steps[0].kind == "skip":
            return self._add(ScenarioResult(scenario, "skipped", 0, {"why": steps[0].note.split("skipped: ", 1)[1]}))
        run = {"degraded": self._degraded, "resilver": self._resilver}.get(scenario, self._corrupt_scenario)
        return run(scenario, steps)

    # --- one step ----------------------------------------------------------------------------
    def _do(self, step: Step):
        """Execute one planned step; what it yields (a verification, a speed, ZFS's refusal)."""
        kind = step.kind
        if kind == "wipe":
            self._wipe(step)
        elif kind == "create":
            props = fs_props(self.layout, step.devices)
            self.on_creating(props[MARK])
            self.zfs.create_pool(POOL, self.layout, list(step.devices), ashift=self.ashift, fs_props=props)
            self.on_created(self.zfs.pool_guid(POOL))
            self._check_pool()
        elif kind == "set":
            self.zfs.pool_set(POOL, "failmode", "continue")  # a lost pool answers with errors instead of hanging
        elif kind == "fill":
            t0 = time.monotonic()
            self.fio.run(step.job, timeout_s=7200)
            self.log(f"filled {self.fill_bytes / 1e6:.0f} MB in {time.monotonic() - t0:.0f} s")
        elif kind == "offline":
            self.zfs.offline(POOL, step.devices[0])
        elif kind == "try-offline":
            return self._try_offline(step.devices[0])
        elif kind == "online":
            self.zfs.online(POOL, step.devices[0])
        elif kind == "wait":
            self.zfs.wait(POOL, "resilver", timeout_s=7200)
        elif kind == "verify":
            return self.verify()
        elif kind == "write":
            return self._degraded_write()
        elif kind == "replace":
            old, new = step.devices
            self.zfs.replace(POOL, old, new, sequential=step.stage == "sequential", wait=True, timeout_s=14400)
        elif kind == "clear":
            self.zfs.clear(POOL)
        elif kind == "corrupt":
            return self._corrupt(list(step.devices))
        elif kind == "scrub":
            self.zfs.scrub(POOL, wait=True, timeout_s=14400)
        else:
            raise DrillError(f"a drill step of kind {kind!r} cannot run here; this is a bug in zfslab")
        return None

    def _wipe(self, step: Step) -> None:
        if step.scenario == "setup":
            self.log(f"wiping {step.devices[0]}")
        wipe_devices(self.runner or Runner(), list(step.devices), sandbox=self.sandbox)
        self.on_wiped(list(step.devices))

    def _check_pool(self) -> None:
        """What the plan relied on, checked once the pool exists: its mountpoint, its disks'
        names in zpool status, and room for the fill."""
        actual = self.zfs.get(POOL, "mountpoint")["mountpoint"].value
        if actual != MOUNTPOINT:
            raise DrillError(f"pool {POOL} is mounted at {actual}, not at {MOUNTPOINT} where the plan runs fio; "
                             f"is an altroot or a mountpoint inherited? (zpool get altroot {POOL})")
        status = self.zfs.status(POOL)
        unnamed = [d for d in self.devices if status.vdev(leaf_name(d, self.sandbox)) is None]
        if unnamed:
            raise DrillError(f"zpool status {POOL} does not name {unnamed[0]} as the plan does "
                             f"({leaf_name(unnamed[0], self.sandbox)}); nothing was failed or written")
        usable = self.zfs.dataset(POOL).usable_bytes
        if self.fill_bytes > usable * FILL_LIMIT:
            raise DrillError(f"the planned fill of {self.fill_bytes:,} bytes is more than {FILL_LIMIT:.0%} of the "
                             f"pool's real USED+AVAIL ({usable:,}): the capacity model and this pool disagree; "
                             f"give a smaller --fill and report the layout")

    def verify(self) -> tuple[bool, float, str]:
        """Read every byte back against fio's checksums: (all good, MB/s, error text)."""
        t0 = time.monotonic()
        try:
            r = self.fio.run(fill_job("read", self.fill_bytes), timeout_s=7200)
            return True, r.jobs[0].read.mb_s or _mb_s(self.fill_bytes, time.monotonic() - t0), ""
        except FioFailed as e:
            return False, 0.0, str(e)

    def _degraded_write(self) -> float:
        """MB/s of a short write while degraded (a separate file: the checksummed data stays as is)."""
        return self.fio.run(degraded_write_job(self.fill_bytes), timeout_s=3600).jobs[0].write.mb_s

    def _try_offline(self, leaf: str) -> dict:
        """One disk more than the parity: ZFS refuses (its words are the result); should it not,
        the disk goes back online at once."""
        try:
            self.zfs.offline(POOL, leaf)
        except CommandFailed as e:
            return {"zfs_refused": e.stderr_tail, "pool_state": self.zfs.status(POOL).state}
        state = self.zfs.status(POOL).state
        self.zfs.online(POOL, leaf)
        return {"zfs_refused": None, "pool_state": state}

    def _device_for(self, leaf_name: str) -> str | None:
        """The device path of a leaf: one of the pool's disks or the spare disk resilvered in."""
        for d in self.devices + ([self.spare] if self.spare else []):
            if os.path.basename(os.path.realpath(d)) == leaf_name or os.path.basename(d) == leaf_name or d == leaf_name:
                return d
        return None

    def _status_name(self, status: PoolStatus, device: str) -> str:
        """How zpool status shows one of the pool's disks (the results keep its words)."""
        v = status.vdev(leaf_name(device, self.sandbox))
        return v.name if v else device

    def _first_vdev_online(self, status: PoolStatus) -> list[str]:
        """The devices of the online disks of the first top-level vdev."""
        top = status.top_level[0]
        leaves = top.leaves if top.children else [top]
        found = [self._device_for(v.name) for v in leaves if v.state == "ONLINE"]
        return [d for d in found if d is not None]

    # --- the scenarios -------------------------------------------------------------------------
    def _degraded(self, scenario: str, steps: list[Step]) -> ScenarioResult:
        p = self.layout.groups[0].parity
        rows: list[dict] = []
        beyond = across = None
        t0 = time.monotonic()
        for (stage, title), block in _by_stage(steps):
            lost = [r for r in rows if not r["verified"]]
            if lost and stage in ("level", "beyond"):  # as always: no more failures piled on lost data
                self.log(f"degraded: data lost with {lost[0]['failed']} failed disks; left out of the plan: "
                         f"{len(block)} steps ({title})")
                continue
            seen: dict = {}
            for step in block:
                if step.kind == "verify" and stage == "level":
                    seen["state"] = self.zfs.status(POOL).state
                seen[step.kind] = self._do(step)
            if stage == "level":
                ok, mb_s, err = seen["verify"]
                rows.append({"failed": sum(s.kind == "offline" for s in block), "pool_state": seen["state"],
                             "verified": ok, "read_mb_s": mb_s, "error": err, "write_mb_s": seen["write"]})
            elif stage == "beyond":
                beyond = {"failed": p + 1, **seen["try-offline"]}
            else:
                ok, mb_s, _ = seen["verify"]
                status = self.zfs.status(POOL)
                picks = [s.devices[0] for s in block if s.kind == "offline"]
                across = {"failed": [self._status_name(status, d) for d in picks], "verified": ok, "read_mb_s": mb_s}
        survived = all(r["verified"] for r in rows) and (across is None or across["verified"])
        return self._add(ScenarioResult(scenario, "survived" if survived else "lost", time.monotonic() - t0,
                                        {"steps": rows, "across_vdevs": across, "beyond_parity": beyond, "parity": p}))

    def _resilver(self, scenario: str, steps: list[Step]) -> ScenarioResult:
        healing = next(s for s in steps if s.kind == "replace" and s.stage == "healing")
        victim, target = healing.devices
        seconds, done_bytes, ok, sequential = 0.0, 0, False, None
        for step in steps:
            if step is healing:
                t0 = time.monotonic()
                self._do(step)
                seconds = time.monotonic() - t0
                done_bytes = self.zfs.status(POOL).scan.resilvered_bytes
            elif step.kind == "replace":
                sequential = self._sequential_rebuild(step)
            elif step.kind == "verify":
                ok, _, _ = self._do(step)
            else:
                self._do(step)
        # resilvered_bytes: ZFS's count of repair writes to leaf vdevs (scn_processed, vdev_stat_update
        # in module/zfs/vdev.c): the data the new disk received, what plan's risk model divides by a rate
        detail = {"replaced": victim, "with": target, "how": healing.note, "seconds": seconds,
                  "resilvered_bytes": done_bytes, "mb_s": _mb_s(done_bytes, seconds), "verified": ok,
                  "vdev_kind": self.layout.groups[0].kind.value, "fill": self.fill, "fill_bytes": self.fill_bytes}
        if self.layout.groups[0].kind is VdevKind.MIRROR and healing.note == "fresh disk":
            detail["sequential"] = sequential or {"skipped": "not asked for (--sequential-rebuild); it can crash "
                                                             "OpenZFS releases without the fix of openzfs/zfs#18276"}
        return self._add(ScenarioResult(scenario, "survived" if ok else "lost", seconds, detail))

    def _sequential_rebuild(self, step: Step) -> dict:
        """`replace -s` from the disk resilvered in back onto the one replaced out, timed. ZFS
        starts a scrub right after it, whose line may hide the rebuild's in zpool status, so the
        bytes written to the disk (/proc/diskstats) are recorded too."""
        back = step.devices[1]
        names = kernel_names([back])
        before = read_diskstats()
        t0 = time.monotonic()
        self._do(step)
        seconds = time.monotonic() - t0
        after = read_diskstats()
        written = ((after[names[0]][1] - before[names[0]][1]) * SECTOR
                   if names and names[0] in before and names[0] in after else 0)
        scan = self.zfs.status(POOL).scan
        return {"seconds": seconds, "written_bytes": written,
                "resilvered_bytes": scan.resilvered_bytes if scan.kind == "resilver" else 0,
                "mb_s": _mb_s(written, seconds)}

    def _corrupt_scenario(self, scenario: str, steps: list[Step]) -> ScenarioResult:
        t0 = time.monotonic()
        members = next(s.devices for s in steps if s.kind == "corrupt")
        written, status, ok, err = 0, None, False, ""
        for step in steps:
            if step.kind == "corrupt":
                written = self._do(step)
            elif step.kind == "verify":
                ok, _, err = self._do(step)
            else:
                self._do(step)
                if step.kind == "scrub":
                    status = self.zfs.status(POOL)
        p = len(members) if scenario == "corrupt" else len(members) - 1
        if scenario == "corrupt":
            return self._add(ScenarioResult(
                scenario, "repaired" if ok and status.no_known_errors else "damaged", time.monotonic() - t0,
                {"members": p, "bytes_overwritten": written, "cksum": _cksum(status, self._names(status, members)),
                 "repaired_bytes": status.scan.repaired_bytes, "errors": status.errors, "verified": ok,
                 "damaged_files": list(status.damaged_files), "fio_error": err}))
        status = self.zfs.status(POOL)  # the verify's reads add what they found
        return self._add(ScenarioResult(
            scenario, "damaged" if status.damaged_files or not ok else "repaired", time.monotonic() - t0,
            {"members": p + 1, "bytes_overwritten": written, "cksum": _cksum(status, self._names(status, members)),
             "repaired_bytes": status.scan.repaired_bytes, "errors": status.errors, "verified": ok,
             "damaged_files": list(status.damaged_files), "pool_state": status.state, "fio_error": err}))

    def _names(self, status: PoolStatus, devices: Sequence[str]) -> list[str]:
        return [self._status_name(status, d) for d in devices]

    def _data_region(self, device: str) -> tuple[str, int, int]:
        """Where ZFS keeps data on this device: (path, first byte, end): past the front labels and
        boot area, before the back labels; inside partition 1 on a whole disk."""
        real = os.path.realpath(device)
        path = device
        if real.startswith("/dev/"):
            part = real + ("p1" if real[-1].isdigit() else "1")
            path = part if os.path.exists(part) else real
        with open(path, "rb") as f:
            size = f.seek(0, os.SEEK_END)
        return path, 4 << 20, size - (1 << 20)

    def _corrupt(self, devices: list[str]) -> int:
        """Overwrite members behind ZFS's back: a window of random bytes every 8 MiB across the whole
        data region (wherever the allocator put the data), at the same offsets on every member, so
        with more members than the parity the blocks there lose too many columns to be rebuilt.
        Only disks zpool status shows online in the first vdev are written: the plan's, checked."""
        online = self._first_vdev_online(self.zfs.status(POOL))
        strangers = [d for d in devices if d not in online]
        if strangers:
            raise DrillError(f"the plan corrupts {strangers[0]}, but zpool status does not show it online in the "
                             f"first vdev of {POOL} (online there: {', '.join(online) or 'none'}); nothing was "
                             f"overwritten")
        written = 0
        window = corrupt_window(self.corrupt_mb)
        noise = os.urandom(window)
        for device in devices:
            path, start, end = self._data_region(device)
            with open(path, "r+b", buffering=0) as f:
                for offset in range(start, end - window, CORRUPT_STRIDE):
                    f.seek(offset)
                    written += f.write(noise)
                os.fsync(f.fileno())
        return written

    def _add(self, r: ScenarioResult) -> ScenarioResult:
        self.results.append(r)
        self.log(f"{r.scenario}: {r.outcome} in {r.seconds:.0f} s")
        return r


def _by_scenario(steps: Sequence[Step]) -> list[tuple[str, list[Step]]]:
    """Consecutive steps of one scenario together, in order."""
    out: list[tuple[str, list[Step]]] = []
    for s in steps:
        if out and out[-1][0] == s.scenario:
            out[-1][1].append(s)
        else:
            out.append((s.scenario, [s]))
    return out


def _by_stage(steps: Sequence[Step]) -> list[tuple[tuple[str, str], list[Step]]]:
    out: list[tuple[tuple[str, str], list[Step]]] = []
    for s in steps:
        key = (s.stage, s.title)
        if out and out[-1][0] == key:
            out[-1][1].append(s)
        else:
            out.append((key, [s]))
    return out


def _cksum(status: PoolStatus, leaves: list[str]) -> dict[str, int]:
    out = {}
    for leaf in leaves:
        v = status.vdev(leaf)
        out[leaf] = v.checksum_errors if v else 0
    return out
