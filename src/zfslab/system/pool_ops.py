"""The operations bench and drill plans are made of (restic's PlanPrune/Execute): each holds the
exact values it runs with; `argv` is built by the function the driver itself uses, and `run`
hands the driver those same values, so the plan a dry run prints is the plan that runs. What a
driver wraps around a command (zpool create's udev settle and retry, zpool offline's retry) is
shown by `wrapper`, once per plan (see render_lines)."""

from __future__ import annotations

import shlex
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from zfslab.model.layouts import Layout
from zfslab.model.zpool_syntax import zpool_create_argv
from zfslab.system.bonnie import Bonnie, BonnieJob, BonnieResult
from zfslab.system.fio import Fio, FioJob, FioResult, fio_argv
from zfslab.system.pool_safety import OwnPool, destroy_leftover, wipe_devices, wipe_line
from zfslab.system.runner import Runner
from zfslab.system.zfs import (NO_REPLICAS, UDEV_RACES, ZfsDriver, clear_argv, destroy_argv, offline_argv, online_argv,
                               pool_set_argv, replace_argv, scrub_argv, wait_argv)


class Clock(Protocol):
    """Time as the executors read it: a test passes one it moves (tests/fakes.py Clock)."""

    def monotonic(self) -> float: ...
    def sleep(self, seconds: float) -> None: ...


class SystemClock:
    """The wall clock: time.monotonic and time.sleep."""

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


SYSTEM_CLOCK = SystemClock()


@dataclass(frozen=True)
class Drivers:
    """What a plan runs through: ZFS, fio, bonnie++ and the process runner (for wipes, monitors)."""

    zfs: ZfsDriver
    fio: Fio
    runner: Runner
    bonnie: Bonnie | None = None


_SAID = ", ".join(repr(w) for w in UDEV_RACES[:-1]) + f" or {UDEV_RACES[-1]!r}"
CREATE_WRAPPER = (f"# zpool create runs with the disks' udev lock held, after udevadm settle; should it say "
                  f"{_SAID}, zfslab runs partx --delete on each disk, "
                  f"udevadm settle, and the same zpool create once more (docs/safety.md#a-busy-udev)")
OFFLINE_WRAPPER = (f"# should zpool offline say {NO_REPLICAS!r} while the disk's partners still lack data, "
                   f"zfslab runs udevadm settle and zpool wait -t resilver, then the same zpool offline once more, "
                   f"and if refused again zpool scrub -w and a last try (a refusal that stands is the result)")
REPLACE_WRAPPER = "# zpool replace runs with the new disk's udev lock held, as zpool create does"


@dataclass(frozen=True)
class CreatePool:
    pool: str
    layout: Layout
    devices: tuple[str, ...]
    ashift: int
    fs_props: Mapping[str, str] = field(default_factory=dict)

    @property
    def argv(self) -> tuple[str, ...]:
        return tuple(zpool_create_argv(self.pool, self.layout, list(self.devices), ashift=self.ashift,
                                       fs_props=dict(self.fs_props)))

    wrapper = CREATE_WRAPPER

    def run(self, d: Drivers) -> None:
        d.zfs.create_pool(self.pool, self.layout, list(self.devices), ashift=self.ashift, fs_props=dict(self.fs_props))


@dataclass(frozen=True)
class DestroyPool:
    """zpool destroy -f, when the pool is there (a clean-up after a failed create has none)."""

    pool: str

    @property
    def argv(self) -> tuple[str, ...]:
        return tuple(destroy_argv(self.pool, force=True))

    wrapper = ""

    def run(self, d: Drivers) -> None:
        if d.zfs.pool_exists(self.pool):
            d.zfs.destroy_pool(self.pool, force=True)


@dataclass(frozen=True)
class DestroyLeftover:
    """The pool an interrupted run left (pool_safety.own_leftover proved it its own): the benchmark
    engines still working on it ended, then zpool destroy -f, once its GUID is checked again."""

    own: OwnPool
    purpose: str

    @property
    def argv(self) -> tuple[str, ...]:
        return tuple(destroy_argv(self.own.name, force=True))

    @property
    def wrapper(self) -> str:
        how = (f"its GUID is recorded first, from the create this run recorded ({self.own.mark_prop}={self.own.mark})"
               if self.own.adopted else "its GUID is recorded")
        return (f"# {self.own.name} (GUID {self.own.guid}) is the pool this {self.purpose} run left when it was "
                f"interrupted ({how}): fio or bonnie++ still running on it are ended before it is destroyed")

    def run(self, d: Drivers, log=lambda text: None) -> list[str]:
        return destroy_leftover(d.zfs, self.own, self.purpose, log)


@dataclass(frozen=True)
class PoolSet:
    pool: str
    prop: str
    value: str

    @property
    def argv(self) -> tuple[str, ...]:
        return tuple(pool_set_argv(self.pool, self.prop, self.value))

    wrapper = ""

    def run(self, d: Drivers) -> None:
        d.zfs.pool_set(self.pool, self.prop, self.value)


@dataclass(frozen=True)
class Offline:
    pool: str
    leaf: str

    @property
    def argv(self) -> tuple[str, ...]:
        return tuple(offline_argv(self.pool, self.leaf))

    wrapper = OFFLINE_WRAPPER

    def run(self, d: Drivers) -> None:
        d.zfs.offline(self.pool, self.leaf)


@dataclass(frozen=True)
class Online:
    pool: str
    leaf: str

    @property
    def argv(self) -> tuple[str, ...]:
        return tuple(online_argv(self.pool, self.leaf))

    wrapper = ""

    def run(self, d: Drivers) -> None:
        d.zfs.online(self.pool, self.leaf)


@dataclass(frozen=True)
class Wait:
    pool: str
    activity: str
    timeout_s: float = 7200

    @property
    def argv(self) -> tuple[str, ...]:
        return tuple(wait_argv(self.pool, self.activity))

    wrapper = ""

    def run(self, d: Drivers) -> None:
        d.zfs.wait(self.pool, self.activity, timeout_s=self.timeout_s)


@dataclass(frozen=True)
class Replace:
    pool: str
    old: str
    new: str
    sequential: bool = False
    timeout_s: float = 14400

    @property
    def argv(self) -> tuple[str, ...]:
        return tuple(replace_argv(self.pool, self.old, self.new, sequential=self.sequential, wait=True))

    wrapper = REPLACE_WRAPPER

    def run(self, d: Drivers) -> None:
        d.zfs.replace(self.pool, self.old, self.new, sequential=self.sequential, wait=True, timeout_s=self.timeout_s)


@dataclass(frozen=True)
class Clear:
    pool: str

    @property
    def argv(self) -> tuple[str, ...]:
        return tuple(clear_argv(self.pool))

    wrapper = ""

    def run(self, d: Drivers) -> None:
        d.zfs.clear(self.pool)


@dataclass(frozen=True)
class Scrub:
    pool: str
    timeout_s: float = 14400

    @property
    def argv(self) -> tuple[str, ...]:
        return tuple(scrub_argv(self.pool, wait=True))

    wrapper = ""

    def run(self, d: Drivers) -> None:
        d.zfs.scrub(self.pool, wait=True, timeout_s=self.timeout_s)


@dataclass(frozen=True)
class Wipe:
    """What zfslab does itself (pool_safety.wipe_devices): shown as a comment, no one argv."""

    device: str
    sandbox: bool

    argv = ()
    wrapper = ""

    @property
    def note(self) -> str:
        return wipe_line(self.device, sandbox=self.sandbox)

    def run(self, d: Drivers) -> None:
        wipe_devices(d.runner, [self.device], sandbox=self.sandbox)


def run_wipes(wipes: list[Wipe], d: Drivers) -> list[str]:
    """Several planned wipes as one call, each kind together (wipe_devices zeroes every disk's sampled
    pages at once, so the time is the slowest disk's); the devices wiped, in order."""
    for sandbox in (False, True):
        devices = [w.device for w in wipes if w.sandbox is sandbox]
        if devices:
            wipe_devices(d.runner, devices, sandbox=sandbox)
    return [w.device for w in wipes]


@dataclass(frozen=True)
class FioRun:
    """One fio job; `monitor`: the argv run beside it (zpool iostat), empty for none."""

    job: FioJob
    timeout_s: float = 3600
    monitor: tuple[str, ...] = ()

    @property
    def argv(self) -> tuple[str, ...]:
        return tuple(fio_argv(self.job))

    wrapper = ""

    def run(self, d: Drivers) -> FioResult:
        return d.fio.run(self.job, timeout_s=self.timeout_s)


@dataclass(frozen=True)
class FioFile:
    """The user's own fio job file, run from the pool's mountpoint."""

    path: str
    directory: str
    monitor: tuple[str, ...] = ()

    @property
    def argv(self) -> tuple[str, ...]:
        return ("fio", "--output-format=json", self.path)

    wrapper = ""

    def run(self, d: Drivers) -> FioResult:
        return d.fio.run_file(self.path, self.directory)


@dataclass(frozen=True)
class BonnieRun:
    job: BonnieJob
    monitor: tuple[str, ...] = ()

    @property
    def argv(self) -> tuple[str, ...]:
        return tuple(self.job.argv())

    wrapper = ""

    def run(self, d: Drivers) -> BonnieResult:
        return (d.bonnie or Bonnie(d.runner)).run(self.job)


def op_lines(op, note: str, shown: set[str]) -> list[str]:
    """The lines one operation adds to a dry run: its command (or zfslab's own work, as a comment),
    the monitor beside it, and the driver's wrapper the first time that wrapper appears."""
    lines = [shlex.join(op.argv) if op.argv else note]
    if getattr(op, "monitor", ()):
        lines.append(f"# beside it: {shlex.join(op.monitor)}")
    if op.wrapper and op.wrapper not in shown:
        shown.add(op.wrapper)
        lines.append(op.wrapper)
    return lines
