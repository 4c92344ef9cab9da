"""How big a special vdev must be: the file blocks and the metadata OpenZFS puts on the special
allocation class, as it allocates them there, and the reserve it keeps (docs/capacity.md#special-vdev-sizing).

The rules are OpenZFS 2.1 to 2.3's (read in 2.3.2): `spa_preferred_class()` in module/zfs/spa_misc.c
sends every metadata block and every indirect block of a file to the special class, and a file's
data block there when its physical size (`io_size`, after compression) is at most the dataset's
special_small_blocks, while the class is less than 75 % allocated. 2.4.4 keeps that rule for
files (it extends it to zvols and lets the ZIL use the class; neither is modelled here)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from zfslab.errors import ParamError

KiB = 1024
SPA_MINBLOCKSIZE = 512          # a block's logical size is a multiple of this (dnode_set_blksz)
BPE_PAYLOAD_SIZE = 112          # a block that compresses to this many bytes lives in its pointer
DNODE_BYTES = 512               # dnodesize=legacy
DNODE_BLOCK_BYTES = 16 * KiB    # DNODE_BLOCK_SHIFT 14: 32 legacy dnodes per block
INDIRECT_BLOCK_BYTES = 128 * KiB  # DN_MAX_INDBLKSHIFT 17
BPS_PER_INDIRECT = INDIRECT_BLOCK_BYTES // 128  # 1024 block pointers of 128 B
METADATA_COPIES = 2             # redundant_metadata=all: dmu_write_policy() adds one copy to metadata
RESERVE_PCT = 25                # zfs_special_class_metadata_reserve_pct (spa_misc.c)
MAX_SMALL_BLOCKS = 16 << 20     # special_small_blocks: 0 or a power of two up to the pool's maxblocksize
                                # (libzfs zfs_valid_proplist(), 2.3; zfs_prop.c's "512 to 1M" text is stale)
ZDB_HISTOGRAM_MAX_BYTES = 128 * KiB  # zdb -bbbb's per-type psize histogram ends at SPA_OLD_MAXBLOCKSIZE
DEFAULT_THRESHOLDS = (0, 4 * KiB, 8 * KiB, 16 * KiB, 32 * KiB, 64 * KiB)

# Estimates (metadata blocks are lz4-compressed; how well depends on their contents):
# a 16 KiB block of legacy dnodes of plain files compresses to about this share of its size,
DNODE_BLOCK_COMPRESSED_FRACTION = 0.25
# an indirect block keeps about this many bytes per block pointer it holds (the unused tail is
# zeros and compresses away; a pointer's 32 B checksum and its DVA's offset do not compress, the
# properties and birth repeat from the pointer before),
INDIRECT_BYTES_PER_POINTER = 48
# a directory takes about this many bytes per entry (a microzap entry is 64 B, mostly the name),
DIRECTORY_BYTES_PER_ENTRY = 32
# and the pool's own objects (the MOS: space maps, configuration, history; 3 copies) about this
# much: 0.6 MiB on a new pool of raidz1:3 + special mirror:2, growing with metaslabs written to.
MOS_BYTES = 1 << 20
META_DNODE_LEVELS = 6           # the meta-dnode's tree is built for 2^48 objects: L1 to L5 exist always


def roundup(n: int, multiple: int) -> int:
    return -(-n // multiple) * multiple


@dataclass(frozen=True, slots=True)
class SpecialSettings:
    """The dataset and vdev properties the answer depends on."""

    recordsize_bytes: int = 128 * KiB
    ashift: int = 12
    mirror_width: int = 2            # disks of the special mirror: raw = usable x width
    compression_ratio: float = 1.0   # 1.0: compression=off; R: lz4 shrinks file data R times
    growth_fraction: float = 0.0     # room to grow, on top of what is needed today
    files_per_directory: int = 1000  # only for the directory estimate (a size list has no directories)

    def __post_init__(self) -> None:
        if not (SPA_MINBLOCKSIZE <= self.recordsize_bytes <= 16 << 20) or self.recordsize_bytes & (self.recordsize_bytes - 1):
            raise ParamError("recordsize", str(self.recordsize_bytes), "a power of two from 512 to 16M")
        if not 9 <= self.ashift <= 16:
            raise ParamError("ashift", str(self.ashift), "from 9 to 16")
        if not 1 <= self.mirror_width <= 4:
            raise ParamError("mirror_width", str(self.mirror_width), "from 1 to 4 disks")
        if not (math.isfinite(self.compression_ratio) and 1.0 <= self.compression_ratio <= 100.0):
            raise ParamError("compression_ratio", str(self.compression_ratio), "a ratio from 1 to 100")
        if not (math.isfinite(self.growth_fraction) and 0.0 <= self.growth_fraction <= 100.0):
            raise ParamError("growth_fraction", str(self.growth_fraction), "from 0 to 100")
        if not 1 <= self.files_per_directory <= 10**9:
            raise ParamError("files_per_directory", str(self.files_per_directory), "from 1 to 10^9")

    @property
    def sector_bytes(self) -> int:
        return 1 << self.ashift


def check_threshold(small_blocks_bytes: int) -> int:
    """special_small_blocks as OpenZFS 2.3 accepts it: 0, or a power of two from 512 to 16M."""
    t = small_blocks_bytes
    if t != 0 and (t < SPA_MINBLOCKSIZE or t > MAX_SMALL_BLOCKS or t & (t - 1)):
        raise ParamError("special_small_blocks", str(t), "0, or a power of two from 512 to 16M")
    return t


def block_psize(data_bytes: int, lsize: int, s: SpecialSettings) -> int:
    """Physical bytes of one file block of `lsize` holding `data_bytes` (the rest zeros): 0 when it
    is embedded in its pointer; compressed as zio_write_compress() does (at least 12.5 % saved,
    rounded up to a sector, else stored as is)."""
    if s.compression_ratio == 1.0:
        return lsize
    if data_bytes == 0:
        return 0  # an all-zero block is a hole
    compressed = math.ceil(data_bytes / s.compression_ratio)
    if compressed <= BPE_PAYLOAD_SIZE and compressed < lsize:
        return 0  # embedded in its block pointer (BP_EMBEDDED_TYPE_DATA): no allocation
    limit = lsize - (lsize >> 3)
    limit -= limit % s.sector_bytes
    if compressed > limit:
        return lsize
    rounded = max(roundup(compressed, s.sector_bytes), s.sector_bytes)
    return lsize if rounded >= lsize else rounded


def file_blocks(file_bytes: int, s: SpecialSettings) -> dict[int, int]:
    """The psize of each data block of one file -> how many: a file up to recordsize is one block
    of its size rounded up to 512 B; a larger one is blocks of recordsize (the last one padded)."""
    if file_bytes == 0:
        return {}
    rs = s.recordsize_bytes
    if file_bytes <= rs:
        lsize = roundup(file_bytes, SPA_MINBLOCKSIZE)
        psize = block_psize(file_bytes, lsize, s)
        return {psize: 1}
    full, tail = divmod(file_bytes, rs)
    out: dict[int, int] = {}
    if full:
        out[block_psize(rs, rs, s)] = full
    if tail:
        p = block_psize(tail, rs, s)
        out[p] = out.get(p, 0) + 1
    return out


def indirect_asize(pointers: int, s: SpecialSettings) -> int:
    """Allocated bytes (one copy) of the indirect blocks above `pointers` block pointers (levels 1,
    2 ... up to the one the dnode's own pointer holds); none for a single block (its pointer is in
    the dnode). Closed form per level: a 2^63-byte file costs six steps, not 2^44 list items."""
    return int(_indirect_asize_array(np.array([pointers], dtype=np.int64), s)[0])


def _indirect_asize_array(pointers: np.ndarray, s: SpecialSettings) -> np.ndarray:
    sector = s.sector_bytes
    full = roundup(_indirect_psize(BPS_PER_INDIRECT, s), sector)
    total = np.zeros_like(pointers)
    p = pointers.copy()
    while (active := p > 1).any():   # at most 7 levels: 2^54 pointers / 1024 per level
        blocks, last = np.divmod(p, BPS_PER_INDIRECT)
        compressed = last * INDIRECT_BYTES_PER_POINTER
        last_psize = np.where(compressed > INDIRECT_BLOCK_BYTES - (INDIRECT_BLOCK_BYTES >> 3), INDIRECT_BLOCK_BYTES,
                              np.maximum(_roundup_array(compressed, sector), sector))
        total += np.where(active, blocks * full + np.where(last > 0, _roundup_array(last_psize, sector), 0), 0)
        p = np.where(active, blocks + (last > 0), p)
    return total


def _roundup_array(n: np.ndarray, multiple: int) -> np.ndarray:
    return -(-n // multiple) * multiple


def meta_dnode_indirect_asize(dnode_blocks: int, s: SpecialSettings) -> int:
    """Allocated bytes (one copy) of the indirect blocks above a dataset's dnode blocks: every
    level from L1 to L5 has at least one block, whatever the number of objects."""
    total, pointers = 0, dnode_blocks
    for _ in range(1, META_DNODE_LEVELS):
        blocks, last = divmod(pointers, BPS_PER_INDIRECT)
        total += blocks * roundup(_indirect_psize(BPS_PER_INDIRECT, s), s.sector_bytes)
        if last or not blocks:
            total += roundup(_indirect_psize(max(last, 1), s), s.sector_bytes)
        pointers = max(1, blocks + (1 if last else 0))
    return total


def _indirect_psize(pointers: int, s: SpecialSettings) -> int:
    compressed = pointers * INDIRECT_BYTES_PER_POINTER
    limit = INDIRECT_BLOCK_BYTES - (INDIRECT_BLOCK_BYTES >> 3)
    if compressed > limit:
        return INDIRECT_BLOCK_BYTES
    return max(roundup(compressed, s.sector_bytes), s.sector_bytes)


@dataclass(frozen=True, slots=True)
class MetadataPart:
    name: str
    asize_bytes: int      # on the special vdev, every copy, rounded to its sectors
    measured: bool        # from zdb (True) or estimated from the file sizes


@dataclass(frozen=True, slots=True)
class ThresholdRow:
    """The special vdev for one special_small_blocks value."""

    small_blocks_bytes: int        # special_small_blocks (0: metadata only)
    small_block_count: int         # file blocks that go to the special vdev
    small_asize_bytes: int         # their allocated bytes there
    metadata_asize_bytes: int
    needed_bytes: int              # what ZFS allocates on the special vdev for this data
    recommended_bytes: int         # the special vdev's zpool list SIZE to ask for (reserve and growth)
    raw_bytes: int                 # the disks behind it: recommended x mirror width
    exact_up_to: bool = True       # False: a zdb histogram bin straddles the threshold (upper bound)


@dataclass(frozen=True, slots=True)
class SpecialEstimate:
    source: str                    # "files" or "zdb"
    settings: SpecialSettings
    file_count: int
    data_bytes: int                # logical bytes of file data (files) or of all blocks (zdb)
    metadata: tuple[MetadataPart, ...]
    rows: tuple[ThresholdRow, ...]
    chosen: ThresholdRow

    @property
    def metadata_asize_bytes(self) -> int:
        return sum(p.asize_bytes for p in self.metadata)


def recommended_bytes(metadata: int, small: int, s: SpecialSettings) -> int:
    """Small blocks go to the special class only while it is under (100 - 25) % allocated, so the
    vdev must be (metadata + small) / 0.75 for all of them to land there; metadata alone needs no
    reserve (it overflows to the normal class, it is never refused). Growth on top."""
    need = metadata + small
    base = need if small == 0 else math.ceil(need * 100 / (100 - RESERVE_PCT))
    return math.ceil(base * (1 + s.growth_fraction))


def _row(threshold: int, count: int, small: int, metadata: int, s: SpecialSettings, exact: bool = True) -> ThresholdRow:
    rec = recommended_bytes(metadata, small, s)
    return ThresholdRow(threshold, count, small, metadata, metadata + small, rec, rec * s.mirror_width, exact)


def thresholds_with(chosen: int, extra: tuple[int, ...]) -> tuple[int, ...]:
    """The table's thresholds: the defaults and the chosen one (checked)."""
    return tuple(sorted(set(extra) | {check_threshold(chosen)}))


def exact_dot(a: np.ndarray, b: np.ndarray) -> int:
    """sum(a * b) of two int64 arrays of values >= 0, exactly: a 2^63-byte size times a count of
    10^12 overflows int64, so such sums go by 16-bit limbs (each partial sum stays under 2^56)."""
    if a.size == 0:
        return 0
    if int(a.max()) * int(b.max()) * a.size < 2**63:
        return int(np.dot(a, b))
    total = 0
    for i in range(4):
        a_limb = (a >> (16 * i)) & 0xFFFF
        for j in range(4):
            b_limb = (b >> (16 * j)) & 0xFFFF
            total += int(np.dot(a_limb, b_limb)) << (16 * (i + j))
    return total


def _psize_array(data: np.ndarray, lsize: np.ndarray, s: SpecialSettings) -> np.ndarray:
    """block_psize() over arrays (data and lsize are at most recordsize, 16 MiB: exact in float64)."""
    if s.compression_ratio == 1.0:
        return lsize.copy()
    sector = s.sector_bytes
    compressed = np.ceil(data / s.compression_ratio).astype(np.int64)
    limit = lsize - (lsize >> 3)
    limit -= limit % sector
    rounded = np.maximum(_roundup_array(compressed, sector), sector)
    out = np.where(rounded >= lsize, lsize, rounded)
    out = np.where(compressed > limit, lsize, out)                       # the order of block_psize()'s tests,
    out = np.where((compressed <= BPE_PAYLOAD_SIZE) & (compressed < lsize), 0, out)  # the last one first
    return np.where(data == 0, 0, out)


class SizeTally:
    """What from_file_sizes() needs of a size list, added up chunk by chunk: every figure is a sum
    over files, so a list of any length takes the memory of one chunk (arrays of sizes and counts)."""

    __slots__ = ("settings", "thresholds", "file_count", "data_bytes", "indirect_asize", "small")

    def __init__(self, s: SpecialSettings, thresholds: Iterable[int]) -> None:
        self.settings = s
        self.thresholds = tuple(thresholds)
        self.file_count = self.data_bytes = self.indirect_asize = 0
        self.small = {t: [0, 0] for t in self.thresholds}   # threshold -> [blocks, allocated bytes]

    def add(self, sizes: np.ndarray, counts: np.ndarray) -> None:
        """Files of sizes[i] bytes, counts[i] of each (int64, 0 to 2^63 - 1 and 0 to 10^12)."""
        s, sector, rs = self.settings, self.settings.sector_bytes, self.settings.recordsize_bytes
        keep = counts > 0
        sizes, counts = sizes[keep].astype(np.int64), counts[keep].astype(np.int64)
        self.file_count += exact_dot(counts, np.ones_like(counts))
        self.data_bytes += exact_dot(sizes, counts)
        one = (sizes > 0) & (sizes <= rs)       # a file up to recordsize: one block of its size
        one_psize = _psize_array(sizes[one], _roundup_array(sizes[one], SPA_MINBLOCKSIZE), s)
        big = sizes > rs                        # larger: full recordsize blocks and a padded tail
        full, tail = np.divmod(sizes[big], rs)
        big_counts = counts[big]
        full_psize = block_psize(rs, rs, s)
        tail_psize = np.where(tail > 0, _psize_array(tail, np.full_like(tail, rs), s), 0)
        self.indirect_asize += exact_dot(_indirect_asize_array(full + (tail > 0), s), big_counts)
        full_blocks = exact_dot(full, big_counts)
        for t, acc in self.small.items():
            if t == 0:
                continue
            for psize, n in ((one_psize, counts[one]), (tail_psize, big_counts)):
                picked = (psize > 0) & (psize <= t)
                acc[0] += exact_dot(picked.astype(np.int64), n)
                acc[1] += exact_dot(np.where(picked, _roundup_array(psize, sector), 0), n)
            if 0 < full_psize <= t:
                acc[0] += full_blocks
                acc[1] += full_blocks * roundup(full_psize, sector)


def from_file_sizes(sizes: Mapping[int, int], s: SpecialSettings, *, small_blocks_bytes: int,
                    thresholds: tuple[int, ...] = DEFAULT_THRESHOLDS) -> SpecialEstimate:
    """The special vdev for files of these sizes (size in bytes -> how many files)."""
    tally = SizeTally(s, thresholds_with(small_blocks_bytes, thresholds))
    tally.add(np.fromiter(sizes.keys(), np.int64, len(sizes)), np.fromiter(sizes.values(), np.int64, len(sizes)))
    return from_tally(tally, small_blocks_bytes=small_blocks_bytes)


def from_tally(tally: SizeTally, *, small_blocks_bytes: int) -> SpecialEstimate:
    """The special vdev for the files a SizeTally added up (its thresholds must hold small_blocks_bytes)."""
    s, sector = tally.settings, tally.settings.sector_bytes
    file_count = tally.file_count
    directories = max(1, -(-file_count // s.files_per_directory))
    objects = file_count + directories
    dnode_blocks = -(-objects * DNODE_BYTES // DNODE_BLOCK_BYTES)
    dnode_psize = max(roundup(math.ceil(DNODE_BLOCK_BYTES * DNODE_BLOCK_COMPRESSED_FRACTION), sector), sector)
    dnode_asize = dnode_blocks * dnode_psize + meta_dnode_indirect_asize(dnode_blocks, s)
    per_dir = -(-objects // directories)
    dir_asize = directories * max(roundup(per_dir * DIRECTORY_BYTES_PER_ENTRY, sector), sector)
    metadata = (
        MetadataPart("dnodes", METADATA_COPIES * dnode_asize, False),
        MetadataPart("indirect blocks", METADATA_COPIES * tally.indirect_asize, False),
        MetadataPart("directories", METADATA_COPIES * dir_asize, False),
        MetadataPart("MOS", MOS_BYTES, False),
    )
    meta = sum(p.asize_bytes for p in metadata)
    rows = [_row(t, *tally.small[t], meta, s) for t in sorted(tally.thresholds)]
    chosen = next(r for r in rows if r.small_blocks_bytes == small_blocks_bytes)
    return SpecialEstimate("files", s, file_count, tally.data_bytes, metadata, tuple(rows), chosen)


@dataclass(frozen=True, slots=True)
class ZdbBlockStats:
    """What `zdb -bb POOL` measured: the Metadata Total row and the psize block size histogram."""

    metadata_count: int
    metadata_psize_bytes: int
    metadata_asize_bytes: int
    total_lsize_bytes: int
    psize_bins: tuple[tuple[int, int, int], ...]   # (bin lower bound, blocks, psize bytes), bins of [2^k, 2^(k+1))
    # zdb -bbbb: the file data blocks (level 0 of the data types) by psize in 512 B sectors;
    # the last one, 257, holds every block over 128 KiB (zdb's PSIZE_HISTO_SIZE)
    data_psize_sectors: tuple[tuple[int, int], ...] | None = None

    def __post_init__(self) -> None:
        for name in ("metadata_count", "metadata_psize_bytes", "metadata_asize_bytes", "total_lsize_bytes"):
            if getattr(self, name) < 0:
                raise ParamError(name, str(getattr(self, name)), "a count of 0 or more")


def from_zdb(stats: ZdbBlockStats, s: SpecialSettings, *, small_blocks_bytes: int,
             thresholds: tuple[int, ...] = DEFAULT_THRESHOLDS) -> SpecialEstimate:
    """The special vdev for a pool zdb traversed: its metadata as measured (ASIZE, every copy), and
    the blocks of its psize histogram at or under each threshold less the metadata blocks."""
    sector = s.sector_bytes
    # the histogram counts every block, metadata too: take the metadata blocks out of the
    # smallest bins of at least a sector first (compressed metadata is rounded to sectors)
    bins = []
    left_count, left_bytes = stats.metadata_count, stats.metadata_psize_bytes
    for low, count, size in sorted(stats.psize_bins):
        if low >= sector and left_count > 0 and count > 0:
            take = min(count, left_count)
            take_bytes = min(size, left_bytes, round(size * take / count)) if take < count else min(size, left_bytes)
            count, size = count - take, size - take_bytes
            left_count, left_bytes = left_count - take, left_bytes - take_bytes
        bins.append((low, count, size))
    meta = stats.metadata_asize_bytes
    metadata = (MetadataPart("zdb ASIZE", meta, True),)
    rows = []
    if stats.data_psize_sectors is not None:
        for t in thresholds_with(small_blocks_bytes, thresholds):
            picked = [(n, k) for n, k in stats.data_psize_sectors if t and 0 < n * SPA_MINBLOCKSIZE <= t]
            exact = not (t > ZDB_HISTOGRAM_MAX_BYTES and any(n > ZDB_HISTOGRAM_MAX_BYTES // SPA_MINBLOCKSIZE
                                                              for n, _ in stats.data_psize_sectors))
            rows.append(_row(t, sum(k for _, k in picked),
                             sum(k * roundup(n * SPA_MINBLOCKSIZE, sector) for n, k in picked), meta, s, exact))
        chosen = next(r for r in rows if r.small_blocks_bytes == small_blocks_bytes)
        return SpecialEstimate("zdb", s, 0, stats.total_lsize_bytes, metadata, tuple(rows), chosen)
    for t in thresholds_with(small_blocks_bytes, thresholds):
        count = asize = 0
        exact = True
        for low, n, size in bins:
            if t == 0 or n == 0 or low > t:
                continue
            if low == t and 2 * low > SPA_MINBLOCKSIZE:
                exact = False  # the bin [t, 2t) holds blocks over t too: counted whole, an upper bound
            count += n
            # a block under a sector takes a sector; over it, half a sector of rounding on average
            asize += n * sector if 2 * low <= sector else size + n * (sector - SPA_MINBLOCKSIZE) // 2
        rows.append(_row(t, count, asize, meta, s, exact))
    chosen = next(r for r in rows if r.small_blocks_bytes == small_blocks_bytes)
    return SpecialEstimate("zdb", s, 0, stats.total_lsize_bytes, metadata, tuple(rows), chosen)
