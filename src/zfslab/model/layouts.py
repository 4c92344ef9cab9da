"""Pool layouts as values: vdev kinds, vdev groups, allocation classes and the Layout they make,
with OpenZFS's limits checked where each is built, and the sizes a layout writes (`12TB`).

The text users type is read by model/layout_grammar.py; `zpool create`'s vdev list is read by
model/zpool_vdev_list.py and written by model/zpool_syntax.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from zfslab.errors import LayoutError, shown
from zfslab.model.units import GB, KB, MB, PB, TB, GiB, KiB, MiB, PiB, TiB

# OpenZFS limits: include/sys/fs/zfs.h (VDEV_RAIDZ_MAXPARITY, VDEV_DRAID_MAXPARITY,
# VDEV_DRAID_MAX_CHILDREN) and the 255-child bound of raidz (vdev_raidz.c).
MAX_CHILDREN = 255
MAX_PARITY = 3
MAX_DRAID_SPARES = 100
# zfslab's own bound, not OpenZFS's: a pool of more disks is outside what it models, and a
# layout such as 10000000xmirror:2 would otherwise take minutes and gigabytes to describe.
MAX_POOL_DISKS = 1024
ZPOOL_FUZZ = 16 * 1024 * 1024  # cmd/zpool/zpool_vdev.c: children of one vdev may differ by this much
KINDS_HELP = "disk, mirror, raidz1, raidz2, raidz3, draid or spare (e.g. raidz2:6, 12xmirror:2, draid2:8d:24c:1s, spare:1)"
# vdevs outside the normal class, as zpool create names them; zpool_vdev.c construct_spec takes
# only mirrors and single disks for them ("unsupported 'special' device: raidz")
CLASSES = ("special", "dedup", "log")
CLASS_HELP = "special=mirror:2, dedup=mirror:2, log=mirror:2 or log=disk, cache:2 (each may add @SIZE)"


class VdevKind(Enum):
    DISK = "disk"
    MIRROR = "mirror"
    RAIDZ = "raidz"
    DRAID = "draid"


@dataclass(frozen=True, slots=True)
class VdevGroup:
    """`count` identical top-level vdevs of one kind.

    width is the number of children of one vdev (a dRAID's children include its
    distributed spares); parity is how many of them may fail (mirror: width - 1).
    """

    kind: VdevKind
    width: int
    parity: int = 0
    count: int = 1
    draid_data: int = 0
    draid_spares: int = 0
    # the disks of ONE vdev as (how many, bytes of each as written), largest first; () when the
    # pool's disks are all alike (the size is then given apart, as vdev_bytes)
    sizes: tuple[tuple[int, int], ...] = ()

    def __post_init__(self) -> None:
        token = self.token
        if self.sizes and sum(n for n, _ in self.sizes) != self.width:
            raise LayoutError(f"{token}: the sizes name {sum(n for n, _ in self.sizes)} disks but a vdev has "
                              f"{self.width}")
        if self.count < 1:
            raise LayoutError(f"{token}: the count must be at least 1")
        if self.width > MAX_CHILDREN:
            raise LayoutError(f"{token}: a vdev has at most {MAX_CHILDREN} disks, got width={self.width}")
        if self.kind is VdevKind.DISK:
            if self.width != 1 or self.parity != 0:
                raise LayoutError(f"{token}: a plain disk vdev has width 1; write {self.width}xdisk for a stripe")
        elif self.kind is VdevKind.MIRROR:
            if self.width < 2:
                raise LayoutError(f"{token}: a mirror needs at least 2 disks, got width={self.width}")
            if self.parity != self.width - 1:
                raise LayoutError(f"{token}: a {self.width}-way mirror survives {self.width - 1} failures")
        elif self.kind is VdevKind.RAIDZ:
            if not 1 <= self.parity <= MAX_PARITY:
                raise LayoutError(f"{token}: raidz parity is 1, 2 or 3, got {self.parity}")
            if self.width <= self.parity:
                raise LayoutError(
                    f"{token}: a raidz{self.parity} vdev needs more disks than its parity ({self.parity}): "
                    f"at least raidz{self.parity}:{self.parity + 1}"
                )
        elif self.kind is VdevKind.DRAID:
            self._check_draid()

    def _check_draid(self) -> None:
        token = self.token
        p, d, c, s = self.parity, self.draid_data, self.width, self.draid_spares
        if not 1 <= p <= MAX_PARITY:
            raise LayoutError(f"{token}: dRAID parity is 1, 2 or 3, got {p}")
        if s < 0 or s > MAX_DRAID_SPARES:
            raise LayoutError(f"{token}: dRAID has 0 to {MAX_DRAID_SPARES} distributed spares, got {s}")
        if d < 1:
            raise LayoutError(f"{token}: a dRAID group needs at least 1 data disk, got {d}d")
        if d + p > c - s:
            raise LayoutError(
                f"{token}: a group of {d} data + {p} parity needs {d + p} disks but only "
                f"{c - s} children are not spares; use at most {max(c - s - p, 0)}d or more children"
            )

    @property
    def data_disks_per_vdev(self) -> float:
        """Data share of one vdev in disks (a mirror stores one copy's worth)."""
        if self.kind is VdevKind.DISK:
            return 1.0
        if self.kind is VdevKind.MIRROR:
            return 1.0
        if self.kind is VdevKind.RAIDZ:
            return float(self.width - self.parity)
        groups_width = self.draid_data + self.parity
        return (self.width - self.draid_spares) * self.draid_data / groups_width

    @property
    def disks(self) -> int:
        return self.width * self.count

    @property
    def smallest_bytes(self) -> int:
        """The smallest disk of one vdev, as written (0 when unsized): every child counts as it."""
        return min(b for _, b in self.sizes) if self.sizes else 0

    @property
    def spans_sizes(self) -> bool:
        """One vdev holds disks of different sizes (zpool create then needs -f)."""
        return len(self.sizes) > 1

    @property
    def spec(self) -> str:
        """The vdev's own keyword in `zpool create` (empty for a plain disk)."""
        if self.kind is VdevKind.DISK:
            return ""
        if self.kind is VdevKind.MIRROR:
            return "mirror"
        if self.kind is VdevKind.RAIDZ:
            return f"raidz{self.parity}"
        return f"draid{self.parity}:{self.draid_data}d:{self.width}c:{self.draid_spares}s"

    @property
    def token(self) -> str:
        prefix = f"{self.count}x" if self.count != 1 else ""
        at = f"@{sizes_text(self.sizes)}" if self.sizes else ""
        if self.kind is VdevKind.DISK:
            return f"{prefix}disk{at}"
        if self.kind is VdevKind.DRAID:
            return prefix + self.spec + at
        return f"{prefix}{self.spec}:{self.width}{at}"

    def describe(self) -> str:
        """The shape in words: '2 × raidz2, 6 wide (4 data + 2 parity)' (+ ' on 12 TB' when sized)."""
        if not self.sizes:
            return self._describe()
        on = " + ".join(f"{n} × {_words(b)}" if len(self.sizes) > 1 else _words(b) for n, b in self.sizes)
        return f"{self._describe()} on {on} disks"

    def _describe(self) -> str:
        many = f"{self.count} × " if self.count > 1 else ""
        if self.kind is VdevKind.DISK:
            return f"stripe of {self.count} disk{'s' if self.count > 1 else ''} (no redundancy)"
        if self.kind is VdevKind.MIRROR:
            return f"{many}{self.width}-way mirror"
        if self.kind is VdevKind.RAIDZ:
            return f"{many}raidz{self.parity}, {self.width} wide ({self.width - self.parity} data + {self.parity} parity)"
        spares = f", {self.draid_spares} distributed spare{'s' if self.draid_spares != 1 else ''}"
        return (
            f"{many}dRAID{self.parity}, {self.width} wide (groups of {self.draid_data} data + "
            f"{self.parity} parity{spares if self.draid_spares else ''})"
        )


@dataclass(frozen=True, slots=True)
class ClassGroup:
    """Vdevs of one allocation class outside the normal one: special, dedup or log."""

    alloc_class: str
    group: VdevGroup

    def __post_init__(self) -> None:
        if self.alloc_class not in CLASSES:
            raise LayoutError(f"{self.alloc_class}: the allocation classes are {', '.join(CLASSES)} (and cache:N)")
        if self.group.kind not in (VdevKind.MIRROR, VdevKind.DISK):
            raise LayoutError(f"{self.token}: zpool create takes only mirrors or single disks as {self.alloc_class} "
                              f"vdevs; write {self.alloc_class}=mirror:2 or {self.alloc_class}=disk")

    @property
    def token(self) -> str:
        return f"{self.alloc_class}={self.group.token}"

    @property
    def holds_pool_data(self) -> bool:
        """Its loss loses the pool: special and dedup vdevs hold blocks found nowhere else; a log only the
        last seconds of synchronous writes, replayed after a crash."""
        return self.alloc_class != "log"

    @property
    def failures_survived(self) -> int:
        """Disks of one of its vdevs that may fail without losing the vdev."""
        return self.group.parity

    def describe(self) -> str:
        g = self.group
        if g.kind is VdevKind.DISK:
            on = f" on {_words(g.sizes[0][1])}" if g.sizes else ""
            return f"{self.alloc_class} {g.count} single disk{'s' * (g.count > 1)}{on} (no redundancy)"
        return f"{self.alloc_class} {g.describe()}"


@dataclass(frozen=True, slots=True)
class Layout:
    """A pool: top-level data vdev groups plus hot spares, special/dedup/log vdevs and cache devices."""

    groups: tuple[VdevGroup, ...]
    hot_spares: int = 0
    spare_bytes: int = 0  # size of each hot spare as written, in a sized layout (0: unsized)
    classes: tuple[ClassGroup, ...] = ()  # special, dedup and log vdevs, in the order given
    cache_devices: int = 0  # L2ARC devices (never mirrored: zpool create takes single disks)
    cache_bytes: int = 0  # size of each cache device as written (0: unsized)

    def __post_init__(self) -> None:
        if not self.groups:
            raise LayoutError("a layout needs at least one data vdev, e.g. raidz2:6 (spares alone hold no data)")
        if self.hot_spares < 0:
            raise LayoutError(f"spare:{self.hot_spares}: the number of hot spares cannot be negative")
        if self.cache_devices < 0:
            raise LayoutError(f"cache:{self.cache_devices}: the number of cache devices cannot be negative")
        sized = [bool(g.sizes) for g in self.groups] + ([bool(self.spare_bytes)] if self.hot_spares else [])
        if any(sized) and not all(sized):
            raise LayoutError(f"{shown(str(self), 60)}: give the disk size of every vdev and spare (e.g. "
                              f"raidz2:6@12TB+raidz2:6@8TB+spare:1@12TB), or of none")
        # class vdevs may name their own (smaller, faster) disks beside unsized data disks; in a sized
        # layout they must too, or their size would be a guess
        if all(sized) and (any(not c.group.sizes for c in self.classes) or (self.cache_devices > 0 and not self.cache_bytes)):
            raise LayoutError(f"{shown(str(self), 60)}: the data disks are sized; give the size of the special, dedup, "
                              f"log and cache disks too, e.g. special=mirror:2@1TB")
        if self.all_disks > MAX_POOL_DISKS:
            raise LayoutError(f"{shown(str(self), 60)} has {self.all_disks} disks; zfslab models pools of at most "
                              f"{MAX_POOL_DISKS} disks")

    def __str__(self) -> str:
        tokens = [g.token for g in self.groups] + [c.token for c in self.classes]
        if self.hot_spares:
            at = f"@{size_text(self.spare_bytes)}" if self.spare_bytes else ""
            tokens.append(f"spare:{self.hot_spares}{at}")
        if self.cache_devices:
            at = f"@{size_text(self.cache_bytes)}" if self.cache_bytes else ""
            tokens.append(f"cache:{self.cache_devices}{at}")
        return "+".join(tokens)

    def of_class(self, alloc_class: str) -> tuple[VdevGroup, ...]:
        """The vdev groups of one allocation class (special, dedup, log)."""
        return tuple(c.group for c in self.classes if c.alloc_class == alloc_class)

    @property
    def class_disks(self) -> int:
        """Disks of the special, dedup and log vdevs and the cache devices."""
        return sum(c.group.disks for c in self.classes) + self.cache_devices

    @property
    def all_disks(self) -> int:
        """Every device zpool create is given: data, spares, special, dedup, log and cache."""
        return self.disks + self.class_disks

    @property
    def data_layout(self) -> Layout:
        """The same pool without its special, dedup, log and cache vdevs."""
        return Layout(self.groups, self.hot_spares, self.spare_bytes)

    @property
    def sized(self) -> bool:
        """Each vdev says which disk sizes it sits on (a pool of mixed disks)."""
        return bool(self.groups[0].sizes)

    def disk_sizes(self) -> dict[int, int]:
        """{bytes of a disk as written: how many}, hot spares included, largest first (sized layouts)."""
        out: dict[int, int] = {}
        for g in self.groups:
            for n, b in g.sizes:
                out[b] = out.get(b, 0) + n * g.count
        if self.hot_spares and self.spare_bytes:
            out[self.spare_bytes] = out.get(self.spare_bytes, 0) + self.hot_spares
        return dict(sorted(out.items(), reverse=True))

    def class_disk_sizes(self) -> dict[int, int]:
        """{bytes as written: how many} of the special, dedup, log and cache disks that name a size."""
        out: dict[int, int] = {}
        for c in self.classes:
            for n, b in c.group.sizes:
                out[b] = out.get(b, 0) + n * c.group.count
        if self.cache_devices and self.cache_bytes:
            out[self.cache_bytes] = out.get(self.cache_bytes, 0) + self.cache_devices
        return dict(sorted(out.items(), reverse=True))

    @property
    def disks(self) -> int:
        """Data disks and hot spares (the disks a plan chooses among); all_disks adds the class vdevs."""
        return sum(g.disks for g in self.groups) + self.hot_spares

    @property
    def top_level_vdevs(self) -> int:
        return sum(g.count for g in self.groups)

    @property
    def pool_groups(self) -> tuple[VdevGroup, ...]:
        """The vdev groups whose loss loses the pool: data, special and dedup (not log, cache or spares)."""
        return self.groups + tuple(c.group for c in self.classes if c.holds_pool_data)

    @property
    def failures_guaranteed(self) -> int:
        """Disks that may fail at once, whichever they are, without losing the pool (special and dedup
        vdevs count: their loss loses it)."""
        return min(g.parity for g in self.pool_groups)

    @property
    def failures_best_case(self) -> int:
        """Disks that may fail at once if they fall in the best places."""
        return sum(g.parity * g.count for g in self.pool_groups)

    def describe(self) -> str:
        text = " + ".join(g.describe() for g in self.groups)
        if self.hot_spares:
            text += f" + {self.hot_spares} hot spare{'s' if self.hot_spares > 1 else ''}"
            if self.spare_bytes:
                text += f" of {_words(self.spare_bytes)}"
        for c in self.classes:
            text += f" + {c.describe()}"
        if self.cache_devices:
            text += f" + {self.cache_devices} cache device{'s' if self.cache_devices > 1 else ''}"
            if self.cache_bytes:
                text += f" of {_words(self.cache_bytes)}"
        return text


# Sizes in layout text: the shortest exact form, so that str(parse_layout(s)) round-trips.
_SIZE_UNITS = (("PB", PB), ("TB", TB), ("GB", GB), ("MB", MB), ("KB", KB),
               ("PiB", PiB), ("TiB", TiB), ("GiB", GiB), ("MiB", MiB), ("KiB", KiB))


def size_text(size_bytes: int) -> str:
    """'12TB', '3500GB', '4TiB' or '4000787030016': a size as the layout grammar writes it."""
    for unit, factor in _SIZE_UNITS:
        if size_bytes >= factor and size_bytes % factor == 0 and size_bytes // factor < 100_000:
            return f"{size_bytes // factor}{unit}"
    return str(size_bytes)


def _words(size_bytes: int) -> str:
    """'12 TB': size_text for prose."""
    return re.sub(r"([0-9])([A-Za-z])", r"\1 \2", size_text(size_bytes), count=1)


def sizes_text(sizes: tuple[tuple[int, int], ...]) -> str:
    """'12TB' for one size, '4x12TB/2x8TB' for a vdev that spans sizes."""
    if len(sizes) == 1:
        return size_text(sizes[0][1])
    return "/".join(f"{n}x{size_text(b)}" for n, b in sizes)


def merge_groups(groups: list[VdevGroup]) -> tuple[VdevGroup, ...]:
    merged: list[VdevGroup] = []
    for g in groups:
        if merged and _same_shape(merged[-1], g):
            last = merged.pop()
            g = VdevGroup(g.kind, g.width, g.parity, last.count + g.count, g.draid_data, g.draid_spares, g.sizes)
        merged.append(g)
    return tuple(merged)


def merge_classes(classes: list[ClassGroup]) -> tuple[ClassGroup, ...]:
    """Grouped by class in CLASSES order, single disks before mirrors in each (zpool create would read
    `log mirror a b c` as one 3-way mirror: a bare disk must come first), identical neighbours merged."""
    merged: list[ClassGroup] = []
    for c in sorted(classes, key=class_order):
        if merged and merged[-1].alloc_class == c.alloc_class and _same_shape(merged[-1].group, c.group):
            last = merged.pop()
            g = c.group
            c = ClassGroup(c.alloc_class, VdevGroup(g.kind, g.width, g.parity, last.group.count + g.count,
                                                    g.draid_data, g.draid_spares, g.sizes))
        merged.append(c)
    return tuple(merged)


def class_order(c: ClassGroup) -> tuple[int, bool]:
    return CLASSES.index(c.alloc_class), c.group.kind is not VdevKind.DISK


def _same_shape(a: VdevGroup, b: VdevGroup) -> bool:
    return ((a.kind, a.width, a.parity, a.draid_data, a.draid_spares, a.sizes)
            == (b.kind, b.width, b.parity, b.draid_data, b.draid_spares, b.sizes))


# Names that moved out with the grammar and zpool's syntax, still imported from here by the files
# the disk-gate work is changing (commands/bench.py, commands/drill.py, system/bench.py,
# system/drill.py); issue 24 part 2 points them at their modules and removes this.
# tests/unit/test_layout_modules.py fails when nothing imports one of them from here any more.
_MOVED = {"parse_layout": "zfslab.model.layout_grammar", "check_pool_name": "zfslab.model.zpool_syntax",
          "replication_mismatch": "zfslab.model.zpool_syntax", "zpool_create_argv": "zfslab.model.zpool_syntax"}


def __getattr__(name: str):
    """The moved names, loaded when asked for (a plain import would be circular)."""
    if name in _MOVED:
        import importlib
        return getattr(importlib.import_module(_MOVED[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
