"""This pool's risk of loss over the next years as it stands now (docs/pool.md#risk-now): each data,
special and dedup vdev is its Markov chain (the one plan and risk use), started where the vdev is
(a degraded raidz2 with one disk out starts one failure in), with the pool's own disk size, fill
and disk class; then the same pool with every disk out replaced, and with every disk SMART flags
as failing gone as well. Pure: the caller has read the pool, its disks and their counters."""

from __future__ import annotations

from dataclasses import dataclass

from zfslab.model.layouts import VdevGroup
from zfslab.model.pool_model import _group, failures_survived, pool_layout
from zfslab.model.pool_state import DiskFacts, DiskHealth, PoolState, PoolVdev, disk_class
from zfslab.model.reliability import markov
from zfslab.model.reliability.params import HOURS_PER_YEAR, RiskParams, params_for_class
from zfslab.model.reliability.risk import class_params, vdev_chain

YEARS = (1.0, 5.0)


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


def _out(vdev: PoolVdev) -> int:
    """Children of a top-level vdev not serving now (offline, faulted, removed, or still resilvering)."""
    return sum(child.state != "ONLINE" for child in vdev.children) if vdev.children else int(vdev.state != "ONLINE")


def _flagged(vdev: PoolVdev, health: dict[str, DiskHealth]) -> int:
    """Children of the vdev still in with a disk its SMART counters flag as failing (DiskHealth.failing)."""
    def failing(child: PoolVdev) -> bool:
        return any(leaf.name in health and health[leaf.name].failing for leaf in child.leaves)
    return sum(c.state == "ONLINE" and failing(c) for c in vdev.children or (vdev,))


def risk_now(state: PoolState, vdev_bytes: int | None, disks: dict[str, DiskFacts],
             health: dict[str, DiskHealth], *, years: tuple[float, ...] = YEARS) -> RiskNow:
    layout = pool_layout(state)
    if isinstance(layout, str):
        return RiskNow(years, reason=layout)
    if vdev_bytes is None:
        return RiskNow(years, reason="the disks' size as ZFS sees them was not shown, or differs between them")
    cls = disk_class(disks)
    # the resilver reads what is allocated; an empty pool still has its metadata (RiskParams wants > 0)
    fill = min(max(state.alloc_bytes / state.size_bytes, 1e-6), 1.0) if state.size_bytes else 1e-6
    params = params_for_class(cls, vdev_bytes, years=years, fill=fill)
    hours = [y * HOURS_PER_YEAR for y in years]
    members: list[tuple[VdevGroup, PoolVdev, RiskParams]] = []
    for v in state.vdevs:
        if v.alloc_class not in ("normal", "special", "dedup"):
            continue
        group = _group(v)
        if isinstance(group, str):
            return RiskNow(years, reason=group)
        members.append((group, v, params if v.alloc_class == "normal" else class_params(group, params)))

    def pool_p(extra_out) -> tuple[float, ...]:
        per_vdev = []
        for group, v, p in members:
            start = extra_out(v)
            if start > failures_survived(v):
                per_vdev.append([1.0] * len(hours))   # more out than it survives: lost already
                continue
            chain, _ = vdev_chain(group, layout, p)
            per_vdev.append(markov.loss_probabilities(chain, hours, start=start))
        return tuple(markov.pool_loss_probability([(ps[i], 1) for ps in per_vdev]) for i in range(len(hours)))

    out = sum(_out(v) for _, v, _ in members)
    flagged = sum(_flagged(v, health) for _, v, _ in members)
    return RiskNow(years, cls, pool_p(_out), pool_p(lambda v: 0) if out else (),
                   pool_p(lambda v: _out(v) + _flagged(v, health)) if flagged else (), out, flagged)
