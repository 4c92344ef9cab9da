"""Raw space a block or a file takes on a layout: raidz padding, dRAID full rows, mirror copies.

docs/capacity.md#allocation: a file above one record is stored as whole records (the tail is zero-padded;
compression is taken as off), and USED is charged at the vdev's 128K deflate ratio.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from zfslab.model.capacity import SPA_MINBLOCKSHIFT, PoolCapacity, deflate_ratio, psize_to_asize
from zfslab.model.layouts import Layout, VdevGroup, VdevKind
from zfslab.model.units import KiB, MiB

RECORDSIZES = tuple(1 << s for s in range(12, 25))  # 4K .. 16M


@dataclass(frozen=True, slots=True)
class BlockAllocation:
    """One block of `psize` bytes on one vdev group."""

    psize_bytes: int
    asize_bytes: int  # one copy, parity and padding included (what ZFS calls asize)
    physical_bytes: int  # on all disks: asize times the mirror width
    dsize_bytes: int  # what USED is charged: asize deflated at the 128K ratio
    sectors: int

    @property
    def efficiency(self) -> float:
        """Logical bytes per physical byte."""
        return self.psize_bytes / self.physical_bytes

    @property
    def used_per_logical(self) -> float:
        """USED shown per byte written: above 1, zfs list shows more than the file's size."""
        return self.dsize_bytes / self.psize_bytes


def block_allocation(group: VdevGroup, psize: int, ashift: int) -> BlockAllocation:
    asize = psize_to_asize(group, psize, ashift)
    copies = group.width if group.kind is VdevKind.MIRROR else 1
    dsize = (asize >> SPA_MINBLOCKSHIFT) * deflate_ratio(group, ashift)
    return BlockAllocation(psize, asize, asize * copies, dsize, asize >> ashift)


def block_space_fraction(group: VdevGroup, block_bytes: int, ashift: int) -> Fraction:
    """The share of the space zfs list shows (deflated as if every block were 128K) that blocks of
    `block_bytes` fill: each is charged dsize = (asize >> 9) * deflate_ratio, so AVAIL / dsize of them
    fit (docs/capacity.md#space-at-a-block-size). Mirrors and single disks: 1 while a block is whole
    sectors; raidz below 128K: parity and padding per block; dRAID: a whole row per block."""
    if block_bytes <= 0:
        raise ValueError(f"block_bytes(={block_bytes}) must be > 0")
    dsize = (psize_to_asize(group, block_bytes, ashift) >> SPA_MINBLOCKSHIFT) * deflate_ratio(group, ashift)
    return Fraction(block_bytes, dsize)


def usable_at_block(cap: PoolCapacity, block_bytes: int) -> int:
    """The pool's USED+AVAIL in bytes of `block_bytes` blocks: zfs list's figure times each data vdev
    group's block_space_fraction, weighed by the deflated space (dspace) the group adds. ZFS spreads
    writes by free space, so an empty pool fills its vdevs in that proportion."""
    weights = [(v.dspace_bytes * v.group.count, block_space_fraction(v.group, block_bytes, cap.ashift))
               for v in cap.vdevs]
    total = sum(w for w, _ in weights)
    return int(cap.usable_bytes * sum(w * f for w, f in weights) / total)


@dataclass(frozen=True, slots=True)
class FileAllocation:
    file_bytes: int
    recordsize_bytes: int
    blocks: int
    physical_bytes: int
    dsize_bytes: int

    @property
    def efficiency(self) -> float:
        return self.file_bytes / self.physical_bytes if self.physical_bytes else 0.0


def file_allocation(layout: Layout, file_bytes: int, recordsize: int, ashift: int) -> FileAllocation:
    """Raw bytes of one incompressible file. With unlike vdev groups, data is taken to spread
    in proportion to each group's share of the pool's data disks (ZFS weights by free space)."""
    if file_bytes <= 0:
        raise ValueError(f"file_bytes(={file_bytes}) must be > 0")
    if file_bytes <= recordsize:
        blocks, psize = 1, -(-file_bytes // 512) * 512
    else:
        blocks, psize = -(-file_bytes // recordsize), recordsize
    weights = [g.data_disks_per_vdev * g.count for g in layout.groups]
    total = sum(weights)
    physical = dsize = 0.0
    for g, w in zip(layout.groups, weights):
        b = block_allocation(g, psize, ashift)
        physical += blocks * b.physical_bytes * w / total
        dsize += blocks * b.dsize_bytes * w / total
    return FileAllocation(file_bytes, recordsize, blocks, round(physical), round(dsize))


@dataclass(frozen=True, slots=True)
class EfficiencyRow:
    recordsize_bytes: int
    sectors: int
    efficiency: float
    used_per_logical: float


def efficiency_table(group: VdevGroup, ashift: int, recordsizes: tuple[int, ...] = RECORDSIZES) -> list[EfficiencyRow]:
    """Allocation efficiency of full records of each size on one vdev group."""
    rows = []
    for rs in recordsizes:
        b = block_allocation(group, rs, ashift)
        rows.append(EfficiencyRow(rs, b.sectors, b.efficiency, b.used_per_logical))
    return rows


def format_recordsize(n: int) -> str:
    return f"{n // MiB}M" if n >= MiB else f"{n // KiB}K"
