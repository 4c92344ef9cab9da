"""This pool's risk of loss over the next years as it stands now (docs/pool.md#risk-now): each data,
special and dedup vdev is its Markov chain (the one plan and risk use), started where the vdev is
(a degraded raidz2 with one disk out starts one failure in), with the pool's own disk size, fill
and disk class; each vdev's failure rate from its disks' ages (SMART power-on hours on the bathtub
curve, model/disk_age.py) where SMART gives them, and raised for disks of one batch; then the same
pool with every disk out replaced, with every disk SMART flags as failing gone as well, and with its
oldest disk replaced. Pure: the caller has read the pool, its disks and their counters."""

from __future__ import annotations

from dataclasses import dataclass

from zfslab.model.disk_age import (BATCH_FRAILTY_VARIANCE, HOURS_PER_YEAR, DiskAge, afr_of_rate, disk_age,
                                   largest_batch, vdev_rate_ahead)
from zfslab.model.layouts import Layout, VdevGroup
from zfslab.model.pool_model import _group, failures_survived, pool_layout
from zfslab.model.pool_state import DiskFacts, DiskHealth, PoolState, PoolVdev, disk_class
from zfslab.model.reliability import markov
from zfslab.model.reliability.params import RiskParams, params_for_class
from zfslab.model.reliability.risk import class_params, vdev_chain

YEARS = (1.0, 5.0)
# Replacing the oldest disk is offered when it lowers every horizon's figure by this much: less is
# within the table's own uncertainty (zfslab's judgement), and another vdev dominates the risk then.
OLDEST_MIN_GAIN = 0.05


@dataclass(frozen=True, slots=True)
class VdevRate:
    """The failure rate one vdev's chain used over each horizon of RiskNow.years, and what it came from."""

    vdev: str
    afr_per_year: tuple[float, ...]  # a fraction, one per horizon: the disks' mean rate over it
    disks: int
    disks_aged: int  # disks whose power-on hours gave their rate; the others have the class's
    mean_age_years: float | None  # of the aged disks
    batch_disks: int = 0  # disks of one batch, when enough of them to lose the vdev (0: none)
    batch_model: str = ""
    # a batch: the factors on the survivors' rate in each state with failures, from where the vdev is
    batch_factors: tuple[float, ...] = ()


@dataclass(frozen=True, slots=True)
class RiskNow:
    """P(losing the pool) within each of `years`, or why there is none (`reason`)."""

    years: tuple[float, ...]
    disk_class: str = ""
    p_loss: tuple[float, ...] = ()  # as it stands
    p_loss_repaired: tuple[float, ...] = ()  # every disk that is out replaced and resilvered
    p_loss_flagged_out: tuple[float, ...] = ()  # if every disk SMART flags as failing failed now
    disks_out: int = 0
    disks_flagged: int = 0
    reason: str = ""
    by_age: bool = False  # the rates came from the disks' ages (else the class's rate for every disk)
    class_afr_per_year: float = 0.0
    rates: tuple[VdevRate, ...] = ()
    notes: tuple[str, ...] = ()  # disks whose age is unknown or was ignored, and why
    oldest_disk: str = ""  # the oldest disk in service, when replacing it lowers the risk
    oldest_age_years: float | None = None
    p_loss_oldest_replaced: tuple[float, ...] = ()


def _out(vdev: PoolVdev) -> int:
    """Children of a top-level vdev not serving now (offline, faulted, removed, or still resilvering)."""
    return sum(child.state != "ONLINE" for child in vdev.children) if vdev.children else int(vdev.state != "ONLINE")


def _out_leaves(vdev: PoolVdev) -> set[str]:
    """The leaves of the children _out counts: a replacement takes their place as a new disk."""
    return {leaf.name for c in vdev.children or (vdev,) if c.state != "ONLINE" for leaf in c.leaves}


def _flagged(vdev: PoolVdev, health: dict[str, DiskHealth]) -> int:
    """Children of the vdev still in with a disk its SMART counters flag as failing (DiskHealth.failing)."""
    def failing(child: PoolVdev) -> bool:
        return any(leaf.name in health and health[leaf.name].failing for leaf in child.leaves)
    return sum(c.state == "ONLINE" and failing(c) for c in vdev.children or (vdev,))


def _serving(vdev: PoolVdev, health: dict[str, DiskHealth]) -> tuple[PoolVdev, ...]:
    """The leaves of the vdev's children serving now (ONLINE), less those SMART flags as failing in `health`."""
    return tuple(leaf for c in vdev.children or (vdev,) if c.state == "ONLINE" for leaf in c.leaves
                 if not (leaf.name in health and health[leaf.name].failing))


def _ages(leaves: list[PoolVdev], health: dict[str, DiskHealth]) -> dict[str, DiskAge]:
    """Each leaf's age from its disk's SMART report, checked (model/disk_age.py disk_age)."""
    ages = {}
    for leaf in leaves:
        h = health.get(leaf.name)
        ages[leaf.name] = (disk_age(leaf.short_name, None, why_none="no SMART report") if h is None else
                           disk_age(leaf.short_name, h.power_on_hours, h.model, h.power_on_note))
    return ages


def _class_note(cls: str, afr: float, health: dict[str, DiskHealth]) -> str:
    rate = f"the {cls.upper()} class's {100 * afr:.1f} % a year for every disk"
    if cls != "hdd":
        return f"{rate}: the age table is for spinning disks (flash wears by writes, not modelled yet)"
    if not health:
        return f"{rate}: no SMART report was read (smartctl not installed, or no disk answered)"
    return f"{rate}: no disk's SMART gives usable power-on hours"


@dataclass(frozen=True)
class _Chains:
    """One pool's vdev chains and its disks' ages: P(loss) with some disks out, and the rate each
    vdev's chain takes when the disks' ages are known (by_age)."""

    layout: Layout
    members: tuple[tuple[VdevGroup, PoolVdev, RiskParams], ...]
    ages: dict[str, DiskAge]
    hours: tuple[float, ...]
    class_rate: float
    by_age: bool

    def vdev_rate(self, v: PoolVdev, serving: tuple[PoolVdev, ...], new: frozenset[str], start: int) -> VdevRate:
        """The rate the vdev's chain takes over each horizon, from the disks serving in it (a disk in `new`
        replaced by a new one; without an age, the class rate), and its batch.

        Neither the disks' plain mean nor the worst disk: a vdev is lost when p + 1 - start of them fail
        before the repairs, so its loss term is a product of that many disks' rates, summed over the sets
        of disks and integrated over the horizon (disk_age.vdev_rate_ahead). The plain mean overstates it
        for disks of mixed ages (Maclaurin's inequality) and understates it across an age band's edge
        (Jensen's); the worst disk's rate overstates it by (worst/mean)^(p+1)."""
        serving = serving or v.leaves   # a vdev lost already: its figure is 1, the rate only says what it was
        ages = self.ages
        disks = [(0.0, self.class_rate) if leaf.name in new else (ages[leaf.name].hours, self.class_rate)
                 for leaf in serving]
        aged = [ages[leaf.name] for leaf in serving if leaf.name not in new and ages[leaf.name].hours is not None]
        q = failures_survived(v) + 1 - start
        per_horizon = tuple(afr_of_rate(vdev_rate_ahead(disks, h, q)) for h in self.hours)
        batch = largest_batch(tuple(aged))
        big = len(batch) > failures_survived(v) - start  # enough of one batch to lose the vdev together
        return VdevRate(v.short_name, per_horizon, len(serving), len(aged),
                        sum(a.age_years for a in aged) / len(aged) if aged else None,
                        len(batch) if big else 0, batch[0].model if big else "",
                        tuple(1 + k * BATCH_FRAILTY_VARIANCE for k in range(max(start, 1), failures_survived(v) + 1))
                        if big else ())

    def _vdev_p(self, group: VdevGroup, p: RiskParams, rate: VdevRate | None, start: int) -> list[float]:
        ps = []
        for i, h in enumerate(self.hours):
            vp = p.with_(afr=rate.afr_per_year[i]) if rate else p
            chain, _ = vdev_chain(group, self.layout, vp,
                                  frailty_variance=BATCH_FRAILTY_VARIANCE if rate and rate.batch_disks else 0.0)
            ps += markov.loss_probabilities(chain, [h], start=start)
        return ps

    def pool_p(self, extra_out, serving, new: frozenset[str] = frozenset()) -> tuple[tuple[float, ...],
                                                                                       tuple[VdevRate, ...]]:
        """P(loss) with `extra_out(v)` failures in now, over `serving(v)`'s disks."""
        per_vdev, rates = [], []
        for group, v, p in self.members:
            start = extra_out(v)
            rate = self.vdev_rate(v, serving(v), new, start) if self.by_age else None
            rates.append(rate)
            lost = start > failures_survived(v)   # more out than it survives: lost already
            per_vdev.append([1.0] * len(self.hours) if lost else self._vdev_p(group, p, rate, start))
        return (tuple(markov.pool_loss_probability([(ps[i], 1) for ps in per_vdev]) for i in range(len(self.hours))),
                tuple(r for r in rates if r))


def _members(state: PoolState, params: RiskParams) -> list[tuple[VdevGroup, PoolVdev, RiskParams]] | str:
    """Each data, special and dedup vdev with its chain's group and rates; a reason when one has none."""
    members = []
    for v in state.vdevs:
        if v.alloc_class not in ("normal", "special", "dedup"):
            continue
        group = _group(v)
        if isinstance(group, str):
            return group
        sizes = [leaf.device_bytes for leaf in v.leaves]
        if sizes and None not in sizes:
            # each vdev on its own disks, counted as its smallest (the bytes a resilver may rewrite of
            # each): the pool's one size where they are alike, each vdev's own where they differ
            members.append((group, v, params.with_(disk_bytes=min(sizes))))
        else:
            members.append((group, v, params if v.alloc_class == "normal" else class_params(group, params)))
    return members


def risk_now(state: PoolState, vdev_bytes: int | None, disks: dict[str, DiskFacts],
             health: dict[str, DiskHealth], *, years: tuple[float, ...] = YEARS) -> RiskNow:
    layout = pool_layout(state)
    if isinstance(layout, str):
        return RiskNow(years, reason=layout)
    if vdev_bytes is None:  # disks of several sizes: each vdev takes its own (_members)
        seen = [leaf.device_bytes for v in state.vdevs if v.alloc_class in ("normal", "special", "dedup")
                for leaf in v.leaves]
        if not seen or None in seen:
            return RiskNow(years, reason="the disks' size as ZFS sees them was not shown")
        vdev_bytes = max(seen)
    cls = disk_class(disks)
    # the resilver reads what is allocated; an empty pool still has its metadata (RiskParams wants > 0)
    fill = min(max(state.alloc_bytes / state.size_bytes, 1e-6), 1.0) if state.size_bytes else 1e-6
    params = params_for_class(cls, vdev_bytes, years=years, fill=fill)
    members = _members(state, params)
    if isinstance(members, str):
        return RiskNow(years, reason=members)
    ages = _ages([leaf for _, v, _ in members for leaf in v.leaves], health)
    # the table where any disk's age is known (a disk without one keeps the class rate, and is named);
    # none known: the class rate for every disk, replacements too, as before ages were read
    by_age = cls == "hdd" and any(a.hours is not None for a in ages.values())
    chains = _Chains(layout, tuple(members), ages, tuple(y * HOURS_PER_YEAR for y in years),
                     params.failure_rate_per_hour, by_age)

    def in_service(v: PoolVdev) -> tuple[PoolVdev, ...]:
        return _serving(v, {})

    out = sum(_out(v) for _, v, _ in members)
    flagged = sum(_flagged(v, health) for _, v, _ in members)
    now, rates = chains.pool_p(_out, in_service)
    repaired = chains.pool_p(lambda v: 0, lambda v: v.leaves,
                             frozenset().union(*(_out_leaves(v) for _, v, _ in members)))[0] if out else ()
    flagged_out = chains.pool_p(lambda v: _out(v) + _flagged(v, health), lambda v: _serving(v, health))[0] \
        if flagged else ()
    notes = tuple(f"disk {a.name}: {a.note}; the class rate is used for it" for a in ages.values() if a.note) \
        if by_age else (_class_note(cls, params.afr, health),)
    oldest = _oldest(members, ages) if by_age else None
    oldest_p: tuple[float, ...] = ()
    if oldest is not None:
        oldest_p = chains.pool_p(_out, in_service, frozenset({oldest.name}))[0]
        if any(after > (1 - OLDEST_MIN_GAIN) * before for after, before in zip(oldest_p, now)):
            oldest, oldest_p = None, ()  # a new disk's first months would raise a horizon, or it gains little
    return RiskNow(years, cls, now, repaired, flagged_out, out, flagged, by_age=by_age, class_afr_per_year=params.afr,
                   rates=rates, notes=notes, oldest_disk=oldest.short_name if oldest else "",
                   oldest_age_years=ages[oldest.name].age_years if oldest else None, p_loss_oldest_replaced=oldest_p)


def _oldest(members, ages: dict[str, DiskAge]) -> PoolVdev | None:
    """The disk in service with the most power-on hours (the one whose replacement lowers the rate most)."""
    serving = [leaf for _, v, _ in members for c in v.children or (v,) if c.state == "ONLINE" for leaf in c.leaves
               if ages[leaf.name].hours is not None]
    return max(serving, key=lambda leaf: ages[leaf.name].hours, default=None)
