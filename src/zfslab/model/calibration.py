"""Which layouts to measure so the speed model's parameters are pinned: the calibration design.

The design looks at the layouts only, never at measured values, and takes at most a third of
them (rounded up): every other layout is left to check the model on. Each rule below takes one
layout, the first that fits, and names the parameters (model/speed_fit.py) it pins; a rule with
no layout to take, or one already taken, adds nothing. In priority order:

1. one disk (the smallest stripe): the disk's own write, read and rewrite rates, and its random
   reads, random writes and sync writes (model/iops_fit.py);
2. the widest stripe: the host's write and read ceilings and the rewrite's parallel share, and
   random reads spread over every disk (the disks' depth against the host's read path);
3. the widest raidz (then dRAID) of each parity level, highest parity first: host time per
   child I/O and per parity column (their slope over parity levels of similar width); for the
   random path, one vdev: one disk's reads per record, and every fsync through one vdev's commits;
4. the narrowest raidz (fewest data columns, then lowest parity): the vdev pipeline, whose
   allocated bytes per data byte are highest there and whose parity cost is the smallest;
5. the layout nearest the middle of the table's sizes (geometric mean of the fewest and most
   disks read at once): reads in flight, which shape the knee between disks and host;
6. the widest mirror: child I/Os and allocated bytes of copies (and mirror reads, random ones too);
7. the raidz with the most vdevs: the vdev pipeline against the pool-wide host costs;
8. the narrowest raidz of each other parity level, then the mirror with the most vdevs.

Ties go to fewer disks, then to the layout's name, so the design does not depend on the order of
the list.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from zfslab.model.layouts import Layout, VdevGroup, VdevKind

DISK_RATES = ("disk_write_mb_s", "disk_read_mb_s", "disk_rewrite_mb_s",
              "disk_read_iops_qd1", "read_modify_write", "sync_write_ms")
HOST_CEILINGS = ("host_write_mb_s", "host_read_mb_s", "rewrite_parallel", "disk_read_iops_qd8", "host_read_iops")


@dataclass(frozen=True, slots=True)
class CalibrationPick:
    """One layout to measure: its position in the given list, and what it pins."""

    index: int
    layout: Layout
    rule: str  # which rule chose it, in words
    pins: tuple[str, ...]  # speed_fit parameter names this layout pins


def calibration_budget(layouts: int) -> int:
    """At most a third of the layouts (rounded up) may be measured to fit on."""
    if layouts < 0:
        raise ValueError(f"layouts(={layouts}) must be >= 0")
    return -(-layouts // 3)


def _main(layout: Layout) -> VdevGroup:
    """The group that holds most of the layout's disks (candidates have one; mixed pools rarely)."""
    return max(layout.groups, key=lambda g: g.disks)


def _data_disks(g: VdevGroup) -> float:
    return g.data_disks_per_vdev * g.count


def _read_children(layout: Layout) -> int:
    return sum(g.count * (g.width - (g.draid_spares if g.kind is VdevKind.DRAID else 0)) for g in layout.groups)


def calibration_design(layouts: Sequence[Layout], *, budget: int | None = None) -> list[CalibrationPick]:
    """The layouts to measure (at most `budget`, by default a third of them), in priority order."""
    n = len(layouts)
    limit = calibration_budget(n) if budget is None else min(budget, calibration_budget(n))
    picks: list[CalibrationPick] = []
    taken: set[int] = set()
    names: set[str] = set()  # a layout listed twice is measured once

    def take(candidates: list[int], key, rule: str, pins: tuple[str, ...]) -> None:
        """Take the candidate with the smallest key (ties: fewer disks, then the name)."""
        free = [i for i in candidates if i not in taken and str(layouts[i]) not in names]
        if not free or len(picks) >= limit:
            return
        best = min(free, key=lambda i: (key(i), layouts[i].disks, str(layouts[i]), i))
        names.add(str(layouts[best]))
        taken.add(best)
        picks.append(CalibrationPick(best, layouts[best], rule, pins))

    main = [_main(layout) for layout in layouts]
    every = list(range(n))
    stripes = [i for i in every if all(g.kind is VdevKind.DISK for g in layouts[i].groups)]
    mirrors = [i for i in every if main[i].kind is VdevKind.MIRROR]
    parity_kinds = (VdevKind.RAIDZ, VdevKind.DRAID)
    redundant = [i for i in every if main[i].kind in parity_kinds]
    levels = sorted({(main[i].kind is VdevKind.DRAID, main[i].parity) for i in redundant},
                    key=lambda kp: (kp[0], -kp[1]))

    def of_level(kp: tuple[bool, int]) -> list[int]:
        return [i for i in redundant if (main[i].kind is VdevKind.DRAID, main[i].parity) == kp]

    def name(kp: tuple[bool, int]) -> str:
        return f"{'draid' if kp[0] else 'raidz'}{kp[1]}"

    # 1. one disk: the disk's rates (without a stripe, the smallest pool stands in)
    take(stripes or every, lambda i: layouts[i].disks, "one disk" if stripes else "the smallest pool", DISK_RATES)
    # 2. the widest stripe: the host's ceilings (without one, the pool with the most vdevs)
    take(stripes or every, lambda i: (-layouts[i].disks if stripes else -layouts[i].top_level_vdevs),
         "the widest stripe" if stripes else "the most top-level vdevs", HOST_CEILINGS)
    # 3. the widest vdev of each parity level, highest parity first
    for kp in levels:
        take(of_level(kp), lambda i: (-main[i].width, -main[i].count), f"the widest {name(kp)}",
             ("child_io_us", "parity_us_per_mb", "sync_batch"))
    # 4. the narrowest raidz: most allocated bytes per data byte, least parity work
    take(redundant, lambda i: (_data_disks(VdevGroup(main[i].kind, main[i].width, main[i].parity, 1,
                                                     main[i].draid_data, main[i].draid_spares)),
                               main[i].parity, main[i].count), "the narrowest parity vdev", ("vdev_pipeline_mb_s",))
    # 5. the middle of the table's sizes: where the disks' and the host's read rates meet
    if n:
        sizes = [_read_children(layout) for layout in layouts]
        middle = math.sqrt(min(sizes) * max(sizes))
        take(every, lambda i: (round(abs(math.log(sizes[i] / middle)), 9), main[i].parity, main[i].count),
             "the middle size", ("reads_in_flight",))
    # 6. the widest mirror: copies and their child I/Os
    take(mirrors, lambda i: (-main[i].width, -main[i].count), "the widest mirror",
         ("vdev_pipeline_mb_s", "child_io_us", "disk_read_iops_qd8"))
    # 7. the most parity vdevs: each vdev's pipeline against the pool-wide host
    take([i for i in redundant if main[i].count > 1], lambda i: (-main[i].count, -main[i].width),
         "the most parity vdevs", ("vdev_pipeline_mb_s",))
    # 8. the narrowest vdev of each other parity level, then the most mirrors
    for kp in sorted(levels, key=lambda kp: (kp[0], kp[1])):
        take(of_level(kp), lambda i: (main[i].width, main[i].count), f"the narrowest {name(kp)}",
             ("vdev_pipeline_mb_s", "parity_us_per_mb"))
    take(mirrors, lambda i: (-main[i].count, main[i].width), "the most mirrors", ("host_write_mb_s",))
    return picks
