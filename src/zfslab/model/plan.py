"""`plan`: every candidate layout for a set of disks (identical, or of several sizes), one flat row each."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from zfslab.errors import LayoutError, ParamError
from zfslab.model.candidates import candidate_layouts, fill_by_size, mixed_candidate_layouts
from zfslab.model.cost import DiskPrices, disk_counts
from zfslab.model.capacity import PoolCapacity, Rules, linux_whole_disk_osize, osizes, pool_capacity
from zfslab.model.allocation import block_allocation, format_recordsize, usable_at_block
from zfslab.model.layouts import Layout, VdevKind, size_text
from zfslab.model.zpool_syntax import replication_mismatch
from zfslab.model.performance import DiskProfile, predict
from zfslab.model.performance import single_disk as single_disk_speed
from zfslab.model.reliability import markov
from zfslab.model.reliability.params import HOURS_PER_YEAR, RiskParams
from zfslab.model.reliability.risk import RiskResult, markov_risk
from zfslab.model.units import TB, TiB, format_bytes, zfs_nicenum

MAX_DISKS = 1024


@dataclass(frozen=True, slots=True)
class DiskSet:
    """count identical disks; vdev_bytes is what ZFS sees of each (osize).

    Disks of several sizes: `parts` holds one identical DiskSet per size, largest first, and
    count, disk_bytes and vdev_bytes are the total and the largest disk's (risk inputs made from
    disk_bytes are then the largest disk's; plan's risk takes each vdev's own size)."""

    count: int
    disk_bytes: int
    vdev_bytes: int
    whole_disk: bool
    parts: tuple[DiskSet, ...] = ()
    allow_unused: bool = False  # a layout given may use fewer disks than the set holds

    def __post_init__(self) -> None:
        if not 1 <= self.count <= MAX_DISKS:
            raise ParamError("disk_count", str(self.count), f"zfslab plans for 1 to {MAX_DISKS} disks")

    @property
    def label(self) -> str:
        if self.parts:
            return " + ".join(p.label for p in self.parts)
        return f"{self.count} × {format_bytes(self.disk_bytes)}"

    @property
    def sizes(self) -> dict[int, int]:
        """{bytes of a disk: how many}, largest first."""
        parts = self.parts or (self,)
        return {p.disk_bytes: p.count for p in parts}

    @property
    def osizes(self) -> dict[int, int]:
        """{bytes of a disk: bytes ZFS sees of it}."""
        return {p.disk_bytes: p.vdev_bytes for p in (self.parts or (self,))}


def disk_set(count: int, size_bytes: int, *, exact_vdev: bool = False, sector_bytes: int = 512) -> DiskSet:
    """Whole disks on Linux by default; exact_vdev when size_bytes is already what ZFS sees."""
    if exact_vdev:
        return DiskSet(count, size_bytes, size_bytes, False)
    return DiskSet(count, size_bytes, linux_whole_disk_osize(size_bytes, sector_bytes), True)


def mixed_disk_set(parts: list[tuple[int, int]], *, exact_vdev: bool = False, sector_bytes: int = 512,
                   allow_unused: bool = False) -> DiskSet:
    """Disks of several sizes from (count, bytes) pairs; one size gives an identical DiskSet."""
    sizes: dict[int, int] = {}
    for count, size_bytes in parts:
        sizes[size_bytes] = sizes.get(size_bytes, 0) + count
    sets = [disk_set(n, b, exact_vdev=exact_vdev, sector_bytes=sector_bytes) for b, n in sorted(sizes.items(), reverse=True)]
    if len(sets) == 1:
        return DiskSet(*[getattr(sets[0], f) for f in ("count", "disk_bytes", "vdev_bytes", "whole_disk")],
                       allow_unused=allow_unused)
    big = sets[0]
    return DiskSet(sum(d.count for d in sets), big.disk_bytes, big.vdev_bytes, big.whole_disk, tuple(sets), allow_unused)


@dataclass(frozen=True, slots=True)
class PlanRow:
    """One layout of the plan; risk and speed fields are filled by later stages when asked."""

    layout: str
    shape: str
    disks: int
    hot_spares: int
    top_level_vdevs: int
    size_bytes: int
    usable_bytes: int
    raw_bytes: int
    efficiency: float
    failures_guaranteed: int
    failures_best_case: int
    years: tuple[float, ...] = ()
    p_loss: tuple[float, ...] | None = None  # P(pool loss) within each of `years` (zfs semantics)
    p_damage: tuple[float, ...] | None = None  # P(any damaged block) within each of `years`
    mttdl_hours: float | None = None
    speed: dict[str, float] | None = None  # predicted MB/s and IOPS (performance.SpeedPrediction)
    speed_x: dict[str, float] | None = None  # the same as multiples of one disk
    # disks of several sizes, or a layout that leaves disks unused (else 0/None and not in as_dict)
    unused_disks: int = 0
    wasted_bytes: int = 0  # bytes ZFS sees of larger disks in vdevs of smaller ones, unused
    needs_force: str | None = None  # why `zpool create` wants -f (replication_mismatch), or None
    mixed: bool = False
    # dRAID: (block bytes, logical / physical bytes) at 4K, 16K and the recordsize: its fixed stripe
    # width pads every block to whole rows (docs/capacity.md#allocation); () for other layouts
    small_blocks: tuple[tuple[int, float], ...] = ()
    disks_price: float | None = None  # --disk-price: what the disks it uses cost (any currency); None: not asked
    force_command: str = "zpool create"  # what needs_force's -f is for (pool --add ranks `zpool add`s)
    # a workload of small blocks (vm, database): the block size its space is weighed at, and USED+AVAIL
    # in such blocks (raidz parity and padding per block, docs/capacity.md#space-at-a-block-size); 0: not asked
    space_block_bytes: int = 0
    block_usable_bytes: int = 0

    @property
    def space_bytes(self) -> int:
        """The space the recommendation weighs: in the workload's blocks when asked, else zfs list's."""
        return self.block_usable_bytes if self.space_block_bytes else self.usable_bytes

    @property
    def block_usable_tb(self) -> float:
        return self.block_usable_bytes / TB

    @property
    def price_per_usable_tb(self) -> float | None:
        if self.disks_price is None or self.usable_bytes <= 0:
            return None
        return self.disks_price / self.usable_tb

    def p_loss_at(self, years: float) -> float | None:
        if self.p_loss is None:
            return None
        i = min(range(len(self.years)), key=lambda k: abs(self.years[k] - years))
        return self.p_loss[i]

    @property
    def usable_tb(self) -> float:
        return self.usable_bytes / TB

    @property
    def usable_tib(self) -> float:
        return self.usable_bytes / TiB

    @property
    def zfs_list_size(self) -> str:
        return zfs_nicenum(self.usable_bytes)

    def flat(self) -> dict:
        """One scalar per figure (for CSV): risk per horizon, speed per metric and as ×one disk."""
        out = {k: v for k, v in self.as_dict().items() if not isinstance(v, dict)}
        for name, values in (("p_loss", self.p_loss), ("p_damage", self.p_damage)):
            for y, v in zip(self.years, values or ()):
                out[f"{name}_{y:g}y"] = v
        for k, v in (self.speed or {}).items():
            out[k] = v
        for k, v in (self.speed_x or {}).items():
            out[f"{k}_x"] = v
        return out

    def as_dict(self) -> dict:
        risk = {} if self.p_loss is None else {
            "p_loss": {f"{y:g}": v for y, v in zip(self.years, self.p_loss)},
            "p_damage": {f"{y:g}": v for y, v in zip(self.years, self.p_damage or ())},
            "mttdl_hours": self.mttdl_hours,
        }
        if self.speed is not None:
            risk["speed"] = self.speed
            risk["speed_x_single_disk"] = self.speed_x
        if self.small_blocks:
            risk["draid_efficiency_by_block"] = {format_recordsize(b): round(e, 6) for b, e in self.small_blocks}
        if self.disks_price is not None:
            risk |= {"disks_price": round(self.disks_price, 2), "price_per_usable_tb": round(self.price_per_usable_tb, 2)}
        if self.space_block_bytes:
            risk |= {"space_block_bytes": self.space_block_bytes, "block_usable_bytes": self.block_usable_bytes}
        if self.mixed:
            risk |= {"unused_disks": self.unused_disks, "wasted_bytes": self.wasted_bytes,
                     "zpool_create_needs_force": self.needs_force}
        return {
            "layout": self.layout, "shape": self.shape, "disks": self.disks, "hot_spares": self.hot_spares,
            "top_level_vdevs": self.top_level_vdevs, "size_bytes": self.size_bytes,
            "usable_bytes": self.usable_bytes, "usable_tb": round(self.usable_tb, 4),
            "usable_tib": round(self.usable_tib, 4), "zfs_list_size": self.zfs_list_size,
            "raw_bytes": self.raw_bytes, "efficiency": round(self.efficiency, 6),
            "failures_guaranteed": self.failures_guaranteed, "failures_best_case": self.failures_best_case,
        } | risk


def plan_row(cap: PoolCapacity, risk: RiskParams | None = None, speed: DiskProfile | None = None,
             recordsize: int = 128 * 1024, unused_disks: int = 0, disks_price: float | None = None,
             space_block: int = 0) -> PlanRow:
    layout = cap.layout
    extra: dict = {}
    if space_block:
        extra |= {"space_block_bytes": space_block, "block_usable_bytes": usable_at_block(cap, space_block)}
    shape = layout.describe()
    if layout.sized or unused_disks or layout.classes:
        force = replication_mismatch(layout)
        extra |= {"unused_disks": unused_disks, "wasted_bytes": cap.wasted_bytes, "needs_force": force, "mixed": True}
        notes = [f"wastes {format_bytes(cap.wasted_bytes)}"] if cap.wasted_bytes else []
        notes += [f"{unused_disks} disk{'s' * (unused_disks != 1)} unused"] if unused_disks else []
        notes += [f"zpool create needs -f: {force}"] if force else []
        shape = "; ".join([shape] + notes)
    if speed is not None:
        p = predict(layout, speed, recordsize=recordsize, ashift=cap.ashift)
        one = single_disk_speed(speed, recordsize=recordsize, ashift=cap.ashift)
        extra["speed"] = {k: getattr(p, k) for k in p.metrics()}
        extra["speed_x"] = p.relative_to(one)
    draid = next((g for g in layout.groups if g.kind is VdevKind.DRAID), None)
    if draid is not None:
        extra["small_blocks"] = tuple((b, block_allocation(draid, b, cap.ashift).efficiency)
                                      for b in sorted({4096, 16384, recordsize}))
    if risk is not None:
        r = vdev_sized_risk(layout, risk, usable_bytes=cap.usable_bytes)
        extra |= {"years": r.years, "p_loss": r.p_loss, "p_damage": r.p_damage, "mttdl_hours": r.mttdl_hours}
    return PlanRow(
        layout=str(layout), shape=shape, disks=layout.disks, hot_spares=layout.hot_spares,
        top_level_vdevs=layout.top_level_vdevs, size_bytes=cap.size_bytes, usable_bytes=cap.usable_bytes,
        raw_bytes=cap.raw_bytes, efficiency=cap.efficiency, failures_guaranteed=layout.failures_guaranteed,
        failures_best_case=layout.failures_best_case, disks_price=disks_price, **extra,
    )


def vdev_sized_risk(layout: Layout, params: RiskParams, *, usable_bytes: int) -> RiskResult | SizedRisk:
    """markov_risk (zfs semantics); on a sized layout each vdev group resilvers and reads its own
    disks: params.disk_bytes becomes its smallest child (docs/capacity.md#mixed-disk-sizes)."""
    if not layout.sized:
        return markov_risk(layout, params, usable_bytes=usable_bytes)
    runs = {b: markov_risk(layout, params.with_(disk_bytes=b), usable_bytes=usable_bytes)
            for b in {g.smallest_bytes for g in layout.groups}}
    # each group from the run of its own size; combined as markov_risk combines its vdevs
    vdevs = [runs[g.smallest_bytes].vdevs[i] for i, g in enumerate(layout.groups)]
    # special and dedup vdevs follow the data vdevs in every run, each on its own named disk size
    vdevs += next(iter(runs.values())).vdevs[len(layout.groups):]
    hours = [y * HOURS_PER_YEAR for y in params.years]
    p_loss = tuple(markov.pool_loss_probability([(v.p_loss[i], v.count) for v in vdevs]) for i in range(len(hours)))
    rate = sum(v.count / v.mttdl_hours for v in vdevs)
    # each vdev's damaging episodes as its run counted them (by the field model's age bands; not
    # 1 - exp(-bad records): the field model's records per episode are not its episodes)
    damaging = [sum(v.count * v.damaging_by_year[i] for v in vdevs) for i in range(len(hours))]
    return SizedRisk(params.years, tuple(-math.expm1(-d) for d in damaging), p_loss,
                     1.0 / rate if rate > 0 else math.inf)


@dataclass(frozen=True, slots=True)
class SizedRisk:
    """The pool's risk figures from vdevs on disks of several sizes (those plan_row keeps)."""

    years: tuple[float, ...]
    p_damage: tuple[float, ...]
    p_loss: tuple[float, ...]
    mttdl_hours: float


def plan(
    disks: DiskSet, *, ashift: int = 12, rules: Rules | str = "2.1", layouts: list[Layout] | None = None,
    hot_spares: bool = True, draid: bool = True, risk: RiskParams | None = None,
    speed: DiskProfile | None = None, recordsize: int = 128 * 1024, prices: DiskPrices | None = None,
    space_block: int = 0,
) -> list[PlanRow]:
    """One row per layout (by default every candidate for the disks); with `risk`, the
    exact-chain risk of each under ZFS semantics. Disks of several sizes get sized layouts
    (docs/capacity.md#mixed-disk-sizes); a layout given without sizes is filled largest first.
    With `prices`, each row carries what its disks cost (docs/recommend.md#7-cost). With `space_block`
    (a workload of small blocks), each row also carries its USED+AVAIL in blocks of that size, which the
    recommendation then weighs (docs/recommend.md#space-at-the-workloads-block-size)."""
    if risk is not None:
        risk = _sized(risk, disks)
    if layouts is None:
        layouts = (mixed_candidate_layouts(disks.sizes, hot_spares=hot_spares, draid=draid) if disks.parts
                   else candidate_layouts(disks.count, hot_spares=hot_spares, draid=draid))
    rows = []
    for layout in layouts:
        layout, unused = _fit(layout, disks)
        # special, dedup, log and cache disks are beside the plan's disks, partitioned as they are
        extra = osizes(layout, whole_disk=disks.whole_disk) if layout.classes or layout.cache_devices else None
        if layout.sized:
            cap = pool_capacity(layout, disks.osizes, ashift=ashift, rules=rules, class_vdev_bytes=extra)
        else:
            cap = pool_capacity(layout, disks.vdev_bytes, ashift=ashift, rules=rules, disk_bytes=disks.disk_bytes,
                                class_vdev_bytes=extra)
        price = None if prices is None else prices.layout_price(disk_counts(layout, disks.disk_bytes))
        rows.append(plan_row(cap, risk, speed, recordsize, unused, price, space_block))
    return rows


def _sized(risk: RiskParams, disks: DiskSet) -> RiskParams:
    """The risk inputs with the disks' size: the DiskSet says it, once; a RiskParams that names
    another size would have the risk computed for disks the plan does not have."""
    if risk.disk_bytes is not None and risk.disk_bytes != disks.disk_bytes:
        raise ParamError("disk_bytes", str(risk.disk_bytes), f"is not the plan's disks' size ({disks.disk_bytes}); "
                         "leave it out of the risk inputs: plan() takes it from `disks`")
    return risk.with_(disk_bytes=disks.disk_bytes)


def _fit(layout: Layout, disks: DiskSet) -> tuple[Layout, int]:
    """The layout as built on these disks (sized when they differ), and how many disks it leaves unused."""
    have = disks.sizes
    if layout.sized:
        need = layout.disk_sizes()
        short = [b for b, n in need.items() if n > have.get(b, 0)]
        if short:
            b = short[0]
            raise LayoutError(f"layout {layout} uses {need[b]} disks of {size_text(b)} but the plan has "
                              f"{have.get(b, 0)} ({disks.label})")
    elif disks.parts:
        fitted = fill_by_size(layout.data_layout, have)
        if fitted is not None and (layout.classes or layout.cache_devices):
            fitted = replace(fitted, classes=layout.classes, cache_devices=layout.cache_devices,
                             cache_bytes=layout.cache_bytes)
        if fitted is None:
            why = (f"its {layout.hot_spares} hot spares would be of different sizes; write the sizes, e.g. "
                   f"spare:1@{size_text(max(have))}" if layout.disks <= disks.count else "")
            raise LayoutError(f"layout {layout} uses {layout.disks} disks but the plan has {disks.count}"
                              + (f" ({disks.label})" if not why else f"; {why}"))
        layout = fitted
    elif layout.disks > disks.count:
        raise LayoutError(f"layout {layout} uses {layout.disks} disks but the plan has {disks.count}")
    unused = disks.count - layout.disks
    if unused and not disks.allow_unused:
        raise LayoutError(f"layout {layout} uses {layout.disks} disks but the plan has {disks.count}"
                          + ("" if not disks.parts else f" ({disks.label}); pass `allow_unused` to leave "
                                                          f"{unused} unused"))
    return layout, unused
