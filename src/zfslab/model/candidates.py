"""Every sensible layout for a number of identical disks, in a stable order."""

from __future__ import annotations

from zfslab.model.layouts import MAX_CHILDREN, Layout, VdevGroup, VdevKind

MIRROR_WAYS = (2, 3, 4)
RAIDZ_MAX_WIDTH = 24
DRAID_DATA_CHOICES = (4, 8)  # the group sizes OpenZFS's dRAID docs use
MAX_HOT_SPARES = 2


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
