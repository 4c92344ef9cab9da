"""What new disks could become in a pool that exists (docs/pool.md#growing-the-pool): each way
`zpool add` or `zpool attach` can take them, the usable space of the empty pool after it (the model
the pool was just checked against), the disks its weakest vdev then survives, and what an
expert would say against it. Pure: the caller has read the pool and checked the model on it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from zfslab.errors import LayoutError, ZfslabError
from zfslab.model.capacity import (SPA_MINDEVSIZE, Rules, linux_whole_disk_osize, min_whole_disk_bytes,
                                   pool_capacity, rules_for, slop_bytes, vdev_capacity)
from zfslab.model.expansion import EXPANSION_SINCE, expand, parse_release
from zfslab.model.layouts import ClassGroup, Layout, VdevGroup, VdevKind
from zfslab.model.pool_findings import sizes_unequal
from zfslab.model.pool_model import ModelCheck, class_alloc_bytes, failures_survived, pool_layout
from zfslab.model.pool_state import PoolState, PoolVdev
from zfslab.model.reliability.params import RiskParams
from zfslab.model.zpool_syntax import replication_mismatch

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
    size_after_bytes: int | None = None  # zpool list SIZE after it
    gain_bytes: int | None = None
    cautions: tuple[str, ...] = ()
    reason: str = ""
    resilver_hours: float | None = None  # zpool replace: the resilvers one after another, in all
    added: tuple[tuple[str, VdevGroup], ...] = ()  # zpool add: (allocation class, the vdevs) it adds
    # zpool attach to plain disks or mirrors: each vdev that gains sides (its name) and how many, NEW1.. in order
    attach_to: tuple[tuple[str, int], ...] = ()


@dataclass(frozen=True, slots=True)
class Growth:
    count: int
    disk_bytes: int  # each new disk as the user gave it
    options: tuple[GrowthOption, ...]
    note: str  # what holds for every option (a raidz pool's add is for good), or why there are none
    new_vdev_bytes: int | None = None  # each new disk as ZFS will see it (partitioned, or as given)


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

    def take(kind: VdevKind, width: int, parity: int, like: bool, data: int = 0, spares: int = 0) -> None:
        if width < 1 or count % width or (kind, width, parity) in seen:
            return
        try:
            group = VdevGroup(kind, width, parity, count // width, data, spares)
        except ZfslabError:
            return  # wider than a vdev can be
        seen.add((kind, width, parity))
        found.append((group, like))

    for g in existing:
        if g.kind in MODELLED:
            take(g.kind, g.width, g.parity, True)
        elif g.kind is VdevKind.DRAID:
            # a dRAID vdev grows by another of its geometry beside it, never by an attach (zpool-attach(8):
            # raidz only); the new one brings its own distributed spares
            take(g.kind, g.width, g.parity, True, g.draid_data, g.draid_spares)
    take(VdevKind.MIRROR, 2, 1, False)
    for parity in (1, 2, 3):
        if count >= parity + 2:
            take(VdevKind.RAIDZ, count, parity, False)
    if count == 1:
        take(VdevKind.DISK, 1, 0, False)
    return found


# check_model models a pool of disks of several sizes, and an add to it; replacing its disks or a raidz
# expansion on them is not modelled yet
MIXED_SIZES = "no capacity figures: the pool's disks differ in size, which this step does not model yet"


def _sized(groups, key: int) -> tuple[VdevGroup, ...]:
    return tuple(VdevGroup(g.kind, g.width, g.parity, g.count, g.draid_data, g.draid_spares, sizes=((g.width, key),))
                 for g in groups)


def _sized_classes(classes, key: int) -> tuple[ClassGroup, ...]:
    return tuple(ClassGroup(c.alloc_class, _sized((c.group,), key)[0]) for c in classes)


def _class_candidates(count: int, weakest: int) -> list[ClassGroup]:
    """Special vdevs of the new disks (mirrors as redundant as the data vdevs, and pairs), and a log:
    a mirror of each pair, or the one disk."""
    found: list[ClassGroup] = []
    for width in dict.fromkeys((max(weakest + 1, 2), 2)):
        if count >= width and count % width == 0:
            found.append(ClassGroup("special", VdevGroup(VdevKind.MIRROR, width, width - 1, count // width)))
    if count == 1:
        found.append(ClassGroup("log", VdevGroup(VdevKind.DISK, 1)))
    elif count % 2 == 0:
        found.append(ClassGroup("log", VdevGroup(VdevKind.MIRROR, 2, 1, count // 2)))
    return found


def growth(state: PoolState, check: ModelCheck, count: int, disk_bytes: int, *,
           sector_bytes: int = 512, whole_disk: bool = True, attached: Mapping[str, int] | None = None) -> Growth:
    """Every way to take `count` disks of `disk_bytes` each into the pool (whole_disk=False: the bytes
    ZFS will see, as of a file or partition; attached: disks zpool attach gave each raidz vdev before,
    from zpool history, as check_model takes them)."""
    layout = pool_layout(state)
    if isinstance(layout, str):
        return Growth(count, disk_bytes, (), f"no growth figures: {layout}")
    data = state.of_class("normal")
    note = _note(state, layout)
    new_osize = linux_whole_disk_osize(disk_bytes, sector_bytes) if whole_disk else disk_bytes
    if new_osize < SPA_MINDEVSIZE:   # zpool add and attach refuse it (SPA_MINDEVSIZE): the new disks, named
        least = min_whole_disk_bytes(sector_bytes) if whole_disk else SPA_MINDEVSIZE
        raise LayoutError(f"new disks of {disk_bytes:,} bytes leave ZFS {new_osize:,} of each, below its minimum "
                          f"device size of 64 MiB: give new disks of at least {least:,} bytes "
                          f"({least / 2**20:.1f} MiB)")
    old = check.vdev_bytes
    expanded, why_none = _expanded(state, check, layout, attached)
    rules = None
    if not why_none:
        try:
            rules = rules_for(check.version)
        except ZfslabError as e:
            why_none = f"no capacity figures: {e}"
    # what the special and dedup vdevs hold now, added back to AVAIL by 2.3.7+ and 2.4.1+ (as in check_model):
    # the figures after count it as it is, though the new vdev's own metadata adds a few blocks there
    held = class_alloc_bytes(state)
    key_new = new_osize  # the sized layout's key: any size as written that maps to what ZFS sees

    def capacity(groups_new=(), classes_new=()) -> tuple[int, int]:
        """(SIZE, USED+AVAIL) of the empty pool with the new vdevs."""
        if expanded is not None:
            return _beside_expanded(*expanded, old, new_osize, check.ashift, rules, check.version.split("-")[0],
                                    groups_new, classes_new, held)
        # each vdev on its own disks: the old ones as ZFS sees them, the new disks partitioned as zpool
        # makes them; a vdev added later is laid out as at creation (vdev_metaslab_set_size); the class
        # vdevs stay (spares and cache devices change neither SIZE nor USED+AVAIL)
        if old is None:  # disks of several sizes: each vdev as check_model sized it, its disks' bytes as keys
            there = pool_layout(state, sized=True)
            sizes = {b: b for b in there.disk_sizes()} | {b: b for b in there.class_disk_sizes()}
            sizes[key_new] = new_osize
            groups, classes = there.groups, there.classes
        else:
            sizes = {old: old, key_new: new_osize}
            groups, classes = _sized(layout.groups, old), _sized_classes(layout.classes, old)
        after = Layout(groups + _sized(groups_new, key_new), classes=classes + _sized_classes(classes_new, key_new))
        pool = pool_capacity(after, sizes, ashift=check.ashift, rules=rules, class_alloc_bytes=held)
        return pool.size_bytes, pool.usable_bytes

    weakest = min(g.parity for g in layout.groups)
    # the pool survives what its weakest data, special or dedup vdev does (a log's loss loses no pool)
    survives_now = min([weakest, *(c.group.parity for c in layout.classes if c.holds_pool_data)])
    consistent = replication_mismatch(layout) is None  # the pool has one replication level zpool add checks
    options: list[GrowthOption] = []
    before = capacity() if not why_none else None

    def figured(option: GrowthOption, groups_new=(), classes_new=()) -> GrowthOption:
        option = replace(option, added=tuple(("normal", g) for g in groups_new)
                         + tuple((c.alloc_class, c.group) for c in classes_new))
        if why_none:
            return replace(option, reason=why_none)
        size, usable = capacity(groups_new, classes_new)
        return replace(option, usable_after_bytes=usable, size_after_bytes=size, gain_bytes=usable - before[1])

    for group, like in _candidates(layout.groups, count):
        unequal = sizes_unequal((new_osize, old)) if old else any(
            sizes_unequal((new_osize, leaf.device_bytes)) for v in data for leaf in v.leaves if leaf.device_bytes)
        option = _add_option(state, layout, group, like, survives_now, consistent, unequal, check.version)
        options.append(figured(option, (group,)))
    for extra in _class_candidates(count, weakest):
        options.append(figured(_class_option(state, layout, extra, weakest, survives_now, check.version),
                                      classes_new=(extra,)))
    attach = _attach(state, check, layout, data, count, new_osize, attached)
    if attach is not None:
        options.append(attach)
    options += _attach_sides(state, check, count, new_osize, before)
    # vdevs like those there first: the pool's balance of space, speed and safety, more of it; then
    # the raidz grown (more space, the same parity over more disks); then the rest, safest first;
    # special and log vdevs last (they add no room for data)
    options.sort(key=lambda o: (0 if o.like_the_pool else 1 if o.how == "zpool attach" else
                                3 if o.adds.startswith(("special=", "log=")) else 2, -o.survives, -(o.gain_bytes or 0)))
    return Growth(count, disk_bytes, tuple(options), note, new_osize)


def _note(state: PoolState, layout: Layout) -> str:
    """What holds for every option: whether an add is for good, and where old data stays."""
    # device removal refuses a pool with any top-level vdev of parity (raidz or dRAID: vdev_get_nparity)
    raidz = any(g.kind in (VdevKind.RAIDZ, VdevKind.DRAID) for g in layout.groups)
    draid = any(g.kind is VdevKind.DRAID for g in layout.groups)
    note = ("every `zpool add` on this pool is for good: `zpool remove` takes a top-level vdev out only "
            f"when no {'dRAID' if draid else 'raidz'} vdev is there" if raidz else
            "`zpool remove` can take an added mirror or plain-disk vdev out again (its data moved to the others)")
    if state.alloc_bytes * 10 > state.size_bytes:
        note += ("; data written before stays where it is (ZFS spreads new writes by free space, so the "
                 "new vdevs take most of them until the pool evens out)")
    return note


def _expanded(state: PoolState, check: ModelCheck, layout: Layout,
              attached: Mapping[str, int] | None) -> tuple[tuple[Layout, int] | None, str]:
    """(the one raidz vdev, expanded: its original layout and the disks attached to it, or None;
    why there are no capacity figures, or "")."""
    if check.model_usable_bytes is None:
        return None, f"no capacity figures: {check.reason}"
    if not state.expanded:
        return None, ""
    # check_model gave figures, so the pool is one raidz vdev whose attaches zpool history shows
    data = state.of_class("normal")
    added = (attached or {}).get(data[0].name, 0) if len(data) == 1 else 0
    group = layout.groups[0]
    if not added:
        return None, ("no capacity figures: its raidz was expanded, and zpool history does not show how many "
                      "disks zpool attach gave it, so its original width is unknown")
    if layout.classes:
        return None, "no capacity figures: model/expansion.py models an expanded raidz without special or log vdevs"
    return (Layout((VdevGroup(VdevKind.RAIDZ, group.width - added, group.parity),)), added), ""


def _add_option(state: PoolState, layout: Layout, group: VdevGroup, like: bool, survives_now: int,
                consistent: bool, unequal_sizes: bool, version: str) -> GrowthOption:
    """`zpool add` of `group`, its command and cautions, without figures yet."""
    weakest = min(g.parity for g in layout.groups)
    cautions = []
    if group.parity < weakest:
        cautions.append(f"it survives {group.parity} failed disk{'s' * (group.parity != 1)} and the vdevs "
                        f"there {weakest}: losing it loses the whole pool")
    # zpool add compares kind, parity and width with the vdevs there (check_replication() in
    # cmd/zpool/zpool_vdev.c) and refuses any difference without -f, unless the pool's own vdevs
    # already differ: then it finds no level to compare with and takes anything
    shape_differs = any((g.kind, g.width, g.parity) != (group.kind, group.width, group.parity)
                        for g in layout.groups)
    force = consistent and _add_refused(layout.groups[-1], group, version)
    if force:
        cautions.append("its kind, parity or width differs from the vdevs there: zpool add refuses it without "
                        "-f (\"mismatched replication level\"), and the vdevs fill and wear unevenly")
    elif shape_differs:
        cautions.append("its kind, parity or width differs from the data vdevs there: they fill and wear unevenly")
    if unequal_sizes:
        cautions.append("the new disks differ in size from those there by more than 10 %: the vdevs fill "
                        "unevenly")
    after_layout = replace(layout, groups=layout.groups + (group,))
    return GrowthOption("zpool add", group.token, str(after_layout), min(survives_now, group.parity),
                        (_add_command(state.name, group, force),), like, cautions=tuple(cautions))


def _beside_expanded(original: Layout, added: int, old: int, new_osize: int, ashift: int, rules: Rules,
                     release: str, groups_new, classes_new, held: int) -> tuple[int, int]:
    """(SIZE, USED+AVAIL) of a pool of one expanded raidz vdev (model/expansion.py: the original width's
    metaslab size and deflate ratio) and new vdevs beside it, each laid out as at creation; one slop
    from the normal class's dspace, as capacity._pool takes it."""
    step = expand(original, old, added, release=release, ashift=ashift).steps[-1]
    size, normal, log = step.size_bytes, step.dspace_bytes, step.embedded_log_bytes
    pooled = False
    for alloc_class, g in [("normal", g) for g in groups_new] + [(c.alloc_class, c.group) for c in classes_new]:
        if alloc_class == "log":   # spa_log_class: in neither SIZE nor dspace
            continue
        v = vdev_capacity(g, new_osize, ashift, rules, rules, alloc_class)
        size += v.size_bytes * g.count
        log += v.embedded_log_bytes * g.count
        if alloc_class == "normal":
            normal += v.dspace_bytes * g.count
        else:
            pooled = True
    back = held if rules.class_alloc_in_dspace and pooled else 0
    return size, max(normal - slop_bytes(normal, log, rules), 0) + back


def _add_refused(current: VdevGroup, new: VdevGroup, version: str) -> bool:
    """zpool add refuses `new` without -f beside a pool of one replication level (check_replication()
    in cmd/zpool/zpool_vdev.c): a raidz and a mirror pass when the mirror survives as many failures
    (is_raidz_mirror, 2.2+); otherwise kind, parity and width must match."""
    def rep(g: VdevGroup) -> tuple[VdevKind, int, int]:
        return g.kind, g.width, g.parity if g.kind in (VdevKind.RAIDZ, VdevKind.DRAID) else 0
    kinds = {current.kind, new.kind}
    try:
        since_22 = tuple(int(x) for x in version.split("-")[0].split(".")[:2]) >= (2, 2)
    except ValueError:
        since_22 = False
    if since_22 and VdevKind.MIRROR in kinds and kinds & {VdevKind.RAIDZ, VdevKind.DRAID}:
        raidz, mirror = (current, new) if new.kind is VdevKind.MIRROR else (new, current)
        return raidz.parity != mirror.width - 1
    return rep(current) != rep(new)


def _class_option(state: PoolState, layout: Layout, extra: ClassGroup, weakest: int, survives_now: int,
                  check_version: str) -> GrowthOption:
    """A special or log vdev of the new disks: what it does, its command and what to watch."""
    group = extra.group
    after = replace(layout, classes=layout.classes + (extra,))
    survives = min(survives_now, group.parity) if extra.holds_pool_data else survives_now
    # zpool add checks the new vdev's replication against the pool's (check_replication(): special
    # vdevs take part, log vdevs do not), and finds no level to compare with when the pool's own
    # vdevs already differ (get_replication() returns none)
    force = extra.holds_pool_data and replication_mismatch(layout) is None and \
        _add_refused(layout.groups[-1], group, check_version)
    disks = iter(_new(group.disks))
    vdevs = " ".join(" ".join(filter(None, [group.spec, *(next(disks) for _ in range(group.width))]))
                     for _ in range(group.count))
    command = f"zpool add {'-f ' if force else ''}{state.name} {extra.alloc_class} {vdevs}"
    cautions = []
    if extra.alloc_class == "special":
        if group.parity < weakest:
            cautions.append(f"it survives {group.parity} failed disk{'s' * (group.parity != 1)} and the data vdevs "
                            f"{weakest}: a special vdev holds the pool's metadata, so losing it loses the whole pool")
        cautions += [
            "it takes the metadata written from now on, and file blocks up to the datasets' special_small_blocks "
            "(0 by default: none); what was written before stays on the data vdevs until rewritten",
            "USED+AVAIL grows by what it comes to hold (2.3.7+ and 2.4.1+ add it back; before, what it holds "
            "still counts in USED): the figure is the pool's with what the special vdevs hold now",
            *(["zpool add refuses it without -f (\"mismatched replication level\"): its redundancy differs from the "
               "data vdevs'"] if force else []),
        ]
    else:
        cautions += [
            "a log (SLOG) takes only synchronous writes (databases, NFS, VMs), and the pool's usable space does not "
            "change; lost with a crash, it loses the last seconds of them",
            "`zpool remove` can take a log vdev out again",
        ]
    return GrowthOption("zpool add", extra.token, str(after), survives, (command,), False, cautions=tuple(cautions))


def _attach(state: PoolState, check: ModelCheck, layout: Layout, data, count: int,
            new_osize: int, attached: Mapping[str, int] | None) -> GrowthOption | None:
    """RAIDZ expansion: the new disks attached one at a time to the pool's one raidz vdev (OpenZFS
    2.3+); None when the pool is not one raidz vdev."""
    if len(data) != 1 or data[0].kind != "raidz":
        return None
    vdev, group = data[0], layout.groups[0]
    # one disk at a time: a raidz vdev takes the next attach once its expansion is done
    commands = (f"zpool attach {state.name} {vdev.name} NEW1", f"zpool wait -t raidz_expand {state.name}")
    after = replace(layout, groups=(VdevGroup(VdevKind.RAIDZ, group.width + count, group.parity),))
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
    # an expanded vdev: expansion.py from its original width, with the disks attached before
    before = (attached or {}).get(vdev.name, 0) if state.expanded else 0
    if state.expanded and not before:
        return replace(option, reason="no capacity figures: the vdev was expanded, and zpool history does not "
                                    "show how many disks zpool attach gave it, so its original width is unknown")
    if layout.classes:
        return replace(option, reason="no capacity figures: model/expansion.py models a pool of one raidz vdev "
                                    "alone, not beside special, dedup or log vdevs")
    if check.model_usable_bytes is not None and old is None:
        return replace(option, reason=MIXED_SIZES)
    if check.model_usable_bytes is None or old is None or check.ashift is None:
        return replace(option, reason=f"no capacity figures: {check.reason}")
    if old and sizes_unequal((new_osize, old)):  # larger: smaller ones were refused above
        option = replace(option, cautions=option.cautions + (
            "each new disk gives only what the smallest child does; the rest waits until every disk is as "
            "large (autoexpand)",))
    try:
        original = Layout((VdevGroup(VdevKind.RAIDZ, group.width - before, group.parity),))
        steps = expand(original, old, before + count, release=release, ashift=check.ashift).steps
    except ZfslabError as e:
        return replace(option, reason=str(e))
    return replace(option, usable_after_bytes=steps[-1].usable_bytes, size_after_bytes=steps[-1].size_bytes,
                   gain_bytes=steps[-1].usable_bytes - steps[before].usable_bytes)


def side_attached(state: PoolState, vdev_name: str, count: int, first: int = 1,
                  device_bytes: int | None = None) -> PoolState:
    """The pool once `count` new disks (NEW<first>.., of `device_bytes` as ZFS sees them, if known) are
    attached to its plain-disk or mirror vdev `vdev_name`: a mirror of the disk or sides it had and the
    new ones."""
    def grown(v: PoolVdev) -> PoolVdev:
        if v.name != vdev_name:
            return v
        sides = v.children or (v,)
        new = tuple(PoolVdev(f"NEW{i}", "disk", v.alloc_class, "ONLINE", device_bytes=device_bytes)
                    for i in range(first, first + count))
        return PoolVdev(v.name if v.children else f"mirror-{v.short_name}", "mirror", v.alloc_class, v.state,
                        size_bytes=v.size_bytes, alloc_bytes=v.alloc_bytes, ashift=v.ashift, children=sides + new)
    return replace(state, vdevs=tuple(grown(v) for v in state.vdevs))


def sides_attached(state: PoolState, attach_to: tuple[tuple[str, int], ...]) -> PoolState:
    """The pool once each (vdev, sides) of attach_to is done, the new disks NEW1.. in that order."""
    first = 1
    for name, sides in attach_to:
        state, first = side_attached(state, name, sides, first), first + sides
    return state


def _attach_sides(state: PoolState, check: ModelCheck, count: int, new_osize: int,
                  before: tuple[int, int] | None) -> list[GrowthOption]:
    """`zpool attach` of new disks to plain-disk or mirror data vdevs (zpool-attach(8): a plain disk
    becomes a two-way mirror, a mirror gains a side): to one that survives fewer failures than the
    pool's most redundant (the vdev-less-redundant finding), as many as it lacks; and, in a pool of
    mirrors and plain disks alone, one more side to each, which raises the failures the whole pool
    survives by one. Unlike `zpool add` it can be undone (`zpool detach`). SIZE and USED+AVAIL stay:
    a mirror is as large as its smallest side, and zpool attach refuses a disk smaller than the one
    it mirrors."""
    data = state.of_class("normal")
    most = max((failures_survived(v) for v in data), default=0)
    plans = [((v,), min(count, most - failures_survived(v))) for v in data
             if v.kind in ("disk", "file", "mirror") and failures_survived(v) < most]
    if not plans and data and len(data) <= count and all(v.kind in ("disk", "file", "mirror") for v in data):
        plans = [(tuple(data), 1)]
    return [_sides_option(state, check, vdevs, k, count, most, new_osize, before) for vdevs, k in plans]


def _sides_option(state: PoolState, check: ModelCheck, vdevs: tuple[PoolVdev, ...], k: int, count: int, most: int,
                  new_osize: int, before: tuple[int, int] | None) -> GrowthOption:
    """`k` new sides attached to each of `vdevs`, its commands, cautions and figures."""
    attach_to = tuple((v.name, k) for v in vdevs)
    after = sides_attached(state, attach_to)
    survives = min(failures_survived(x) for x in after.vdevs if x.alloc_class in ("normal", "special", "dedup"))
    new = iter(range(1, count + 1))
    commands = tuple(f"zpool attach {state.name} {(v.children or (v,))[0].name} NEW{next(new)}"
                     for v in vdevs for _ in range(k))
    used = k * len(vdevs)
    cautions = ["each attach resilvers the new side from the vdev's data before it counts (`zpool status` "
                "shows it); `zpool detach` can take a side out again"]
    lacking = most - failures_survived(vdevs[0])
    if len(vdevs) == 1 and 0 < k < lacking:
        cautions.append(f"it then survives {failures_survived(vdevs[0]) + k} failed disks, the pool's other data "
                        f"vdevs {most}: {lacking - k} more disks attached would match them")
    if count > used:
        cautions.append(f"it takes {used} of the {count} new disks; the rest stay free for another option")
    sides = [leaf.device_bytes for v in vdevs for leaf in v.leaves if leaf.device_bytes]
    if sides and new_osize > min(sides) and sizes_unequal((new_osize, min(sides))):
        cautions.append("a mirror stays as large as its smallest side: the new disks' extra space waits "
                        "until the old ones are replaced too (autoexpand)")
    adds = (f"+{k} disk{'s' * (k > 1)} to {vdevs[0].short_name}" if len(vdevs) == 1 else
            f"+1 disk to each of {len(vdevs)} vdevs")
    layout_after = pool_layout(after)
    option = GrowthOption("zpool attach", adds, str(layout_after), survives, commands, False,
                          cautions=tuple(cautions), attach_to=attach_to)
    if sides and new_osize < min(sides):
        return replace(option, reason="the new disks are smaller than those they would mirror: zpool attach "
                                      "refuses them")
    if before is None or isinstance(layout_after, str):
        return replace(option, reason=f"no capacity figures: {check.reason}")
    return replace(option, usable_after_bytes=before[1], size_after_bytes=before[0], gain_bytes=0)


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
    if check.model_usable_bytes is not None and old is None:
        why = MIXED_SIZES
    elif check.model_usable_bytes is None or old is None or check.ashift is None:
        why = f"no capacity figures: {check.reason}"
    elif not check.agrees:
        why = "no capacity figures: the model does not agree with this pool as it is"
    elif state.expanded:
        why = "no capacity figures: its raidz was expanded (old blocks keep the old ratio), not modelled here yet"
    elif new_osize < old:
        why = "the new disks are smaller than those there: zpool replace refuses them"
    if why:
        return Growth(len(leaves), disk_bytes, (replace(option, reason=why),), "", new_osize)
    # the data vdevs grow from `old`; special, dedup and log vdevs keep their disks and their size
    grown = replace(layout, classes=_sized_classes(layout.classes, old))
    try:
        rules = rules_for(check.version)
        after = pool_capacity(grown, new_osize, ashift=check.ashift, rules=rules, grown_from_bytes=old,
                              class_vdev_bytes={old: old}, class_alloc_bytes=class_alloc_bytes(state))
    except ZfslabError as e:
        return Growth(len(leaves), disk_bytes, (replace(option, reason=f"no capacity figures: {e}"),), "", new_osize)
    note = ("the metaslabs keep the size the vdevs were created with, so the pool is not quite what a new "
            "pool of these disks would be")
    if layout.classes:
        note += ("; the special, dedup and log vdevs keep their disks (replace them too if they should grow: "
                 "each vdev grows when its last disk is replaced)")
    return Growth(len(leaves), disk_bytes, (replace(option, usable_after_bytes=after.usable_bytes,
                                                    size_after_bytes=after.size_bytes,
                                                    gain_bytes=after.usable_bytes - check.model_usable_bytes),),
                  note, new_osize)
