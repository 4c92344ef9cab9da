"""Every sensible layout for a number of identical disks, or for disks of several sizes, in a stable order."""

from __future__ import annotations

from itertools import islice, product

from zfslab.model.layouts import Layout, MAX_CHILDREN, VdevGroup, VdevKind, merge_groups

MIRROR_WAYS = (2, 3, 4)
RAIDZ_MAX_WIDTH = 24
DRAID_DATA_CHOICES = (4, 8)  # the group sizes OpenZFS's dRAID docs use
MAX_HOT_SPARES = 2
MAX_MIXED_SHAPES = 24  # per parity, for disks of several sizes: mixes of vdev shapes across sizes


def _redundant_groups(disks: int) -> list[VdevGroup]:
    """Layouts made of equal redundant vdevs that use exactly `disks` disks."""
    out: list[VdevGroup] = []
    for ways in MIRROR_WAYS:
        if disks >= ways and disks % ways == 0:
            out.append(VdevGroup(VdevKind.MIRROR, ways, ways - 1, disks // ways))
    for parity in (1, 2, 3):
        # at least 2 data disks: a narrower raidz is a mirror with worse speed
        for width in range(parity + 2, min(RAIDZ_MAX_WIDTH, disks) + 1):
            if disks % width == 0:
                out.append(VdevGroup(VdevKind.RAIDZ, width, parity, disks // width))
    return out


def _draid_groups(disks: int) -> list[VdevGroup]:
    out: list[VdevGroup] = []
    if disks > MAX_CHILDREN:
        return out
    for parity in (1, 2, 3):
        for data in DRAID_DATA_CHOICES:
            for spares in range(0, MAX_HOT_SPARES + 1):
                if data + parity <= disks - spares and data + parity < disks:
                    out.append(VdevGroup(VdevKind.DRAID, disks, parity, 1, data, spares))
    return out


_FAMILY = {VdevKind.DISK: 0, VdevKind.MIRROR: 1, VdevKind.RAIDZ: 2, VdevKind.DRAID: 5}  # raidz1..3 = 2..4, draid1..3 = 5..7


def _order(layout: Layout) -> tuple:
    g = layout.groups[0]
    family = _FAMILY[g.kind] + (g.parity - 1 if g.kind in (VdevKind.RAIDZ, VdevKind.DRAID) else 0)
    return (family, g.width, g.draid_data, g.draid_spares, layout.hot_spares)


def candidate_layouts(disks: int, *, hot_spares: bool = True, draid: bool = True) -> list[Layout]:
    """Stripe, 2/3/4-way mirrors, raidz1-3 of widths that tile the disks (optionally leaving
    1-2 hot spares), and single-vdev dRAID with 4 or 8 data disks per group and 0-2
    distributed spares. Ordered by family (stripe, mirror, raidz1..3, dRAID), then width."""
    if disks < 1:
        raise ValueError(f"disks(={disks}) must be at least 1")
    found: dict[str, Layout] = {}

    def add(layout: Layout) -> None:
        found.setdefault(str(layout), layout)

    add(Layout((VdevGroup(VdevKind.DISK, 1, 0, disks),)))
    for spares in range(0, (MAX_HOT_SPARES if hot_spares else 0) + 1):
        if disks - spares < 2:
            break
        for g in _redundant_groups(disks - spares):
            add(Layout((g,), spares))
    if draid:
        for g in _draid_groups(disks):
            add(Layout((g,)))
    return sorted(found.values(), key=_order)


# ---- disks of several sizes (docs/capacity.md#mixed-disk-sizes) ------------------------------

def _shapes_of_parity(disks: int, parity: int) -> list[VdevGroup]:
    """Equal vdevs surviving `parity` failures each that use exactly `disks` disks."""
    out = []
    if disks % (parity + 1) == 0:
        out.append(VdevGroup(VdevKind.MIRROR, parity + 1, parity, disks // (parity + 1)))
    for width in range(parity + 2, min(RAIDZ_MAX_WIDTH, disks) + 1):
        if disks % width == 0:
            out.append(VdevGroup(VdevKind.RAIDZ, width, parity, disks // width))
    return out


def _shape_key(g: VdevGroup) -> tuple[bool, int]:
    """Mirrors before raidz, then by width (parity is the same within one round)."""
    return (g.kind is VdevKind.RAIDZ, g.width)


def _sized(g: VdevGroup, disk_bytes: int) -> VdevGroup:
    return VdevGroup(g.kind, g.width, g.parity, g.count, g.draid_data, g.draid_spares, ((g.width, disk_bytes),))


def fill_by_size(layout: Layout, sizes: dict[int, int]) -> Layout | None:
    """The layout on these disks ({bytes: count}): hot spares take the largest (a spare must be as
    large as the disk it stands in for), then each vdev the largest left, so that vdevs spanning
    sizes are as few as can be; the smallest disks stay unused if the layout needs fewer. None if
    the disks are too few or the spares would be of two sizes."""
    pool = [b for b, n in sorted(sizes.items(), reverse=True) for _ in range(n)]
    if layout.disks > len(pool):
        return None
    spare_bytes = 0
    if layout.hot_spares:
        spares, pool = pool[:layout.hot_spares], pool[layout.hot_spares:]
        if len(set(spares)) > 1:
            return None
        spare_bytes = spares[0]
    groups: list[VdevGroup] = []
    for g in layout.groups:
        for _ in range(g.count):
            taken, pool = pool[:g.width], pool[g.width:]
            counts = tuple((taken.count(b), b) for b in sorted(set(taken), reverse=True))
            groups.append(VdevGroup(g.kind, g.width, g.parity, 1, g.draid_data, g.draid_spares, counts))
    return Layout(merge_groups(groups), layout.hot_spares, spare_bytes)


def mixed_candidate_layouts(sizes: dict[int, int], *, hot_spares: bool = True, draid: bool = True) -> list[Layout]:
    """Layouts for disks of several sizes ({bytes: count}). First those that give each size its
    own vdevs: a stripe, then for each parity 1-3 the mirrors and raidz widths that tile each size,
    one kind and width on every size first (zpool create takes them without -f), then up to
    MAX_MIXED_SHAPES mixes of them.
    Then every identical-disk candidate for all the disks, filled by size (fill_by_size): vdevs
    that span sizes count each child as the smallest."""
    if len(sizes) < 2 or min(sizes.values()) < 1:
        raise ValueError(f"sizes(={sizes}) must name at least two disk sizes")
    order = sorted(sizes.items(), reverse=True)
    found: dict[str, Layout] = {}

    def add(layout: Layout | None) -> None:
        if layout is not None:
            found.setdefault(str(layout), layout)

    add(Layout(merge_groups([_sized(VdevGroup(VdevKind.DISK, 1, 0, n), b) for b, n in order])))
    for parity in (1, 2, 3):
        per_size = [[_sized(g, b) for g in _shapes_of_parity(n, parity)] for b, n in order]
        # one shape on every size first; then mixes of shapes, at most MAX_MIXED_SHAPES of them
        # (four sizes of 24 disks would otherwise give thousands)
        common = set.intersection(*[{_shape_key(g) for g in gs} for gs in per_size])
        for key in sorted(common):
            add(Layout(merge_groups([next(g for g in gs if _shape_key(g) == key) for gs in per_size])))
        mixed = (c for c in product(*per_size) if len({_shape_key(g) for g in c}) > 1)
        for combo in islice(mixed, MAX_MIXED_SHAPES):
            add(Layout(merge_groups(list(combo))))
    for layout in candidate_layouts(sum(sizes.values()), hot_spares=hot_spares, draid=draid):
        add(fill_by_size(layout, sizes))
    return list(found.values())
