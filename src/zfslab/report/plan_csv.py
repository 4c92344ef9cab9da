"""plan's rows as a flat CSV, the same for `plan --csv` and `report --csv`: one scalar a cell, a
fixed column set and order whatever the input or the options (a mixed-size plan, --db, --data-from
and --disk-price fill columns another plan leaves empty; docs/cli-output.md lists them), and
numbers rounded to what they mean."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from zfslab.model.plan import PlanRow
from zfslab.model.recommend import Recommendation, damage, loss, speed_score
from zfslab.report.tables import to_csv

FIRST = ("layout", "shape", "disks", "hot_spares", "top_level_vdevs", "size_bytes", "usable_bytes", "usable_tb",
         "usable_tib", "zfs_list_size", "raw_bytes", "efficiency", "failures_guaranteed", "failures_best_case",
         "mttdl_hours")
# risks at the standard horizons, and at the recommendation's own (--horizon, or the one --years gives):
# the same names whatever --years says (issue 33: --years 3 renamed them); other horizons are in --json
STANDARD_YEARS = (1, 5, 10)
RISK = (*(f"p_loss_{y}y" for y in STANDARD_YEARS), *(f"p_damage_{y}y" for y in STANDARD_YEARS),
        "horizon_years", "p_loss_horizon", "p_damage_horizon")
# the speed model's figures (model/performance.py's predict), then each as a multiple of one disk
SPEED = ("write_mb_s", "rewrite_mb_s", "read_mb_s", "rand_read_iops_qd1", "rand_read_iops_qd8",
         "rand_write_iops_qd1", "rand_write_iops_qd8", "sync_write_iops_qd1", "sync_write_iops_qd8")
IOPS = SPEED[3:]
MIXED = ("unused_disks", "wasted_bytes", "zpool_create_needs_force")  # disks of several sizes
COST = ("disks_price", "price_per_usable_tb")  # --disk-price (empty without it)
# --db: the fit's ranges and the measured medians (report/bench_fit_text.py fit_fields)
FIT = (*(f"{m}_{end}" for m in SPEED for end in ("low", "high")), "measured",
       *(f"measured_{m}_mb_s" for m in ("write", "rewrite", "read")), "measured_iops", *(f"measured_{m}" for m in IOPS))
# --data-from: the user's data on each layout (commands/_data_fit.py fields)
DATA = ("data_used_bytes", "data_fits_times", "free_after_data_bytes", "room_for_data")
LAST = ("recommended", "shortlisted", "left_out_because")
HEADER = (*FIRST, *RISK, *SPEED, *(f"{k}_x" for k in SPEED), *MIXED, *COST, *FIT, *DATA, *LAST)


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


def plan_csv(rows: Sequence[PlanRow], rec: Recommendation, why_out: Mapping[str, Sequence[str]],
             extra: Mapping[str, dict] | None = None) -> str:
    """One schema whatever the options (HEADER, docs/cli-output.md): a figure the plan has not got
    is an empty cell. why_out: each left-out layout's reasons; extra: more fields per layout
    (plan --db's fit, plan --data-from's data), each a column of HEADER."""
    unknown = {k for fields in (extra or {}).values() for k in fields} - set(HEADER)
    if unknown:  # a field the schema does not name would vanish from the CSV: a bug, not the user's
        raise ValueError(f"plan_csv: fields outside the CSV schema: {sorted(unknown)}")
    h = rec.goal.horizon_years
    records = []
    shown = [r for r in rows if r.layout in rec.shortlist]
    for row in rows:
        flat = row.flat() | (extra or {}).get(row.layout, {})
        if row.p_loss is not None:
            flat |= {"horizon_years": h, "p_loss_horizon": loss(row, h), "p_damage_horizon": damage(row, h)}
        flat |= {"recommended": row.layout == rec.layout, "shortlisted": row.layout in rec.shortlist,
                 "left_out_because": "; ".join(why_out.get(row.layout, ())) or _beaten_by(row, shown, rec)}
        records.append({k: _rounded(k, flat.get(k)) for k in HEADER})
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
