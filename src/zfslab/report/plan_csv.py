"""plan's rows as a flat CSV, the same for `plan --csv` and `report --csv`: one scalar a cell, a
fixed column set and order whatever the input (a mixed-size plan fills columns that a plan of
identical disks leaves empty), and numbers rounded to what they mean."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from zfslab.model.plan import PlanRow
from zfslab.model.recommend import Recommendation, speed_score
from zfslab.report.tables import to_csv

FIRST = ("layout", "shape", "disks", "hot_spares", "top_level_vdevs", "size_bytes", "usable_bytes", "usable_tb",
         "usable_tib", "zfs_list_size", "raw_bytes", "efficiency", "failures_guaranteed", "failures_best_case",
         "mttdl_hours")
MIXED = ("unused_disks", "wasted_bytes", "zpool_create_needs_force")  # disks of several sizes
COST = ("disks_price", "price_per_usable_tb")  # --disk-price (empty without it)
LAST = ("recommended", "shortlisted", "left_out_because")


def _rounded(key: str, value):
    """A figure to the digits it has: risks and MTTDL to 3 significant figures (their inputs
    have one or two), MB/s to 0.1, IOPS to 1, multiples of one disk to 0.01."""
    if not isinstance(value, float):
        return value
    if key.startswith(("p_loss", "p_damage")) or key == "mttdl_hours":
        return float(f"{value:.3g}")
    if key.endswith("_x"):
        return round(value, 2)
    if key.endswith("_mb_s"):
        return round(value, 1)
    if "_iops_" in key:
        return round(value)
    return value


def columns(rows: Sequence[PlanRow], extra: Sequence[str] = ()) -> list[str]:
    """The header: fixed, but for the risk horizons (--years) and the speed metrics, which come
    in the model's order when the plan has them."""
    years = next((r.years for r in rows if r.p_loss is not None), ())
    speed = next((list(r.speed) for r in rows if r.speed), [])
    return [*FIRST, *(f"p_loss_{y:g}y" for y in years), *(f"p_damage_{y:g}y" for y in years), *speed,
            *(f"{k}_x" for k in speed), *MIXED, *COST, *extra, *LAST]


def plan_csv(rows: Sequence[PlanRow], rec: Recommendation, why_out: Mapping[str, Sequence[str]],
             extra: Mapping[str, dict] | None = None) -> str:
    """why_out: each left-out layout's reasons; extra: more fields per layout (plan --db's fit)."""
    extra_keys = list(next(iter(extra.values()), {}).keys()) if extra else []
    header = columns(rows, extra_keys)
    records = []
    shown = [r for r in rows if r.layout in rec.shortlist]
    for row in rows:
        flat = row.flat() | (extra or {}).get(row.layout, {})
        flat |= {"recommended": row.layout == rec.layout, "shortlisted": row.layout in rec.shortlist,
                 "left_out_because": "; ".join(why_out.get(row.layout, ())) or _beaten_by(row, shown, rec)}
        records.append({k: _rounded(k, flat.get(k)) for k in header})
    return to_csv(records)


def _beaten_by(row: PlanRow, shown: Sequence[PlanRow], rec: Recommendation) -> str:
    """Why a layout inside the budget is not on the short list: one shown that has at least its
    space and its speed (the short list's test; the first such, most space first)."""
    if row.layout in rec.shortlist:
        return ""
    score = speed_score(row, rec.goal.metrics) or 0.0
    for other in shown:
        if other.usable_bytes >= row.usable_bytes and (speed_score(other, rec.goal.metrics) or 0.0) >= score:
            return f"{other.layout} has at least its space and speed"
    return "not on the short list"
