"""The recommendation: how important the data is sets a risk budget; within it, the priority
chooses; beyond it, more nines earn nothing.

The rule and its sources are in docs/recommend.md. In short:
1. The data level (scratch, media, home, business, archive) sets the most risk a layout may
   carry over the horizon, for the pool (P(pool loss)) and for files (P(some blocks damaged),
   read errors during resilvers), and the failures it must survive. Explicit budgets override it.
2. Layouts outside the budget are never recommended; a layout without redundancy only when the
   data is scratch (or the user asks for 0 failures).
3. Within the budget the priority chooses: space (most usable bytes), speed (the workload's
   figures), balanced (space and speed as shares of the best in budget, weighed alike), safety
   (the least risk, where risks below a floor count as equal: fire, theft and mistakes dwarf
   them, and only a backup answers those).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from zfslab.model.layouts import VdevKind, parse_layout
from zfslab.model.plan import PlanRow
from zfslab.model.units import format_bytes, odds

PRIORITIES = ("balanced", "space", "speed", "safety")
REFERENCE_YEARS = 5.0  # the horizon the data levels' budgets are written for


@dataclass(frozen=True, slots=True)
class DataLevel:
    """How much a loss would cost, as the most risk to accept over REFERENCE_YEARS."""

    name: str
    max_loss: float  # P(pool lost) within 5 years
    max_damage: float  # P(some files damaged) within 5 years
    min_failures: int  # disks that may fail at once without loss
    meaning: str


DATA_LEVELS = {
    d.name: d for d in (
        DataLevel("scratch", 1.0, 1.0, 0, "can be lost: caches, downloads, build trees"),
        DataLevel("media", 1e-3, 1.0, 1, "replaceable at a cost of time: ripped media, mirrors of public data"),
        DataLevel("home", 1e-4, 0.1, 1, "personal files and photos, with a backup elsewhere"),
        DataLevel("business", 1e-5, 1e-2, 2, "work data whose loss stops a business for days"),
        DataLevel("archive", 1e-6, 1e-3, 2, "long-kept records, maybe the only copy online"),
    )
}
DEFAULT_DATA = "home"
# Below this P(pool loss) in 5 years a layout is as safe as another: a US home has about a 1 in 80
# chance of a reported fire in 5 years (NFPA: ~350,000 home fires a year, ~140 million homes).
RISK_FLOOR = 1e-6


@dataclass(frozen=True, slots=True)
class Workload:
    """Which predicted figures measure speed for this use (multiples of one disk)."""

    name: str
    metrics: tuple[str, ...]
    meaning: str


WORKLOADS = {
    w.name: w for w in (
        Workload("general", ("write_mb_s", "read_mb_s", "rand_read_iops_qd8"),
                 "streaming write, streaming read, 4K random read"),
        Workload("bulk", ("write_mb_s", "read_mb_s"), "streaming write and read (media, large files)"),
        Workload("backup", ("write_mb_s",), "streaming write (backup target)"),
        Workload("vm", ("rand_read_iops_qd8", "rand_write_iops_qd8", "sync_write_iops_qd8"),
                 "4K random read and write, sync write (virtual machine disks)"),
        Workload("database", ("rand_read_iops_qd8", "sync_write_iops_qd8"), "4K random read, sync write (databases)"),
    )
}
DEFAULT_WORKLOAD = "general"
METRIC_NAMES = {
    "write_mb_s": "streaming write", "read_mb_s": "streaming read", "rewrite_mb_s": "rewrite",
    "rand_read_iops_qd8": "4K random read", "rand_write_iops_qd8": "4K random write",
    "sync_write_iops_qd8": "sync write",
}
SHORT_LIST_MAX = 8
RAIDZ_MAX_WIDTH = 9  # zpoolconcepts(7): "The recommended number is between 3 and 9 to help increase performance."


def scale_risk(p_reference: float, years: float) -> float:
    """A probability budget over REFERENCE_YEARS restated over `years` (a constant hazard)."""
    if p_reference >= 1:
        return 1.0
    return -math.expm1(math.log1p(-p_reference) * years / REFERENCE_YEARS)


@dataclass(frozen=True, slots=True)
class Goal:
    """What the user wants; explicit budgets (over horizon_years) override the data level's."""

    priority: str = "balanced"
    data: str = DEFAULT_DATA
    workload: str = DEFAULT_WORKLOAD
    horizon_years: float = REFERENCE_YEARS
    max_loss: float | None = None
    max_damage: float | None = None
    min_failures: int | None = None
    min_usable_bytes: int = 0

    def __post_init__(self) -> None:
        if self.priority not in PRIORITIES:
            raise ValueError(f"priority {self.priority!r}: one of {', '.join(PRIORITIES)}")
        if self.data not in DATA_LEVELS:
            raise ValueError(f"data level {self.data!r}: one of {', '.join(DATA_LEVELS)}")
        if self.workload not in WORKLOADS:
            raise ValueError(f"workload {self.workload!r}: one of {', '.join(WORKLOADS)}")
        if not (math.isfinite(self.horizon_years) and self.horizon_years > 0):
            raise ValueError(f"horizon {self.horizon_years!r} years: a positive number")
        for name in ("max_loss", "max_damage"):
            v = getattr(self, name)
            if v is not None and not (math.isfinite(v) and 0 < v <= 1):
                raise ValueError(f"{name} {v!r}: a probability above 0 and at most 1")

    @property
    def level(self) -> DataLevel:
        return DATA_LEVELS[self.data]

    @property
    def loss_budget(self) -> float:
        return self.max_loss if self.max_loss is not None else scale_risk(self.level.max_loss, self.horizon_years)

    @property
    def damage_budget(self) -> float:
        if self.max_damage is not None:
            return self.max_damage
        return scale_risk(self.level.max_damage, self.horizon_years)

    @property
    def failures(self) -> int:
        return self.min_failures if self.min_failures is not None else self.level.min_failures

    @property
    def floor(self) -> float:
        return scale_risk(RISK_FLOOR, self.horizon_years)

    @property
    def metrics(self) -> tuple[str, ...]:
        return WORKLOADS[self.workload].metrics


def _at(row: PlanRow, values: tuple[float, ...] | None, years: float) -> float | None:
    if values is None:
        return None
    for y, v in zip(row.years, values):
        if math.isclose(y, years, rel_tol=1e-9):
            return v
    raise ValueError(f"{row.layout}: no risk computed for {years:g} years (computed: {row.years})")


def loss(row: PlanRow, years: float) -> float | None:
    return _at(row, row.p_loss, years)


def damage(row: PlanRow, years: float) -> float | None:
    return _at(row, row.p_damage, years)


def speed_score(row: PlanRow, metrics: tuple[str, ...]) -> float | None:
    """The geometric mean of the workload's figures as multiples of one disk."""
    if row.speed_x is None:
        return None
    return math.prod(row.speed_x[k] for k in metrics) ** (1 / len(metrics))


@dataclass(frozen=True, slots=True)
class Verdict:
    """Why one layout is in or out of the budget (empty `why_out`: in), and the practice it goes
    against (`advice`): such a layout is recommended only when no layout in budget follows it."""

    layout: str
    why_out: tuple[str, ...]
    advice: tuple[str, ...] = ()


def advice(layout_text: str) -> tuple[str, ...]:
    """What OpenZFS's own guidance says against a layout (docs/recommend.md#2-openzfs-practice-breaks-ties)."""
    notes = []
    for g in parse_layout(layout_text).groups:
        if g.kind is VdevKind.RAIDZ and g.width > RAIDZ_MAX_WIDTH:
            notes.append(f"raidz vdev {g.width} wide (OpenZFS advises 3 to {RAIDZ_MAX_WIDTH})")
        if g.kind is VdevKind.DRAID and g.draid_spares == 0:
            notes.append("dRAID without a distributed spare (its fast rebuild needs one)")
    return tuple(notes)


def _practice(row: PlanRow) -> tuple[str, ...]:
    notes = advice(row.layout)
    if row.needs_force:  # zpool create refuses it without -f: an expert keeps -f for emergencies
        notes += (f"zpool create needs -f ({row.needs_force})",)
    return notes


def verdict(row: PlanRow, goal: Goal) -> Verdict:
    out = []
    h = goal.horizon_years
    if row.failures_guaranteed < goal.failures:
        out.append("no redundancy" if row.failures_guaranteed == 0 else
                   f"survives {row.failures_guaranteed} failure{'s' * (row.failures_guaranteed != 1)}, "
                   f"{goal.failures} asked")
    if row.usable_bytes < goal.min_usable_bytes:
        out.append(f"{format_bytes(row.usable_bytes)} usable")
    p_loss, p_damage = loss(row, h), damage(row, h)
    if p_loss is not None and p_loss > goal.loss_budget:
        out.append(f"P(loss) {odds(p_loss)}")
    if p_damage is not None and p_damage > goal.damage_budget:
        out.append(f"P(damage) {odds(p_damage)}")
    return Verdict(row.layout, tuple(out), _practice(row))


@dataclass(frozen=True)
class Recommendation:
    layout: str
    goal: Goal
    within_budget: bool
    reason: str
    shortlist: tuple[str, ...]  # the recommended layout and those worth considering, most space first
    over_budget: tuple[Verdict, ...]  # every layout left out by the budget or the constraints, with why
    considered: int

    @property
    def priority(self) -> str:
        return self.goal.priority

    @property
    def frontier(self) -> tuple[str, ...]:
        return self.shortlist

    def as_dict(self) -> dict:
        g = self.goal
        return {
            "layout": self.layout, "reason": self.reason, "within_budget": self.within_budget,
            "priority": g.priority, "data": g.data, "workload": g.workload,
            "speed_metrics": list(g.metrics), "horizon_years": g.horizon_years,
            "max_p_loss": g.loss_budget, "max_p_damage": g.damage_budget, "min_failures": g.failures,
            "min_usable_bytes": g.min_usable_bytes, "shortlist": list(self.shortlist),
            "left_out": {v.layout: list(v.why_out or v.advice) for v in self.over_budget},
        }


def _risk_key(row: PlanRow, goal: Goal) -> tuple[float, float]:
    h, floor = goal.horizon_years, goal.floor
    return (max(loss(row, h) or 0.0, floor), max(damage(row, h) or 0.0, floor))


def _pick(rows: list[PlanRow], goal: Goal) -> PlanRow:
    score = {id(r): speed_score(r, goal.metrics) or 1.0 for r in rows}
    if goal.priority == "space":
        return max(rows, key=lambda r: (r.usable_bytes, score[id(r)], [-x for x in _risk_key(r, goal)]))
    if goal.priority == "speed":
        return max(rows, key=lambda r: (score[id(r)], r.usable_bytes, [-x for x in _risk_key(r, goal)]))
    if goal.priority == "safety":
        return min(rows, key=lambda r: (_risk_key(r, goal), -r.usable_bytes, -score[id(r)]))
    top_space = max(r.usable_bytes for r in rows)
    top_speed = max(score.values())

    def balance(r: PlanRow) -> float:  # each corner as a share of the best within budget, weighed alike
        return math.sqrt(r.usable_bytes / top_space * score[id(r)] / top_speed)
    return max(rows, key=lambda r: (round(balance(r), 9), [-x for x in _risk_key(r, goal)]))


def _shortlist(pick: PlanRow, feasible: list[PlanRow], goal: Goal) -> list[PlanRow]:
    """The pick, the layouts no other in budget beats on both space and speed, and the safest."""
    score = {id(r): speed_score(r, goal.metrics) or 1.0 for r in feasible}

    def beats(a: PlanRow, b: PlanRow) -> bool:
        ka, kb = (a.usable_bytes, score[id(a)]), (b.usable_bytes, score[id(b)])
        if ka == kb:  # equal on both: the less risky one stands for both
            return _risk_key(a, goal) < _risk_key(b, goal)
        return ka[0] >= kb[0] and ka[1] >= kb[1]
    front = [r for r in feasible if not any(beats(o, r) for o in feasible if o is not r)]
    safest = min(feasible, key=lambda r: (_risk_key(r, goal), -r.usable_bytes))
    chosen = {id(pick): pick, id(safest): safest}
    front.sort(key=lambda r: -r.usable_bytes)
    room = SHORT_LIST_MAX - len(chosen)
    if len(front) > room:  # keep both ends and spread the rest evenly
        step = (len(front) - 1) / max(room - 1, 1)
        front = [front[round(i * step)] for i in range(room)]
    for r in front:
        chosen.setdefault(id(r), r)
    return sorted(chosen.values(), key=lambda r: (-r.usable_bytes, -score[id(r)]))


def budget_text(goal: Goal) -> str:
    """The budget in one short phrase: 'P(loss) ≤ 1 in 10,000, P(damage) ≤ 1 in 10 in 5 years, ≥ 1 failure'."""
    h = f"{goal.horizon_years:g} year{'s' * (goal.horizon_years != 1)}"
    parts = []
    if goal.loss_budget < 1:
        parts.append(f"P(loss) ≤ {odds(goal.loss_budget)}")
    if goal.damage_budget < 1:
        parts.append(f"P(damage) ≤ {odds(goal.damage_budget)}")
    text = (", ".join(parts) + f" in {h}") if parts else "no risk limit"
    if goal.failures:
        text += f", survives ≥ {goal.failures} failed disk{'s' * (goal.failures != 1)}"
    if goal.min_usable_bytes:
        text += f", ≥ {format_bytes(goal.min_usable_bytes)} usable"
    return text


def recommend(rows: list[PlanRow], goal: Goal = Goal()) -> Recommendation:
    """The layout to build, why, and the short list worth considering. Never raises for an
    impossible budget: it then names the closest layout and says what is missing."""
    if not rows:
        raise ValueError("no layouts to recommend from")
    verdicts = {r.layout: verdict(r, goal) for r in rows}
    feasible = [r for r in rows if not verdicts[r.layout].why_out]
    out = tuple(v for v in verdicts.values() if v.why_out)
    advised = [r for r in feasible if not verdicts[r.layout].advice]
    if advised:  # practice is a tie-breaker between budgets' answers, never a reason to recommend nothing
        out += tuple(verdicts[r.layout] for r in feasible if verdicts[r.layout].advice)
        feasible = advised
    if feasible:
        pick = _pick(feasible, goal)
        shortlist = _shortlist(pick, feasible, goal)
        reason = _reason(pick, shortlist, goal)
    else:  # nothing fits: the closest to the budget, said plainly
        pool = [r for r in rows if r.usable_bytes >= goal.min_usable_bytes] or rows
        pick = min(pool, key=lambda r: (max(goal.failures - r.failures_guaranteed, 0), _risk_key(r, goal),
                                        -r.usable_bytes))
        shortlist = [pick]
        reason = (f"No layout of these disks meets the budget for {goal.data} data [{budget_text(goal)}]. "
                  f"The closest is {pick.layout} ({pick.shape}): {_figures(pick, goal)}; it misses on "
                  f"{', '.join(verdicts[pick.layout].why_out)}. Add disks, choose disks with a lower failure "
                  f"rate, or accept more risk with a lower data level.")
    return Recommendation(pick.layout, goal, bool(feasible), reason, tuple(r.layout for r in shortlist), out, len(rows))


def _figures(row: PlanRow, goal: Goal) -> str:
    h = goal.horizon_years
    text = (f"{format_bytes(row.usable_bytes)} usable ({100 * row.efficiency:.0f} % of raw), survives "
            f"{row.failures_guaranteed} failed disk{'s' * (row.failures_guaranteed != 1)} at once")
    if row.p_loss is not None:
        text += (f", P(pool loss) {odds(loss(row, h))} and P(damaged files) {odds(damage(row, h))} "
                 f"over {h:g} year{'s' * (h != 1)}")
    s = speed_score(row, goal.metrics)
    if s is not None:
        text += f", {s:.1f}× one disk's speed"
    return text


def _reason(pick: PlanRow, shortlist: list[PlanRow], goal: Goal) -> str:
    metrics = ", ".join(METRIC_NAMES.get(m, m) for m in goal.metrics)
    why = {
        "space": "the most usable space",
        "speed": f"the highest predicted {goal.workload} speed ({metrics})",
        "safety": f"the least risk (below {odds(goal.floor)} a risk counts as none)",
        "balanced": f"the best balance of space and {goal.workload} speed ({metrics})",
    }[goal.priority]
    text = (f"{pick.layout} ({pick.shape}) gives {why} within the budget for {goal.data} data "
            f"[{budget_text(goal)}]: {_figures(pick, goal)}.")
    if pick.failures_guaranteed == 0:
        text += " It has no redundancy: one failed disk loses the whole pool."
    others = [r for r in shortlist if r.layout != pick.layout]
    score = {id(r): speed_score(r, goal.metrics) for r in [pick, *others]}
    trades = []
    roomiest = max(others, key=lambda r: r.usable_bytes, default=None)
    if roomiest is not None and roomiest.usable_bytes > pick.usable_bytes:
        trades.append(f"{roomiest.layout} gives {format_bytes(roomiest.usable_bytes - pick.usable_bytes)} more space"
                      + (f" at {score[id(roomiest)] / score[id(pick)]:.2g}× the speed" if score[id(pick)] else ""))
    fastest = max(others, key=lambda r: score[id(r)] or 0, default=None)
    if fastest is not None and score[id(pick)] and score[id(fastest)] > score[id(pick)]:
        trades.append(f"{fastest.layout} is {score[id(fastest)] / score[id(pick)]:.2g}× as fast with "
                      f"{format_bytes(fastest.usable_bytes)} usable")
    if trades:
        text += " Alternatives in budget: " + "; ".join(trades) + "."
    return text
