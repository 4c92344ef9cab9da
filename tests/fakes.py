"""FakeZfs: the ZfsDriver protocol in memory, for unit tests of bench and drill.

It answers as the real zpool/zfs do for what bench and drill rely on; tests/zfs_contract.py
holds it to that, and the same contract runs against ZfsCli on the real kernel module in the
guest (tests/e2e/inside/test_zfs_contract.py). Failures on cue (`fail_create`) and a clock that
a replace or a scrub moves (`clock`) are for tests of error paths and timings.
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field

from zfslab.errors import ZfslabError
from zfslab.model.layouts import Layout, VdevKind
from zfslab.model.zpool_syntax import zpool_create_argv
from zfslab.system.runner import CommandFailed, Completed, Runner
from zfslab.system.zfs import DatasetInfo, DeviceInUse, NoSuchPool, PoolInfo, Property, offline_argv
from zfslab.system.zfs_output import PoolStatus, ScanStatus, VdevStatus, ZfsVersion

GIB = 1 << 30


class Clock:
    """A monotonic clock for code under test, passed in where system code takes a `clock`
    (system/pool_ops.py Clock): it moves only when a fake moves it or something sleeps."""

    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


FIO_JSON_PATH = os.path.join(os.path.dirname(__file__), "data", "zfs-2.1", "fio_write.json")


class FakeRunner(Runner):
    """The process runner, minus the processes: records every argv, answers fio with JSON
    captured from a real run (or fails the read-back number `fail_fio_read_at`, to stand for a
    verification that found bad data), and everything else with nothing. No udevadm here."""

    def __init__(self, fail_fio_read_at: int | None = None):
        super().__init__()
        self.calls: list[tuple[str, ...]] = []
        self.fail_fio_read_at = fail_fio_read_at
        self.reads = 0
        with open(FIO_JSON_PATH) as f:
            self.fio_json = f.read()

    def which(self, program):
        return None if program == "udevadm" else f"/usr/sbin/{program}"

    def run(self, argv, *, timeout_s=600.0, check=True, input_text=None, cwd=None):
        argv = tuple(str(a) for a in argv)
        self.calls.append(argv)
        if argv[0] == "fio" and "--rw=read" in argv:
            self.reads += 1
            if self.reads == self.fail_fio_read_at:
                raise CommandFailed(shlex.join(argv), 1, "fio: verify type mismatch (crc32c)")
        return Completed(argv, 0, self.fio_json if argv[0] == "fio" else "", "", 0.0)


class Killed(BaseException):
    """zfslab killed (SIGKILL) at a point a test chose: nothing after it runs, no finally either,
    which a test keeps by catching it only at the top."""


@dataclass
class _Pool:
    layout: Layout
    devices: list[str]
    guid: str
    props: dict[str, str]
    pool_props: dict[str, str]
    states: dict[str, str] = field(default_factory=dict)  # leaf path -> ONLINE / OFFLINE
    scan: ScanStatus = field(default_factory=lambda: ScanStatus(None, text="none requested"))
    replacing: dict[str, str] = field(default_factory=dict)  # old leaf -> new leaf, done
    detached: set[str] = field(default_factory=set)


def _leaf(device: str) -> str:
    return os.path.basename(device)


class FakeZfs:
    """Pools in a dict, one GIB per device; every method of the ZfsDriver protocol."""

    def __init__(self, *, fail_create: str | None = None, clock: Clock | None = None,
                 resilver_seconds: float = 30.0, rebuild_seconds: float = 7.0, kill_after_create: str | None = None) -> None:
        self.pools: dict[str, _Pool] = {}
        self.exported: dict[str, _Pool] = {}
        self.calls: list[str] = []
        self.fail_create = fail_create
        self.kill_after_create = kill_after_create  # a layout: its create makes the pool, then zfslab "dies"
        self.dead = False
        self.clock = clock or Clock()
        self.resilver_seconds = resilver_seconds
        self.rebuild_seconds = rebuild_seconds
        self.created = 0
        self.log = lambda text: None

    # --- facts -------------------------------------------------------------------------------
    def version(self) -> ZfsVersion:
        return ZfsVersion("2.3.2-2~bpo12+2", "2.3.2-2~bpo12+2")

    def _get_pool(self, name: str) -> _Pool:
        if name not in self.pools:
            raise NoSuchPool(name)
        return self.pools[name]

    def list_pools(self) -> list[PoolInfo]:
        return [self.pool(n) for n in self.pools]

    def pool(self, name: str) -> PoolInfo:
        p = self._get_pool(name)
        size = len(p.devices) * GIB
        return PoolInfo(name, size, 0, size, self._state(p))

    def pool_exists(self, name: str) -> bool:
        return name in self.pools

    def pool_guid(self, name: str) -> str:
        return self._get_pool(name).guid

    def dataset(self, name: str) -> DatasetInfo:
        p = self._get_pool(name.split("/")[0])
        return DatasetInfo(name, 100_000, len(p.devices) * GIB // 2, 100_000)

    def get(self, target: str, *props: str) -> dict[str, Property]:
        p = self._get_pool(target.split("/")[0])
        values = {"mountpoint": f"/{target}", "compression": "off", "recordsize": str(128 << 10), "atime": "on",
                  **p.props}
        return {k: Property(k, values.get(k, "-"), "local" if k in p.props else "default") for k in props}

    def pool_get(self, pool: str, *props: str) -> dict[str, Property]:
        p = self._get_pool(pool)
        values = {"guid": p.guid, "ashift": "0", "failmode": "wait", **p.pool_props}
        return {k: Property(k, values.get(k, "-"), "local" if k in p.pool_props else "default") for k in props}

    def set(self, target: str, prop: str, value: str) -> None:
        self._get_pool(target.split("/")[0]).props[prop] = value

    def pool_set(self, pool: str, prop: str, value: str) -> None:
        self._get_pool(pool).pool_props[prop] = value

    def status(self, name: str) -> PoolStatus:
        p = self._get_pool(name)
        it = iter(p.devices)
        tops = []
        for g in p.layout.groups:
            for i in range(g.count):
                leaves = []
                for _ in range(g.width):
                    d = next(it)
                    new = p.replacing.get(d)
                    if (new or d) not in p.detached:
                        leaves.append(VdevStatus(_leaf(new or d), p.states.get(new or d, "ONLINE")))
                if g.kind is VdevKind.DISK or len(leaves) == 1:  # a mirror detached to one disk is that disk
                    tops.append(leaves[0])
                else:
                    state = "DEGRADED" if any(v.state != "ONLINE" for v in leaves) else "ONLINE"
                    tops.append(VdevStatus(f"{g.kind.value}{g.parity if g.kind is not VdevKind.MIRROR else ''}-"
                                           f"{len(tops)}", state, children=tuple(leaves)))
        spares = tuple(VdevStatus(_leaf(d), "AVAIL") for d in it)
        root = VdevStatus(name, self._state(p), children=tuple(tops))
        return PoolStatus(name, root.state, "", "", p.scan, root, {"spares": spares} if spares else {},
                          "No known data errors")

    def _state(self, p: _Pool) -> str:
        return "DEGRADED" if any(s != "ONLINE" for s in p.states.values()) else "ONLINE"

    # --- lifecycle -----------------------------------------------------------------------------
    def create_pool(self, name, layout, devices, *, ashift=None, pool_props=None, fs_props=None, force=False):
        zpool_create_argv(name, layout, list(devices), ashift=ashift)  # the real one's checks on names
        self.calls.append(f"create {layout}")
        if self.fail_create == str(layout):
            raise ZfslabError("boom")
        if name in self.pools:
            raise ZfslabError(f"cannot create '{name}': pool already exists")
        busy = [d for p in self.pools.values() for d in p.devices if d in devices]
        if busy or (not force and [d for p in self.exported.values() for d in p.devices if d in devices]):
            device = (busy or devices)[0]
            raise DeviceInUse(device, f"{device} is part of a pool")
        self.created += 1
        self.pools[name] = _Pool(layout, list(devices), str(10_000_000_000_000 + self.created),
                                 dict(fs_props or {}), {"ashift": str(ashift or 12), **(pool_props or {})})
        if self.kill_after_create == str(layout):
            self.kill_after_create = None
            self.dead = True  # a finally that would clean up never runs after SIGKILL: its destroy "dies" too
            raise Killed(f"killed once zpool create {layout} returned")

    def destroy_pool(self, name: str, *, force: bool = False) -> None:
        if self.dead:  # until the test starts "the next zfslab" (dead = False)
            raise Killed("killed: no clean-up runs")
        self._get_pool(name)
        self.calls.append(f"destroy {name}")
        del self.pools[name]

    def export_pool(self, name: str) -> None:
        self.exported[name] = self._get_pool(name)
        del self.pools[name]

    def import_pool(self, name: str, *, search_dir: str | None = None) -> None:
        if name not in self.exported:
            raise NoSuchPool(name)
        self.pools[name] = self.exported.pop(name)

    # --- devices -------------------------------------------------------------------------------
    def _device(self, p: _Pool, leaf: str) -> str:
        for d in [*p.devices, *p.replacing.values()]:
            if d == leaf or _leaf(d) == _leaf(leaf):
                return d
        raise ZfslabError(f"cannot find device {leaf!r} in the pool")

    def offline(self, pool: str, device: str, *, temporary: bool = False) -> None:
        """As zpool: refused while the disk's vdev would have no copy of its data left."""
        p = self._get_pool(pool)
        disk = self._device(p, device)
        it = iter(p.devices)
        for g in (g for g in p.layout.groups for _ in range(g.count)):
            top = [p.replacing.get(d, d) for d in (next(it) for _ in range(g.width))]
            live = [d for d in top if d not in p.detached]
            if disk in live and sum(p.states.get(d) == "OFFLINE" for d in live) + 1 > min(g.parity, len(live) - 1):
                raise CommandFailed(shlex.join(offline_argv(pool, device, temporary=temporary)), 1,
                                    f"cannot offline {device}: no valid replicas")
        p.states[disk] = "OFFLINE"
        self.calls.append(f"offline {device}")

    def online(self, pool: str, device: str) -> None:
        p = self._get_pool(pool)
        p.states[self._device(p, device)] = "ONLINE"

    def replace(self, pool, old, new=None, *, sequential=False, wait=False, timeout_s=None):
        p = self._get_pool(pool)
        self.calls.append(f"replace {old} {new} {'sequential' if sequential else 'healing'}")
        source = self._device(p, old)
        original = next((k for k, v in p.replacing.items() if v == source), source)
        p.states.pop(source, None)
        p.replacing[original] = new or source
        p.states[new or source] = "ONLINE"
        self.clock.now += self.rebuild_seconds if sequential else self.resilver_seconds
        p.scan = ScanStatus("resilver", resilvered_bytes=64 << 20, percent_done=100.0,
                            text=f"resilvered 64M in 00:00:{int(self.resilver_seconds):02d} with 0 errors")

    def detach(self, pool: str, device: str) -> None:
        p = self._get_pool(pool)
        disk = self._device(p, device)
        p.states.pop(disk, None)
        p.detached.add(disk)

    def clear(self, pool: str) -> None:
        self._get_pool(pool)

    # --- scans ---------------------------------------------------------------------------------
    def scrub(self, pool: str, *, wait: bool = False, timeout_s: float | None = None) -> None:
        p = self._get_pool(pool)
        p.scan = ScanStatus("scrub", percent_done=100.0, text="scrub repaired 0B in 00:00:01 with 0 errors")

    def wait(self, pool: str, activity: str, *, timeout_s: float | None = None) -> None:
        self._get_pool(pool)
