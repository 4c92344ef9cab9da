"""What the user's own data takes on a layout, block by block (docs/footprint.md).

The reader (system/footprint_reader.py) turns each file into logical blocks as the DMU writes
them and, for each block, the length the compressor gives. This module applies OpenZFS's rules
(zio_write_compress, zio_get_compression_max_size, zio_roundup_alloc_size) to decide each
block's physical size on a pool, then the raidz/dRAID/mirror allocation of that size.

A block is keyed by (lsize, clen): clen 0 means all zeros; clen == lsize means stored as is
(compression off, or it did not compress); otherwise the compressor's output with its ZFS
header, rounded up to 512 bytes above BPE_PAYLOAD_SIZE (the rules below only compare it with
multiples of 512 there, so the rounding loses nothing and keeps the histogram small).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Mapping

from zfslab.model.capacity import SPA_MINBLOCKSHIFT, deflate_ratio, psize_to_asize
from zfslab.model.footprint_metadata import (POINTERS_PER_INDIRECT, TreeShape, metadata_blocks,
                                            spread_directories)
from zfslab.model.layouts import Layout, VdevGroup, VdevKind

SPA_MINBLOCKSIZE = 512
BPE_PAYLOAD_SIZE = 112       # a block compressing to this or less lives inside its block pointer
METADATA_COPIES = 2          # redundant_metadata=all: dmu_write_policy gives metadata os_copies + 1
Z95 = 1.959963984540054      # two-sided 95 % normal quantile

BlockKey = tuple[int, int]   # (lsize, clen)


def roundup(n: int, multiple: int) -> int:
    return -(-n // multiple) * multiple


def file_block_sizes(file_bytes: int, recordsize: int) -> tuple[int, int]:
    """(blocks, lsize) of a file written sequentially: one block of its size rounded up to 512 B
    while it fits in one record (zfs_grow_blocksize, dnode_set_blksz), else whole records."""
    if file_bytes < 0:
        raise ValueError(f"file_bytes(={file_bytes}) must be >= 0")
    if file_bytes == 0:
        return 0, 0
    if file_bytes <= recordsize:
        return 1, roundup(file_bytes, SPA_MINBLOCKSIZE)
    return -(-file_bytes // recordsize), recordsize


def clen_key(lsize: int, compressed_len: int | None) -> int:
    """The histogram's clen for a block: compressed_len None means all zeros."""
    if compressed_len is None:
        return 0
    if compressed_len >= lsize:
        return lsize
    return compressed_len if compressed_len <= BPE_PAYLOAD_SIZE else min(lsize, roundup(compressed_len, SPA_MINBLOCKSIZE))


@dataclass(frozen=True, slots=True)
class PoolAlloc:
    """spa_min_alloc and spa_gcd_alloc of the normal class: a dRAID vdev allocates whole rows."""

    min_alloc_bytes: int
    gcd_alloc_bytes: int


def pool_alloc(layout: Layout, ashift: int) -> PoolAlloc:
    """Over every top-level vdev but logs (vdev_open: vdev_spa_set_alloc), special and dedup ones too."""
    groups = list(layout.groups) + [c.group for c in layout.classes if c.alloc_class in ("special", "dedup")]
    units = [(g.draid_data << ashift) if g.kind is VdevKind.DRAID else (1 << ashift) for g in groups]
    return PoolAlloc(min(units), math.gcd(*units))


def _spread(groups) -> list[tuple[VdevGroup, float]]:
    """Each group with its share of the blocks: in proportion to its data disks (ZFS weighs by free
    space, which is that on an empty pool)."""
    weights = [g.data_disks_per_vdev * g.count for g in groups]
    total = sum(weights)
    return [(g, w / total) for g, w in zip(groups, weights)]


def placement(layout: Layout, special_small_bytes: int = 0):
    """A function of a data block's psize giving (groups with shares, on the special class?), as
    spa_preferred_class places it: a file's data block of at most special_small_blocks (its psize,
    after compression) on the special vdevs, when the layout has them; everything else on the data
    vdevs. (Metadata always goes to the special class: metadata_cost.)"""
    normal = _spread(layout.groups)
    special_groups = [c.group for c in layout.classes if c.alloc_class == "special"]
    special = _spread(special_groups) if special_groups else None

    def where(psize: int):
        if special and psize <= special_small_bytes:
            return special, True
        return normal, False
    return where


@dataclass(frozen=True, slots=True)
class Compression:
    on: bool
    embedded_data: bool = True     # the embedded_data feature (on in every pool made since 0.6.4)
    floor_to_alloc: bool = True    # 2.3+: the 12.5 % limit is rounded down to the allocation unit


def floors_to_alloc(zfs_version: str) -> bool:
    """Whether this OpenZFS rounds the 12.5 % saving down to the allocation unit (2.3 and later;
    a version it cannot read is taken as the latest)."""
    m = re.match(r"\s*([0-9]+)\.([0-9]+)", zfs_version)
    return not m or (int(m.group(1)), int(m.group(2))) >= (2, 3)


def block_psize(lsize: int, clen: int, comp: Compression, alloc: PoolAlloc) -> tuple[str, int]:
    """('hole'|'embedded'|'stored'|'compressed', psize) of one block, as zio_write_compress decides."""
    if not comp.on:
        return "stored", lsize
    if clen == 0:
        return "hole", 0
    d_len = lsize - (lsize >> 3)  # compress by at least 12.5 %
    if comp.floor_to_alloc:
        d_len -= d_len % alloc.gcd_alloc_bytes
        if d_len < alloc.min_alloc_bytes:
            d_len = BPE_PAYLOAD_SIZE  # only an embedded block can save anything
    if clen > d_len:
        return "stored", lsize
    if clen <= BPE_PAYLOAD_SIZE and comp.embedded_data:
        return "embedded", 0
    rounded = alloc.min_alloc_bytes if clen <= alloc.min_alloc_bytes else roundup(clen, alloc.gcd_alloc_bytes)
    if rounded >= lsize:
        return "stored", lsize
    return "compressed", rounded


@dataclass(frozen=True, slots=True)
class BlockCost:
    """One copy of a block of psize bytes on one vdev group, split by what the sectors hold."""

    asize_bytes: int       # one copy: data + parity + padding
    data_bytes: int        # psize rounded up to whole sectors
    parity_bytes: int      # raidz/dRAID parity, or a mirror's extra copies
    padding_bytes: int     # raidz skip sectors, dRAID's rest of the row
    raw_bytes: int         # on all disks
    used_bytes: float      # what zfs list USED is charged (asize at the vdev's 128K deflate ratio)


def block_cost(group: VdevGroup, psize: int, ashift: int) -> BlockCost:
    sector = 1 << ashift
    asize = psize_to_asize(group, psize, ashift)
    data_sectors = -(-psize // sector)
    data = data_sectors * sector
    if group.kind in (VdevKind.DISK, VdevKind.MIRROR):
        copies = group.width if group.kind is VdevKind.MIRROR else 1
        return BlockCost(asize, data, asize * (copies - 1), 0, asize * copies,
                         (asize >> SPA_MINBLOCKSHIFT) * deflate_ratio(group, ashift))
    p = group.parity
    if group.kind is VdevKind.RAIDZ:
        parity = p * -(-data_sectors // (group.width - p)) * sector
    else:
        parity = p * -(-data_sectors // group.draid_data) * sector
    return BlockCost(asize, data, parity, asize - data - parity, asize,
                     (asize >> SPA_MINBLOCKSHIFT) * deflate_ratio(group, ashift))


@dataclass(frozen=True, slots=True)
class Footprint:
    """The data on one layout. Byte totals are of the whole pool (all copies) unless named
    otherwise; used_bytes is what zfs list USED would show (deflated, as AVAIL is)."""

    layout: str
    logical_bytes: int          # the files' bytes as written (zfs logicalused less metadata)
    stored_logical_bytes: int   # lsize of the blocks that take space (not holes)
    psize_bytes: int            # after compression and the allocation rounding
    data_bytes: int             # psize in whole sectors
    parity_bytes: float
    padding_bytes: float
    alloc_bytes: float          # zpool list ALLOC: asize summed (one copy of a mirror per disk group)
    raw_bytes: float            # on all disks
    used_bytes: float           # zfs list USED for the data blocks
    metadata_alloc_bytes: float  # estimate: dnodes, directories, indirect blocks
    metadata_used_bytes: float
    holes: int
    embedded: int
    compressed: int
    stored: int
    zero_bytes: int             # lsize of all-zero blocks (holes when compression is on)
    special_data_used_bytes: float = 0.0  # USED of the data blocks on the special vdevs (special_small_blocks)
    metadata_on_special: bool = False     # the layout has a special vdev: the metadata is there

    @property
    def special_used_bytes(self) -> float:
        """USED on the special vdevs: small data blocks and all metadata."""
        return self.special_data_used_bytes + (self.metadata_used_bytes if self.metadata_on_special else 0.0)

    @property
    def total_used_bytes(self) -> float:
        return self.used_bytes + self.metadata_used_bytes

    @property
    def total_alloc_bytes(self) -> float:
        return self.alloc_bytes + self.metadata_alloc_bytes

    @property
    def compression_ratio(self) -> float:
        """As zfs compressratio: logical over physical of the stored blocks."""
        return self.stored_logical_bytes / self.psize_bytes if self.psize_bytes else 1.0

    @property
    def compression_saved_bytes(self) -> int:
        return self.logical_bytes - self.psize_bytes

    @property
    def sector_waste_bytes(self) -> int:
        return self.data_bytes - self.psize_bytes


def footprint(blocks: Mapping[BlockKey, int], layout: Layout, ashift: int, comp: Compression, *,
              shape: TreeShape | None = None, special_small_bytes: int = 0) -> Footprint:
    """The blocks on `layout`. With unlike vdev groups, blocks spread in proportion to each
    group's data disks (ZFS weighs by free space, which is that on an empty pool); with a special
    vdev, metadata and the data blocks of at most special_small_bytes go there (placement())."""
    alloc = pool_alloc(layout, ashift)
    where = placement(layout, special_small_bytes)
    special_used = 0.0
    counts = {"hole": 0, "embedded": 0, "stored": 0, "compressed": 0}
    stored_logical = psize_sum = data = zero = logical = 0
    parity = padding = asize = raw = used = 0.0
    for (lsize, clen), n in blocks.items():
        kind, psize = block_psize(lsize, clen, comp, alloc)
        counts[kind] += n
        logical += lsize * n
        if clen == 0:
            zero += lsize * n
        if kind == "hole":
            continue
        stored_logical += lsize * n
        if kind == "embedded":
            continue
        psize_sum += psize * n
        spread, on_special = where(psize)
        for g, w in spread:
            c = block_cost(g, psize, ashift)
            share = n * w
            parity += c.parity_bytes * share
            padding += c.padding_bytes * share
            asize += c.asize_bytes * share
            raw += c.raw_bytes * share
            used += c.used_bytes * share
            special_used += c.used_bytes * share if on_special else 0.0
        data += roundup(psize, 1 << ashift) * n
    meta_alloc, meta_used = metadata_cost(layout, ashift, shape, comp.floor_to_alloc) if shape else (0.0, 0.0)
    return Footprint(str(layout), logical, stored_logical, psize_sum,
                     data, parity, padding, asize, raw, used, meta_alloc, meta_used, counts["hole"],
                     counts["embedded"], counts["compressed"], counts["stored"], zero, special_used,
                     has_special(layout))


def has_special(layout: Layout) -> bool:
    return any(c.alloc_class == "special" for c in layout.classes)


def metadata_cost(layout: Layout, ashift: int, shape: TreeShape, floor_to_alloc: bool = True) -> tuple[float, float]:
    """(alloc, used) of the tree's metadata: each block of metadata_blocks() (model/footprint_metadata.py)
    compressed with lz4 by zio_write_compress's rules like data (an embeddable one of at most 112 B
    lives in its pointer; one that cannot be stored smaller is stored as is), written twice
    (redundant_metadata=all) on the special class if there is one (spa_preferred_class), else
    spread over the data vdevs."""
    alloc_unit = pool_alloc(layout, ashift)
    special = [c.group for c in layout.classes if c.alloc_class == "special"]
    spread = _spread(special or layout.groups)
    alloc = used = 0.0
    for (lsize, clen, embeddable), n in metadata_blocks(shape).items():
        comp = Compression(True, embedded_data=embeddable, floor_to_alloc=floor_to_alloc)
        _, psize = block_psize(lsize, max(1, clen), comp, alloc_unit)
        if not psize:
            continue
        for g, w in spread:
            c = block_cost(g, psize, ashift)
            alloc += n * METADATA_COPIES * c.asize_bytes * w
            used += n * METADATA_COPIES * c.used_bytes * w
    return alloc, used


def used_coster(layout: Layout, ashift: int, comp: Compression, special_small_bytes: int = 0):
    """A function giving the USED bytes of one block (lsize, clen) on `layout`, cached: the
    sampler prices every sampled file's blocks on every layout."""
    alloc = pool_alloc(layout, ashift)
    where = placement(layout, special_small_bytes)
    cache: dict[BlockKey, float] = {}

    def cost(key: BlockKey) -> float:
        if key not in cache:
            _, psize = block_psize(key[0], key[1], comp, alloc)
            cache[key] = sum(block_cost(g, psize, ashift).used_bytes * w
                             for g, w in where(psize)[0]) if psize else 0.0
        return cache[key]
    return cost


# ---- sampling: a ratio estimate over files, with its interval ------------------------------------

@dataclass(frozen=True, slots=True)
class Estimate:
    value: float
    low: float
    high: float
    exact: bool


def ratio_estimate(sampled_y: list[float], sampled_x: list[float], total_x: float, population: int,
                   z: float = Z95) -> Estimate:
    """The total of y over `population` files from a simple random sample of them, through the
    ratio to x, which is known for every file (here: the allocation if nothing compressed).
    Exact when every file was read; the interval is the usual ratio estimator's normal one
    with the finite-population correction (Cochran, Sampling Techniques, 6.3)."""
    n = len(sampled_y)
    if n != len(sampled_x):
        raise ValueError("sampled_y and sampled_x differ in length")
    if n == 0:
        raise ValueError("no file sampled")
    sx, sy = sum(sampled_x), sum(sampled_y)
    if n >= population or sx == 0:
        value = sy if n >= population else 0.0
        return Estimate(value, value, value, n >= population)
    r = sy / sx
    value = r * total_x
    if n < 2:
        return Estimate(value, 0.0, math.inf, False)
    resid = [y - r * x for y, x in zip(sampled_y, sampled_x)]
    s2 = sum(e * e for e in resid) / (n - 1)
    se = population * math.sqrt((1 - n / population) * s2 / n)
    return Estimate(value, max(0.0, value - z * se), value + z * se, False)


# ---- the data as read, and its footprint on a layout ---------------------------------------------

def merge(into: dict[BlockKey, int], blocks: Mapping[BlockKey, int]) -> dict[BlockKey, int]:
    for k, n in blocks.items():
        into[k] = into.get(k, 0) + n
    return into


@dataclass(frozen=True, slots=True)
class DataBlocks:
    """The user's data as footprint saw it. `blocks` are the read files' blocks with their
    compressed lengths; `read_as_is` the same files as if stored uncompressed; `all_as_is`
    every record that holds data, priced from its size (every record but those in sparse files'
    holes). When every file was read the last two are equal and the footprint is exact; otherwise
    it is scaled by the ratio (sampling, docs/footprint.md). `hole_blocks`: in a sample, the zero
    blocks a copy writes into holes (--sparse fill), counted exactly and added unscaled."""

    blocks: Mapping[BlockKey, int]
    read_as_is: Mapping[BlockKey, int]
    all_as_is: Mapping[BlockKey, int]
    compression: str
    recordsize_bytes: int
    files: int
    directories: int
    pointers: int          # blocks of files of more than one block: one block pointer each
    complete: bool
    shape: TreeShape | None = None   # directories, symlinks, indirect blocks as read (None: from the counts)
    hole_blocks: Mapping[BlockKey, int] = field(default_factory=dict)

    def tree_shape(self) -> TreeShape | None:
        """The metadata's inputs: as read, else spread from the counts (a size list, an old saved
        footprint: directories of equal size, one full L1 per 1,024 pointers); None for zdb's
        histogram, whose blocks hold their metadata already."""
        if self.shape is not None:
            return self.shape
        if not self.files and not self.directories:
            return None
        l1 = -(-self.pointers // POINTERS_PER_INDIRECT)
        return TreeShape(self.files, self.directories,
                         directory_shapes=spread_directories(self.files + self.directories - 1, self.directories),
                         indirect={(1, POINTERS_PER_INDIRECT): l1} if l1 else {})


def _scaled(fp: Footprint, k: float, k_logical: float) -> Footprint:
    """Allocation scaled by k (this layout's USED ratio), logical bytes and counts by k_logical."""
    return Footprint(fp.layout, round(fp.logical_bytes * k_logical), round(fp.stored_logical_bytes * k_logical),
                     round(fp.psize_bytes * k), round(fp.data_bytes * k), fp.parity_bytes * k, fp.padding_bytes * k,
                     fp.alloc_bytes * k, fp.raw_bytes * k, fp.used_bytes * k, fp.metadata_alloc_bytes,
                     fp.metadata_used_bytes, round(fp.holes * k_logical), round(fp.embedded * k_logical),
                     round(fp.compressed * k_logical), round(fp.stored * k_logical), round(fp.zero_bytes * k_logical),
                     fp.special_data_used_bytes * k, fp.metadata_on_special)


def data_footprint(data: DataBlocks, layout: Layout, ashift: int, comp: Compression,
                   special_small_bytes: int = 0) -> Footprint:
    """The data's footprint on `layout`: exact when every file was read, else the read files'
    footprint scaled by (all files as is) / (read files as is), priced on this layout (USED)."""
    fp = footprint(data.blocks, layout, ashift, comp, shape=data.tree_shape(), special_small_bytes=special_small_bytes)
    if data.complete:
        return fp
    off = Compression(False)
    sampled = footprint(data.read_as_is, layout, ashift, off, special_small_bytes=special_small_bytes).used_bytes
    everything = footprint(data.all_as_is, layout, ashift, off, special_small_bytes=special_small_bytes).used_bytes
    logical_read = sum(lsize * n for (lsize, _), n in data.read_as_is.items())
    logical_all = sum(lsize * n for (lsize, _), n in data.all_as_is.items())
    scaled = _scaled(fp, everything / sampled if sampled else 1.0, logical_all / logical_read if logical_read else 1.0)
    if not data.hole_blocks:
        return scaled
    return _plus(scaled, footprint(data.hole_blocks, layout, ashift, comp, special_small_bytes=special_small_bytes))


def _plus(fp: Footprint, more: Footprint) -> Footprint:
    """Two footprints of disjoint blocks on one layout (the metadata is fp's)."""
    return Footprint(fp.layout, fp.logical_bytes + more.logical_bytes,
                     fp.stored_logical_bytes + more.stored_logical_bytes, fp.psize_bytes + more.psize_bytes,
                     fp.data_bytes + more.data_bytes, fp.parity_bytes + more.parity_bytes,
                     fp.padding_bytes + more.padding_bytes, fp.alloc_bytes + more.alloc_bytes,
                     fp.raw_bytes + more.raw_bytes, fp.used_bytes + more.used_bytes, fp.metadata_alloc_bytes,
                     fp.metadata_used_bytes, fp.holes + more.holes, fp.embedded + more.embedded,
                     fp.compressed + more.compressed, fp.stored + more.stored, fp.zero_bytes + more.zero_bytes,
                     fp.special_data_used_bytes + more.special_data_used_bytes, fp.metadata_on_special)
