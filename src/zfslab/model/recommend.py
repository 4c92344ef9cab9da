"""The trade-off: the Pareto frontier of space, speed and safety, and a recommendation.

A layout is on the frontier when no other layout is at least as good on all three corners and
better on one. Corners: usable bytes (more is better), speed (the geometric mean of the
predicted write, read and 4K random-read multiples of one disk; more is better) and P(pool
loss) within the middle horizon (less is better).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from zfslab.errors import UsageError
from zfslab.model.plan import PlanRow
from zfslab.model.units import format_bytes

PRIORITIES = ("speed", "space", "safety", "balanced")
SPEED_KEYS = ("write_mb_s", "read_mb_s", "rand_read_iops_qd8")


def speed_score(row: PlanRow) -> float:
    if row.speed_x is None:
        raise UsageError("the recommendation needs the speed columns: drop --no-speed")
    return math.prod(row.speed_x[k] for k in SPEED_KEYS) ** (1 / len(SPEED_KEYS))


def loss_5y(row: PlanRow) -> float:
    p = row.p_loss_at(5.0)
    if p is None:
        raise UsageError("the recommendation needs the risk columns: drop --no-risk")
    return p


def dominates(a: PlanRow, b: PlanRow) -> bool:
    ge = a.usable_bytes >= b.usable_bytes and speed_score(a) >= speed_score(b) and loss_5y(a) <= loss_5y(b)
    gt = a.usable_bytes > b.usable_bytes or speed_score(a) > speed_score(b) or loss_5y(a) < loss_5y(b)
    return ge and gt


def frontier(rows: list[PlanRow]) -> list[PlanRow]:
    return [r for r in rows if not any(dominates(o, r) for o in rows if o is not r)]


@dataclass(frozen=True)
class Recommendation:
    layout: str
    priority: str
    reason: str
    frontier: tuple[str, ...]


def _safety(row: PlanRow) -> float:
    """-log10 P(loss): 2 for 1 %, 9 for 1e-9."""
    return -math.log10(max(loss_5y(row), 1e-30))


def recommend(rows: list[PlanRow], priority: str = "balanced", *, min_usable_bytes: int = 0,
              min_failures: int = 0) -> Recommendation:
    if priority not in PRIORITIES:
        raise UsageError(f"--priority {priority}: use one of {', '.join(PRIORITIES)}")
    feasible = [r for r in rows if r.usable_bytes >= min_usable_bytes and r.failures_guaranteed >= min_failures]
    if not feasible:
        most = max(rows, key=lambda r: r.usable_bytes)
        raise UsageError(
            f"no layout gives {format_bytes(min_usable_bytes)} and survives {min_failures} failures; the most space "
            f"is {format_bytes(most.usable_bytes)} ({most.layout}): lower --min-usable or --min-failures, or add disks")
    front = frontier(feasible)
    if priority == "space":
        pick = max(front, key=lambda r: (r.usable_bytes, -loss_5y(r)))
    elif priority == "speed":
        pick = max(front, key=lambda r: (speed_score(r), -loss_5y(r)))
    elif priority == "safety":
        pick = min(front, key=lambda r: (loss_5y(r), -r.usable_bytes))
    else:
        top_space = max(r.usable_bytes for r in front)
        top_speed = max(speed_score(r) for r in front)
        top_safe = max(_safety(r) for r in front)

        def score(r):  # each corner as a share of the best on the frontier; the weakest share counts most
            # every layout certain to be lost (P = 1, e.g. --mtbf-hours 2): safety ranks none above another
            safe = _safety(r) / top_safe if top_safe > 0 else 1.0
            shares = (r.usable_bytes / top_space, speed_score(r) / top_speed, safe)
            return math.prod(shares) ** (1 / 3)
        pick = max(front, key=score)
    return Recommendation(pick.layout, priority, _reason(pick, front, priority, min_usable_bytes, min_failures),
                          tuple(r.layout for r in front))


def _reason(pick: PlanRow, front: list[PlanRow], priority: str, min_usable: int, min_failures: int) -> str:
    # alternatives worth naming keep some redundancy when the pick has it (a stripe is no alternative)
    front = [r for r in front if r.failures_guaranteed >= min(1, pick.failures_guaranteed)] or front
    most_space = max(front, key=lambda r: r.usable_bytes)
    fastest = max(front, key=speed_score)
    safest = min(front, key=loss_5y)
    constraints = []
    if min_usable:
        constraints.append(f"at least {format_bytes(min_usable)} usable")
    if min_failures:
        constraints.append(f"surviving {min_failures} failed disk{'s' if min_failures > 1 else ''}")
    why = {
        "space": "the most usable space",
        "speed": "the highest predicted speed",
        "safety": "the lowest risk of losing the pool",
        "balanced": "the best balance of space, speed and safety (no corner far behind the best)",
    }[priority]
    text = (f"{pick.layout} ({pick.shape}) gives {why}"
            + (f" among layouts with {' and '.join(constraints)}" if constraints else "") + ": "
            f"{format_bytes(pick.usable_bytes)} usable ({100 * pick.efficiency:.0f} % of raw), survives "
            f"{pick.failures_guaranteed} failed disk{'s' if pick.failures_guaranteed != 1 else ''} at once, "
            f"P(pool loss in 5 years) {loss_5y(pick):.1e}, and {speed_score(pick):.1f}× one disk's speed.")
    trades = []
    if most_space.layout != pick.layout:
        trades.append(f"{most_space.layout} would give {format_bytes(most_space.usable_bytes - pick.usable_bytes)} "
                      f"more space with a 5-year risk of {loss_5y(most_space):.1e}")
    if fastest.layout != pick.layout:
        trades.append(f"{fastest.layout} would be {speed_score(fastest) / speed_score(pick):.1f}× as fast with "
                      f"{format_bytes(fastest.usable_bytes)} usable")
    if safest.layout != pick.layout and loss_5y(safest) < loss_5y(pick):
        trades.append(f"{safest.layout} would cut the 5-year risk to {loss_5y(safest):.1e} with "
                      f"{format_bytes(safest.usable_bytes)} usable")
    if trades:
        text += " The trade-off: " + "; ".join(trades) + "."
    return text
