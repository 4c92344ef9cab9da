"""The recommendation: how important the data is sets a risk budget; within it, the priority
chooses; beyond it, more nines earn nothing.

The rule and its sources are in docs/recommend.md. In short:
1. The data level (scratch, media, home, business, archive) sets the most risk a layout may
   carry over the horizon, for the pool (P(pool loss)) and for files (P(some blocks damaged),
   read errors during resilvers), and the failures it must survive. Explicit budgets override it.
2. Layouts outside the budget are never recommended; a layout without redundancy only when the
   data is scratch (or the user asks for 0 failures).
3. A layout an order of magnitude safer than another, at almost no cost in space or in the
   workload's own speed figures (SPACE_TOLERANCE, SPEED_TOLERANCE), replaces it: it is never
   recommended and never shown in its place.
4. Within the budget the priority chooses: space (most usable bytes), speed (the workload's
   figures), balanced (space and speed as shares of the best in budget, the workload saying how
   much speed weighs), safety (the least risk, where risks below a floor count as equal: fire,
   theft and mistakes dwarf them, and only a backup answers those).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from zfslab.model.layout_grammar import parse_layout
from zfslab.model.layouts import VdevKind
from zfslab.model.allocation import format_recordsize
from zfslab.model.plan import PlanRow
from zfslab.model.cost import money
from zfslab.model.units import format_bytes, odds

PRIORITIES = ("balanced", "space", "speed", "safety", "cost")  # cost: with --disk-price (docs/recommend.md#7-cost)
REFERENCE_YEARS = 5.0  # the horizon the data levels' budgets are written for


@dataclass(frozen=True, slots=True)
class DataLevel:
    """How much a loss would cost, as the most risk to accept over REFERENCE_YEARS."""

    name: str
    max_loss: float  # P(pool lost) within 5 years
    max_damage: float  # P(some files damaged) within 5 years
    min_failures: int  # disks that may fail at once without loss
    meaning: str
    workload: str  # the workload such data usually has (--workload overrides)


DATA_LEVELS = {
    d.name: d for d in (
        DataLevel("scratch", 1.0, 1.0, 0, "can be lost: caches, downloads, build trees", "general"),
        DataLevel("media", 1e-4, 1.0, 1, "replaceable at a cost of time: ripped media, mirrors of public data",
                  "bulk"),
        DataLevel("backup", 1e-4, 0.1, 1, "a second copy of data kept elsewhere: its loss costs a full re-copy",
                  "backup"),
        DataLevel("home", 1e-4, 0.1, 1, "personal files and photos, with a backup elsewhere", "general"),
        DataLevel("business", 1e-5, 1e-2, 2, "work data whose loss stops a business for days", "general"),
        DataLevel("archive", 1e-6, 1e-3, 2, "long-kept records, maybe the only copy online", "bulk"),
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
    # balanced: speed's share of the weight (space has the rest); random-I/O stores are sized by
    # their IOPS, so speed weighs twice space for them (docs/recommend.md#3-the-priority-chooses-within-the-budget)
    speed_weight: float = 0.5
    small_blocks: bool = True  # holds blocks far below 128K (small files, metadata, zvol blocks)
    # the block size most of its data is written in, when far below 128K: space is weighed at it, as
    # raidz stores each such block with its own parity and padding
    # (docs/recommend.md#space-at-the-workloads-block-size); 0: zfs list's figure (128K records)
    space_block_bytes: int = 0


WORKLOADS = {
    w.name: w for w in (
        Workload("general", ("write_mb_s", "read_mb_s", "rand_read_iops_qd8"),
                 "streaming write, streaming read, 4K random read"),
        Workload("bulk", ("write_mb_s", "read_mb_s"), "streaming write and read (media, large files)",
                 small_blocks=False),
        Workload("backup", ("write_mb_s",), "streaming write (backup target)", small_blocks=False),
        Workload("vm", ("rand_read_iops_qd8", "rand_write_iops_qd8", "sync_write_iops_qd8"),
                 "4K random read and write, sync write (virtual machine disks)", speed_weight=2 / 3,
                 space_block_bytes=16 * 1024),  # zvol volblocksize default since OpenZFS 2.2
        Workload("database", ("rand_read_iops_qd8", "sync_write_iops_qd8"), "4K random read, sync write (databases)",
                 speed_weight=2 / 3, space_block_bytes=16 * 1024),  # InnoDB's 16K pages; the usual database recordsize
    )
}
DEFAULT_WORKLOAD = "general"  # of the default data level (home)
METRIC_NAMES = {
    "write_mb_s": "streaming write", "read_mb_s": "streaming read", "rewrite_mb_s": "rewrite",
    "rand_read_iops_qd8": "4K random read", "rand_write_iops_qd8": "4K random write",
    "sync_write_iops_qd8": "sync write",
}
SHORT_LIST_MAX = 8
# "Almost nothing" and "an order of magnitude" (docs/recommend.md#4-risk-is-weighed): a layout at most
# 1/32 smaller (the share of every pool ZFS itself holds back as slop space) and at most a tenth
# slower on each of the workload's figures, but ten times safer, replaces the riskier one.
SPACE_TOLERANCE = 1 / 32
SPEED_TOLERANCE = 0.10
SAFER_FACTOR = 10.0
# Data not sized by its random I/O (speed weighs at most half), on a pick of single redundancy: a
# layout that survives more failures and is SAFER_FACTOR safer is built if it costs at most a tenth
# of the space, one parity disk in a 10-wide vdev: Oracle advises RAIDZ-2 over RAID-Z and 2-way
# mirrors as performing alike with a much longer MTTDL [oracle-raidz2]
# (docs/recommend.md#3-the-priority-chooses-within-the-budget).
STURDIER_SPACE = 0.10
# Width (docs/recommend.md#2-openzfs-practice-breaks-ties): zpoolconcepts(7): "The recommended number
# is between 3 and 9 to help increase performance" -- a speed rule, for data with small blocks. Data
# of large records (bulk, backup) streams as well from wider vdevs, and archives are built up to
# about 12 (a RAID 6 stripe of 12 is IBM's distributed-RAID default); past 12 a resilver reads more
# survivors than practice goes.
RAIDZ_MAX_WIDTH = 9
RAIDZ_MAX_WIDTH_LARGE_RECORDS = 12
# dRAID's distributed spare rebuilds children / (data + parity) times as fast as a raidz resilver
# onto a hot spare (the rebuild model, docs/reliability.md#repair-time). A vdev of parity p spends
# that much less time degraded, which lowers P(loss) of one vdev of `children` disks by its p-th
# power; dRAID is advised from where that reaches SAFER_FACTOR (§4). Against the raidz vdevs of
# data + parity disks one builds instead, the model's P(loss) shows no such gain (the larger
# failure domain cancels it, docs/recommend.md#2-openzfs-practice-breaks-ties): the gate keeps
# dRAID to many children, where its short degraded window is worth its fixed stripe width and a
# vdev that cannot be expanded.


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
    workload: str | None = None  # None: the data level's (DataLevel.workload)
    horizon_years: float = REFERENCE_YEARS
    max_loss: float | None = None
    max_damage: float | None = None
    min_failures: int | None = None
    min_usable_bytes: int = 0
    workload_given: bool = field(default=False, init=False, compare=False)

    def __post_init__(self) -> None:
        if self.priority not in PRIORITIES:
            raise ValueError(f"priority {self.priority!r}: one of {', '.join(PRIORITIES)}")
        if self.data not in DATA_LEVELS:
            raise ValueError(f"data level {self.data!r}: one of {', '.join(DATA_LEVELS)}")
        object.__setattr__(self, "workload_given", self.workload is not None)
        if self.workload is None:
            object.__setattr__(self, "workload", DATA_LEVELS[self.data].workload)
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

    @property
    def work(self) -> Workload:
        return WORKLOADS[self.workload]


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


def draid_rebuild_gain(children: int, data: int, parity: int) -> float:
    """How many times lower P(loss) a dRAID's distributed-spare rebuild makes it than a raidz of the
    same parity resilvering onto a hot spare: (children / (data + parity)) ** parity."""
    return (children / (data + parity)) ** parity


def draid_min_children(data: int, parity: int) -> int:
    """The fewest children at which dRAID's rebuild gain reaches SAFER_FACTOR."""
    return math.ceil(SAFER_FACTOR ** (1 / parity) * (data + parity) - 1e-9)


def advice(layout_text: str, workload: Workload | None = None) -> tuple[str, ...]:
    """What OpenZFS's own guidance says against a layout (docs/recommend.md#2-openzfs-practice-breaks-ties);
    the widest raidz depends on whether the workload has small blocks (default: it has)."""
    notes = []
    small = workload is None or workload.small_blocks
    widest = RAIDZ_MAX_WIDTH if small else RAIDZ_MAX_WIDTH_LARGE_RECORDS
    for g in parse_layout(layout_text).groups:
        if g.kind is VdevKind.RAIDZ and g.width > widest:
            notes.append(f"raidz vdev {g.width} wide (OpenZFS advises 3 to {RAIDZ_MAX_WIDTH} for speed"
                         + (")" if small else f"; large-record data up to {RAIDZ_MAX_WIDTH_LARGE_RECORDS})"))
        if g.kind is VdevKind.DRAID and g.draid_spares == 0:
            notes.append("dRAID without a distributed spare (its fast rebuild needs one)")
        elif g.kind is VdevKind.DRAID and draid_rebuild_gain(g.width, g.draid_data, g.parity) < SAFER_FACTOR:
            # the gate is the rebuild's speed, not a risk gain: against raidz vdevs of the same groups
            # the faster rebuild and dRAID's larger failure domain cancel
            # (docs/recommend.md#2-openzfs-practice-breaks-ties)
            notes.append(f"dRAID of {g.width} disks: its spare rebuilds {g.width / (g.draid_data + g.parity):.2g}× "
                         f"as fast as raidz; {SAFER_FACTOR ** (1 / g.parity):.2g}× needs "
                         f"{draid_min_children(g.draid_data, g.parity)} disks")
    kinds = {g.kind for g in parse_layout(layout_text).groups}
    if VdevKind.MIRROR in kinds and kinds & {VdevKind.RAIDZ, VdevKind.DRAID}:
        # Oracle's general pool practices: harder to manage, and performance may suffer
        notes.append("mixes mirror and parity vdevs (Oracle advises one kind per pool)")
    return tuple(notes)


def small_blocks_text(row: PlanRow) -> str:
    """A dRAID's efficiency by block size: '10 % at 4K, 40 % at 16K, 80 % at 128K' ('' for other layouts)."""
    return ", ".join(f"{100 * e:.0f} % at {format_recordsize(b)}" for b, e in row.small_blocks)


def _practice(row: PlanRow, goal: Goal) -> tuple[str, ...]:
    notes = advice(row.layout, goal.work)
    if row.needs_force:  # zpool create refuses it without -f: an expert keeps -f for emergencies
        notes += (f"{row.force_command} needs -f ({row.needs_force})",)
    if row.small_blocks and goal.work.small_blocks and not parse_layout(row.layout).of_class("special"):
        # zpoolconcepts(7): dRAID's fixed stripe width costs small blocks space and IOPS; a pool that
        # holds many should add a mirrored special vdev for them
        notes += (f"dRAID pads small blocks to full stripes ({small_blocks_text(row)}), {goal.workload} "
                  f"data has many",)
    return notes


def verdict(row: PlanRow, goal: Goal) -> Verdict:
    out = []
    h = goal.horizon_years
    if row.failures_guaranteed < goal.failures:
        out.append("no redundancy" if row.failures_guaranteed == 0 else
                   f"survives {row.failures_guaranteed} failure{'s' * (row.failures_guaranteed != 1)}, "
                   f"{goal.failures} asked")
    if row.space_bytes < goal.min_usable_bytes:
        out.append(usable_text(row))
    p_loss, p_damage = loss(row, h), damage(row, h)
    if p_loss is not None and p_loss > goal.loss_budget:
        out.append(f"P(loss) {odds(p_loss)}")
    if p_damage is not None and p_damage > goal.damage_budget:
        out.append(f"P(damage) {odds(p_damage)}")
    return Verdict(row.layout, tuple(out), _practice(row, goal))


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
            "priority": g.priority, "data": g.data, "workload": g.workload, "workload_given": g.workload_given,
            "speed_metrics": list(g.metrics), "horizon_years": g.horizon_years,
            "max_p_loss": g.loss_budget, "max_p_damage": g.damage_budget, "min_failures": g.failures,
            "min_usable_bytes": g.min_usable_bytes, "shortlist": list(self.shortlist),
            "left_out": {v.layout: list(v.why_out or v.advice) for v in self.over_budget},
        }


def _risk_key(row: PlanRow, goal: Goal) -> tuple[float, float]:
    h, floor = goal.horizon_years, goal.floor
    return (max(loss(row, h) or 0.0, floor), max(damage(row, h) or 0.0, floor))


def much_safer(a: PlanRow, b: PlanRow, goal: Goal) -> bool:
    """a is an order of magnitude safer than b: it survives as many failures, neither risk is
    higher, and one is at least SAFER_FACTOR lower (risks below the floor count as the floor)."""
    (la, da), (lb, db) = _risk_key(a, goal), _risk_key(b, goal)
    return (a.failures_guaranteed >= b.failures_guaranteed and la <= lb and da <= db
            and (la * SAFER_FACTOR <= lb or da * SAFER_FACTOR <= db))


def costs_almost_nothing(a: PlanRow, b: PlanRow, goal: Goal) -> bool:
    """a gives up at most SPACE_TOLERANCE of b's space and SPEED_TOLERANCE of each of the workload's figures."""
    if a.space_bytes < (1 - SPACE_TOLERANCE) * b.space_bytes:
        return False
    if a.speed is None or b.speed is None:
        return True
    return all(a.speed[m] >= (1 - SPEED_TOLERANCE) * b.speed[m] for m in goal.metrics)


def _replaced(rows: list[PlanRow], goal: Goal) -> dict[int, PlanRow]:
    """{id of a row: the row that replaces it}: one as good within the tolerances and much safer."""
    out = {}
    for r in rows:
        better = [o for o in rows if o is not r and costs_almost_nothing(o, r, goal) and much_safer(o, r, goal)]
        if better:
            out[id(r)] = min(better, key=lambda o: (_risk_key(o, goal), -o.space_bytes))
    return out


def _balance(rows: list[PlanRow], goal: Goal) -> dict[int, float]:
    """Space and speed as shares of the best among rows, weighed by the workload (geometric)."""
    score = {id(r): speed_score(r, goal.metrics) or 1.0 for r in rows}
    top_space = max(r.space_bytes for r in rows)
    top_speed = max(score.values())
    w = goal.work.speed_weight
    return {id(r): (r.space_bytes / top_space) ** (1 - w) * (score[id(r)] / top_speed) ** w for r in rows}


def _pick(rows: list[PlanRow], goal: Goal) -> PlanRow:
    score = {id(r): speed_score(r, goal.metrics) or 1.0 for r in rows}
    if goal.priority == "space":
        return max(rows, key=lambda r: (r.space_bytes, score[id(r)], [-x for x in _risk_key(r, goal)]))
    if goal.priority == "speed":
        return max(rows, key=lambda r: (score[id(r)], r.space_bytes, [-x for x in _risk_key(r, goal)]))
    if goal.priority == "safety":
        # below the floor risks are equal: then the failures survived, the safety one can count
        return min(rows, key=lambda r: (_risk_key(r, goal), -r.failures_guaranteed, -r.space_bytes, -score[id(r)]))
    if goal.priority == "cost":
        return min(rows, key=lambda r: (_price(r), -score[id(r)], _risk_key(r, goal)))
    balance = _balance(rows, goal)
    pick = max(rows, key=lambda r: (round(balance[id(r)], 9), [-x for x in _risk_key(r, goal)]))
    if goal.work.speed_weight <= 0.5 and pick.failures_guaranteed < 2:
        # data not sized by its random I/O on single redundancy: a layout that survives more failures,
        # is much safer and gives up little space is built, whatever random reads the pick had over it
        # (§3: Oracle advises RAIDZ-2 over RAID-Z and 2-way mirrors, [oracle-raidz2]; beyond double
        # redundancy more is the safety priority's choice)
        sturdier = [r for r in rows if r.failures_guaranteed > pick.failures_guaranteed and much_safer(r, pick, goal)
                    and r.space_bytes >= (1 - STURDIER_SPACE) * pick.space_bytes]
        if sturdier:
            return max(sturdier, key=lambda r: (round(balance[id(r)], 9), [-x for x in _risk_key(r, goal)]))
    return pick


def _price(row: PlanRow) -> float:
    """Price per usable TB, rounded to what a buyer tells apart (3 figures); no price sorts last."""
    p = row.price_per_usable_tb
    return math.inf if p is None else float(f"{p:.3g}")


def _safer_choice(pick: PlanRow, feasible: list[PlanRow], goal: Goal) -> PlanRow | None:
    """The layout in budget an order of magnitude safer than the pick that gives up the least of
    what the priority asks (None if there is none)."""
    safer = [r for r in feasible if much_safer(r, pick, goal)]
    if not safer or goal.priority == "safety":
        return None
    score = {id(r): speed_score(r, goal.metrics) or 1.0 for r in feasible}
    if goal.priority == "space":
        return max(safer, key=lambda r: (r.space_bytes, score[id(r)]))
    if goal.priority == "speed":
        return max(safer, key=lambda r: (score[id(r)], r.space_bytes))
    if goal.priority == "cost":
        return min(safer, key=lambda r: (_price(r), -score[id(r)]))
    balance = _balance(feasible, goal)
    return max(safer, key=lambda r: (balance[id(r)], -_risk_key(r, goal)[0]))


def _shortlist(pick: PlanRow, feasible: list[PlanRow], goal: Goal, safer: PlanRow | None) -> list[PlanRow]:
    """The pick, the safer choice, the safest, and the layouts in budget no other beats on space,
    speed, P(loss), P(damage) and failures survived together."""
    score = {id(r): speed_score(r, goal.metrics) or 1.0 for r in feasible}
    order = {id(r): i for i, r in enumerate(feasible)}

    def key(r: PlanRow) -> tuple:  # larger is better on each
        loss_, damage_ = _risk_key(r, goal)
        return (r.space_bytes, score[id(r)], -loss_, -damage_, r.failures_guaranteed)

    def beats(a: PlanRow, b: PlanRow) -> bool:
        ka, kb = key(a), key(b)
        if ka == kb:  # alike on all five: the first stands for both
            return order[id(a)] < order[id(b)]
        return all(x >= y for x, y in zip(ka, kb))
    front = [r for r in feasible if not any(beats(o, r) for o in feasible if o is not r)]
    safest = min(feasible, key=lambda r: (_risk_key(r, goal), -r.space_bytes))
    # what each priority asks for is on the list, whatever the trimming: the safest, the roomiest and
    # the fastest (spreading over space alone left out the 3-way mirrors of 20 SSDs for a database)
    front.sort(key=lambda r: -r.space_bytes)
    fastest = max(front, key=lambda r: (score[id(r)], r.space_bytes))
    chosen = {id(pick): pick, id(safest): safest, id(front[0]): front[0], id(fastest): fastest}
    if safer is not None:
        chosen[id(safer)] = safer
    rest = [r for r in front if id(r) not in chosen]
    room = SHORT_LIST_MAX - len(chosen)
    if len(rest) > room:  # spread the others evenly over the range of space
        step = (len(rest) - 1) / max(room - 1, 1)
        rest = [rest[round(i * step)] for i in range(room)] if room > 0 else []
    for r in rest:
        chosen.setdefault(id(r), r)
    return sorted(chosen.values(), key=lambda r: (-r.space_bytes, -score[id(r)]))


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


def workload_text(goal: Goal) -> str:
    """'bulk workload (media data's)' when the data level chose it, else 'vm workload'."""
    return f"{goal.workload} workload" + ("" if goal.workload_given else f" ({goal.data} data's)")


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
        # a layout as good within the tolerances and much safer replaces the riskier one: never the pick, never listed
        replaced = _replaced(feasible, goal)
        out += tuple(Verdict(r.layout, (), (f"{replaced[id(r)].layout} is as good and much safer",))
                     for r in feasible if id(r) in replaced)
        feasible = [r for r in feasible if id(r) not in replaced]
        pick = _pick(feasible, goal)
        safer = _safer_choice(pick, feasible, goal)
        shortlist = _shortlist(pick, feasible, goal, safer)
        reason = _reason(pick, shortlist, goal, safer)
    else:  # nothing fits: the closest to the budget, said plainly
        pool = [r for r in rows if r.space_bytes >= goal.min_usable_bytes] or rows
        # the failures asked first (a floor), then OpenZFS practice as in budget (§2), then the risk:
        # 6 x 10 TB with --min-usable 45TB named a dRAID without a spare, not raidz1:6 of its space and P(loss)
        pick = min(pool, key=lambda r: (max(goal.failures - r.failures_guaranteed, 0), bool(verdicts[r.layout].advice),
                                        _risk_key(r, goal), -r.space_bytes))
        shortlist = [pick]
        reason = (f"No layout of these disks meets the budget for {goal.data} data [{budget_text(goal)}]. "
                  f"The closest is {pick.layout} ({pick.shape}): {_figures(pick, goal)}; it misses on "
                  f"{', '.join(verdicts[pick.layout].why_out)}. Add disks, choose disks with a lower failure "
                  f"rate, or accept more risk with a lower data level.")
    return Recommendation(pick.layout, goal, bool(feasible), reason, tuple(r.layout for r in shortlist), out, len(rows))


def in_blocks(row: PlanRow) -> str:
    """' in 16K blocks' when the row's space is weighed in the workload's blocks, else ''."""
    return f" in {format_recordsize(row.space_block_bytes)} blocks" if row.space_block_bytes else ""


def usable_text(row: PlanRow) -> str:
    """'40.0 TB usable', or in the workload's blocks '36.7 TB usable in 16K blocks'
    (docs/recommend.md#space-at-the-workloads-block-size)."""
    return f"{format_bytes(row.space_bytes)} usable{in_blocks(row)}"


def _figures(row: PlanRow, goal: Goal) -> str:
    h = goal.horizon_years
    shown = "" if not row.space_block_bytes else f"; zfs list shows {format_bytes(row.usable_bytes)}"
    text = (f"{usable_text(row)} ({100 * row.efficiency:.0f} % of raw{shown}), survives "
            f"{row.failures_guaranteed} failed disk{'s' * (row.failures_guaranteed != 1)} at once")
    if row.p_loss is not None:   # pool --add's rows carry no P(damage): its engine gives the pool's loss
        text += (f", P(pool loss) {odds(loss(row, h))}"
                 + (f" and P(damaged files) {odds(damage(row, h))}" if row.p_damage is not None else "")
                 + f" over {h:g} year{'s' * (h != 1)}")
    s = speed_score(row, goal.metrics)
    if s is not None:
        text += f", {s:.1f}× one disk's speed"
    if row.price_per_usable_tb is not None:
        text += f", {money(row.price_per_usable_tb)} per usable TB (the disks {money(row.disks_price)})"
    return text


def _reason(pick: PlanRow, shortlist: list[PlanRow], goal: Goal, safer: PlanRow | None = None) -> str:
    metrics = ", ".join(METRIC_NAMES.get(m, m) for m in goal.metrics)
    weight = goal.work.speed_weight
    weighed = "" if weight == 0.5 else f", speed weighing {weight / (1 - weight):.0f}× space"
    why = {
        "space": "the most usable space",
        "speed": f"the highest predicted {goal.workload} speed ({metrics})",
        "safety": f"the least risk (below {odds(goal.floor)} a risk counts as none)",
        "cost": "the lowest price per usable TB",
        "balanced": f"the best balance of space and {goal.workload} speed ({metrics}{weighed})",
    }[goal.priority]
    text = (f"{pick.layout} ({pick.shape}) gives {why} within the budget for {goal.data} data "
            f"[{budget_text(goal)}]: {_figures(pick, goal)}.")
    if pick.failures_guaranteed == 0:
        text += " It has no redundancy: one failed disk loses the whole pool."
    if pick.small_blocks:
        text += (f" Its fixed stripe width pads small blocks (efficiency {small_blocks_text(pick)}): fine for "
                 f"{goal.workload} data; small files and metadata want a mirrored special vdev.")
    if safer is not None:
        text += f" Safer: {safer_text(safer, pick, goal)}."
    others = [r for r in shortlist if r.layout not in (pick.layout, getattr(safer, "layout", None))]
    score = {id(r): speed_score(r, goal.metrics) for r in [pick, *others]}
    # a trade is named when it is one by §4's terms: more than SPACE_TOLERANCE more space, more than
    # SPEED_TOLERANCE faster; each layout once (the roomiest's phrase already says its speed)
    trades, named = [], set()
    roomiest = max(others, key=lambda r: r.space_bytes, default=None)
    if roomiest is not None and pick.space_bytes < (1 - SPACE_TOLERANCE) * roomiest.space_bytes:
        named.add(roomiest.layout)
        ratio = score[id(roomiest)] / score[id(pick)] if score[id(pick)] and score[id(roomiest)] else None
        trades.append(f"{roomiest.layout} gives {format_bytes(roomiest.space_bytes - pick.space_bytes)} more space"
                      + in_blocks(pick) + ("" if ratio is None else " at about the same speed"
                         if 1 - SPEED_TOLERANCE <= ratio <= 1 / (1 - SPEED_TOLERANCE) else f" at {ratio:.2g}× the speed"))
    fastest = max(others, key=lambda r: score[id(r)] or 0, default=None)
    if (fastest is not None and fastest.layout not in named and score[id(pick)]
            and score[id(pick)] < (1 - SPEED_TOLERANCE) * (score[id(fastest)] or 0)):
        trades.append(f"{fastest.layout} is {score[id(fastest)] / score[id(pick)]:.2g}× as fast with "
                      f"{usable_text(fastest)}")
    if trades:
        text += " Other choices in budget: " + "; ".join(trades) + "."
    return text


def safer_text(safer: PlanRow, pick: PlanRow, goal: Goal) -> str:
    """What a safer layout costs against the pick: 'raidz2:6: same space, 0.5× 4K random read, P(damaged
    files) 1 in 2,800 instead of 1 in 3.0'."""
    parts = []
    ratio = safer.space_bytes / pick.space_bytes
    if abs(ratio - 1) < 0.005:
        parts.append("same space")
    else:
        diff = safer.space_bytes - pick.space_bytes
        parts.append(f"{format_bytes(abs(diff))} {'more' if diff > 0 else 'less'} space{in_blocks(pick)} "
                     f"({100 * (ratio - 1):+.0f} %)")
    if safer.speed is not None and pick.speed is not None:
        moved = [(METRIC_NAMES.get(m, m), safer.speed[m] / pick.speed[m]) for m in goal.metrics if pick.speed[m]]
        moved = [(name, x) for name, x in moved if abs(x - 1) >= 0.05]
        parts += [f"{x:.2g}× {name}" for name, x in moved] or [f"same {goal.workload} speed"]
    h = goal.horizon_years
    if safer.failures_guaranteed > pick.failures_guaranteed:
        parts.append(f"survives {safer.failures_guaranteed} failed disk{'s' * (safer.failures_guaranteed != 1)} instead of "
                     f"{pick.failures_guaranteed}")
    for name, of in (("P(pool loss)", loss), ("P(damaged files)", damage)):
        a, b = of(safer, h), of(pick, h)
        # a risk of the pick below the floor counts as none: its change is not a gain (§3)
        if a is not None and b is not None and odds(a) != odds(b) and b > goal.floor:
            parts.append(f"{name} {odds(a)} instead of {odds(b)}")
    return f"{safer.layout}: " + ", ".join(parts)
