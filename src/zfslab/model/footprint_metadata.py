"""The metadata a ZPL dataset writes for a tree, block by block, as OpenZFS 2.x lays it out
(docs/footprint.md#metadata). Pure: the shapes come from the reader; the blocks go back to
model/footprint.py, which prices them as it prices data (zio_write_compress, then asize).

Each metadata block is (lsize, clen, embeddable): its logical size, the length lz4 gives it (every
metadata block is lz4-compressed whatever the dataset's compression, dmu_write_policy() with
ZIO_COMPRESS_ON), and whether it may live in its block pointer (zio_write_compress: level 0 only,
and not a dnode block, DMU_OT_HAS_FILL). Every one is written twice (redundant_metadata=all:
dmu_write_policy() gives metadata os_copies + 1). The compressed lengths are counts of the bytes
that differ from one entry to the next (a checksum, an offset, a name), which is what lz4 cannot
match, plus its sequence overhead; the allocation rounds them up to whole sectors, so they matter
only at small ashifts.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

# --- dnodes (include/sys/dnode.h) ---------------------------------------------------------------
DNODE_BYTES = 512                 # dnodesize=legacy, the default
DNODE_BLOCK_BYTES = 16384         # DNODE_BLOCK_SHIFT 14: 32 dnodes a block of the meta-dnode
DNODES_PER_BLOCK = DNODE_BLOCK_BYTES // DNODE_BYTES
# lz4 of a dnode among its neighbours: what differs from the dnode before it is its block
# pointer's checksum (32 B) and DVA offset (~6 B), its size, used and maxblkid (~6 B), the
# nanoseconds of four timestamps (~16 B) and part of their seconds, in ~6 literal runs of
# ~4 B of lz4 framing each (dnode_phys_t, blkptr_t, the ZPL's SA layout)
DNODE_COMPRESSED_BYTES = 88
META_DNODE_LEVELS = 5             # dmu_objset_create_impl: indirect levels for DN_MAX_OBJECT (2^48) objects
ZPL_BASE_OBJECTS = 8              # object 0 unused, then the master node, SA master/registry/layouts,
                                  # the unlinked set, the shares directory, the root directory
# --- indirect blocks (dnode.h, zfs_default_ibs) -------------------------------------------------
INDIRECT_BLOCK_BYTES = 1 << 17    # DN_MAX_INDBLKSHIFT 17: every ZPL object's indirect blocks
BLOCK_POINTER_BYTES = 128         # SPA_BLKPTRSHIFT 7
POINTERS_PER_INDIRECT = INDIRECT_BLOCK_BYTES // BLOCK_POINTER_BYTES   # 1,024
# lz4 of a block pointer among its neighbours: the checksum (32 B) and the DVA's offset (~6 B)
# differ, the rest (sizes, birth txg, fill) repeats; one DVA for a data block, two for metadata
POINTER_COMPRESSED_BYTES = 48
METADATA_POINTER_COMPRESSED_BYTES = 64
# --- ZAPs: directories (zap_impl.h, zap_leaf.h, zap_micro.c) ------------------------------------
MZAP_ENT_LEN = 64                 # one microzap entry; the first chunk is the header
MZAP_NAME_LEN = 50                # a name of this length or longer makes the directory a fat ZAP
MZAP_MAX_BLKSZ = 128 << 10        # zap_micro_max_size: a microzap grows by 512 B up to this
SPA_MINBLOCKSIZE = 512
# where the names are not known (a size list): the block type, salt and flags of mzap_phys_t, and an
# entry's object number (~3 B) and lz4's framing beside its name. Where they are, the reader
# compresses the block itself (microzap_block)
MZAP_HEADER_COMPRESSED_BYTES = 24
MZAP_ENTRY_OVERHEAD_BYTES = 10
ZBT_MICRO = (1 << 63) + 3          # zap_impl.h: mz_block_type of a microzap
MZAP_HEADER_BYTES = 64             # mzap_phys_t before its first chunk: type, salt, normflags, 5 pads
FZAP_BLOCK_BYTES = 1 << 14         # fzap_default_block_shift 14: the header and each leaf
ZAP_LEAF_CHUNKSIZE = 24
ZAP_LEAF_ARRAY_BYTES = ZAP_LEAF_CHUNKSIZE - 3
ZAP_LEAF_HASH_ENTRIES = 1 << (14 - 5)                   # ZAP_LEAF_HASH_SHIFT(bs) = bs - 5
ZAP_LEAF_CHUNKS = (FZAP_BLOCK_BYTES - 2 * ZAP_LEAF_HASH_ENTRIES) // ZAP_LEAF_CHUNKSIZE - 2   # 638
FZAP_HEADER_COMPRESSED_BYTES = 256  # zap_phys_t and its embedded pointer table of a few leaf numbers
# a leaf entry: its hash (8 B), cd and chunk numbers (~4 B) and hash-table slot (2 B) differ, the
# name is literal, the value (an object number) ~3 B, plus lz4's framing
FZAP_ENTRY_OVERHEAD_BYTES = 30
FZAP_LEAF_HEADER_COMPRESSED_BYTES = 64
# --- the ZPL's own blocks (zfs_create_fs) -------------------------------------------------------
# ZAPs of an empty dataset too big for a block pointer: the master node (eight names of 10-20 B),
# the SA attribute registry (about twenty) and the SA layouts. The SA master node (two entries), the
# unlinked set, the shares directory, the user/group accounting ZAPs (an entry or two) and an empty
# root directory compress to 112 B or less: embedded. With the objset and the meta-dnode's five
# indirect levels and first dnode block, 10 blocks of the dataset's own
ZPL_BASE_ZAP_BLOCKS = 3
OBJSET_PHYS_BYTES = 4096           # OBJSET_PHYS_SIZE_V3
# --- symlinks (zfs_sa.c, zfs_sa.h) --------------------------------------------------------------
# a symlink's target lives in its dnode's bonus (SA_ZPL_SYMLINK): 320 B of bonus less the SA header
# and the ZPL's fixed attributes (152 B); a longer target goes to a spill block of 512 B
SYMLINK_IN_BONUS_BYTES = 168
SPILL_BLOCK_BYTES = 512
SA_MAGIC = 0x2F505A                # sa_impl.h: sa_hdr_phys_t.sa_magic
SA_HEADER_BYTES = 8                # sa_magic, sa_layout_info, one sa_lengths[] entry (the target's)

MetaBlock = tuple[int, int, bool]   # (lsize, clen, embeddable)
# (entries, bytes of their names, a name of MZAP_NAME_LEN or more, the lz4 length of its microzap
# as built from its names by microzap_block, 0 where the names are not known)
DirShape = tuple[int, int, bool, int]
IndirectKey = tuple[int, int]       # (level, block pointers it holds)


@dataclass(frozen=True, slots=True)
class TreeShape:
    """What the metadata depends on: the objects, each directory's entries, each file's indirect
    blocks (from which of its blocks are written), the symlinks whose target spills."""

    files: int
    directories: int
    symlinks: int = 0
    other_objects: int = 0          # FIFOs, sockets, devices: a dnode and an entry each
    long_symlinks: int = 0          # target longer than SYMLINK_IN_BONUS_BYTES: a spill block each
    directory_shapes: Mapping[DirShape, int] = field(default_factory=dict)
    indirect: Mapping[IndirectKey, int] = field(default_factory=dict)
    # the long symlinks' spill blocks as read: (lsize, lz4 length of spill_block) -> count; empty where
    # the targets were not read (each then priced as 512 B that do not compress)
    spills: Mapping[tuple[int, int], int] = field(default_factory=dict)

    @property
    def objects(self) -> int:
        return self.files + self.directories + self.symlinks + self.other_objects


def _add(into: dict, key, n: int) -> None:
    if n:
        into[key] = into.get(key, 0) + n


def indirect_levels(ranges: Iterable[tuple[int, int]], max_blkid: int) -> dict[IndirectKey, int]:
    """The indirect blocks of an object whose written (non-hole) level-0 blocks are the sorted,
    disjoint index ranges [a, b): per level, how many blocks hold how many pointers. An indirect
    block all of whose children are holes is not written (dbuf_write_children_ready zeroes it, and
    zeros compress to a hole). An object of one block (max_blkid 0) has none: its one block pointer
    is in the dnode (dn_nblkptr 1 beside the ZPL's 320 B bonus). Levels stop at one block, the one
    the dnode points to (dnode_increase_indirection)."""
    out: dict[IndirectKey, int] = {}
    if max_blkid <= 0:
        return out
    current = [(a, b) for a, b in ranges if b > a]
    span = max_blkid + 1
    level = 0
    while span > 1:
        level += 1
        span = -(-span // POINTERS_PER_INDIRECT)
        partial: dict[int, int] = {}
        parents: list[tuple[int, int]] = []
        for a, b in current:
            first, last = a // POINTERS_PER_INDIRECT, (b - 1) // POINTERS_PER_INDIRECT
            if first == last:
                partial[first] = partial.get(first, 0) + b - a
            else:
                partial[first] = partial.get(first, 0) + (first + 1) * POINTERS_PER_INDIRECT - a
                partial[last] = partial.get(last, 0) + b - last * POINTERS_PER_INDIRECT
                _add(out, (level, POINTERS_PER_INDIRECT), last - first - 1)
            if parents and parents[-1][1] >= first:
                parents[-1] = (parents[-1][0], max(parents[-1][1], last + 1))
            else:
                parents.append((first, last + 1))
        for n in partial.values():
            _add(out, (level, n), 1)
        current = parents
    return out


def dense_indirect(blocks: int) -> dict[IndirectKey, int]:
    """indirect_levels of an object whose blocks 0..blocks-1 are all written."""
    return indirect_levels([(0, blocks)], blocks - 1) if blocks > 1 else {}


def merge_indirect(into: dict[IndirectKey, int], more: Mapping[IndirectKey, int], times: int = 1) -> None:
    for k, n in more.items():
        _add(into, k, n * times)


def microzap_block(names: Sequence[bytes], types: Sequence[int], first_object: int) -> bytes:
    """The bytes of a directory's microzap as zap_micro.c writes them (mzap_phys_t, then one 64 B
    mzap_ent_phys_t per entry in the order they were added, zeros up to the block's size), so that
    the reader can give it to lz4 itself: whether a small directory fits in its block pointer (112 B
    compressed) decides one allocation, twice, and a formula cannot tell. An entry's value is the
    ZPL's ZFS_DIRENT_MAKE(type, object) (zfs_dir.c), its objects numbered in order from first_object
    (dmu_object_alloc hands out the next free dnode); the salt is random in ZFS, any fixed 8 bytes
    here."""
    entries = len(names)
    lsize = SPA_MINBLOCKSIZE * max(1, -(-(entries + 1) * MZAP_ENT_LEN // SPA_MINBLOCKSIZE))
    out = bytearray(struct.pack("<QQQ40x", ZBT_MICRO, 0x5A17_D1E5_0FF1_CE5A, 0))
    for i, (name, kind) in enumerate(zip(names, types)):
        out += struct.pack("<QIH50s", (kind << 60) | (first_object + i), 0, 0, name[:MZAP_NAME_LEN - 1])
    return bytes(out.ljust(lsize, b"\0"))


def spill_block(target: bytes) -> bytes:
    """A long symlink's spill block (zfs_sa.c, sa.c): the SA header and the target, zeros up to
    the next 512 B (sa_resize_spill rounds the spill to SPA_MINBLOCKSIZE)."""
    used = SA_HEADER_BYTES + len(target)
    lsize = SPILL_BLOCK_BYTES * max(1, -(-used // SPILL_BLOCK_BYTES))
    return (struct.pack("<IHH", SA_MAGIC, (SA_HEADER_BYTES >> 3) << 10, len(target)) + target).ljust(lsize, b"\0")


def fat_zap_leaves(entries: int, chunks_per_entry: int) -> int:
    """How many leaves a fat ZAP of this many entries has. A leaf splits in two when an entry does
    not fit (zap_leaf.c, zap.c zap_expand_leaf), and entries go to leaves by their hash's leading
    bits (zap_hash: a salted CRC-64 of the name), so each leaf of depth d holds a binomial share
    n / 2^d of the entries: every leaf splits at nearly the same size, and the count is the power
    of two whose leaves hold the mean, plus the leaves of that depth whose share overflows, less the
    leaves one level up whose share still fits (a normal approximation of each binomial)."""
    if entries <= 0:
        return 1
    capacity = ZAP_LEAF_CHUNKS // chunks_per_entry          # entries a leaf holds
    depth = max(0, math.ceil(math.log2(entries / capacity))) if entries > capacity else 0
    leaves = 2.0 ** depth

    def p_more_than(cap: int, p: float) -> float:
        mean, sd = entries * p, math.sqrt(entries * p * (1 - p)) or 1e-9
        return 0.5 * math.erfc((cap + 0.5 - mean) / (sd * math.sqrt(2)))

    over = leaves * p_more_than(capacity, 1 / leaves) if depth else 0.0
    still_fit = leaves / 2 * (1 - p_more_than(capacity, 2 / leaves)) if depth else 0.0
    return max(1, round(leaves + over - still_fit))


def directory_blocks(entries: int, name_bytes: int, long_name: bool, mzap_clen: int = 0) -> dict[MetaBlock, int]:
    """A ZPL directory's ZAP. A microzap (zap_micro.c) while every name is shorter than
    MZAP_NAME_LEN and it fits in zap_micro_max_size: one block of 512 B per 8 entries (64 B each,
    the first chunk being the header), grown 512 B at a time (zap_lockdir_impl), compressed to
    mzap_clen where the reader built it (microzap_block). Otherwise a fat ZAP (mzap_upgrade,
    zap.c): a 16K header and 16K leaves, each leaf holding ZAP_LEAF_CHUNKS chunks of 24 B, an entry
    taking one chunk, its name's chunks of 21 B and one for its value (fat_zap_leaves); its blocks
    have an indirect block like any object's."""
    out: dict[MetaBlock, int] = {}
    if not long_name and entries + 1 <= MZAP_MAX_BLKSZ // MZAP_ENT_LEN:
        lsize = SPA_MINBLOCKSIZE * max(1, -(-(entries + 1) * MZAP_ENT_LEN // SPA_MINBLOCKSIZE))
        clen = mzap_clen or MZAP_HEADER_COMPRESSED_BYTES + name_bytes + entries * MZAP_ENTRY_OVERHEAD_BYTES
        _add(out, (lsize, min(clen, lsize), True), 1)
        return out
    mean_name = name_bytes / entries if entries else 0.0
    chunks_per_entry = 2 + math.ceil((mean_name + 1) / ZAP_LEAF_ARRAY_BYTES)
    leaves = fat_zap_leaves(entries, chunks_per_entry)
    per_leaf = FZAP_LEAF_HEADER_COMPRESSED_BYTES + (name_bytes + entries * FZAP_ENTRY_OVERHEAD_BYTES) / leaves
    _add(out, (FZAP_BLOCK_BYTES, FZAP_HEADER_COMPRESSED_BYTES, True), 1)
    _add(out, (FZAP_BLOCK_BYTES, min(FZAP_BLOCK_BYTES, math.ceil(per_leaf)), True), leaves)
    for (level, n), count in dense_indirect(1 + leaves).items():
        _add(out, (INDIRECT_BLOCK_BYTES, n * METADATA_POINTER_COMPRESSED_BYTES, False), count)
    return out


def dnode_blocks(objects: int) -> dict[MetaBlock, int]:
    """The meta-dnode's level-0 blocks for this many objects (the ZPL's own included), filled in
    order (dmu_object_alloc), 32 to a block, and its indirect blocks: five levels for a dataset
    (META_DNODE_LEVELS), one block each until an L1 holds 1,024 dnode blocks."""
    out: dict[MetaBlock, int] = {}
    total = objects + ZPL_BASE_OBJECTS
    full, rest = divmod(total, DNODES_PER_BLOCK)
    _add(out, (DNODE_BLOCK_BYTES, DNODES_PER_BLOCK * DNODE_COMPRESSED_BYTES, False), full)
    _add(out, (DNODE_BLOCK_BYTES, rest * DNODE_COMPRESSED_BYTES, False), 1 if rest else 0)
    blocks = full + (1 if rest else 0)
    per_level = dense_indirect(blocks)
    for level in range(1, META_DNODE_LEVELS + 1):
        counts = {n: c for (lv, n), c in per_level.items() if lv == level} or {1: 1}
        for n, c in counts.items():
            _add(out, (INDIRECT_BLOCK_BYTES, n * METADATA_POINTER_COMPRESSED_BYTES, False), c)
    return out


def metadata_blocks(shape: TreeShape) -> dict[MetaBlock, int]:
    """Every metadata block (one copy) the tree's dataset holds: its dnodes, directories, the
    files' indirect blocks, symlinks' spill blocks, and the dataset's own (objset, ZPL ZAPs)."""
    out = dnode_blocks(shape.objects)
    for (entries, names, long_name, mzap_clen), count in shape.directory_shapes.items():
        for k, n in directory_blocks(entries, names, long_name, mzap_clen).items():
            _add(out, k, n * count)
    for (level, n), count in shape.indirect.items():
        per = POINTER_COMPRESSED_BYTES if level == 1 else METADATA_POINTER_COMPRESSED_BYTES
        _add(out, (INDIRECT_BLOCK_BYTES, n * per, False), count)
    if shape.spills:
        for (lsize, clen), n in shape.spills.items():
            _add(out, (lsize, min(clen, lsize), True), n)
    else:
        _add(out, (SPILL_BLOCK_BYTES, SPILL_BLOCK_BYTES, True), shape.long_symlinks)
    _add(out, (OBJSET_PHYS_BYTES, SPA_MINBLOCKSIZE, False), 1)
    _add(out, (SPA_MINBLOCKSIZE, SPA_MINBLOCKSIZE, False), ZPL_BASE_ZAP_BLOCKS)
    return out


def spread_directories(entries: int, directories: int, mean_name_bytes: int = 16) -> dict[DirShape, int]:
    """Directory shapes when only counts are known (a size list, an old saved footprint): the
    entries spread evenly, names of mean_name_bytes."""
    if directories <= 0:
        return {}
    each, extra = divmod(entries, directories)
    out: dict[DirShape, int] = {}
    _add(out, (each, each * mean_name_bytes, False, 0), directories - extra)
    _add(out, (each + 1, (each + 1) * mean_name_bytes, False, 0), extra)
    return out
