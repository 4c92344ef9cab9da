"""A live pool against zfslab's model: its vdev tree read into a Layout, and zfslab's SIZE and
USED+AVAIL for that layout, version, ashift and the bytes ZFS sees of each disk, beside what the
pool reports (docs/pool.md#model-against-reality). Where they cannot be compared, the reason."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from zfslab.errors import ZfslabError
from zfslab.model.capacity import pool_capacity, rules_for
from zfslab.model.expansion import expand
from zfslab.model.layouts import ClassGroup, Layout, VdevGroup, VdevKind, merge_classes, merge_groups
from zfslab.model.pool_state import PoolState, PoolVdev


@dataclass(frozen=True, slots=True)
class ModelCheck:
    """zfslab's figures beside the pool's. The model figures are None when `reason` says why
    they cannot be computed; `agrees` is None then."""

    layout: str  # zfslab's layout grammar ('raidz2:4+disk'), or '' when it has none for this pool
    version: str  # the kernel module's OpenZFS version the rules were taken from
    ashift: int | None
    vdev_bytes: int | None  # what ZFS sees of each disk (all alike; None when they differ: see `layout`)
    pool_size_bytes: int
    pool_usable_bytes: int  # USED + AVAIL of the root dataset
    model_size_bytes: int | None = None
    model_usable_bytes: int | None = None
    reason: str = ""  # why there are no model figures, or what the difference is

    @property
    def size_diff_bytes(self) -> int | None:
        return None if self.model_size_bytes is None else self.pool_size_bytes - self.model_size_bytes

    @property
    def usable_diff_bytes(self) -> int | None:
        return None if self.model_usable_bytes is None else self.pool_usable_bytes - self.model_usable_bytes

    @property
    def agrees(self) -> bool | None:
        if self.model_size_bytes is None:
            return None
        return self.size_diff_bytes == 0 and self.usable_diff_bytes == 0


def failures_survived(vdev: PoolVdev) -> int:
    """Disks of a top-level vdev that may fail without losing it (its design, not its state now)."""
    if vdev.kind == "mirror":
        return len(vdev.children) - 1
    if vdev.kind in ("raidz", "draid"):
        return vdev.parity
    return 0


# zpool names a dRAID vdev by its geometry, draidP:Dd:Cc:Ss-N (zpool_vdev_name()), in both forms
DRAID_NAME = re.compile(r"draid([1-3]):([0-9]+)d:([0-9]+)c:([0-9]+)s-[0-9]+")


def _group(vdev: PoolVdev) -> VdevGroup | str:
    """The vdev as zfslab's VdevGroup, or why it has none."""
    if vdev.kind in ("disk", "file"):
        return VdevGroup(VdevKind.DISK, 1)
    if vdev.kind == "mirror":
        return VdevGroup(VdevKind.MIRROR, len(vdev.children), len(vdev.children) - 1)
    if vdev.kind == "raidz":
        return VdevGroup(VdevKind.RAIDZ, len(vdev.children), vdev.parity)
    m = DRAID_NAME.fullmatch(vdev.name) if vdev.kind == "draid" else None
    if m:
        parity, data, children, spares = (int(x) for x in m.groups())
        if children != len(vdev.children):
            return f"{vdev.name} names {children} children but zpool shows {len(vdev.children)}"
        try:
            return VdevGroup(VdevKind.DRAID, children, parity, draid_data=data, draid_spares=spares)
        except ZfslabError as e:
            return f"{vdev.name}: {e}"
    if vdev.kind == "draid":
        return f"{vdev.name}: a dRAID vdev whose name does not give its geometry (draidP:Dd:Cc:Ss-N)"
    return f"{vdev.name} is a {vdev.kind} vdev, which this reading does not model yet"


def _sized_group(vdev: PoolVdev, group: VdevGroup) -> VdevGroup:
    """The group with its own disks' sizes as ZFS sees them (the size as written is that size)."""
    seen = Counter(leaf.device_bytes for leaf in vdev.leaves)
    sizes = tuple(sorted(((n, b) for b, n in seen.items()), key=lambda nb: -nb[1]))
    return VdevGroup(group.kind, group.width, group.parity, 1, group.draid_data, group.draid_spares, sizes)


def pool_layout(state: PoolState, *, sized: bool = False) -> Layout | str:
    """The pool's layout in zfslab's terms, or why it has none. sized: each vdev with its disks' sizes as
    ZFS sees them (`raidz1:3@1x2GiB/1x1536MiB/1x1GiB`), for a pool whose disks differ in size."""
    groups: list[VdevGroup] = []
    classes: list[ClassGroup] = []
    for v in state.vdevs:
        if v.alloc_class in ("spare", "cache"):
            continue
        g = _group(v)
        if isinstance(g, str):
            return g
        if sized:
            g = _sized_group(v, g)
        if v.alloc_class == "normal":
            groups.append(g)
        else:
            classes.append(ClassGroup(v.alloc_class, g))
    if not groups:
        return "the pool shows no data vdev"
    # a distributed spare is space inside its dRAID (the layout's Ns), not a hot spare
    spares = [v for v in state.of_class("spare") if v.kind != "dspare"]
    if sized:
        # hot spares and cache devices hold no pool space, and neither form of zpool status gives their
        # size, which a sized layout would need: they are left out of it
        return Layout(merge_groups(groups), classes=merge_classes(classes))
    return Layout(merge_groups(groups), len(spares), 0, merge_classes(classes),
                  len(state.of_class("cache")))


def class_alloc_bytes(state: PoolState) -> int:
    """What the special and dedup vdevs hold (their ALLOC), which 2.3.7+ and 2.4.1+ add back to AVAIL."""
    return sum(v.alloc_bytes or 0 for v in state.vdevs if v.alloc_class in ("special", "dedup"))


def _modelled_leaves(state: PoolState) -> list[PoolVdev]:
    return [leaf for v in state.vdevs if v.alloc_class not in ("spare", "cache") for leaf in v.leaves]


def check_model(state: PoolState, version: str, *, expanded: bool = False,
                attached: dict[str, int] | None = None) -> ModelCheck:
    """zfslab's SIZE and USED+AVAIL for this pool beside the pool's own (docs/pool.md). `attached`:
    disks `zpool attach` added to each raidz vdev (zpool history), for a pool whose raidz was expanded."""
    size, usable = state.size_bytes, state.usable_bytes
    layout = pool_layout(state)
    ashifts = {v.ashift for v in state.vdevs if v.alloc_class not in ("spare", "cache")}
    ashift = ashifts.pop() if len(ashifts) == 1 else None
    if isinstance(layout, str):
        return ModelCheck("", version, ashift, None, size, usable, reason=layout)
    leaves = _modelled_leaves(state)
    seen = {leaf.device_bytes for leaf in leaves}

    def without(reason: str, vdev_bytes: int | None = None) -> ModelCheck:
        return ModelCheck(str(layout), version, ashift, vdev_bytes, size, usable, reason=reason)

    if None in seen:
        return without("the size ZFS sees of some disks was not shown (zpool status -j on 2.3+ shows it)")
    vdev_bytes: int | dict[int, int] = seen.pop() if len(seen) == 1 else {b: b for b in seen}
    if ashift is None:
        return without("the vdevs' ashift was not shown, or differs between them")
    if isinstance(vdev_bytes, dict):
        # disks of several sizes: each vdev on its own disks, every child counted as its smallest
        # (vdev_mirror_open, vdev_raidz_open, vdev_draid_open), as `zfslab capacity` sizes a layout
        if expanded:
            return without("a raidz expansion ran on disks of several sizes, which this reading does not model")
        layout = pool_layout(state, sized=True)
        assert not isinstance(layout, str)  # read once above
    elif expanded:
        return _expanded(state, version, layout, ashift, vdev_bytes, attached or {})
    one_size = vdev_bytes if isinstance(vdev_bytes, int) else None
    try:
        rules = rules_for(version)
        model = pool_capacity(layout, vdev_bytes, ashift=ashift, rules=rules,
                              class_alloc_bytes=class_alloc_bytes(state))
    except ZfslabError as e:
        return without(f"zfslab cannot compute it: {e}", one_size)
    reason = ""
    if model.size_bytes != size:
        reason = "SIZE differs: a reservation or feature zfslab does not know, or a bug to report"
    elif model.usable_bytes != usable:
        reason = ("USED+AVAIL differs: space set aside by a reservation, a pool checkpoint, frees deferred "
                  "to a later txg (docs/pool.md#a-pool-made-with--d) or a feature; SIZE agrees")
    return ModelCheck(str(layout), version, ashift, one_size, size, usable, model.size_bytes,
                      model.usable_bytes, reason)


def _expanded(state: PoolState, version: str, layout: Layout, ashift: int, vdev_bytes: int,
              attached: dict[str, int]) -> ModelCheck:
    """A pool of one raidz vdev grown by `zpool attach`: model/expansion.py from its original width
    (its width now less the disks attached, as zpool history shows them); any other shape says why."""
    size, usable = state.size_bytes, state.usable_bytes
    data = state.of_class("normal")
    added = attached.get(data[0].name, 0) if len(data) == 1 else 0
    if len(data) != 1 or data[0].kind != "raidz" or layout.classes or not added:
        return ModelCheck(str(layout), version, ashift, vdev_bytes, size, usable, reason=(
            "a raidz expansion ran: its old blocks keep the old width's ratio; this reading models one raidz "
            "vdev whose attaches zpool history shows (zfslab expand models others from the original width)"))
    v = data[0]
    original = Layout((VdevGroup(VdevKind.RAIDZ, len(v.children) - added, v.parity),))
    try:
        step = expand(original, vdev_bytes, added, release=version.split("-")[0], ashift=ashift).steps[-1]
    except ZfslabError as e:
        return ModelCheck(str(layout), version, ashift, vdev_bytes, size, usable,
                          reason=f"zfslab cannot compute the expansion: {e}")
    reason = f"expanded from {original} by {added} disk{'s' * (added > 1)} (model/expansion.py)"
    if (step.size_bytes, step.usable_bytes) != (size, usable):
        reason += "; it differs: data written before the attach, or a reservation"
    return ModelCheck(str(layout), version, ashift, vdev_bytes, size, usable, step.size_bytes, step.usable_bytes,
                      reason)
