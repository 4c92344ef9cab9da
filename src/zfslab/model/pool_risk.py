"""This pool's risk of loss over the next years as it stands now (docs/pool.md#risk-now): each data,
special and dedup vdev is its Markov chain (the one plan and risk use), started where the vdev is
(a degraded raidz2 with one disk out starts one failure in), with the pool's own disk size, fill
and disk class; each vdev's failure rate from its disks' ages (SMART power-on hours on the bathtub
curve, model/disk_age.py) where SMART gives them, and raised for disks of one batch; then the same
pool with every disk out replaced, with every disk SMART flags as failing gone as well, and with its
oldest disk replaced, with the disks whose SMART counters raise their rate replaced, and with one
new side attached to each mirror and plain disk (zpool attach: the in-place way to more parity). The
chains step through time (the age bands, a flagged disk's first 60 days), each stretch with its own
rate, carrying the state distribution across. Pure: the caller has read the pool, its disks and their counters."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from zfslab.model.disk_age import (BATCH_FRAILTY_VARIANCE, FLAGGED_HOURS, HOURS_PER_YEAR, SMART_SIGNALS, DiskAge,
                                   DiskHazard, SmartSignal, afr_of_rate, disk_age, largest_batch, loss_term_rate,
                                   rate_edges, vdev_rate_ahead)
from zfslab.model.layouts import Layout, VdevGroup
from zfslab.model.pool_growth import side_attached
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
    flagged: tuple[tuple[str, SmartSignal], ...] = ()  # disks whose SMART counters raise their rate, and by what


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
    flagged_raised: tuple[str, ...] = ()  # disks whose rate their SMART counters raise (disk_age.SMART_SIGNALS)
    p_loss_flagged_replaced: tuple[float, ...] = ()  # those disks replaced by new ones
    # one new side attached to each mirror and plain disk of the pool's data, special and dedup vdevs
    # (zpool-attach(8)): the vdevs, one command each, and P(loss) after; () when it gains too little
    parity_vdevs: tuple[str, ...] = ()
    parity_commands: tuple[str, ...] = ()
    p_loss_parity_added: tuple[float, ...] = ()
    parity_fixed: tuple[str, ...] = ()  # raidz and dRAID vdevs: their parity is set at creation, none added in place


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
    """One pool's vdev chains and its disks' rates: P(loss) with some disks out. With the disks' ages
    known (by_age) or a disk its SMART counters flag (`signals`), each vdev's chain steps through the
    horizon stretch by stretch (piecewise); else it keeps the class's one rate."""

    layout: Layout
    members: tuple[tuple[VdevGroup, PoolVdev, RiskParams], ...]
    ages: dict[str, DiskAge]
    hours: tuple[float, ...]
    class_rate: float
    by_age: bool
    signals: dict[str, SmartSignal]
    spareless: frozenset[str] = frozenset()  # vdevs of disks larger than the hot spares: none stands in

    @property
    def piecewise(self) -> bool:
        return self.by_age or bool(self.signals)

    def hazard(self, leaf: PoolVdev, new: frozenset[str]) -> DiskHazard:
        """A disk's rate ahead: a new one from age 0; its age's band (the class rate without an age),
        raised for its SMART counters' signal (docs/reliability.md#flagged-disks)."""
        if leaf.name in new:
            return self.new_disk()
        signal = self.signals.get(leaf.name)
        age = self.ages[leaf.name].hours if self.by_age else None
        if signal is None:
            return DiskHazard(age, self.class_rate)
        return DiskHazard(age, self.class_rate, signal.factor, FLAGGED_HOURS, signal.after_factor)

    def new_disk(self) -> DiskHazard:
        return DiskHazard(0.0 if self.by_age else None, self.class_rate)

    def vdev_rate(self, v: PoolVdev, serving: tuple[PoolVdev, ...], new: frozenset[str], start: int) -> VdevRate:
        """The rate the vdev's chain takes over each horizon, from the disks serving in it (a disk in `new`
        replaced by a new one; without an age, the class rate), and its batch: the figure shown, while the
        chain steps through the stretches (_vdev_p).

        Neither the disks' plain mean nor the worst disk: a vdev is lost when p + 1 - start of them fail
        before the repairs, so its loss term is a product of that many disks' rates, summed over the sets
        of disks and integrated over the horizon (disk_age.vdev_rate_ahead). The plain mean overstates it
        for disks of mixed ages (Maclaurin's inequality) and understates it across an age band's edge
        (Jensen's); the worst disk's rate overstates it by (worst/mean)^(p+1)."""
        serving = serving or v.leaves   # a vdev lost already: its figure is 1, the rate only says what it was
        disks = [self.hazard(leaf, new) for leaf in serving]
        aged = [self.ages[leaf.name] for leaf in serving
                if self.by_age and leaf.name not in new and self.ages[leaf.name].hours is not None]
        q = failures_survived(v) + 1 - start
        per_horizon = tuple(afr_of_rate(vdev_rate_ahead(disks, h, q)) for h in self.hours)
        batch = largest_batch(tuple(aged))
        big = bool(batch) and len(batch) > failures_survived(v) - start  # enough of one batch to lose it together
        flagged = tuple((leaf.short_name, self.signals[leaf.name]) for leaf in serving
                        if leaf.name in self.signals and leaf.name not in new)
        return VdevRate(v.short_name, per_horizon, len(serving), len(aged),
                        sum(a.age_years for a in aged) / len(aged) if aged else None,
                        len(batch) if big else 0, batch[0].model if big else "",
                        tuple(1 + k * BATCH_FRAILTY_VARIANCE for k in range(max(start, 1), failures_survived(v) + 1))
                        if big else (), flagged)

    def _chain(self, group: VdevGroup, p: RiskParams, rate_per_hour: float | None, batch: bool,
               layout: Layout) -> markov.Chain:
        vp = p if rate_per_hour is None else p.with_(afr=afr_of_rate(rate_per_hour))
        return vdev_chain(group, layout, vp, frailty_variance=BATCH_FRAILTY_VARIANCE if batch else 0.0)[0]

    def _vdev_p(self, group: VdevGroup, p: RiskParams, v: PoolVdev, serving: tuple[PoolVdev, ...],
                new: frozenset[str], rate: VdevRate | None, start: int, layout: Layout) -> list[float]:
        """P(the vdev is lost) within each horizon: its chain run stretch by stretch, each with that
        stretch's rate (the loss-term rule, disk_age.loss_term_rate), the state carried across.

        A vdev with `start` disks out takes two rates: in the states with that many failures or more, its
        survivors' (p + 1 - start more failures lose it); in the states below, reached once repairs are
        done, every disk's with those out replaced by new ones (p + 1 failures lose it). One rate for
        both would carry a flagged survivor's rate into the repaired vdev's every disk."""
        batch = bool(rate and rate.batch_disks)
        if rate is not None:
            q = failures_survived(v) + 1 - start
            survivors = [self.hazard(leaf, new) for leaf in serving or v.leaves]
            whole = survivors + [self.new_disk()] * start   # a new disk for each out
            edges = rate_edges(whole, max(self.hours), self.hours)
            stretches = []
            for t0, t1 in zip(edges, edges[1:]):
                r = loss_term_rate(survivors, q, (t0 + t1) / 2)
                chain = self._chain(group, p, r, batch, layout)
                if start and chain.size == failures_survived(v) + 1:   # a birth-death chain: state k = k out
                    chain = _up_scaled(chain, start, loss_term_rate(whole, q + start, (t0 + t1) / 2) / r)
                stretches.append((chain, t1 - t0))
            ends = markov.piecewise_loss_probabilities(stretches, start=start)
            if ends is not None:
                at = dict(zip(edges[1:], ends))
                return [at[h] for h in self.hours]
        # no stretch to step through (the class's one rate), or a chain too large to carry whole
        # (over 16 states): one rate per horizon, the loss term's (vdev_rate_ahead)
        return [markov.loss_probabilities(self._chain(group, p, rate and -math.log1p(-rate.afr_per_year[i])
                                                       / HOURS_PER_YEAR, batch, layout), [h], start=start)[0]
                for i, h in enumerate(self.hours)]

    def pool_p(self, extra_out, serving, new: frozenset[str] = frozenset()) -> tuple[tuple[float, ...],
                                                                                       tuple[VdevRate, ...]]:
        """P(loss) with `extra_out(v)` failures in now, over `serving(v)`'s disks."""
        per_vdev, rates = [], []
        for group, v, p in self.members:
            start = extra_out(v)
            rate = self.vdev_rate(v, serving(v), new, start) if self.piecewise else None
            rates.append(rate)
            lost = start > failures_survived(v)   # more out than it survives: lost already
            # zpool replace takes a spare no smaller than the disk: a smaller one is no spare for this vdev
            layout = replace(self.layout, hot_spares=0, spare_bytes=0) if v.name in self.spareless else self.layout
            per_vdev.append([1.0] * len(self.hours) if lost else
                            self._vdev_p(group, p, v, serving(v), new, rate, start, layout))
        return (tuple(markov.pool_loss_probability([(ps[i], 1) for ps in per_vdev]) for i in range(len(self.hours))),
                tuple(r for r in rates if r))


def _up_scaled(chain: markov.Chain, below: int, factor: float) -> markov.Chain:
    """The chain with the failure rates out of its states below `below` multiplied by `factor`."""
    rates = [list(row) for row in chain.rates]
    for k in range(min(below, chain.size - 1)):
        rates[k][k + 1] *= factor
    return markov.Chain(tuple(map(tuple, rates)), chain.loss, chain.labels)


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
    # a spinning disk's SMART counters raise its rate (the field study is of spinning disks)
    signals = {leaf.name: sig for _, v, _ in members for c in v.children or (v,) if c.state == "ONLINE"
               for leaf in c.leaves if cls == "hdd" and (sig := smart_signal(health.get(leaf.name)))}
    chains = _Chains(layout, tuple(members), ages, tuple(y * HOURS_PER_YEAR for y in years),
                     params.failure_rate_per_hour, by_age, signals)

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
    notes += tuple(_unraised_note(leaf, health[leaf.name], cls) for _, v, _ in members
                   for leaf in _flagged_leaves(v, health) if leaf.name not in signals)
    raised = frozenset(signals)
    raised_p = chains.pool_p(_out, in_service, raised)[0] if raised else ()
    if any(after > (1 - OLDEST_MIN_GAIN) * before for after, before in zip(raised_p, now)):
        raised_p = ()
    oldest = _oldest(members, ages, raised) if by_age else None
    oldest_p: tuple[float, ...] = ()
    if oldest is not None:
        oldest_p = chains.pool_p(_out, in_service, frozenset({oldest.name}))[0]
        if any(after > (1 - OLDEST_MIN_GAIN) * before for after, before in zip(oldest_p, now)):
            oldest, oldest_p = None, ()  # a new disk's first months would raise a horizon, or it gains little
    attach = _parity_added(state, vdev_bytes, disks, health, fill, years)
    if attach and any(after > (1 - OLDEST_MIN_GAIN) * before for after, before in zip(attach[2], now)):
        attach = None   # the new disks' first months outweigh the side they add, or another vdev dominates
    parity_vdevs, parity_commands, parity_p = attach or ((), (), ())
    return RiskNow(years, cls, now, repaired, flagged_out, out, flagged, by_age=by_age, class_afr_per_year=params.afr,
                   rates=rates, notes=notes, oldest_disk=oldest.short_name if oldest else "",
                   oldest_age_years=ages[oldest.name].age_years if oldest else None, p_loss_oldest_replaced=oldest_p,
                   flagged_raised=tuple(leaf.short_name for _, v, _ in members for leaf in v.leaves
                                        if leaf.name in raised),
                   p_loss_flagged_replaced=raised_p, parity_vdevs=parity_vdevs, parity_commands=parity_commands,
                   p_loss_parity_added=parity_p,
                   parity_fixed=tuple(v.short_name for _, v, _ in members if v.kind in ("raidz", "draid")))


def _parity_added(state: PoolState, vdev_bytes: int, disks: dict[str, DiskFacts], health: dict[str, DiskHealth],
                  fill: float, years: tuple[float, ...]) -> tuple[tuple[str, ...], tuple[str, ...],
                                                                  tuple[float, ...]] | None:
    """(the vdevs, the commands, P(loss) after) once one new disk is attached to each mirror and plain
    disk that holds the pool's data or metadata: zpool attach makes a plain disk a two-way mirror and
    gives a mirror one more side, the only way to add redundancy to a vdev in place (a raidz's parity is
    set at creation). The new sides are as large as the vdev's smallest (zpool attach takes none
    smaller, and the mirror stays its size). None: no such vdev, one of them with a side out, or the
    engine gives no figure for the pool after."""
    targets = [v for v in state.vdevs if v.alloc_class in ("normal", "special", "dedup")
               and v.kind in ("disk", "file", "mirror")]
    if not targets or any(_out(v) for v in targets):
        # a side out: the new one would resilver from the survivors alone, a window the chains after do
        # not carry (they count it serving at once); replacing what is out comes first ("once replaced")
        return None
    after, commands, new = state, [], set()
    for v in targets:
        side = (v.children or (v,))[0].leaves[0]
        name = f"NEW{len(commands) + 1}"
        sizes = [leaf.device_bytes for leaf in v.leaves]
        after = side_attached(after, v.name, 1, len(commands) + 1, None if None in sizes else min(sizes))
        commands.append(f"zpool attach {state.name} {side.short_name} {name}")
        new.add(name)
    p = risk_after(after, vdev_bytes, disks, health, new_leaves=frozenset(new), new_bytes=vdev_bytes, fill=fill,
                   fill_now=fill, out_now=True, years=years)
    return None if isinstance(p, str) else (tuple(v.short_name for v in targets), tuple(commands), p)


def smart_signal(health: DiskHealth | None) -> SmartSignal | None:
    """The signal of the largest factor among the disk's SMART counters above zero (disk_age.SMART_SIGNALS)."""
    found = [sig for counter, sig in SMART_SIGNALS.items() if health is not None and getattr(health, counter)]
    return max(found, key=lambda sig: sig.factor, default=None)


def _flagged_leaves(vdev: PoolVdev, health: dict[str, DiskHealth]) -> list[PoolVdev]:
    return [leaf for c in vdev.children or (vdev,) if c.state == "ONLINE" for leaf in c.leaves
            if leaf.name in health and health[leaf.name].failing]


def _unraised_note(leaf: PoolVdev, health: DiskHealth, cls: str) -> str:
    """Why a disk SMART flags keeps its rate: no field study gives one for what flags it."""
    if cls != "hdd":
        return (f"disk {leaf.short_name}: SMART flags it; its rate is not raised (no field study gives "
                "a solid-state disk's rate after such counters)")
    return (f"disk {leaf.short_name}: SMART flags it (overall assessment or reported uncorrectable errors); "
            "its rate is not raised (no field study gives one for these)")


def _oldest(members, ages: dict[str, DiskAge], raised: frozenset[str]) -> PoolVdev | None:
    """The disk in service with the most power-on hours (the one whose replacement lowers the rate most),
    of those SMART does not flag (replacing those is an option of its own)."""
    serving = [leaf for _, v, _ in members for c in v.children or (v,) if c.state == "ONLINE" for leaf in c.leaves
               if ages[leaf.name].hours is not None and leaf.name not in raised]
    return max(serving, key=lambda leaf: ages[leaf.name].hours, default=None)


def risk_after(state: PoolState, vdev_bytes: int | None, disks: dict[str, DiskFacts], health: dict[str, DiskHealth],
               *, new_leaves: frozenset[str], new_bytes: int, fill: float, fill_now: float, out_now: bool = True,
               years: tuple[float, ...] = YEARS) -> tuple[float, ...] | str:
    """P(losing the pool) within each of `years` once it is `state` (a growth option's pool: new vdevs,
    disks attached or replaced), by risk_now's chains: each disk keeps its age from SMART, a disk in
    `new_leaves` is new (age 0); a vdev all of new disks resilvers `new_bytes` each, the others the
    pool's size now (a raidz given a larger disk grows only to its smallest), and a hot spare smaller
    than a vdev's disks does not stand in for them; a vdev with a new disk resilvers the pool's `fill`
    after, one without keeps `fill_now` (what is written stays where it is); out_now: the disks out now stay out (an add), else every vdev is whole (all replaced). A reason instead when the engine has none (docs/pool.md#growing-the-pool)."""
    layout = pool_layout(state)
    if isinstance(layout, str):
        return layout
    if vdev_bytes is None:
        return "the disks' size as ZFS sees them was not shown, or differs between them"
    cls = disk_class(disks)
    params = params_for_class(cls, vdev_bytes, years=years, fill=min(max(fill, 1e-6), 1.0))
    members = _members(state, params)
    if isinstance(members, str):
        return members
    def sized(v: PoolVdev, p: RiskParams) -> RiskParams:
        if not any(leaf.name in new_leaves for leaf in v.leaves):
            return p.with_(fill=min(max(fill_now, 1e-6), 1.0))
        return p.with_(disk_bytes=new_bytes) if all(leaf.name in new_leaves for leaf in v.leaves) else p
    members = [(g, v, sized(v, p)) for g, v, p in members]
    old = [leaf for _, v, _ in members for leaf in v.leaves if leaf.name not in new_leaves]
    ages = _ages(old, health)
    by_age = cls == "hdd" and any(a.hours is not None for a in ages.values())
    # a spare whose size zpool does not show is taken as the pool's disks (as risk_now takes every spare)
    spare_bytes = min((leaf.device_bytes or vdev_bytes for v in state.of_class("spare") for leaf in v.leaves),
                      default=0)
    spareless = frozenset(v.name for _, v, p in members if p.disk_bytes > spare_bytes)
    # a disk that stays keeps what its SMART counters say of it, as in risk_now
    signals = {leaf.name: sig for leaf in old if cls == "hdd" and (sig := smart_signal(health.get(leaf.name)))}
    chains = _Chains(layout, tuple(members), ages, tuple(y * HOURS_PER_YEAR for y in years),
                     params.failure_rate_per_hour, by_age, signals, spareless)
    if out_now:
        return chains.pool_p(_out, lambda v: _serving(v, {}), new_leaves)[0]
    return chains.pool_p(lambda v: 0, lambda v: v.leaves, new_leaves)[0]
