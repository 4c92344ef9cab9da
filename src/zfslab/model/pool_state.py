"""A live pool as `zpool status`, `zpool list -v`, `zpool get` and `zfs get` show it: typed
records that system/pool_read.py fills from either their JSON (2.3+) or their text (docs/pool.md)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from zfslab.errors import InputError, shown

POOL_CLASSES = ("normal", "special", "dedup", "log", "cache", "spare")
LEAF_KINDS = ("disk", "file")
NATIVE_SECTORS = tuple(1 << shift for shift in range(9, 17))  # ashift 9..16, as ZFS allows
GROUP_KINDS = ("mirror", "raidz", "draid", "replacing", "spare")
# a dRAID's distributed spare (zpool status -j's vdev_type "dspare", named draidP-N-S): space spread over
# the dRAID's own children, no disk of its own, so no leaf
SPARE_KINDS = ("dspare",)


def checked_count(value: object, what: str, *, limit: int = 2**64 - 1) -> int:
    """A byte count, error count or time from a program's output: an int in 0..limit, else InputError."""
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            value = int(value)
        elif isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 20:
            value = int(value)
        else:
            raise InputError(f"{what}: {shown(value, 40)} is not a whole number; the output of zpool/zfs "
                             "was not what zfslab reads (run the command by hand to see it)")
    if not 0 <= value <= limit:
        raise InputError(f"{what}: {value} is out of range 0..{limit}; the output of zpool/zfs was not "
                         "what zfslab reads")
    return value


@dataclass(frozen=True, slots=True)
class PoolVdev:
    """One vdev of the tree: a top-level vdev (its children the leaves) or a leaf."""

    name: str  # as zpool prints it: with -P a leaf's full path
    kind: str  # disk, file, mirror, raidz, draid, replacing, spare (a spare in use inside a vdev), dspare
    alloc_class: str  # normal, special, dedup, log, cache, spare
    state: str  # ONLINE, DEGRADED, OFFLINE, FAULTED, UNAVAIL, REMOVED, AVAIL (spares), INUSE
    read_errors: int = 0
    write_errors: int = 0
    checksum_errors: int = 0
    parity: int = 0  # raidz/draid parity; a mirror's width - 1 is computed from its children
    size_bytes: int | None = None  # zpool list -v SIZE (a top-level vdev: its metaslabs)
    alloc_bytes: int | None = None  # zpool list -v ALLOC
    device_bytes: int | None = None  # a leaf: the bytes ZFS sees of it (the partition or file)
    expand_bytes: int | None = None  # zpool list -v EXPANDSZ
    ashift: int | None = None  # top-level vdevs, from the JSON form (or the pool's property)
    note: str = ""  # what zpool status prints after the counters ("(resilvering)", "was /dev/...")
    # a leaf: its physical sector as ZFS found it, which zpool status shows only when it is larger than
    # the vdev's ashift (JSON physical_ashift; text "block size: 512B configured, 4096B native")
    native_sector_bytes: int | None = None
    children: tuple["PoolVdev", ...] = ()

    def __post_init__(self) -> None:
        if self.alloc_class not in POOL_CLASSES:
            raise InputError(f"vdev {shown(self.name, 60)}: class {shown(self.alloc_class, 20)} is none of "
                             f"{', '.join(POOL_CLASSES)}")
        if self.kind not in LEAF_KINDS + GROUP_KINDS + SPARE_KINDS:
            raise InputError(f"vdev {shown(self.name, 60)}: kind {shown(self.kind, 20)} is not one zfslab reads "
                             f"({', '.join(LEAF_KINDS + GROUP_KINDS + SPARE_KINDS)})")
        # zpool prints a mirror, raidz, dRAID, replacing or spare with its disks under it: one without them
        # has no disk to count, attach to or lose
        if self.kind in GROUP_KINDS and not self.leaves:
            raise InputError(f"vdev {shown(self.name, 60)}: a {self.kind} with no disk under it; the output of "
                             "zpool status was not what zfslab reads (run it by hand to see it)")
        # and a distributed spare only in a spare vdev (in use, beside the disk it stands for)
        if self.kind != "spare" and any(c.kind in SPARE_KINDS for c in self.children):
            raise InputError(f"vdev {shown(self.name, 60)}: a distributed spare in a {self.kind}, with no disk of "
                             "its own; the output of zpool status was not what zfslab reads (run it by hand to see it)")
        if self.ashift is not None and not 9 <= self.ashift <= 16:
            raise InputError(f"vdev {shown(self.name, 60)}: ashift {self.ashift} is outside 9..16")
        if self.native_sector_bytes is not None and self.native_sector_bytes not in NATIVE_SECTORS:
            raise InputError(f"vdev {shown(self.name, 60)}: native sector {self.native_sector_bytes} B is not "
                             "a power of two from 512 to 65536")

    @property
    def short_name(self) -> str:
        """The name zpool prints without -P: the last path component, a whole disk's -part1 taken off."""
        return re.sub(r"-part[0-9]+$", "", self.name.rsplit("/", 1)[-1])

    @property
    def is_leaf(self) -> bool:
        return self.kind in LEAF_KINDS

    @property
    def leaves(self) -> tuple["PoolVdev", ...]:
        if self.is_leaf:
            return (self,)
        return tuple(leaf for c in self.children for leaf in c.leaves)

    def walk(self):
        """This vdev and every vdev under it, parents first."""
        yield self
        for c in self.children:
            yield from c.walk()

    @property
    def errors(self) -> int:
        return self.read_errors + self.write_errors + self.checksum_errors


@dataclass(frozen=True, slots=True)
class PoolScan:
    """The last or running scrub or resilver."""

    function: str | None  # scrub, resilver or None (never)
    state: str  # none, scanning, finished, canceled
    end_epoch_s: int | None = None  # when it finished (or was canceled)
    errors: int = 0
    repaired_bytes: int = 0
    percent_done: float | None = None
    rate_bytes_s: int | None = None

    def __post_init__(self) -> None:
        if self.state not in ("none", "scanning", "finished", "canceled"):
            raise InputError(f"scan state {shown(self.state, 20)} is not one zfslab reads")
        if self.percent_done is not None and not (math.isfinite(self.percent_done)
                                                  and 0 <= self.percent_done <= 100):
            raise InputError(f"scan: {self.percent_done!r} % done is outside 0..100")


@dataclass(frozen=True, slots=True)
class Filesystem:
    """One filesystem dataset's properties as `zfs get -r` shows them (-p values: recordsize in bytes);
    each may set its own or inherit its parent's."""

    name: str
    recordsize: str
    compression: str
    mountpoint: str


@dataclass(frozen=True, slots=True)
class PoolState:
    """What zfslab read of one pool; `source` says which forms (json or text)."""

    name: str
    state: str
    vdevs: tuple[PoolVdev, ...]  # top-level vdevs of every class, spares and cache devices included
    scan: PoolScan
    size_bytes: int  # zpool list SIZE
    alloc_bytes: int
    free_bytes: int
    used_bytes: int  # zfs get used of the root dataset
    available_bytes: int
    pool_props: tuple[tuple[str, str], ...]  # zpool get all: (property, value), -p values
    dataset_props: tuple[tuple[str, str], ...]  # zfs get all of the root dataset
    errors_text: str = ""  # "No known data errors", or what zpool status says
    source: str = "text"
    expanded: bool = False  # a raidz expansion ran or runs (zpool status's "expand:" line)
    # zpool status -D: the dedup table's entries and its size in core, all of it (None: not shown)
    ddt_entries: int | None = None
    ddt_core_bytes: int | None = None
    # every filesystem of the pool, the root first (zfs get -r -t filesystem); () when not read
    filesystems: tuple[Filesystem, ...] = ()

    def __post_init__(self) -> None:
        # a distributed spare is a top-level vdev only among the spares (in use, it sits in a spare vdev
        # beside the disk it stands for): anywhere else it holds no disk the pool's figures could count
        for v in self.vdevs:
            if v.alloc_class not in ("spare", "cache") and not v.leaves:
                raise InputError(f"vdev {shown(v.name, 60)}: a {v.kind} among the {v.alloc_class} vdevs with no disk "
                                 "of its own; the output of zpool status was not what zfslab reads (run it by hand "
                                 "to see it)")

    def of_class(self, alloc_class: str) -> tuple[PoolVdev, ...]:
        return tuple(v for v in self.vdevs if v.alloc_class == alloc_class)

    def pool_prop(self, name: str) -> str | None:
        return dict(self.pool_props).get(name)

    def dataset_prop(self, name: str) -> str | None:
        return dict(self.dataset_props).get(name)

    def filesystem_props(self) -> tuple[Filesystem, ...]:
        """Each filesystem's properties: those zfs get -r read, else the root dataset's alone."""
        if self.filesystems:
            return self.filesystems
        d = dict(self.dataset_props)
        return (Filesystem(self.name, d.get("recordsize", ""), d.get("compression", ""), d.get("mountpoint", "")),)

    @property
    def usable_bytes(self) -> int:
        """USED + AVAIL of the root dataset."""
        return self.used_bytes + self.available_bytes


@dataclass(frozen=True, slots=True)
class DiskFacts:
    """What the kernel says of one leaf's device (lsblk): for the ashift and SSD findings."""

    path: str
    size_bytes: int
    physical_sector_bytes: int
    rotational: bool

    def __post_init__(self) -> None:
        if self.physical_sector_bytes not in (512, 1024, 2048, 4096, 8192, 16384, 32768, 65536):
            raise InputError(f"{shown(self.path, 60)}: a physical sector of {self.physical_sector_bytes} bytes "
                             "is not a power of two from 512 to 64 KiB")


@dataclass(frozen=True, slots=True)
class DiskHealth:
    """What a leaf's disk says of its own health (`smartctl -j -a`), for the disk findings; None: the
    disk does not report that counter (an SSD has no pending sectors, a virtual disk nothing)."""

    device: str
    passed: bool | None = None  # the drive's own overall self-assessment
    reallocated: int | None = None  # ATA 5 Reallocated_Sector_Ct; SCSI grown defect list
    pending: int | None = None  # ATA 197 Current_Pending_Sector: unreadable, waiting for a rewrite
    offline_uncorrectable: int | None = None  # ATA 198 Offline_Uncorrectable: found by the offline scan
    reported_uncorrect: int | None = None  # ATA 187 Reported_Uncorrect: errors the host was told of
    media_errors: int | None = None  # NVMe unrecovered data integrity errors
    critical_warning: int | None = None  # NVMe bit field: spare, temperature, reliability, read-only, backup
    percentage_used: int | None = None  # NVMe endurance used, the vendor's estimate (may pass 100)
    spare_below_threshold: bool | None = None  # NVMe available spare under the vendor's threshold
    temperature_c: int | None = None
    # for the risk by age (model/disk_age.py checks the range: a wild value is ignored with a note there)
    power_on_hours: int | None = None  # as SMART gave it, any whole number
    power_on_note: str = ""  # why there are no hours when SMART gave something that is not a whole number
    model: str = ""  # model_name: disks of one model and near hours are one batch

    @property
    def failing(self) -> bool:
        """Its counters say it is failing (the disk-failing finding's rule, and risk now's flagged disks)."""
        return self.passed is False or any((self.reallocated, self.pending, self.offline_uncorrectable,
                                            self.reported_uncorrect, self.media_errors, self.critical_warning,
                                            self.spare_below_threshold))


def disk_class(disks: dict[str, DiskFacts]) -> str:
    """The risk model's class of a pool's disks: "ssd" when lsblk says every one is solid-state, else "hdd"."""
    return "ssd" if disks and all(d.rotational is False for d in disks.values()) else "hdd"
