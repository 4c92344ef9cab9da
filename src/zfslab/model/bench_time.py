"""How long bench takes on one layout, predicted from the suite, for splitting a fleet run across
hosts by time (model/sharding.py). A physical estimate, not a fit (docs/fleet.md#sharding):

- each layout costs a fixed POOL_OVERHEAD_S: zpool create, zfs create, export checks, destroy;
- a time-based fio test runs ramp + runtime seconds, after fio lays out its files;
- a size-based test (seqwrite, rewrite, seqread) and each layout-out moves numjobs x size bytes
  at the pool's streaming rate: its data disks times ASSUMED_DISK_MB_S.

Sharding only needs the ratios between layouts right, and those come from the data disks and the
suite; the absolute rate of the disks cancels out of the balance.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from zfslab.errors import FleetError
from zfslab.model.layouts import Layout

POOL_OVERHEAD_S = 10.0      # create + destroy of a pool and its dataset, with udev settling between
ASSUMED_DISK_MB_S = 150.0   # a 7,200 rpm disk's sequential rate; only the ratios between layouts matter


@dataclass(frozen=True, slots=True)
class TestShape:
    """What of one test of a suite sets its duration."""

    time_based: bool
    numjobs: int = 1


def data_disks(layout: Layout) -> float:
    """Disks' worth of data the pool streams to at once (a mirror writes one copy's worth)."""
    return sum(g.data_disks_per_vdev * g.count for g in layout.groups)


def predicted_bench_s(layout: Layout, tests: Sequence[TestShape], *, size_bytes: int, runtime_s: float,
                      ramp_s: float, repeats: int, disk_mb_s: float = ASSUMED_DISK_MB_S) -> float:
    """Seconds bench is expected to spend on `layout`: the pool's overhead and every repeat of every test."""
    if repeats < 1 or size_bytes < 1 or runtime_s < 0 or ramp_s < 0 or not disk_mb_s > 0:
        raise FleetError(f"bench time of {layout}: repeats={repeats}, size_bytes={size_bytes}, runtime_s={runtime_s}, "
                         f"ramp_s={ramp_s}, disk_mb_s={disk_mb_s} must be positive")
    rate_bytes_s = data_disks(layout) * disk_mb_s * 1e6
    per_repeat_s = 0.0
    for t in tests:
        moved_s = t.numjobs * size_bytes / rate_bytes_s   # the file written (or laid out for a read)
        per_repeat_s += moved_s + (ramp_s + runtime_s if t.time_based else 0.0)
    return POOL_OVERHEAD_S + repeats * per_repeat_s
