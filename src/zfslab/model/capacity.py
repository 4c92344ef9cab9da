"""Space accounting exactly as OpenZFS does it: `zpool list` SIZE and `zfs list` USED+AVAIL.

Each step follows docs/capacity.md, which names the OpenZFS file and function it repeats;
all divisions are integer divisions, as in the C code, because the truncations matter.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from zfslab.errors import LayoutError, VersionError, shown
from zfslab.model.empty_pool_metadata import empty_pool_special_bytes
from zfslab.model.layouts import Layout, VdevGroup, VdevKind
from zfslab.model.units import GiB, MiB, KiB

SPA_MINBLOCKSHIFT = 9
SPA_MINDEVSIZE = 64 * MiB
VDEV_LABEL_START_SIZE = 2 * 256 * KiB + 3584 * KiB  # two labels + the boot block
VDEV_LABEL_END_SIZE = 2 * 256 * KiB
LABEL_ALIGN = 256 * KiB  # sizeof(vdev_label_t)
DRAID_ROWHEIGHT = 16 * MiB  # 1 << SPA_MAXBLOCKSHIFT
DRAID_REFLOW_RESERVE = 32 * MiB
EMBEDDED_SLOG_MIN_MS = 64  # zfs_embedded_slog_min_ms


@dataclass(frozen=True, slots=True)
class Rules:
    """One generation of OpenZFS space accounting (docs/capacity.md#rule-sets)."""

    key: str
    software: str
    new_metaslabs: bool  # 0.8+: 512 MiB..16 GiB metaslabs; before: ~200 per vdev
    slop: str  # 'shift6', 'shift5', 'floor128m', 'capped'
    embedded_log: bool  # 2.1+: one metaslab per big vdev reserved for the ZIL
    max_block_shift: int = 24  # 17 before large_blocks
    special_embedded_log: bool = False  # 2.4+: special vdevs reserve one too (spa_special_embedded_log_class)
    class_alloc_in_dspace: bool = False  # 2.3.7+, 2.4.1+: what special/dedup vdevs hold is added back to dspace


RULES: dict[str, Rules] = {
    r.key: r
    for r in (
        Rules("slop64", "ZoL <= 0.6.4, illumos/FreeBSD before illumos 4951", False, "shift6", False, 17),
        Rules("0.6.5", "ZoL 0.6.5, illumos 4951 era (FreeBSD 10.x)", False, "shift5", False),
        Rules("0.7", "ZoL 0.7", False, "floor128m", False),
        Rules("0.8", "ZoL 0.8 and OpenZFS 2.0", True, "floor128m", False),
        Rules("2.1", "OpenZFS 2.1 to 2.3.6", True, "capped", True),
        # spa_update_dspace adds the special and dedup classes' allocated bytes to dspace (PR #18222;
        # 2.3.2 lacks it, 2.3.9 has it): without class vdevs the arithmetic is 2.1's
        # (docs/capacity.md#allocation-classes)
        Rules("2.3.7", "OpenZFS 2.3.7 to 2.3.x", True, "capped", True, class_alloc_in_dspace=True),
        # 2.4 adds an embedded log on special vdevs (counted in SIZE and taken off the slop);
        # without them its arithmetic is 2.1's, byte for byte against libzpool 2.4.4
        # (docs/capacity.md#what-24-changed)
        Rules("2.4.0", "OpenZFS 2.4.0", True, "capped", True, special_embedded_log=True),
        Rules("2.4", "OpenZFS 2.4.1 and later", True, "capped", True, special_embedded_log=True,
              class_alloc_in_dspace=True),
    )
}
RULE_ALIASES = {"0.8-2.0": "0.8", "2.0": "0.8", "2.1-2.3": "2.1", "2.2": "2.1", "2.3": "2.3.7", "0.6.4": "slop64"}
DEFAULT_RULES = "2.1"
# rule sets that differ only on pools with special or dedup vdevs (2.3.7's class_alloc_in_dspace,
# 2.4's embedded log on special vdevs): for every other layout they are 2.1's, byte for byte
# against libzpool 2.1.11, 2.3.9 and 2.4.4 (docs/capacity.md#rule-sets)
SAME_WITHOUT_CLASS_VDEVS = ("2.1", "2.3.7", "2.4.0", "2.4")


def accounting_name(rules: Rules, class_vdevs: bool) -> str:
    """The releases whose accounting the figures are: one name for 2.1 to 2.4 where no layout has
    a special or dedup vdev, so that a user of 2.3.9 or 2.4.4 is not told of 2.3.6."""
    if not class_vdevs and rules.key in SAME_WITHOUT_CLASS_VDEVS:
        return "OpenZFS 2.1 to 2.4"
    return rules.software


_RELEASE = re.compile(r"([0-9]{1,4})(?:\.([0-9]{1,4}))?(?:\.([0-9]{1,4})(?:\.[0-9]{1,4})?(?:-[0-9a-z.~+]{1,40})?)?",
                      re.ASCII)  # 0.6.5.11 had a fourth component


def rules_for(version: str) -> Rules:
    """The accounting rules of an OpenZFS version: '2.1', '2.3.2', '0.6.5', '0.8-2.0', 'slop64'."""
    text = str(version).strip().lower().removeprefix("zfs-").removeprefix("v")
    if text in RULES:
        return RULES[text]
    if text in RULE_ALIASES:
        return RULES[RULE_ALIASES[text]]
    # ASCII digits only (int() also takes '٢' and '２'), at most 4 to a component: a release, not a
    # number of 20 digits; a Debian suffix after the patch level ('2.3.2-1~bpo12+1') is allowed
    m = _RELEASE.fullmatch(text)
    if not m:
        raise VersionError(shown(str(version), 40), ", ".join(RULES))
    major, minor = int(m.group(1)), int(m.group(2) or 0)
    patch = int(m.group(3)) if m.group(3) is not None else None
    if major == 0 and minor == 6:
        return RULES["0.6.5" if patch is None or patch >= 5 else "slop64"]
    if major == 0 and minor == 7:
        return RULES["0.7"]
    if (major, minor) in ((0, 8), (2, 0)):
        return RULES["0.8"]
    if major == 2 and minor == 3 and (patch is None or patch >= 7):
        return RULES["2.3.7"]
    if major == 2 and 1 <= minor <= 3:
        return RULES["2.1"]
    if major == 2 and minor == 4:
        return RULES["2.4.0" if patch == 0 else "2.4"]
    raise VersionError(version, ", ".join(RULES))


# ---- the size ZFS sees of a whole disk (docs/capacity.md#partitioning) ----------------------

def linux_whole_disk_osize(disk_bytes: int, sector_bytes: int = 512) -> int:
    """Bytes of partition 1 that `zpool create pool sdX` makes on Linux (zpool_label_disk)."""
    if sector_bytes not in (512, 4096):
        raise LayoutError(f"sector size {sector_bytes}: disks have 512 or 4096-byte logical sectors")
    cap = disk_bytes // sector_bytes
    coeff = sector_bytes // 512
    nblocks = 1 + -(-128 * 128 // sector_bytes)  # GPT header + 128 entries of 128 bytes
    if nblocks * sector_bytes < 16384 + sector_bytes:
        nblocks = 16384 // sector_bytes + 1
    last_usable_lba = cap - 1 - nblocks
    # EFI_MIN_RESV_SIZE (8 MiB reserve partition 9) and NEW_START_BLOCK (1 MiB offset)
    slice_blocks = last_usable_lba + 1 - 16384 // coeff - 2048 // coeff
    slice_blocks -= slice_blocks % 2048  # PARTITION_END_ALIGNMENT
    return max(slice_blocks, 0) * sector_bytes


def min_whole_disk_bytes(sector_bytes: int = 512) -> int:
    """The smallest whole disk whose partition 1 (linux_whole_disk_osize) reaches SPA_MINDEVSIZE:
    what to tell a user whose disks are too small (73.0 MiB with 512-byte sectors)."""
    lo, hi = SPA_MINDEVSIZE // sector_bytes, 2 * SPA_MINDEVSIZE // sector_bytes  # in sectors; hi is enough
    while lo < hi:   # the partition only grows with the disk: a bisection
        mid = (lo + hi) // 2
        if linux_whole_disk_osize(mid * sector_bytes, sector_bytes) >= SPA_MINDEVSIZE:
            hi = mid
        else:
            lo = mid + 1
    return lo * sector_bytes


# ---- leaf and top-level asize (docs/capacity.md#labels, #top-level-asize, #draid) -----------

def leaf_asize(osize: int) -> int:
    """Bytes of a leaf vdev that ZFS may allocate: aligned to 256 KiB, minus 4.5 MiB of labels."""
    if osize < SPA_MINDEVSIZE:
        whole = min_whole_disk_bytes()
        raise LayoutError(f"a vdev of {osize:,} bytes is below ZFS's minimum device size of 64 MiB "
                          f"({SPA_MINDEVSIZE:,} bytes as ZFS sees it): give disks of at least {whole:,} bytes "
                          f"({whole / MiB:.1f} MiB), which zpool partitions to that")
    return osize - osize % LABEL_ALIGN - VDEV_LABEL_START_SIZE - VDEV_LABEL_END_SIZE


def top_asize(group: VdevGroup, leaf: int) -> int:
    """asize of one top-level vdev of the group whose smallest child has asize `leaf`."""
    if group.kind in (VdevKind.DISK, VdevKind.MIRROR):
        return leaf
    if group.kind is VdevKind.RAIDZ:
        return group.width * leaf
    # dRAID: vdev_draid_calculate_asize; distributed spares hold no capacity
    ndisks = group.width - group.draid_spares
    groupsz = (group.draid_data + group.parity) * DRAID_ROWHEIGHT
    child = ((leaf - DRAID_REFLOW_RESERVE) // DRAID_ROWHEIGHT) * DRAID_ROWHEIGHT
    return ((child * ndisks) // groupsz) * groupsz


# ---- metaslabs (docs/capacity.md#metaslabs) -----------------------------------------------

def metaslab_shift(asize: int, rules: Rules) -> int:
    """log2 of the metaslab size chosen when the vdev is created (vdev_metaslab_set_size)."""
    if not rules.new_metaslabs:
        return max((asize // 200).bit_length(), rules.max_block_shift)
    count = asize >> 29
    if count < 16:
        shift = (asize // 16).bit_length()
    elif count > 200:
        shift = (asize // 200).bit_length()
    else:
        shift = 29
    if shift < 24:
        shift = 24
    elif shift > 34:
        shift = 34
        if (asize >> 34) > 131072:
            shift = (asize // 131072).bit_length()
    return shift


def metaslab_sizes(group: VdevGroup, asize: int, ms_shift: int, ashift: int) -> Counter[int]:
    """{usable bytes of a metaslab: how many have it}; dRAID trims each to whole group rows. Counted,
    not listed: a vdev has up to 131,072 metaslabs, and dRAID's trim repeats with a short period."""
    count, ms_size = asize >> ms_shift, 1 << ms_shift
    if count == 0:
        return Counter()
    if group.kind is not VdevKind.DRAID:
        return Counter({ms_size: count})
    sz = (group.draid_data + group.parity) << ashift  # vdev_draid_metaslab_init
    period = min(count, sz // math.gcd(ms_size, sz))  # metaslab i starts at i * ms_size: its trim repeats
    sizes: Counter[int] = Counter()
    for i in range(period):
        lost = -(i * ms_size) % sz
        sizes[((ms_size - lost) // sz) * sz] += count // period + (1 if i < count % period else 0)
    return sizes


def first_metaslab_bytes(group: VdevGroup, ms_shift: int, ashift: int) -> int:
    """Usable bytes of metaslab 0, the one an embedded log takes: it starts at 0, so dRAID trims nothing."""
    ms_size = 1 << ms_shift
    if group.kind is not VdevKind.DRAID:
        return ms_size
    sz = (group.draid_data + group.parity) << ashift
    return (ms_size // sz) * sz


# ---- block allocation and the deflate ratio (docs/capacity.md#allocation, #deflate-ratio) ----

def psize_to_asize(group: VdevGroup, psize: int, ashift: int) -> int:
    """Raw bytes one copy of a block of `psize` bytes takes on a vdev of this group."""
    if group.kind in (VdevKind.DISK, VdevKind.MIRROR):
        sector = 1 << ashift
        return -(-psize // sector) * sector
    p = group.parity
    if group.kind is VdevKind.RAIDZ:
        cols = group.width
        s = ((psize - 1) >> ashift) + 1
        s += p * ((s + cols - p - 1) // (cols - p))
        return (-(-s // (p + 1)) * (p + 1)) << ashift
    d = group.draid_data
    rows = ((psize - 1) // (d << ashift)) + 1
    return (rows * (d + p)) << ashift


def deflate_ratio(group: VdevGroup, ashift: int) -> int:
    """vdev_set_deflate_ratio: always from a 128 KiB block, truncated; 512 means no deflation."""
    return (1 << 17) // (psize_to_asize(group, 1 << 17, ashift) >> SPA_MINBLOCKSHIFT)


# ---- embedded log, slop and the dataset view (docs/capacity.md#embedded-log, #slop, #usable-space) ----

def slop_bytes(space: int, embedded_log: int, rules: Rules) -> int:
    """spa_get_slop_space for these rules, from the normal-class dspace."""
    if rules.slop == "shift6":
        return max(space >> 6, SPA_MINDEVSIZE >> 1)
    if rules.slop == "shift5":
        return max(space >> 5, SPA_MINDEVSIZE >> 1)
    if rules.slop == "floor128m":
        return max(space >> 5, min(space >> 1, 128 * MiB))
    slop = min(space >> 5, 128 * GiB)
    slop -= min(embedded_log, slop >> 1)
    return max(slop, min(space >> 1, 128 * MiB))


@dataclass(frozen=True, slots=True)
class VdevCapacity:
    """One top-level vdev of a group (all `count` vdevs of the group are alike)."""

    group: VdevGroup
    asize_bytes: int
    ms_shift: int
    ms_count: int
    size_bytes: int  # its share of zpool SIZE: the sum of its metaslabs
    deflate_ratio: int
    dspace_bytes: int  # deflated, embedded-log metaslab excluded
    embedded_log_bytes: int
    wasted_bytes: int = 0  # of one vdev: what its larger children hold beyond the smallest (unused)
    alloc_class: str = "normal"  # normal, special, dedup or log


@dataclass(frozen=True, slots=True)
class PoolCapacity:
    """What `zpool list -Hp` and `zfs list -Hp` show for the empty pool."""

    layout: Layout
    rules: Rules
    ashift: int
    vdev_bytes: int  # the size ZFS sees of each disk (osize)
    disk_bytes: int  # the size of each disk as sold (== vdev_bytes for files/partitions)
    size_bytes: int  # zpool list SIZE: normal, special and dedup classes with their embedded logs; no log vdevs
    normal_dspace_bytes: int
    embedded_log_bytes: int  # of the normal class, and (2.4) of the special class
    slop_bytes: int
    usable_bytes: int  # zfs list USED+AVAIL of the root dataset
    vdevs: tuple[VdevCapacity, ...]
    # sized layouts (mixed disks): (size as written in the layout, bytes ZFS sees), largest first;
    # vdev_bytes and disk_bytes are then those of the smallest disk
    vdev_sizes: tuple[tuple[int, int], ...] = ()
    class_vdevs: tuple[VdevCapacity, ...] = ()  # special, dedup and log vdevs, in layout.classes order
    class_alloc_bytes: int = 0  # deflated bytes the special and dedup vdevs hold
    class_alloc_predicted: bool = False  # class_alloc_bytes is the empty pool's own metadata, predicted
    cache_vdev_bytes: int = 0  # what ZFS sees of each cache device (L2ARC: in no SIZE nor AVAIL)

    def class_size_bytes(self, alloc_class: str) -> int:
        """The SIZE one class adds (special, dedup) or shows apart in zpool list -v (log)."""
        return sum(v.size_bytes * v.group.count for v in self.class_vdevs if v.alloc_class == alloc_class)

    @property
    def raw_bytes(self) -> int:
        """Bytes of all disks as sold (as written in a sized layout), hot spares included (data disks only)."""
        if self.layout.sized:
            return sum(b * n for b, n in self.layout.disk_sizes().items())
        return self.disk_bytes * self.layout.disks

    @property
    def wasted_bytes(self) -> int:
        """Bytes ZFS sees of the disks that no vdev uses: larger disks in a vdev of smaller ones."""
        return sum(v.wasted_bytes * v.group.count for v in self.vdevs + self.class_vdevs)

    @property
    def efficiency(self) -> float:
        """usable / raw."""
        return self.usable_bytes / self.raw_bytes


def vdev_capacity(group: VdevGroup, vdev_bytes: int, ashift: int, created: Rules, running: Rules,
                  alloc_class: str = "normal", created_vdev_bytes: int | None = None) -> VdevCapacity:
    """created_vdev_bytes: the vdev was made on disks of that size and has grown since (every disk
    replaced by a larger one, autoexpand): its metaslab size is the one it was created with, and
    vdev_expand() adds metaslabs of that size (vdev_metaslab_set_size() runs only for a new vdev)."""
    asize = top_asize(group, leaf_asize(vdev_bytes))
    if asize <= 0:
        raise LayoutError(f"{group.token}: each disk of {vdev_bytes} bytes is too small for this dRAID")
    shift = metaslab_shift(asize if created_vdev_bytes is None else
                           top_asize(group, leaf_asize(created_vdev_bytes)), created)
    sizes = metaslab_sizes(group, asize, shift, ashift)
    ratio = deflate_ratio(group, ashift)
    count = sum(sizes.values())
    deflated = sum(((s >> SPA_MINBLOCKSHIFT) * ratio) * n for s, n in sizes.items())
    # vdev_metaslab_init moves one metaslab of a normal (2.4: or special) vdev of over
    # zfs_embedded_slog_min_ms metaslabs to the embedded log class
    embeds = running.embedded_log and (alloc_class == "normal" or (
        alloc_class == "special" and running.special_embedded_log))
    log = (first_metaslab_bytes(group, shift, ashift) >> SPA_MINBLOCKSHIFT) * ratio \
        if embeds and count > EMBEDDED_SLOG_MIN_MS else 0
    return VdevCapacity(group, asize, shift, count, sum(s * n for s, n in sizes.items()), ratio, deflated - log, log,
                        alloc_class=alloc_class)


def osizes(layout: Layout, *, whole_disk: bool = True, sector_bytes: int = 512) -> dict[int, int]:
    """{size as written in the layout: bytes ZFS sees}: GPT partition 1 of whole disks, or the size itself
    (the data disks of a sized layout, and the special, dedup, log and cache disks that name a size)."""
    sizes = set(layout.disk_sizes()) | set(layout.class_disk_sizes())
    return {b: linux_whole_disk_osize(b, sector_bytes) if whole_disk else b for b in sorted(sizes, reverse=True)}


def pool_capacity(
    layout: Layout, vdev_bytes: int | Mapping[int, int], *, ashift: int = 12, rules: Rules | str = DEFAULT_RULES,
    created_with: Rules | str | None = None, disk_bytes: int | None = None,
    class_vdev_bytes: Mapping[int, int] | None = None, class_alloc_bytes: int | None = None,
    grown_from_bytes: int | None = None,
) -> PoolCapacity:
    """SIZE and USED+AVAIL of an empty pool whose disks each show `vdev_bytes` to ZFS; for a sized
    layout (mixed disks), vdev_bytes maps each size written in it to what ZFS sees (osizes()).
    Special, dedup, log and cache disks that name their size (special=mirror:2@1TB) are looked up in
    class_vdev_bytes (default: vdev_bytes if a map, else the size as written); unsized ones are data disks.
    class_alloc_bytes: deflated bytes on the special and dedup vdevs, which 2.3.7+ and 2.4.1+ add to AVAIL;
    None: what an empty pool holds there, its own metadata (empty_pool_metadata.py).
    grown_from_bytes: the data vdevs were created on disks showing that many bytes to ZFS, and every
    data disk was replaced by one showing vdev_bytes (vdev_capacity's created_vdev_bytes); class vdevs
    then must name their size, looked up in class_vdev_bytes, as they keep their disks."""
    # the data vdevs grow; special, dedup and log vdevs keep their disks, so they must name their size
    if grown_from_bytes is not None and (isinstance(vdev_bytes, Mapping) or layout.sized
                                         or any(not c.group.sizes for c in layout.classes)):
        raise LayoutError(f"{layout}: disks grown in place are modelled for one data disk size, beside class "
                          "vdevs that name their own (special=mirror:2@SIZE)")
    if isinstance(vdev_bytes, Mapping) or layout.sized:
        return _sized_capacity(layout, vdev_bytes, ashift=ashift, rules=rules, created_with=created_with,
                               class_vdev_bytes=class_vdev_bytes, class_alloc_bytes=class_alloc_bytes)
    running, created = _rules(rules, created_with, ashift)
    vdevs = tuple(vdev_capacity(g, vdev_bytes, ashift, created, running, created_vdev_bytes=grown_from_bytes)
                  for g in layout.groups)
    return _pool(layout, running, created, ashift, vdevs, vdev_bytes, vdev_bytes if disk_bytes is None else disk_bytes,
                 (), class_vdev_bytes, class_alloc_bytes)


MAX_POOL_BYTES = 2**64  # spa_get_space() and vdev_stat's vs_space are uint64_t


def _rules(rules, created_with, ashift: int) -> tuple[Rules, Rules]:
    running = rules if isinstance(rules, Rules) else rules_for(rules)
    created = running if created_with is None else (
        created_with if isinstance(created_with, Rules) else rules_for(created_with))
    if not 9 <= ashift <= 16:
        raise LayoutError(f"ashift {ashift}: OpenZFS accepts 9 to 16 (9 = 512 B, 12 = 4 KiB sectors)")
    return running, created


def _pool(layout: Layout, running: Rules, created: Rules, ashift: int, vdevs: tuple[VdevCapacity, ...],
          vdev_bytes: int, disk_bytes: int, vdev_sizes: tuple, class_vdev_bytes,
          class_alloc_bytes: int | None) -> PoolCapacity:
    """The pool from its data vdevs: adds the class vdevs, SIZE (spa_prop_get_config), slop and AVAIL."""
    predicted = class_alloc_bytes is None
    if predicted:
        class_alloc_bytes = empty_pool_special_bytes(layout, ashift, openzfs_24=running.special_embedded_log)
    if class_alloc_bytes < 0:
        raise LayoutError(f"class_alloc_bytes={class_alloc_bytes}: bytes on the special and dedup vdevs cannot be negative")
    table = class_vdev_bytes if class_vdev_bytes is not None else dict(vdev_sizes) if vdev_sizes else None

    def seen(group_sizes: tuple[tuple[int, int], ...], what: str) -> tuple[int, int]:
        """(bytes ZFS sees of the smallest disk, bytes ZFS sees beyond it in one vdev)."""
        if not group_sizes:
            return vdev_bytes, 0
        look = {b: (table[b] if table is not None and b in table else b) for _, b in group_sizes}
        smallest = min(look.values())
        return smallest, sum(n * (look[b] - smallest) for n, b in group_sizes)

    class_vdevs = []
    for c in layout.classes:
        leaf, wasted = seen(c.group.sizes, c.alloc_class)
        v = vdev_capacity(c.group, leaf, ashift, created, running, c.alloc_class)
        class_vdevs.append(VdevCapacity(v.group, v.asize_bytes, v.ms_shift, v.ms_count, v.size_bytes, v.deflate_ratio,
                                        v.dspace_bytes, v.embedded_log_bytes, wasted, c.alloc_class))
    cache = seen(((layout.cache_devices, layout.cache_bytes),) if layout.cache_bytes else (), "cache")[0] \
        if layout.cache_devices else 0
    pooled = [v for v in class_vdevs if v.alloc_class != "log"]  # log vdevs: spa_log_class, in neither
    raw = sum(v.asize_bytes * v.group.count for v in list(vdevs) + class_vdevs)
    if raw >= MAX_POOL_BYTES:
        raise LayoutError(f"{layout}: {raw:,} bytes of vdevs; OpenZFS counts a pool's space in 64 bits "
                          "(under 16 EiB): give smaller or fewer disks")
    size = sum(v.size_bytes * v.group.count for v in list(vdevs) + pooled)
    normal = sum(v.dspace_bytes * v.group.count for v in vdevs)
    log = sum(v.embedded_log_bytes * v.group.count for v in list(vdevs) + pooled)
    slop = slop_bytes(normal, log, running)
    # spa_update_dspace (2.3.7+, 2.4.1+): spa_dspace = normal + dalloc(special) + dalloc(dedup)
    back = class_alloc_bytes if running.class_alloc_in_dspace and pooled else 0
    return PoolCapacity(
        layout=layout, rules=running, ashift=ashift, vdev_bytes=vdev_bytes, disk_bytes=disk_bytes,
        size_bytes=size, normal_dspace_bytes=normal, embedded_log_bytes=log,
        slop_bytes=slop, usable_bytes=max(normal - slop, 0) + back, vdevs=vdevs, vdev_sizes=vdev_sizes,
        class_vdevs=tuple(class_vdevs), class_alloc_bytes=class_alloc_bytes, cache_vdev_bytes=cache,
        class_alloc_predicted=predicted,
    )


def _sized_capacity(layout: Layout, vdev_bytes, *, ashift: int, rules, created_with, class_vdev_bytes,
                    class_alloc_bytes: int | None) -> PoolCapacity:
    """pool_capacity of a sized layout: each vdev on its own disks, every child counted as its
    smallest (vdev_raidz_open, vdev_mirror_open, vdev_draid_open take the minimum child asize)."""
    if not layout.sized:
        raise LayoutError(f"{layout}: sizes per disk were given but the layout names none; write them in it, "
                          "e.g. raidz2:8@12TB+raidz2:4@8TB")
    if not isinstance(vdev_bytes, Mapping):
        raise LayoutError(f"{layout} names the size of its disks, but one size was given for all; leave out "
                          "the @SIZES (zfslab plan and capacity read them)")
    missing = [b for b in layout.disk_sizes() if b not in vdev_bytes]
    if missing:
        raise LayoutError(f"{layout}: no vdev size given for disks of {missing[0]} bytes")
    running, created = _rules(rules, created_with, ashift)
    vdevs = []
    for g in layout.groups:
        smallest = min(vdev_bytes[b] for _, b in g.sizes)
        v = vdev_capacity(g, smallest, ashift, created, running)
        wasted = sum(n * (vdev_bytes[b] - smallest) for n, b in g.sizes)
        vdevs.append(VdevCapacity(v.group, v.asize_bytes, v.ms_shift, v.ms_count, v.size_bytes, v.deflate_ratio,
                                  v.dspace_bytes, v.embedded_log_bytes, wasted))
    sizes = tuple(sorted(((b, vdev_bytes[b]) for b in layout.disk_sizes()), reverse=True))
    table = class_vdev_bytes if class_vdev_bytes is not None else vdev_bytes
    return _pool(layout, running, created, ashift, tuple(vdevs), sizes[-1][1], sizes[-1][0], sizes, table,
                 class_alloc_bytes)


def whole_disk_capacity(layout: Layout, disk_bytes: int, *, sector_bytes: int = 512, **kw) -> PoolCapacity:
    """pool_capacity for whole disks given to `zpool create` on Linux (GPT partition 1)."""
    return pool_capacity(layout, linux_whole_disk_osize(disk_bytes, sector_bytes), disk_bytes=disk_bytes, **kw)
