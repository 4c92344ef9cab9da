"""`zfslab drill`'s executor: `execute_drill(plan, ...)` runs a DrillPlan (system/drill_plan.py) exactly as planned.

Scenarios, each on data whose checksums fio keeps (written with verify=crc32c):
- degraded: take 1..p disks of one vdev offline (and one in each of two vdevs), read every
  byte back with verification, time the degraded read;
- resilver: replace an offline disk with a fresh one (or a hot spare / dRAID distributed spare),
  time it, bytes and MB/s; on a mirror, a sequential rebuild (`replace -s`) too when asked
  (a race in OpenZFS's rebuild thread, fixed by openzfs/zfs#18276 in 2026, can crash the kernel
  of older releases: zfslab's CI saw it on Debian's 2.3.2, a general protection fault in
  zio_add_child_first under vdev_rebuild_range, so it is not run unasked);
- corrupt: overwrite regions of up to p members behind ZFS's back (system/corruption.py), scrub,
  count CKSUM errors and repaired bytes, verify the data; then corrupt p+1 members and list the
  files ZFS declares permanently damaged.

Each step runs its own operation (`step.op.run`): nothing here rebuilds a command. What the pool
does is read as it runs (its state, the verification, CKSUM counts) into the records of
model/drill_results.py. A scenario stops early only where the drill always did: after a
verification that failed, the rest of its failures are not piled on (the run says which planned
steps it left out). A fact the plan relied on that does not hold (the pool mounted elsewhere, a
disk not where the plan put it) stops the run before the step, and the clean-up steps run as always.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from zfslab.errors import ZfslabError
from zfslab.model.drill_results import (AcrossVdevs, BeyondParity, Corruption, Degraded, DegradedLevel, Resilver,
                                        ScenarioResult, SequentialRebuild, Skipped)
from zfslab.model.layouts import VdevKind
from zfslab.system.diskstats import SECTOR, kernel_names, read_diskstats
from zfslab.system.drill_plan import MARK, MOUNTPOINT, POOL, DrillPlan, Step, leaf_name
from zfslab.system.fio import FioFailed
from zfslab.system.pool_ops import SYSTEM_CLOCK, Clock, CreatePool, Drivers, run_wipes
from zfslab.system.runner import CommandFailed
from zfslab.system.zfs_output import PoolStatus

# the planned fill is a share (at most 0.9) of the pool's USED+AVAIL as model/capacity.py predicts
# it; beyond this share of the real one, the model and the pool disagree and fio would fill it
FILL_LIMIT = 0.95
SEQUENTIAL_SKIPPED = ("not asked for (--sequential-rebuild); it can crash OpenZFS releases without the fix of "
                      "openzfs/zfs#18276")


class DrillError(ZfslabError):
    """A drill that cannot go on: its pool is not what the plan made, or a check failed."""

    exit_code = 2


def execute_drill(plan: DrillPlan, drivers: Drivers, results=None, clock: Clock = SYSTEM_CLOCK, *,
                  log: Callable[[str], None] = lambda text: None,
                  on_wiped: Callable[[list[str]], None] = lambda devices: None) -> list[ScenarioResult]:
    """Run exactly the plan's steps. In `results` (store/results.py), the create is recorded before
    it runs (its mark) and the pool's GUID the moment it exists; `on_wiped` hears the disks each
    wipe cleared. Returns what each scenario found."""
    layout = str(plan.layout)
    if results is None:
        return Drill(plan, drivers, clock, log=log, on_wiped=on_wiped).run()
    return Drill(plan, drivers, clock, log=log, on_wiped=on_wiped,
                 on_creating=lambda mark: results.record_intent(POOL, "drill", layout, mark),
                 on_created=lambda guid: results.record_pool(guid, POOL, "drill", layout)).run()


def _mb_s(nbytes: int, seconds: float) -> float:
    return nbytes / 1e6 / seconds if seconds > 0 else 0.0


class Drill:
    """Runs one plan; `results` collects what each scenario found."""

    def __init__(self, plan: DrillPlan, drivers: Drivers, clock: Clock, *, log: Callable[[str], None] = lambda t: None,
                 on_creating: Callable[[str], None] = lambda mark: None,
                 on_created: Callable[[str], None] = lambda guid: None,
                 on_wiped: Callable[[list[str]], None] = lambda devices: None) -> None:
        self.plan = plan
        self.d = drivers
        self.zfs = drivers.zfs
        self.clock = clock
        self.log = log
        self.on_creating = on_creating  # told the pool's mark before the create
        self.on_created = on_created  # told the pool's GUID the moment it exists
        self.on_wiped = on_wiped  # told the disks a wipe cleared (their SMART counters are recorded)
        self.results: list[ScenarioResult] = []

    def run(self) -> list[ScenarioResult]:
        """Execute the plan: set-up, each scenario, and the clean-up whatever happened."""
        steps = self.plan.steps
        try:
            for scenario, block in _grouped([s for s in steps if s.scenario != "cleanup"], lambda s: s.scenario):
                if scenario == "setup":
                    for step in block:
                        self._do(step)
                else:
                    self._run_scenario(scenario, block)
        finally:
            cleanup = [s for s in steps if s.scenario == "cleanup"]
            for step in cleanup:  # the destroy, then every wipe at once
                if step.kind != "wipe":
                    step.op.run(self.d)
            wipes = [s.op for s in cleanup if s.kind == "wipe"]
            if wipes:
                self.on_wiped(run_wipes(wipes, self.d))
        return self.results

    def _run_scenario(self, scenario: str, steps: list[Step]) -> ScenarioResult:
        if steps[0].kind == "skip":
            return self._add(ScenarioResult(scenario, "skipped", 0, Skipped(steps[0].note.split("skipped: ", 1)[1])))
        run = {"degraded": self._degraded, "resilver": self._resilver}.get(scenario, self._corrupt_scenario)
        return run(scenario, steps)

    # --- one step ----------------------------------------------------------------------------
    def _do(self, step: Step):
        """Run one planned step's operation; what it yields (a verification, a speed, ZFS's refusal)."""
        if step.kind == "try-offline":
            return self._try_offline(step)
        if step.kind == "verify":
            return self._verify(step)
        if step.kind == "corrupt":
            self._check_corrupt_targets(step.devices)
        if step.kind == "wipe" and step.scenario == "setup":
            self.log(f"wiping {step.devices[0]}")
        if isinstance(step.op, CreatePool):  # recorded first: a drill killed after the create is known by it
            self.on_creating(step.op.fs_props[MARK])
        t0 = self.clock.monotonic()
        out = step.op.run(self.d)
        if step.kind == "wipe":
            self.on_wiped(list(step.devices))
        elif isinstance(step.op, CreatePool):
            self.on_created(self.zfs.pool_guid(step.op.pool))
            self._check_pool(step.op)
        elif step.kind == "fill":
            self.log(f"filled {self.plan.fill_bytes / 1e6:.0f} MB in {self.clock.monotonic() - t0:.0f} s")
        elif step.kind == "write":
            return out.jobs[0].write.mb_s  # MB/s of a short write while degraded
        return out

    def _check_pool(self, create: CreatePool) -> None:
        """What the plan relied on, checked once the pool exists: its mountpoint, its disks'
        names in zpool status, and room for the fill."""
        sandbox = self.plan.request.sandbox
        actual = self.zfs.get(create.pool, "mountpoint")["mountpoint"].value
        if actual != MOUNTPOINT:
            raise DrillError(f"pool {POOL} is mounted at {actual}, not at {MOUNTPOINT} where the plan runs fio; "
                             f"is an altroot or a mountpoint inherited? (zpool get altroot {POOL})")
        status = self.zfs.status(create.pool)
        unnamed = [d for d in create.devices if status.vdev(leaf_name(d, sandbox)) is None]
        if unnamed:
            raise DrillError(f"zpool status {POOL} does not name {unnamed[0]} as the plan does "
                             f"({leaf_name(unnamed[0], sandbox)}); nothing was failed or written")
        usable = self.zfs.dataset(create.pool).usable_bytes
        if self.plan.fill_bytes > usable * FILL_LIMIT:
            raise DrillError(f"the planned fill of {self.plan.fill_bytes:,} bytes is more than {FILL_LIMIT:.0%} of "
                             f"the pool's real USED+AVAIL ({usable:,}): the capacity model and this pool disagree; "
                             "give a smaller `fill` and report the layout")

    def _verify(self, step: Step) -> tuple[bool, float, str]:
        """Read every byte back against fio's checksums: (all good, MB/s, error text)."""
        t0 = self.clock.monotonic()
        try:
            r = step.op.run(self.d)
            return True, r.jobs[0].read.mb_s or _mb_s(self.plan.fill_bytes, self.clock.monotonic() - t0), ""
        except FioFailed as e:
            return False, 0.0, str(e)

    def _try_offline(self, step: Step) -> tuple[str | None, str]:
        """One disk more than the parity: ZFS refuses (its words are the result); should it not,
        the disk goes back online at once. (ZfsDriver.offline's retry runs first.)"""
        try:
            step.op.run(self.d)
        except CommandFailed as e:
            return e.stderr_tail, self.zfs.status(POOL).state
        state = self.zfs.status(POOL).state
        self.zfs.online(POOL, step.op.leaf)
        return None, state

    def _device_for(self, leaf: str) -> str | None:
        """The device path of a leaf: one of the pool's disks or the spare disk resilvered in."""
        plan = self.plan
        for d in plan.devices + ((plan.spare,) if plan.spare else ()):
            if os.path.basename(os.path.realpath(d)) == leaf or os.path.basename(d) == leaf or d == leaf:
                return d
        return None

    def _status_name(self, status: PoolStatus, device: str) -> str:
        """How zpool status shows one of the pool's disks (the results keep its words)."""
        v = status.vdev(leaf_name(device, self.plan.request.sandbox))
        return v.name if v else device

    def _check_corrupt_targets(self, devices: Sequence[str]) -> None:
        """Only disks zpool status shows online in the first vdev are written: the plan's, checked."""
        top = self.zfs.status(POOL).top_level[0]
        leaves = top.leaves if top.children else [top]
        online = [d for d in (self._device_for(v.name) for v in leaves if v.state == "ONLINE") if d is not None]
        strangers = [d for d in devices if d not in online]
        if strangers:
            raise DrillError(f"the plan corrupts {strangers[0]}, but zpool status does not show it online in the "
                             f"first vdev of {POOL} (online there: {', '.join(online) or 'none'}); nothing was "
                             f"overwritten")

    # --- the scenarios -------------------------------------------------------------------------
    def _degraded(self, scenario: str, steps: list[Step]) -> ScenarioResult:
        p = self.plan.layout.groups[0].parity
        levels: list[DegradedLevel] = []
        beyond = across = None
        t0 = self.clock.monotonic()
        for (stage, title), block in _grouped(steps, lambda s: (s.stage, s.title)):
            lost = [r for r in levels if not r.verified]
            if lost and stage in ("level", "beyond"):  # as always: no more failures piled on lost data
                self.log(f"degraded: data lost with {lost[0].failed} failed disks; left out of the plan: "
                         f"{len(block)} steps ({title})")
                continue
            seen: dict = {}
            for step in block:
                if step.kind == "verify" and stage == "level":
                    seen["state"] = self.zfs.status(POOL).state
                seen[step.kind] = self._do(step)
            if stage == "level":
                ok, mb_s, err = seen["verify"]
                levels.append(DegradedLevel(sum(s.kind == "offline" for s in block), seen["state"], ok, mb_s, err,
                                            seen["write"]))
            elif stage == "beyond":
                beyond = BeyondParity(p + 1, *seen["try-offline"])
            else:
                ok, mb_s, _ = seen["verify"]
                status = self.zfs.status(POOL)
                picks = [s.devices[0] for s in block if s.kind == "offline"]
                across = AcrossVdevs(tuple(self._status_name(status, d) for d in picks), ok, mb_s)
        survived = all(r.verified for r in levels) and (across is None or across.verified)
        return self._add(ScenarioResult(scenario, "survived" if survived else "lost", self.clock.monotonic() - t0,
                                        Degraded(tuple(levels), across, beyond, p)))

    def _resilver(self, scenario: str, steps: list[Step]) -> ScenarioResult:
        healing = next(s for s in steps if s.kind == "replace" and s.stage == "healing")
        victim, target = healing.devices
        seconds, done_bytes, ok, sequential = 0.0, 0, False, None
        for step in steps:
            if step is healing:
                t0 = self.clock.monotonic()
                self._do(step)
                seconds = self.clock.monotonic() - t0
                done_bytes = self.zfs.status(POOL).scan.resilvered_bytes
            elif step.kind == "replace":
                sequential = self._sequential_rebuild(step)
            elif step.kind == "verify":
                ok, _, _ = self._do(step)
            else:
                self._do(step)
        # resilvered_bytes: ZFS's count of repair writes to leaf vdevs (scn_processed, vdev_stat_update
        # in module/zfs/vdev.c): the data the new disk received, what plan's risk model divides by a rate
        kind = self.plan.layout.groups[0].kind
        mirror_fresh = kind is VdevKind.MIRROR and healing.note == "fresh disk"
        detail = Resilver(victim, target, healing.note, seconds, done_bytes, _mb_s(done_bytes, seconds), ok, kind.value,
                          self.plan.fill, self.plan.fill_bytes, sequential,
                          SEQUENTIAL_SKIPPED if mirror_fresh and sequential is None else None, mirror_fresh)
        return self._add(ScenarioResult(scenario, "survived" if ok else "lost", seconds, detail))

    def _sequential_rebuild(self, step: Step) -> SequentialRebuild:
        """`replace -s` from the disk resilvered in back onto the one replaced out, timed. ZFS
        starts a scrub right after it, whose line may hide the rebuild's in zpool status, so the
        bytes written to the disk (/proc/diskstats) are recorded too."""
        names = kernel_names([step.devices[1]])
        before = read_diskstats()
        t0 = self.clock.monotonic()
        self._do(step)
        seconds = self.clock.monotonic() - t0
        after = read_diskstats()
        written = ((after[names[0]][1] - before[names[0]][1]) * SECTOR
                   if names and names[0] in before and names[0] in after else 0)
        scan = self.zfs.status(POOL).scan
        return SequentialRebuild(seconds, written, scan.resilvered_bytes if scan.kind == "resilver" else 0,
                                 _mb_s(written, seconds))

    def _corrupt_scenario(self, scenario: str, steps: list[Step]) -> ScenarioResult:
        t0 = self.clock.monotonic()
        members = next(s.devices for s in steps if s.kind == "corrupt")
        written, status, ok, err = 0, None, False, ""
        for step in steps:
            if step.kind == "verify":
                ok, _, err = self._do(step)
            elif step.kind == "corrupt":
                written = self._do(step)
            else:
                self._do(step)
                if step.kind == "scrub":
                    status = self.zfs.status(POOL)
        beyond = scenario != "corrupt"
        if beyond:
            status = self.zfs.status(POOL)  # the verify's reads add what they found
        cksum = {name: (v.checksum_errors if (v := status.vdev(name)) else 0)
                 for name in (self._status_name(status, d) for d in members)}
        found = Corruption(len(members), written, cksum, status.scan.repaired_bytes, status.errors, ok,
                           tuple(status.damaged_files), err, status.state if beyond else None)
        if beyond:
            outcome = "damaged" if status.damaged_files or not ok else "repaired"
        else:
            outcome = "repaired" if ok and status.no_known_errors else "damaged"
        return self._add(ScenarioResult(scenario, outcome, self.clock.monotonic() - t0, found))

    def _add(self, r: ScenarioResult) -> ScenarioResult:
        self.results.append(r)
        self.log(f"{r.scenario}: {r.outcome} in {r.seconds:.0f} s")
        return r


def _grouped(steps: Sequence[Step], key) -> list[tuple[object, list[Step]]]:
    """Consecutive steps with the same key together, in order."""
    out: list[tuple[object, list[Step]]] = []
    for s in steps:
        if out and out[-1][0] == key(s):
            out[-1][1].append(s)
        else:
            out.append((key(s), [s]))
    return out
