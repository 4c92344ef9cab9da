"""The risk, the predicted speed and the rank of each way to grow a pool (docs/pool.md#growing-the-pool):
the pool after it by risk_now's chains (its disks keep their ages, the new ones are new), its layout
by plan's speed model, and the options ranked by plan's recommendation (model/recommend.py). Pure:
the caller has read the pool and its disks, and growth()/replacement() gave the options."""

from __future__ import annotations

from dataclasses import dataclass, replace

from zfslab.model.disk_types import DISK_TYPES
from zfslab.model.layout_grammar import parse_layout
from zfslab.model.layouts import Layout, VdevGroup, VdevKind
from zfslab.model.performance import DiskProfile, predict, single_disk
from zfslab.model.plan import PlanRow
from zfslab.model.pool_growth import Growth, GrowthOption, sides_attached
from zfslab.model.pool_model import failures_survived, pool_layout
from zfslab.model.pool_risk import YEARS, risk_after
from zfslab.model.pool_state import DiskFacts, DiskHealth, PoolState, PoolVdev, disk_class
from zfslab.model.recommend import Goal, Recommendation, recommend, verdict

DEFAULT_RECORDSIZE = 128 * 1024  # plan's default, when the pool's root dataset does not say its own


@dataclass(frozen=True, slots=True)
class OptionOutlook:
    """One option's risk and speed; None/() where there is none, `risk_reason` says why for the risk."""

    p_loss: tuple[float, ...] = ()  # P(losing the pool) within each of Outlook.years, after the option
    risk_reason: str = ""
    speed: dict[str, float] | None = None  # predicted MB/s and IOPS (performance.SpeedPrediction's names)
    speed_vs_now: dict[str, float] | None = None  # each figure as a multiple of the pool's now
    left_out: tuple[str, ...] = ()  # why the recommendation leaves it out (recommend's Verdict), if it does


@dataclass(frozen=True)
class Outlook:
    years: tuple[float, ...]
    goal: Goal
    disk_type: str  # the speed profile's (the pool's disk class: hdd or ssd)
    recordsize: int
    speed_now: dict[str, float] | None
    options: tuple[OptionOutlook, ...]  # one per Growth.options, in its order
    order: tuple[int, ...]  # indices into Growth.options, ranked by the recommendation
    recommended: int | None  # index of the recommended option (None: no option to rank)
    recommendation: Recommendation | None
    lowering: tuple[int, ...] = ()  # data options not ranked: each leaves the pool less redundant than now


def _recordsize(state: PoolState) -> int:
    text = state.dataset_prop("recordsize") or ""
    value = int(text) if text.isdigit() and len(text) < 10 else 0
    return value if 512 <= value <= 16 * 2**20 and value & (value - 1) == 0 else DEFAULT_RECORDSIZE


def _new_vdevs(added: tuple[tuple[str, VdevGroup], ...], first_id: int) -> tuple[PoolVdev, ...]:
    """The vdevs a `zpool add` makes, their leaves NEW1..NEWn as its commands name them; first_id: the
    top-level vdevs there now (a dRAID is named by its geometry and its id, as zpool names it, which is
    how its chain knows it for one: pool_model.DRAID_NAME)."""
    vdevs, n = [], 0

    def leaf(cls: str) -> PoolVdev:
        nonlocal n
        n += 1
        return PoolVdev(f"NEW{n}", "disk", cls, "ONLINE")
    for cls, g in added:
        for i in range(g.count):
            if g.kind is VdevKind.DISK:
                vdevs.append(leaf(cls))
                continue
            kind = {VdevKind.MIRROR: "mirror", VdevKind.DRAID: "draid"}.get(g.kind, "raidz")
            name = f"{g.spec}-{first_id + len(vdevs)}" if kind == "draid" else f"{kind}-new{len(vdevs)}"
            vdevs.append(PoolVdev(name, kind, cls, "ONLINE", parity=g.parity if kind != "mirror" else 0,
                                  children=tuple(leaf(cls) for _ in range(g.width))))
    return tuple(vdevs)


def _pool_after(state: PoolState, option: GrowthOption, count: int) -> tuple[PoolState, frozenset[str], bool]:
    """(the pool once the option is done, its new disks' names, whether the disks out now stay out)."""
    if option.how == "zpool replace":
        leaves = frozenset(leaf.name for v in state.of_class("normal") for leaf in v.leaves)
        return state, leaves, False
    if option.attach_to:
        k = len(option.commands)   # one zpool attach per new side
        return sides_attached(state, option.attach_to), frozenset(f"NEW{i}" for i in range(1, k + 1)), True
    if option.how == "zpool attach":
        raidz = state.of_class("normal")[0]
        new = tuple(PoolVdev(f"NEW{i}", "disk", "normal", "ONLINE") for i in range(1, count + 1))
        grown = replace(raidz, children=raidz.children + new)
        return (replace(state, vdevs=tuple(grown if v is raidz else v for v in state.vdevs)),
                frozenset(v.name for v in new), True)
    added = _new_vdevs(option.added, sum(v.alloc_class not in ("spare", "cache") for v in state.vdevs))
    return (replace(state, vdevs=state.vdevs + added),
            frozenset(leaf.name for v in added for leaf in v.leaves), True)


def _data_option(option: GrowthOption) -> bool:
    """It changes the data vdevs (a special or log vdev adds no room for data: ranked apart)."""
    return option.how != "zpool add" or any(cls == "normal" for cls, _ in option.added)


def _row(option: GrowthOption, state: PoolState, grown: Growth, old_bytes: int | None, years, p_loss,
         speed, speed_x) -> PlanRow | None:
    """The option as one of plan's rows, for recommend(); None without figures or risk."""
    if option.usable_after_bytes is None or not p_loss or old_bytes is None or not _data_option(option):
        return None
    layout = parse_layout(option.layout_after)
    disks_now = sum(len(v.leaves) for v in state.of_class("normal"))
    new = grown.new_vdev_bytes or 0
    raw = disks_now * new if option.how == "zpool replace" else disks_now * old_bytes + \
        (len(option.commands) if option.attach_to else grown.count if option.how == "zpool attach"
         else sum(g.disks for c, g in option.added if c == "normal")) * new
    force = any(c.startswith("zpool add -f ") for c in option.commands)   # plan's practice: -f is for emergencies
    return PlanRow(option.layout_after, f"{option.how} {option.adds}", layout.disks, layout.hot_spares,
                   layout.top_level_vdevs, option.size_after_bytes or 0, option.usable_after_bytes, raw,
                   option.usable_after_bytes / raw if raw else 0.0, option.survives, layout.failures_best_case,
                   years, p_loss, None, None, speed, speed_x,
                   needs_force="its replication level differs from the pool's" if force else None,
                   force_command="zpool add")


def outlook(state: PoolState, vdev_bytes: int | None, grown: Growth, disks: dict[str, DiskFacts],
            health: dict[str, DiskHealth], *, goal: Goal, ashift: int | None,
            years: tuple[float, ...] = YEARS) -> Outlook:
    """Each option's risk and speed, and the options ranked as plan ranks layouts (data options by
    recommend(); those it cannot rank, then special and log vdevs, after them in growth()'s order)."""
    cls = disk_class(disks)
    profile: DiskProfile = DISK_TYPES[cls].speed
    recordsize, ashift = _recordsize(state), ashift or 12
    now_layout = pool_layout(state)
    speed_now = None if isinstance(now_layout, str) else _speed(now_layout, profile, recordsize, ashift)
    one = _speed(parse_layout("disk"), profile, recordsize, ashift, single=True)
    fill_now = state.alloc_bytes / state.size_bytes if state.size_bytes else 0.0
    outlooks, rows = [], {}
    for i, o in enumerate(grown.options):
        after, new_leaves, out_now = _pool_after(state, o, grown.count)
        # what is written stays: the pool after is as full as its data over its new SIZE
        fill = state.alloc_bytes / o.size_after_bytes if o.size_after_bytes else fill_now
        risk = risk_after(after, vdev_bytes, disks, health, new_leaves=new_leaves,
                          new_bytes=grown.new_vdev_bytes or vdev_bytes or 0, fill=fill, fill_now=fill_now,
                          out_now=out_now,
                          years=years) if vdev_bytes is not None else "the disks' size as ZFS sees them is not known"
        p_loss, why = ((), risk) if isinstance(risk, str) else (risk, "")
        speed = speed_x = vs_now = None
        if _data_option(o) and speed_now is not None:
            layout = parse_layout(o.layout_after)
            speed = _speed(layout, profile, recordsize, ashift)
            speed_x = {k: v / one[k] for k, v in speed.items()}
            vs_now = {k: v / speed_now[k] for k, v in speed.items() if speed_now[k]}
        outlooks.append(OptionOutlook(p_loss, why, speed, vs_now))
        row = _row(o, state, grown, vdev_bytes, years, p_loss, speed, speed_x)
        if row is not None:
            rows[i] = row
    # an add that leaves the pool surviving fewer failures than it does now makes what the
    # vdev-less-redundant finding warns of (docs/pool.md#findings): ranked only when every option does
    lowering = _lowering(state, grown, rows)
    ranked = {i: r for i, r in rows.items() if i not in lowering}
    rec = recommend(list(ranked.values()), goal) if ranked else None
    order, pick = _rank(grown, ranked, rec, lowering)
    if rec is not None:
        why_out = {v.layout: v.why_out or v.advice for v in rec.over_budget}
        outlooks = [replace(out, left_out=(*verdict(rows[i], goal).why_out, lowering[i]) if i in lowering else
                            tuple(why_out.get(rows[i].layout, ()))) if i in rows else out
                    for i, out in enumerate(outlooks)]
    return Outlook(years, goal, cls, recordsize, speed_now, tuple(outlooks), order, pick, rec, tuple(sorted(lowering)))


def _speed(layout: Layout, profile: DiskProfile, recordsize: int, ashift: int, single: bool = False) -> dict[str, float]:
    p = single_disk(profile, recordsize=recordsize, ashift=ashift) if single else \
        predict(layout, profile, recordsize=recordsize, ashift=ashift)
    return {k: getattr(p, k) for k in p.metrics()}


def _lowering(state: PoolState, grown: Growth, rows: dict[int, PlanRow]) -> dict[int, str]:
    """The data options whose new vdev survives fewer failed disks than the pool does now, each with
    why it is not ranked; none when no ranked option would be left (then plan's rule weighs them)."""
    now = min((failures_survived(v) for v in state.vdevs if v.alloc_class in ("normal", "special", "dedup")),
              default=0)
    lowering = {i: (f"it leaves the pool surviving {grown.options[i].survives} failed disk"
                    f"{'s' * (grown.options[i].survives != 1)} where it survives {now} now: a vdev less redundant "
                    "than the rest (the vdev-less-redundant finding)")
                for i in rows if grown.options[i].survives < now}
    return lowering if len(lowering) < len(rows) else {}


def _rank(grown: Growth, rows: dict[int, PlanRow], rec: Recommendation | None,
          lowering: dict[int, str]) -> tuple[tuple[int, ...], int | None]:
    """Recommended first, then the rest of its short list, the others in budget, those practice
    advises against or a safer one replaces, those out of budget, those that lower the pool's
    redundancy; then the options without figures, then special and log vdevs (no room for data),
    each in growth()'s order."""
    if rec is None:
        return tuple(range(len(grown.options))), None
    out = {v.layout: bool(v.why_out) for v in rec.over_budget}
    short = {layout: k for k, layout in enumerate(rec.shortlist)}

    def key(i: int) -> tuple:
        if i in lowering:
            return (3, 1, i)
        if i in rows:
            layout = rows[i].layout
            if layout == rec.layout:
                return (0, 0, i)
            if layout in out:
                return (3 if out[layout] else 2, 0, i)
            return (1, short.get(layout, len(short)), i)
        return (4 if _data_option(grown.options[i]) else 5, 0, i)
    order = tuple(sorted(range(len(grown.options)), key=key))
    pick = next(i for i in rows if rows[i].layout == rec.layout)
    return order, pick
