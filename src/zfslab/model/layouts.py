"""Pool layouts: the grammar users type, validation, and the `zpool create` vdev list.

Grammar: tokens `[COUNTx]KIND[:WIDTH][@SIZES]` joined by `+`, e.g. `2xraidz2:6`, `12xmirror:2`,
`24xdisk`, `draid2:8d:24c:1s`, `raidz2:11+spare:1`. For disks of several sizes, `@SIZES` says
which disks each vdev sits on: `2xraidz2:4@12TB+raidz2:4@8TB`, or per vdev for one that spans
sizes `raidz2:6@4x12TB/2x8TB`; hot spares as `spare:1@12TB` (docs/capacity.md#mixed-disk-sizes).

Allocation classes: `CLASS=TOKEN` with CLASS special, dedup or log and TOKEN a mirror or single
disks, and `cache:N` for L2ARC devices, each with its own disk size when it differs:
`raidz2:6+special=mirror:2@1TB+log=mirror:2@400GB+cache:2@2TB` (docs/capacity.md#allocation-classes).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from zfslab.errors import LayoutError, ZfslabError, clip, shown
from zfslab.model.units import GB, KB, MB, PB, TB, GiB, KiB, MiB, PiB, TiB, parse_size

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


def _parse_sizes(text: str, token: str, width: int | None) -> tuple[tuple[int, int], ...]:
    """(count, bytes) pairs, largest first, from '12TB' (all `width` disks) or '4x12TB/2x8TB'."""
    parts = text.split("/")
    found: dict[int, int] = {}
    for part in parts:
        m = re.fullmatch(r"(?:([0-9]+)x)?(.+)", part.strip(), re.ASCII)
        if not m:
            raise LayoutError(f"{token}: write the disk size after @, e.g. @12TB or @4x12TB/2x8TB")
        if m.group(1) is None and len(parts) > 1:
            raise LayoutError(f"{token}: say how many disks of each size, e.g. @4x12TB/2x8TB")
        try:
            size = parse_size(m.group(2))
        except ZfslabError as e:
            raise LayoutError(f"{token}: {e}") from None
        n = _whole(m.group(1), token, "number of disks", MAX_CHILDREN) if m.group(1) is not None else width
        if n is None or n < 1:
            raise LayoutError(f"{token}: each size needs at least one disk, got {clip(part)}")
        found[size] = found.get(size, 0) + n
    return tuple(sorted(((n, b) for b, n in found.items()), key=lambda nb: -nb[1]))


# ASCII digits only: \d, str.isdigit() and int() also take '²' or '٣', which no zpool accepts.
_TOKEN_RE = re.compile(r"(?:([0-9]+)x)?([a-z]+[0-9]*)(?::(.*))?", re.ASCII | re.DOTALL)
_DRAID_RE = re.compile(r"draid([0-9]*)((?::[0-9]+[dcs])*)", re.ASCII)
_DIGITS_RE = re.compile(r"[0-9]+", re.ASCII)


def _whole(text: str, token: str, what: str, limit: int) -> int:
    """A whole number of ASCII digits, at most `limit` (checked before int(), which refuses 4,300 digits)."""
    if not _DIGITS_RE.fullmatch(text):
        raise LayoutError(f"{token}: the {what} must be a whole number, got {clip(text)}")
    if len(text) > len(str(limit)) or int(text) > limit:
        raise LayoutError(f"{token}: the {what} is at most {limit}, got {shown(text)}")
    return int(text)


_PARSE_LIMIT = 10**9  # beyond it, a number is refused as text; below, the object built says what fits


def _positive(text: str, token: str, what: str, limit: int = _PARSE_LIMIT) -> int:
    return _whole(text, token, what, limit)


def parse_draid(spec: str, count: int = 1, token: str | None = None) -> VdevGroup:
    """A VdevGroup from OpenZFS's dRAID notation `draid[P][:Dd][:Cc][:Ss]` (children required)."""
    token = shown(token or spec)
    m = _DRAID_RE.fullmatch(spec)
    if not m:
        raise LayoutError(f"{token}: write dRAID as draidP:Dd:Cc:Ss, e.g. draid2:8d:24c:1s")
    parity = _whole(m.group(1), token, "dRAID parity", _PARSE_LIMIT) if m.group(1) else 1
    fields: dict[str, int] = {}
    names = {"d": "number of data disks", "c": "number of children", "s": "number of distributed spares"}
    for part in m.group(2).split(":")[1:]:
        letter = part[-1]
        if letter in fields:
            raise LayoutError(f"{token}: '{letter}' is given twice")
        fields[letter] = _whole(part[:-1], token, names[letter], _PARSE_LIMIT)
    if "c" not in fields:
        raise LayoutError(f"{token}: say how many children the dRAID has, e.g. {spec}:24c")
    children, spares = fields["c"], fields.get("s", 0)
    # zpool's default group size: min(children - spares - parity, 8) (zpool_vdev.c)
    data = fields.get("d", min(children - spares - parity, 8))
    return _group(token, VdevKind.DRAID, width=children, parity=parity, count=count, draid_data=data, draid_spares=spares)


def _group(token: str, kind: VdevKind, **fields: int) -> VdevGroup:
    """A VdevGroup whose validation errors name the token as the user wrote it."""
    try:
        return VdevGroup(kind, **fields)
    except LayoutError as e:
        raise LayoutError(f"{token.strip()}: {str(e).split(': ', 1)[1]}") from None


def parse_token(token: str) -> VdevGroup | int:
    """One token: a VdevGroup, or an int for `spare:N` (hot spares); see parse_sized_token for @SIZES."""
    item, _ = parse_sized_token(token)
    return item


def parse_sized_token(token: str) -> tuple[VdevGroup | int, int]:
    """parse_token, with the size of a hot spare (`spare:1@12TB`) as the second item (0 if none)."""
    raw = shown(token)
    if "@" in token:
        token, at = token.rsplit("@", 1)
        item, _ = parse_sized_token(token)
        if isinstance(item, int):
            sizes = _parse_sizes(at, raw, 1)
            if len(sizes) > 1:
                raise LayoutError(f"{raw}: hot spares of one token are of one size; write spare:1@12TB+spare:1@8TB")
            return item, sizes[0][1]
        sizes = _parse_sizes(at, raw, item.width)
        return _group(raw, item.kind, width=item.width, parity=item.parity, count=item.count,
                      draid_data=item.draid_data, draid_spares=item.draid_spares, sizes=sizes), 0
    return _parse_token(token, raw), 0


def _parse_token(token: str, raw: str) -> VdevGroup | int:
    token = token.strip().lower()
    m = _TOKEN_RE.fullmatch(token)
    if not m:
        raise LayoutError(f"cannot read {clip(token)}: write [COUNTx]KIND[:WIDTH] with KIND one of {KINDS_HELP}")
    count = _whole(m.group(1), raw, "count", MAX_POOL_DISKS) if m.group(1) is not None else 1
    kind, arg = m.group(2), m.group(3)
    if kind.startswith("draid"):
        return parse_draid(kind + (":" + arg if arg is not None else ""), count, raw)
    if count < 1:
        raise LayoutError(f"{raw}: the count must be at least 1, got {count}")
    if kind == "spare":
        if m.group(1) is not None:
            raise LayoutError(f"{raw}: write hot spares as spare:N")
        return _positive(arg or "1", raw, "number of spares", MAX_POOL_DISKS)
    if kind in ("disk", "stripe"):
        width = _positive(arg, raw, "width") if arg is not None else 1
        if kind == "stripe":  # stripe:N is N single-disk vdevs
            return _group(raw, VdevKind.DISK, width=1, count=count * width)
        if width != 1:
            raise LayoutError(f"{raw}: a disk vdev has one disk; write {width}xdisk for a stripe of {width}")
        return _group(raw, VdevKind.DISK, width=1, count=count)
    if kind == "mirror":
        width = _positive(arg, raw, "width") if arg is not None else 2
        return _group(raw, VdevKind.MIRROR, width=width, parity=width - 1, count=count)
    rz = re.fullmatch(r"raidz([0-9]*)", kind)
    if rz:
        parity = _whole(rz.group(1), raw, "raidz parity", _PARSE_LIMIT) if rz.group(1) else 1
        if arg is None:
            raise LayoutError(f"{raw}: say how many disks, e.g. {kind}:{parity + 4}")
        width = _positive(arg, raw, "width")
        return _group(raw, VdevKind.RAIDZ, width=width, parity=parity, count=count)
    raise LayoutError(f"unknown vdev kind {clip(kind)} in '{raw}'; use {KINDS_HELP}")


def parse_layout(text: str) -> Layout:
    """A Layout from `2xraidz2:6+spare:1` or `raidz2:6+special=mirror:2+log=mirror:2+cache:2`;
    identical neighbouring groups are merged."""
    if not text or not text.strip():
        raise LayoutError(f"empty layout; write one such as raidz2:6 or 12xmirror:2 ({KINDS_HELP})")
    tokens = text.split("+")
    if len(tokens) > MAX_POOL_DISKS:
        raise LayoutError(f"a layout of {len(tokens)} parts: zfslab models pools of at most {MAX_POOL_DISKS} disks")
    groups: list[VdevGroup] = []
    classes: list[ClassGroup] = []
    spares = caches = 0
    spare_sizes: set[int] = set()
    cache_sizes: set[int] = set()
    for token in tokens:
        name = token.strip().lower()
        if "=" in name:
            classes.append(parse_class_token(token))
            continue
        if name.startswith("cache"):
            n, cache_bytes = _parse_cache(token)
            caches += n
            cache_sizes.add(cache_bytes)
            continue
        item, spare_bytes = parse_sized_token(token)
        if isinstance(item, int):
            spares += item
            spare_sizes.add(spare_bytes)
        else:
            groups.append(item)
    if len(spare_sizes) > 1:
        raise LayoutError(f"{shown(text, 60)}: zfslab models hot spares of one size; give the largest disks as spares")
    if len(cache_sizes) > 1:
        raise LayoutError(f"{shown(text, 60)}: zfslab models cache devices of one size; write cache:2@1TB")
    return Layout(_merge(groups), spares, spare_sizes.pop() if spares else 0, _merge_classes(classes),
                  caches, cache_sizes.pop() if caches else 0)


def parse_class_token(token: str) -> ClassGroup:
    """`special=mirror:2@1TB`, `dedup=2xmirror:2`, `log=disk`: vdevs of one allocation class."""
    raw = shown(token)
    name, _, rest = token.strip().partition("=")
    name = name.strip().lower()
    if name not in CLASSES:
        hint = "write cache devices as cache:2" if name == "cache" else f"use {CLASS_HELP}"
        raise LayoutError(f"{raw}: {clip(name)} is not an allocation class; {hint}")
    if not rest.strip():
        raise LayoutError(f"{raw}: say which vdev, e.g. {name}=mirror:2")
    item, _ = parse_sized_token(rest)
    if isinstance(item, int):
        raise LayoutError(f"{raw}: hot spares belong to the pool; write spare:1 as a token of its own")
    try:
        return ClassGroup(name, item)
    except LayoutError as e:
        raise LayoutError(f"{raw}: {str(e).split(': ', 1)[1]}") from None


def _parse_cache(token: str) -> tuple[int, int]:
    """(devices, bytes of each as written or 0) from `cache:2` or `cache:2@1TB`."""
    raw = shown(token)
    body, at, size = token.strip().lower().partition("@")
    m = re.fullmatch(r"cache(?::(.*))?", body, re.ASCII | re.DOTALL)
    if not m:
        raise LayoutError(f"cannot read {raw}: write cache devices as cache:N, e.g. cache:2 or cache:2@1TB")
    n = _positive(m.group(1) or "1", raw, "number of cache devices", MAX_POOL_DISKS)
    if n < 1:
        raise LayoutError(f"{raw}: the number of cache devices must be at least 1")
    if not at:
        return n, 0
    sizes = _parse_sizes(size, raw, 1)
    if len(sizes) > 1:
        raise LayoutError(f"{raw}: cache devices of one token are of one size; write cache:2@1TB")
    return n, sizes[0][1]


def _merge(groups: list[VdevGroup]) -> tuple[VdevGroup, ...]:
    merged: list[VdevGroup] = []
    for g in groups:
        if merged and _same_shape(merged[-1], g):
            last = merged.pop()
            g = VdevGroup(g.kind, g.width, g.parity, last.count + g.count, g.draid_data, g.draid_spares, g.sizes)
        merged.append(g)
    return tuple(merged)


def _merge_classes(classes: list[ClassGroup]) -> tuple[ClassGroup, ...]:
    """Grouped by class in CLASSES order, single disks before mirrors in each (zpool create would read
    `log mirror a b c` as one 3-way mirror: a bare disk must come first), identical neighbours merged."""
    merged: list[ClassGroup] = []
    for c in sorted(classes, key=_class_order):
        if merged and merged[-1].alloc_class == c.alloc_class and _same_shape(merged[-1].group, c.group):
            last = merged.pop()
            g = c.group
            c = ClassGroup(c.alloc_class, VdevGroup(g.kind, g.width, g.parity, last.group.count + g.count,
                                                    g.draid_data, g.draid_spares, g.sizes))
        merged.append(c)
    return tuple(merged)


def _class_order(c: ClassGroup) -> tuple[int, bool]:
    return CLASSES.index(c.alloc_class), c.group.kind is not VdevKind.DISK


def _same_shape(a: VdevGroup, b: VdevGroup) -> bool:
    return ((a.kind, a.width, a.parity, a.draid_data, a.draid_spares, a.sizes)
            == (b.kind, b.width, b.parity, b.draid_data, b.draid_spares, b.sizes))


def parse_zpool_vdevs(words: list[str] | str) -> tuple[Layout, list[str]]:
    """Layout and devices from a `zpool create` vdev list: 'raidz2 sda sdb ... mirror sdx sdy spare sdz',
    with `special`, `dedup`, `log` and `cache` sections as zpool_vdev.c construct_spec reads them.
    The devices come back in zpool_vdev_args order (data, classes, spares, cache)."""
    if isinstance(words, str):
        words = words.split()
    groups: list[VdevGroup] = []
    data_devices: list[str] = []
    classes: list[ClassGroup] = []
    class_devices: list[list[str]] = []  # per entry of classes
    spare_devices: list[str] = []
    cache_devices: list[str] = []
    section = "data"  # data, special, dedup, log, spare or cache: where the next vdev goes
    seen: set[str] = set()
    current: tuple[str, list[str]] | None = None  # (keyword, its devices)

    def add(group: VdevGroup, devs: list[str]) -> None:
        if section == "data":  # also after 'spare' or 'cache', which end a class section
            groups.append(group)
            data_devices.extend(devs)
        else:
            classes.append(ClassGroup(section, group))
            class_devices.append(devs)

    def close() -> None:
        if current is None:
            return
        keyword, devs = current
        if not devs:
            raise LayoutError(f"'{keyword}' in the vdev list has no devices after it")
        if keyword.startswith("draid"):
            spec = keyword if re.search(r":[0-9]+c", keyword) else f"{keyword}:{len(devs)}c"
            g = parse_draid(spec, 1, keyword)
            if g.width != len(devs):
                raise LayoutError(f"{keyword} names {g.width} children but {len(devs)} devices follow it")
            add(g, devs)
        else:
            item = parse_token(f"{keyword}:{len(devs)}")
            assert isinstance(item, VdevGroup)
            add(item, devs)

    for word in words:
        low = word.lower()
        if low in ("spare", "cache", *CLASSES):
            close()
            current = None
            if low in ("spare", "cache", "log") and low in seen:
                raise LayoutError(f"'{low}' can be given only once in a zpool create vdev list")
            seen.add(low)
            section = low
        elif low == "mirror" or re.fullmatch(r"raidz[0-9]*", low) or low.startswith("draid"):
            close()
            if section in ("spare", "cache"):
                section = "data"  # a grouping keyword ends the list of spares or cache devices
            if section in CLASSES and low != "mirror":
                raise LayoutError(f"'{low}': zpool create takes only mirrors or single disks as {section} vdevs")
            current = (low, [])
        elif current is not None:
            current[1].append(word)
        elif section == "spare":
            spare_devices.append(word)
        elif section == "cache":
            cache_devices.append(word)
        else:
            add(VdevGroup(VdevKind.DISK, width=1), [word])
    close()
    if not groups:
        raise LayoutError("the vdev list holds no data vdev; e.g. 'raidz2 sda sdb sdc sdd sde sdf'")
    layout = Layout(_merge(groups), len(spare_devices), 0, _merge_classes(classes), len(cache_devices))
    order = sorted(range(len(classes)), key=lambda i: _class_order(classes[i]))  # as _merge_classes
    return layout, data_devices + [d for i in order for d in class_devices[i]] + spare_devices + cache_devices


# pool_namecheck (module/zcommon/zfs_namecheck.c) with zpool_name_valid's wider reserved set for
# a new pool (lib/libzfs/libzfs_pool.c); ZFS also takes a space, which we refuse: scripts split on it.
_POOL_NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9_\-:.]*", re.ASCII)
_RESERVED_PREFIXES = ("mirror", "raidz", "draid", "spare")
_RESERVED_NAMES = ("log", "cache", "special", "dedup")
MAX_POOL_NAME = 239  # strlen < ZFS_MAX_DATASET_NAME_LEN - 2 - 2 * strlen("$ORIGIN")


def check_pool_name(name: str) -> str:
    """The name, if `zpool create` accepts it as a new pool's; else a LayoutError saying why."""
    what = f"pool name {clip(name)}"
    if not name:
        raise LayoutError("the pool name is empty; give one such as tank")
    if len(name) > MAX_POOL_NAME:
        raise LayoutError(f"{what}: at most {MAX_POOL_NAME} characters, got {len(name)}")
    if not ("a" <= name[0].lower() <= "z"):
        raise LayoutError(f"{what}: a pool name begins with a letter, e.g. tank")
    if not _POOL_NAME_RE.fullmatch(name):
        bad = next(c for c in name if not _POOL_NAME_RE.fullmatch("a" + c))
        raise LayoutError(f"{what}: {clip(bad)} is not allowed; use letters, digits and _ - : . only")
    if name.startswith(_RESERVED_PREFIXES) or name in _RESERVED_NAMES:
        raise LayoutError(f"{what}: reserved by zpool (mirror*, raidz*, draid*, spare*, log, cache, special, "
                          f"dedup); choose another, e.g. tank")
    if name[0] == "c" and name[1:2].isdigit():
        raise LayoutError(f"{what}: zpool reserves names like c0 (they look like Solaris disks); choose another")
    return name


def check_device_name(device: str) -> str:
    """A device argument that zpool reads as a device, and a shell line shows on one line."""
    if device.startswith("-"):  # zpool's getopt would take '-f' anywhere on the line as an option
        raise LayoutError(f"device {clip(device)}: a device name cannot begin with '-'; give its path, e.g. /dev/sdb")
    if any(ord(c) < 32 or ord(c) == 127 for c in device):
        raise LayoutError(f"device {clip(device)}: control characters are not allowed in a device name")
    return device


def replication_mismatch(layout: Layout) -> str | None:
    """Why `zpool create` refuses this layout without -f ("mismatched replication level"), or None.

    get_replication() in cmd/zpool/zpool_vdev.c compares each top-level vdev with the one before:
    raidz and dRAID go together at equal parity, raidz or dRAID with a mirror only when the mirror
    survives as many failures, otherwise kind, parity and width must all match. (Releases before
    2.2 refuse every mirror with raidz, and before 2.1 raidz vdevs of different widths.)
    Special and dedup vdevs take part (only log vdevs are skipped, by ZPOOL_CONFIG_IS_LOG), so a
    special mirror with less redundancy than raidz2 data vdevs needs -f: class_redundancy_risk says why it matters."""
    def rep(g: VdevGroup) -> tuple[str, int, int]:
        name = {VdevKind.DISK: "disk", VdevKind.MIRROR: "mirror", VdevKind.RAIDZ: "raidz", VdevKind.DRAID: "draid"}
        parity = g.parity if g.kind in (VdevKind.RAIDZ, VdevKind.DRAID) else 0
        return name[g.kind], g.width, parity

    tops = [("", g) for g in layout.groups] + [(f"{c.alloc_class} ", c.group) for c in layout.classes
                                               if c.holds_pool_data]
    for cls, g in tops:
        # the same function refuses a mirror, raidz or dRAID whose children differ by over
        # ZPOOL_FUZZ (16 MiB): "raidz contains devices of different sizes"
        if g.spans_sizes and g.sizes[0][1] - g.sizes[-1][1] > ZPOOL_FUZZ:
            return f"a {cls}{rep(g)[0]} vdev contains devices of different sizes"
    for (ca, a), (cb, b) in zip(tops, tops[1:]):
        (ka, wa, pa), (kb, wb, pb) = rep(a), rep(b)
        parity_kinds = ("raidz", "draid")
        if {ka, kb} & {"mirror"} and {ka, kb} & set(parity_kinds):
            (craidz, raidz), (cmirror, mirror) = ((ca, a), (cb, b)) if ka in parity_kinds else ((cb, b), (ca, a))
            if raidz.parity != mirror.width - 1:
                why = (f"each {cmirror}{mirror.spec} vdev survives {mirror.width - 1} failed disk{'s' * (mirror.width != 2)}, each "
                       f"{craidz}{raidz.spec.split(':')[0]} vdev {raidz.parity}")
                return why + _class_note(layout)
        elif ka in parity_kinds and kb in parity_kinds:
            if pa != pb:
                return f"both parity {pa} and parity {pb} vdevs are present"
        elif ka != kb:
            return f"both {ca}{ka} and {cb}{kb} vdevs are present" + _class_note(layout)
        elif wa != wb:
            return f"both {wa}-way {ca}{ka} and {wb}-way {cb}{kb} vdevs are present" + _class_note(layout)
    return None


def class_redundancy_risk(layout: Layout) -> str | None:
    """Why a special or dedup vdev is the pool's weak point: it survives fewer failed disks than the
    data vdevs, and its loss loses the pool (its blocks exist nowhere else); None when it does not."""
    data = min(g.parity for g in layout.groups)
    weak = [c for c in layout.classes if c.holds_pool_data and c.failures_survived < data]
    if not weak:
        return None
    c = min(weak, key=lambda c: c.failures_survived)
    n = c.failures_survived
    return (f"the {c.alloc_class} vdev ({c.group.token}) survives {n} failed disk{'s' * (n != 1)}, the data vdevs "
            f"{data}: losing it loses the pool; give it {data + 1} disks ({c.alloc_class}=mirror:{data + 1})")


def _class_note(layout: Layout) -> str:
    why = class_redundancy_risk(layout)
    return f" ({why})" if why else ""


def zpool_vdev_args(layout: Layout, devices: list[str]) -> list[str]:
    """The vdev part of `zpool create` for these devices, in layout order."""
    if len(devices) != layout.all_disks:
        raise LayoutError(f"{layout} needs {layout.all_disks} devices, got {len(devices)}")
    seen: set[str] = set()
    for d in devices:
        check_device_name(d)
        if d in seen:
            raise LayoutError(f"device {shown(d)} is given twice; each disk can be used once")
        seen.add(d)
    it = iter(devices)
    words = [_vdev_words(g, it) for g in layout.groups]  # devices are taken in layout order...
    # ...but plain disks are written first: after 'mirror a b', a bare 'c' would join that mirror.
    args = [w for g, ws in zip(layout.groups, words) if not g.spec for w in ws]
    args += [w for g, ws in zip(layout.groups, words) if g.spec for w in ws]
    last = None
    for c in layout.classes:  # sorted by class: zpool create takes 'log' once
        if c.alloc_class != last:
            args.append(c.alloc_class)
        last = c.alloc_class
        args += _vdev_words(c.group, it)
    if layout.hot_spares:
        args.append("spare")
        args.extend(next(it) for _ in range(layout.hot_spares))
    if layout.cache_devices:
        args.append("cache")
        args.extend(it)
    return args


def _vdev_words(g: VdevGroup, it) -> list[str]:
    words: list[str] = []
    for _ in range(g.count):
        if g.spec:
            words.append(g.spec)
        words.extend(next(it) for _ in range(g.width))
    return words


def zpool_create_argv(
    pool: str, layout: Layout, devices: list[str], *, ashift: int | None = None,
    pool_props: dict[str, str] | None = None, fs_props: dict[str, str] | None = None, force: bool = False,
) -> list[str]:
    """The whole `zpool create` command line as an argv list (-f only when `force`: it also
    overrides zpool's in-use checks; see replication_mismatch for when zpool demands it)."""
    check_pool_name(pool)
    argv = ["zpool", "create"]
    if force:
        argv.append("-f")
    if ashift is not None:
        argv += ["-o", f"ashift={ashift}"]
    for k, v in (pool_props or {}).items():
        argv += ["-o", f"{k}={v}"]
    for k, v in (fs_props or {}).items():
        argv += ["-O", f"{k}={v}"]
    return argv + [pool] + zpool_vdev_args(layout, devices)
