"""What new disks could become in a pool that exists (docs/pool.md#growing-the-pool): each way
`zpool add` or `zpool attach` can take them, the usable space of the empty pool after it (the model
the pool was just checked against), the disks its weakest data vdev then survives, and what an
expert would say against it. Pure: the caller has read the pool and checked the model on it."""

from __future__ import annotations

from dataclasses import dataclass, replace

from zfslab.errors import ZfslabError
from zfslab.model.capacity import linux_whole_disk_osize, pool_capacity, rules_for
from zfslab.model.expansion import EXPANSION_SINCE, expand, parse_release
from zfslab.model.layouts import Layout, VdevGroup, VdevKind
from zfslab.model.pool_findings import sizes_unequal
from zfslab.model.pool_model import ModelCheck, pool_layout
from zfslab.model.pool_state import PoolState
from zfslab.model.reliability.params import RiskParams

MODELLED = (VdevKind.DISK, VdevKind.MIRROR, VdevKind.RAIDZ)


@dataclass(frozen=True, slots=True)
class GrowthOption:
    """One way to take the new disks. The figures are None when `reason` says why there are none."""

    how: str  # "zpool add" or "zpool attach"
    adds: str  # what the pool gains: vdevs in zfslab's grammar ('2xmirror:2'), or '+4 disks to raidz2-0'
    layout_after: str
    survives: int  # disks that may fail at once, whichever they are, after it
    commands: tuple[str, ...]  # NEW1..NEWn stand for the new disks' paths
    like_the_pool: bool  # vdevs of the same kind, parity and width as those there
    usable_after_bytes: int | None = None  # USED+AVAIL of the pool, empty, after it
    gain_bytes: int | None = None
    cautions: tuple[str, ...] = ()
    reason: str = ""
    resilver_hours: float | None = None  # zpool replace: the resilvers one after another, in all


@dataclass(frozen=True, slots=True)
class Growth:
    count: int
    disk_bytes: int  # each new disk as the user gave it
    options: tuple[GrowthOption, ...]
    note: str  # what holds for every option (a raidz pool's add is for good), or why there are none


def _new(n: int) -> list[str]:
    return [f"NEW{i}" for i in range(1, n + 1)]


def _add_command(pool: str, group: VdevGroup, force: bool) -> str:
    disks = iter(_new(group.disks))
    vdevs = " ".join(" ".join(filter(None, [group.spec, *(next(disks) for _ in range(group.width))]))
                     for _ in range(group.count))
    return f"zpool add {'-f ' if force else ''}{pool} {vdevs}"


def _candidates(existing: tuple[VdevGroup, ...], count: int) -> list[tuple[VdevGroup, bool]]:
    """(the vdevs to add, like the pool's) for `count` new disks: the shapes there first, then one
    mirror pair per two disks and one raidz of all of them at each parity."""
    found: list[tuple[VdevGroup, bool]] = []
    seen = set()

    def take(kind: VdevKind, width: int, parity: int, like: bool) -> None:
        if width < 1 or count % width or (kind, width, parity) in seen:
            return
        try:
            group = VdevGroup(kind, width, parity, count // width)
        except ZfslabError:
            return  # wider than a vdev can be
        seen.add((kind, width, parity))
        found.append((group, like))

    for g in existing:
        if g.kind in MODELLED:
            take(g.kind, g.width, g.parity, True)
    take(VdevKind.MIRROR, 2, 1, False)
    for parity in (1, 2, 3):
        if count >= parity + 2:
            take(VdevKind.RAIDZ, count, parity, False)
    if count == 1:
        take(VdevKind.DISK, 1, 0, False)
    return found


def _sized(groups, key: int) -> tuple[VdevGroup, ...]:
    return tuple(VdevGroup(g.kind, g.width, g.parity, g.count, sizes=((g.width, key),)) for g in groups)


def growth(state: PoolState, check: ModelCheck, count: int, disk_bytes: int, *,
           sector_bytes: int = 512) -> Growth:
    """Every way to take `count` whole disks of `disk_bytes` each into the pool."""
    layout = pool_layout(state)
    if isinstance(layout, str):
        return Growth(count, disk_bytes, (), f"no growth figures: {layout}")
    data = state.of_class("normal")
    raidz = any(g.kind is VdevKind.RAIDZ for g in layout.groups)
    note = ("every `zpool add` on this pool is for good: `zpool remove` takes a top-level vdev out only "
            "when no raidz vdev is there" if raidz else
            "`zpool remove` can take an added mirror or plain-disk vdev out again (its data moved to the others)")
    if state.alloc_bytes * 10 > state.size_bytes:
        note += ("; data written before stays where it is (ZFS spreads new writes by free space, so the "
                 "new vdevs take most of them until the pool evens out)")
    new_osize = linux_whole_disk_osize(disk_bytes, sector_bytes)
    old = check.vdev_bytes
    why_none = ""
    if check.model_usable_bytes is None:
        why_none = f"no capacity figures: {check.reason}"
    elif layout.classes:
        why_none = "no capacity figures: pools with special, dedup or log vdevs are not modelled here yet"
    elif state.expanded:
        why_none = "no capacity figures: its raidz was expanded (old blocks keep the old ratio), not modelled here yet"
    rules = None
    if not why_none:
        try:
            rules = rules_for(check.version)
        except ZfslabError as e:
            why_none = f"no capacity figures: {e}"

    def usable(groups_old, groups_new) -> int:
        # each vdev on its own disks: the old ones as ZFS sees them, the new whole disks partitioned
        # as zpool makes them; a vdev added later is laid out as at creation (vdev_metaslab_set_size)
        sizes = {old: old, disk_bytes: new_osize} if disk_bytes != old else {old: old}
        key_new = disk_bytes if disk_bytes != old else old
        after = Layout(_sized(groups_old, old) + _sized(groups_new, key_new))
        return pool_capacity(after, sizes, ashift=check.ashift, rules=rules).usable_bytes

    weakest = min(g.parity for g in layout.groups)
    options: list[GrowthOption] = []
    before = usable(layout.groups, ()) if not why_none else None
    for group, like in _candidates(layout.groups, count):
        after_layout = Layout(layout.groups + (group,))
        cautions = []
        if group.parity < weakest:
            cautions.append(f"it survives {group.parity} failed disk{'s' * (group.parity != 1)} and the vdevs "
                            f"there {weakest}: losing it loses the whole pool")
        # zpool add compares kind, parity and width with the vdevs there (get_replication() in
        # cmd/zpool/zpool_vdev.c) and refuses any difference without -f
        shape_differs = any((g.kind, g.width, g.parity) != (group.kind, group.width, group.parity)
                            for g in layout.groups)
        if shape_differs:
            cautions.append("its kind, parity or width differs from the vdevs there: zpool add refuses it without "
                            "-f (\"mismatched replication level\"), and the vdevs fill and wear unevenly")
        if old and sizes_unequal((new_osize, old)):
            cautions.append("the new disks differ in size from those there by more than 10 %: the vdevs fill "
                            "unevenly")
        option = GrowthOption("zpool add", group.token, str(after_layout), min(weakest, group.parity),
                              (_add_command(state.name, group, shape_differs),), like, cautions=tuple(cautions))
        if why_none:
            option = replace(option, reason=why_none)
        else:
            after = usable(layout.groups, (group,))
            option = replace(option, usable_after_bytes=after, gain_bytes=after - before)
        options.append(option)
    attach = _attach(state, check, layout, data, count, new_osize)
    if attach is not None:
        options.append(attach)
    # vdevs like those there first: the pool's balance of space, speed and safety, more of it; then
    # the raidz grown (more space, the same parity over more disks); then the rest, safest first
    options.sort(key=lambda o: (0 if o.like_the_pool else 1 if o.how == "zpool attach" else 2,
                                -o.survives, -(o.gain_bytes or 0)))
    return Growth(count, disk_bytes, tuple(options), note)


def _attach(state: PoolState, check: ModelCheck, layout: Layout, data, count: int,
            new_osize: int) -> GrowthOption | None:
    """RAIDZ expansion: the new disks attached one at a time to the pool's one raidz vdev (OpenZFS
    2.3+); None when the pool is not one raidz vdev."""
    if len(data) != 1 or data[0].kind != "raidz":
        return None
    vdev, group = data[0], layout.groups[0]
    # one disk at a time: a raidz vdev takes the next attach once its expansion is done
    commands = (f"zpool attach {state.name} {vdev.name} NEW1", f"zpool wait -t raidz_expand {state.name}")
    after = Layout((VdevGroup(VdevKind.RAIDZ, group.width + count, group.parity),))
    option = GrowthOption("zpool attach", f"+{count} disk{'s' * (count > 1)} to {vdev.name}", str(after),
                          group.parity, commands, False, cautions=(
                              *([f"then the same two for {', '.join(_new(count)[1:])}: a raidz vdev takes one "
                                 "disk at a time"] if count > 1 else []),
                              "blocks written before keep their old data-to-parity ratio until rewritten "
                              "(`zfs rewrite`, OpenZFS 2.3.4+), and AVAIL counts new data at that ratio too"))
    try:
        release = parse_release(check.version.split("-")[0])
    except ZfslabError:
        return replace(option, reason=f"RAID-Z expansion came in OpenZFS {'.'.join(map(str, EXPANSION_SINCE))}; "
                                    f"this pool runs {check.version}")
    old = check.vdev_bytes
    if old is not None and new_osize < old:
        return replace(option, reason="the new disks are smaller than the vdev's: zpool attach refuses them")
    if state.expanded:
        return replace(option, reason="the vdev was expanded before; zfslab models the first expansion only")
    if layout.classes:
        return replace(option, reason="no capacity figures: pools with special, dedup or log vdevs are not "
                                    "modelled here yet")
    if check.model_usable_bytes is None or old is None or check.ashift is None:
        return replace(option, reason=f"no capacity figures: {check.reason}")
    if old and sizes_unequal((new_osize, old)):  # larger: smaller ones were refused above
        option = replace(option, cautions=option.cautions + (
            "each new disk gives only what the smallest child does; the rest waits until every disk is as "
            "large (autoexpand)",))
    try:
        steps = expand(Layout((group,)), old, count, release=release, ashift=check.ashift).steps
    except ZfslabError as e:
        return replace(option, reason=str(e))
    return replace(option, usable_after_bytes=steps[-1].usable_bytes,
                 gain_bytes=steps[-1].usable_bytes - steps[0].usable_bytes)


def _duration(hours: float) -> str:
    return f"about {hours:.1f} h" if hours >= 1 else f"about {max(hours * 60, 1):.0f} min"


def replacement(state: PoolState, check: ModelCheck, disk_bytes: int, *, streaming_mb_s: float,
                sector_bytes: int = 512, whole_disk: bool = True) -> Growth:
    """Every data disk replaced by one of `disk_bytes` (as sold; whole_disk=False: the bytes ZFS will
    see, as of a file), one resilver at a time, autoexpand on: the pool's space after the last."""
    layout = pool_layout(state)
    data = state.of_class("normal")
    leaves = [leaf for v in data for leaf in v.leaves]
    if isinstance(layout, str):
        return Growth(len(leaves), disk_bytes, (), f"no figures: {layout}")
    new_osize = linux_whole_disk_osize(disk_bytes, sector_bytes) if whole_disk else disk_bytes
    mirror = all(g.kind is VdevKind.MIRROR for g in layout.groups)
    rate = RiskParams(streaming_mb_s=streaming_mb_s).healing_mb_s(mirror)   # the risk model's resilver rate
    # each replace rewrites the new disk's share of the vdev's allocated bytes (zpool list -v ALLOC is raw)
    hours = sum((v.alloc_bytes or 0) for v in data) / (rate * 1e6) / 3600
    first = leaves[0].name if leaves else "OLD1"
    spares = [leaf for v in state.of_class("spare") for leaf in v.leaves]
    option = GrowthOption(
        "zpool replace", f"each of the {len(leaves)} data disks", str(layout), min(g.parity for g in layout.groups),
        (f"zpool set autoexpand=on {state.name}", f"zpool replace -w {state.name} {first} NEW1"), False,
        cautions=(f"then the same replace for each other disk: one resilver at a time, {_duration(hours)} in all "
                  f"for the data there now at {rate:.0f} MB/s (zfslab's resilver rate for these disks)",
                  "with the old disk still connected, zpool replace keeps it in the vdev until the new one is "
                  "resilvered: no redundancy is lost; a disk pulled first leaves its vdev one failure short "
                  "until then",
                  "the vdev grows only when its last disk is replaced, to what its smallest disk gives",
                  *([f"the hot spare{'s' * (len(spares) > 1)} cannot stand in for a larger disk: replace "
                     f"{'them' if len(spares) > 1 else 'it'} too (zpool remove, then zpool add {state.name} spare NEW)"]
                    if spares else [])),
        resilver_hours=hours)
    old = check.vdev_bytes
    why = ""
    if check.model_usable_bytes is None or old is None or check.ashift is None:
        why = f"no capacity figures: {check.reason}"
    elif not check.agrees:
        why = "no capacity figures: the model does not agree with this pool as it is"
    elif layout.classes:
        why = "no capacity figures: pools with special, dedup or log vdevs are not modelled here yet"
    elif state.expanded:
        why = "no capacity figures: its raidz was expanded (old blocks keep the old ratio), not modelled here yet"
    elif new_osize < old:
        why = "the new disks are smaller than those there: zpool replace refuses them"
    if why:
        return Growth(len(leaves), disk_bytes, (replace(option, reason=why),), "")
    try:
        rules = rules_for(check.version)
        after = pool_capacity(layout, new_osize, ashift=check.ashift, rules=rules, grown_from_bytes=old).usable_bytes
    except ZfslabError as e:
        return Growth(len(leaves), disk_bytes, (replace(option, reason=f"no capacity figures: {e}"),), "")
    note = ("the metaslabs keep the size the vdevs were created with, so the pool is not quite what a new "
            "pool of these disks would be")
    return Growth(len(leaves), disk_bytes, (replace(option, usable_after_bytes=after,
                                                    gain_bytes=after - check.model_usable_bytes),), note)
