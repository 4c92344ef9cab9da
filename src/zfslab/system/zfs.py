"""The ZFS driver: `zpool` and `zfs` through the one runner, their -Hp output parsed.

`ZfsDriver` is the protocol the rest of zfslab uses; `ZfsCli` runs the real commands.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from zfslab.errors import ZfslabError
from zfslab.model.layouts import Layout
from zfslab.model.zpool_syntax import zpool_create_argv
from zfslab.system.disks import partitions, udev_settle
from zfslab.system.runner import CommandFailed, Runner
from zfslab.system.udev_lock import held_against_rescan
from zfslab.system.zfs_output import PoolStatus, ZfsVersion, parse_status, parse_tabular, parse_version


class NoSuchPool(ZfslabError):
    """pool {!r} does not exist; `zpool list` shows the pools there are"""

    exit_code = 5


class DeviceInUse(ZfslabError):
    """{} is in use ({}); zfslab never forces it: free the device or choose another"""

    exit_code = 10


@dataclass(frozen=True, slots=True)
class PoolInfo:
    name: str
    size_bytes: int
    allocated_bytes: int
    free_bytes: int
    health: str


@dataclass(frozen=True, slots=True)
class DatasetInfo:
    name: str
    used_bytes: int
    available_bytes: int
    referenced_bytes: int

    @property
    def usable_bytes(self) -> int:
        """USED + AVAIL: what zfslab's capacity model predicts for an empty pool's root."""
        return self.used_bytes + self.available_bytes


@dataclass(frozen=True, slots=True)
class Property:
    name: str
    value: str
    source: str


class ZfsDriver(Protocol):
    """Everything bench and drill ask of ZFS. ZfsCli runs the real commands; the tests' FakeZfs
    keeps state in memory; tests/zfs_contract.py holds both to the same behaviour."""

    log: Callable[[str], None]

    def version(self) -> ZfsVersion: ...
    def list_pools(self) -> list[PoolInfo]: ...
    def pool(self, name: str) -> PoolInfo: ...
    def pool_exists(self, name: str) -> bool: ...
    def pool_guid(self, name: str) -> str: ...
    def dataset(self, name: str) -> DatasetInfo: ...
    def get(self, target: str, *props: str) -> dict[str, Property]: ...
    def pool_get(self, pool: str, *props: str) -> dict[str, Property]: ...
    def set(self, target: str, prop: str, value: str) -> None: ...
    def pool_set(self, pool: str, prop: str, value: str) -> None: ...
    def status(self, name: str) -> PoolStatus: ...
    def create_pool(self, name: str, layout: Layout, devices: Sequence[str], *, ashift: int | None = None,
                    pool_props: dict[str, str] | None = None, fs_props: dict[str, str] | None = None,
                    force: bool = False) -> None: ...
    def destroy_pool(self, name: str, *, force: bool = False) -> None: ...
    def export_pool(self, name: str) -> None: ...
    def import_pool(self, name: str, *, search_dir: str | None = None) -> None: ...
    def offline(self, pool: str, device: str, *, temporary: bool = False) -> None: ...
    def online(self, pool: str, device: str) -> None: ...
    def replace(self, pool: str, old: str, new: str | None = None, *, sequential: bool = False,
                wait: bool = False, timeout_s: float | None = None) -> None: ...
    def detach(self, pool: str, device: str) -> None: ...
    def clear(self, pool: str) -> None: ...
    def scrub(self, pool: str, *, wait: bool = False, timeout_s: float | None = None) -> None: ...
    def wait(self, pool: str, activity: str, *, timeout_s: float | None = None) -> None: ...


# What zpool create says when it raced udev probing the disks (docs/safety.md#a-busy-udev): a leaf
# of the new pool could not be opened (ENXIO from the create ioctl, vdev_create()), or the kernel
# could not re-read the partition table zpool had just written because a partition was open
# (libefi's efi_rescan() gives up after 10 tries of BLKRRPART in 0.5 s). Both pass once udev settles.
UNAVAILABLE = "currently unavailable"
RESCAN_FAILED = "failed to rescan the partition table"
# The same race on a pool of one plain disk: no mirror or raidz above the leaf turns its ENOENT (the
# -part1 link udev had just deleted) into ENXIO, so the create ioctl fails ENOENT, which libzfs's
# zpool_standard_error() words so. A create's own pool name cannot be missing: only a device can be.
# Seen once in the 2.4.4 guest (test_safety's `zpool create -f tank DISK` right after a destroy)
VANISHED = "no such pool or dataset"
# udev had not made the new partition's device and links known within zpool_label_disk_wait()'s
# 30 s (ENODEV, 19): a loaded host, seen in CI's 2.4 guest beside three other guests (2026-11-28)
LABEL_WAIT = "failed to detect device partitions"
UDEV_RACES = (UNAVAILABLE, RESCAN_FAILED, VANISHED, LABEL_WAIT)
# A create that fails this way twice, with udev held off by the disks' lock, met something else that
# took a partition away while the module opened it; the module's log names the leaf and the error
OPEN_FAILED_HINT = ("; a disk's partition was not there when the kernel module opened it (its log, "
                    "/proc/spl/kstat/zfs/dbgmsg, has an 'open error=' line for it): is another program "
                    "partitioning these disks? (docs/safety.md#a-create-right-after-a-destroy)")
NO_REPLICAS = "no valid replicas"  # zpool offline: the other copies lack data this disk holds


# The argv of each change ZfsCli makes, built here once: ZfsCli runs them, and a plan
# (system/pool_ops.py) shows the same lists, so what a dry run prints is what runs.
def destroy_argv(pool: str, *, force: bool = False) -> list[str]:
    return ["zpool", "destroy", *(["-f"] if force else []), pool]


def pool_set_argv(pool: str, prop: str, value: str) -> list[str]:
    return ["zpool", "set", f"{prop}={value}", pool]


def offline_argv(pool: str, device: str, *, temporary: bool = False) -> list[str]:
    return ["zpool", "offline", *(["-t"] if temporary else []), pool, device]


def online_argv(pool: str, device: str) -> list[str]:
    return ["zpool", "online", pool, device]


def replace_argv(pool: str, old: str, new: str | None = None, *, sequential: bool = False,
                 wait: bool = False) -> list[str]:
    return ["zpool", "replace", *(["-s"] if sequential else []), *(["-w"] if wait else []), pool, old,
            *([new] if new else [])]


def detach_argv(pool: str, device: str) -> list[str]:
    return ["zpool", "detach", pool, device]


def clear_argv(pool: str) -> list[str]:
    return ["zpool", "clear", pool]


def scrub_argv(pool: str, *, wait: bool = False) -> list[str]:
    return ["zpool", "scrub", *(["-w"] if wait else []), pool]


def wait_argv(pool: str, activity: str) -> list[str]:
    return ["zpool", "wait", "-t", activity, pool]


def iostat_argv(pool: str, seconds: int) -> list[str]:
    """One interval of per-vdev statistics, parsable (-Hp), the since-boot report left out (-y)."""
    return ["zpool", "iostat", "-Hpv", "-y", pool, str(max(seconds, 1)), "1"]


class ZfsCli:
    """Runs the real zpool and zfs. `log` hears what the user should know happened (a retry)."""

    def __init__(self, runner: Runner | None = None, *, timeout_s: float = 600.0,
                 log: Callable[[str], None] = lambda text: None) -> None:
        self.runner = runner or Runner()
        self.timeout_s = timeout_s
        self.log = log

    def _run(self, *argv: str, timeout_s: float | None = None) -> str:
        return self.runner.run(argv, timeout_s=timeout_s or self.timeout_s).stdout

    def _pool_cmd(self, pool: str, *argv: str, timeout_s: float | None = None) -> str:
        """A zpool/zfs command about one pool, with 'no such pool' made a clear error."""
        try:
            return self._run(*argv, timeout_s=timeout_s)
        except CommandFailed as e:
            if "no such pool" in e.stderr_tail or "dataset does not exist" in e.stderr_tail:
                raise NoSuchPool(pool) from None
            raise

    # --- facts ---------------------------------------------------------------------------
    def version(self) -> ZfsVersion:
        return parse_version(self._run("zfs", "version"))

    def list_pools(self) -> list[PoolInfo]:
        cols = ["name", "size", "allocated", "free", "health"]
        rows = parse_tabular(self._run("zpool", "list", "-Hp", "-o", ",".join(cols)), cols)
        return [PoolInfo(r["name"], int(r["size"]), int(r["allocated"]), int(r["free"]), r["health"]) for r in rows]

    def pool(self, name: str) -> PoolInfo:
        cols = ["name", "size", "allocated", "free", "health"]
        r = parse_tabular(self._pool_cmd(name, "zpool", "list", "-Hp", "-o", ",".join(cols), name), cols)[0]
        return PoolInfo(r["name"], int(r["size"]), int(r["allocated"]), int(r["free"]), r["health"])

    def pool_exists(self, name: str) -> bool:
        return any(p.name == name for p in self.list_pools())

    def pool_guid(self, name: str) -> str:
        """The pool's GUID as zpool prints it (decimal): what its disks' labels carry."""
        return self.pool_get(name, "guid")["guid"].value

    def dataset(self, name: str) -> DatasetInfo:
        cols = ["name", "used", "avail", "refer"]
        r = parse_tabular(self._pool_cmd(name.split("/")[0], "zfs", "list", "-Hp", "-o", ",".join(cols), name), cols)[0]
        return DatasetInfo(r["name"], int(r["used"]), int(r["avail"]), int(r["refer"]))

    def get(self, target: str, *props: str) -> dict[str, Property]:
        return self._get("zfs", target, props)

    def pool_get(self, pool: str, *props: str) -> dict[str, Property]:
        return self._get("zpool", pool, props)

    def _get(self, tool: str, target: str, props: Sequence[str]) -> dict[str, Property]:
        cols = ["name", "property", "value", "source"]
        out = self._pool_cmd(target.split("/")[0], tool, "get", "-Hp", "-o", ",".join(cols), ",".join(props) or "all", target)
        return {r["property"]: Property(r["property"], r["value"], r["source"]) for r in parse_tabular(out, cols)}

    def set(self, target: str, prop: str, value: str) -> None:
        self._pool_cmd(target.split("/")[0], "zfs", "set", f"{prop}={value}", target)

    def pool_set(self, pool: str, prop: str, value: str) -> None:
        self._pool_cmd(pool, *pool_set_argv(pool, prop, value))

    def status(self, name: str) -> PoolStatus:
        return parse_status(self._pool_cmd(name, "zpool", "status", "-p", "-v", name))

    # --- lifecycle -------------------------------------------------------------------------
    def create_pool(self, name: str, layout: Layout, devices: Sequence[str], *, ashift: int | None = None,
                    pool_props: dict[str, str] | None = None, fs_props: dict[str, str] | None = None,
                    force: bool = False) -> None:
        """zpool create; -f only when the caller asks (zpool then overrides its own in-use checks)."""
        argv = zpool_create_argv(name, layout, list(devices), ashift=ashift, pool_props=pool_props,
                                 fs_props=fs_props, force=force)
        try:
            # udev must not re-read the partition tables zpool writes while the module opens them
            # (system/udev_lock.py); the lock comes first, so the settle waits for events that
            # cannot start another re-read
            with held_against_rescan(devices) as disks:
                self._labelling(argv, disks, "zpool create")
        except CommandFailed as e:
            msg = e.stderr_tail
            if "is in use" in msg or "contains a" in msg or "is part of" in msg or "busy" in msg:
                named = re.search(r"(/dev/\S+) (?:is|contains)", msg)
                device = named.group(1) if named else "a device"
                raise DeviceInUse(device, msg) from None
            if UNAVAILABLE in msg or VANISHED in msg:  # twice, with udev's re-reads held off (system/udev_lock.py)
                raise CommandFailed(e.argv_text, e.returncode, msg.rstrip() + OPEN_FAILED_HINT) from None
            raise

    def _labelling(self, argv: Sequence[str], disks: Sequence[str], what: str, *, timeout_s: float | None = None) -> None:
        """Run a zpool command that labels whole disks (create, replace, attach), with udev held
        off them by the caller; once more if it raced udev anyway."""
        self.settle()
        try:
            self._run(*argv, timeout_s=timeout_s)
        except CommandFailed as e:
            said = next((words for words in UDEV_RACES if words in e.stderr_tail), None)
            if said is None:
                raise
            # udev was still handling the disks (a busy host, many disks, a wipe or a destroy
            # just before). zpool had passed its checks and written its labels: the
            # partitions the kernel lists are its own, and udev may still hold records
            # of the ones they replaced, which zpool would trust again. Drop them from
            # the kernel's view (nothing on the disks changes), let udev settle, try once more
            self.log(f"{what} failed while udev was handling the disks ({said!r}); "
                     f"retried after dropping the partitions zpool had made and letting udev settle")
            self.forget_partitions(disks)
            self.settle()
            self._run(*argv, timeout_s=timeout_s)

    def forget_partitions(self, disks: Sequence[str], *, tries: int = 3) -> None:
        """Remove the kernel's partition devices of these whole disks (partx --delete: BLKPG, which
        refuses a partition anyone has open); the partition tables on the disks are untouched.
        udev's workers open each new partition to probe it, so udev settles first, and a partition
        still listed after the delete (EBUSY: a probe came in between) is asked again after
        another settle: one left behind is the stale record the next zpool would trust."""
        left = list(disks)
        for _ in range(tries):
            self.settle()
            for disk in left:
                self.runner.run(["partx", "--delete", disk], check=False)
            left = [d for d in left if partitions(self.runner, d)]
            if not left:
                return
        self.log(f"the kernel still lists partitions of {', '.join(left)} after {tries} deletes (is a partition open?)")

    def settle(self) -> None:
        """Wait until udev has handled every queued device event (no udev: nothing to wait for)."""
        udev_settle(self.runner)

    def destroy_pool(self, name: str, *, force: bool = False) -> None:
        self._pool_cmd(name, *destroy_argv(name, force=force))

    def export_pool(self, name: str) -> None:
        self._pool_cmd(name, "zpool", "export", name)

    def import_pool(self, name: str, *, search_dir: str | None = None) -> None:
        self._pool_cmd(name, "zpool", "import", *(["-d", search_dir] if search_dir else []), name)

    # --- devices -------------------------------------------------------------------------
    def offline(self, pool: str, device: str, *, temporary: bool = False) -> None:
        """zpool offline. ZFS refuses ("no valid replicas") while the disk's partners lack data it
        holds (a DTL), which a transient error on a just-created pool can leave until ZFS's own
        resilver repairs it: once udev has settled and any resilver ended, try once more; refused
        again, scrub (a scrub that ends without errors empties the DTLs, vdev_dtl_reassess()) and
        try a last time. A refusal that stands (the last copy) is raised as ZFS worded it."""
        argv = offline_argv(pool, device, temporary=temporary)
        try:
            self._pool_cmd(pool, *argv)
            return
        except CommandFailed as e:
            if NO_REPLICAS not in e.stderr_tail:
                raise
        self.settle()
        self.wait(pool, "resilver")
        try:
            self._pool_cmd(pool, *argv)
            how = "retried after the resilver"
        except CommandFailed as e:
            if NO_REPLICAS not in e.stderr_tail:
                raise
            # the 2.3.9 guest refused a fresh mirror's disk this way with no resilver to wait for
            self._scrubbed(pool)
            self._pool_cmd(pool, *argv)
            how = "retried after a scrub"
        self.log(f"zpool offline {device} was refused ({NO_REPLICAS!r}) while its partners lacked data; {how}")

    def _scrubbed(self, pool: str) -> None:
        """A scrub to its end: ours, or one already running (ZFS starts one itself after a
        sequential rebuild; a 2.4.4 dRAID drill met one here), which ends the same way."""
        try:
            self.scrub(pool, wait=True)
        except CommandFailed as e:
            if "currently scrubbing" not in e.stderr_tail:
                raise
            self.wait(pool, "scrub")

    def online(self, pool: str, device: str) -> None:
        self._pool_cmd(pool, *online_argv(pool, device))

    def replace(self, pool: str, old: str, new: str | None = None, *, sequential: bool = False,
                wait: bool = False, timeout_s: float | None = None) -> None:
        argv = replace_argv(pool, old, new, sequential=sequential, wait=wait)
        # zpool labels a new whole disk as create does: udev must not re-read it meanwhile, and the
        # same race gets the same retry. Its ENOENT reads "no such pool or dataset" here too (libzfs's
        # zpool_vdev_attach words errors it does not know through zpool_standard_error): a 2.4.4 drill
        # stopped on it as "pool does not exist" (docs/safety.md#a-busy-udev), so a race is checked
        # for before the pool is called missing
        try:
            with held_against_rescan([new or old]) as disks:
                self._labelling(argv, disks, "zpool replace", timeout_s=timeout_s)
        except CommandFailed as e:
            if UNAVAILABLE in e.stderr_tail or VANISHED in e.stderr_tail:
                raise CommandFailed(e.argv_text, e.returncode, e.stderr_tail.rstrip() + OPEN_FAILED_HINT) from None
            if "no such pool" in e.stderr_tail:
                raise NoSuchPool(pool) from None
            raise

    def detach(self, pool: str, device: str) -> None:
        self._pool_cmd(pool, *detach_argv(pool, device))

    def clear(self, pool: str) -> None:
        self._pool_cmd(pool, *clear_argv(pool))

    # --- scans -----------------------------------------------------------------------------
    def scrub(self, pool: str, *, wait: bool = False, timeout_s: float | None = None) -> None:
        self._pool_cmd(pool, *scrub_argv(pool, wait=wait), timeout_s=timeout_s)

    def wait(self, pool: str, activity: str, *, timeout_s: float | None = None) -> None:
        """Block until `activity` (scrub, resilver, ...) ends (zpool wait, OpenZFS 2.0+)."""
        self._pool_cmd(pool, *wait_argv(pool, activity), timeout_s=timeout_s)
