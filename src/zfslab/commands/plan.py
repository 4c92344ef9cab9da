"""`zfslab plan`: every layout for a set of disks, with space, risk and speed."""

from __future__ import annotations

import argparse
import os
import re
from typing import TYPE_CHECKING

from rich.text import Text

from zfslab.commands._common import (DEFAULT_DISKS, add_goal_options, disk_size_arg, add_output_options, add_risk_options,
                                     add_zfs_options, console, failure_inputs_text, goal_from_args, inputs_text, int_arg,
                                     load_disk_type, read_disks,
                                     prices_from_args, risk_params, size_arg)
from zfslab.errors import UsageError, clip, shown
from zfslab.model.capacity import accounting_name, rules_for
from zfslab.model.layout_grammar import parse_layout
from zfslab.model.plan import DiskSet, mixed_disk_set, plan
from zfslab.model.recommend import METRIC_NAMES, Goal, budget_text, recommend, small_blocks_text, workload_text
from zfslab.model.recommend import _figures as pick_figures  # the reason's own words for the pick's figures
from zfslab.model.cost import money
from zfslab.model.allocation import format_recordsize
from zfslab.model.units import parse_blocksize
from zfslab.commands import _data_fit
from zfslab.report.plan_table import column_keys, fit_table, one_disk_figures, table_width
from zfslab.report.tables import Console, to_json, wrapped_lines

if TYPE_CHECKING:
    from zfslab.model.bench_fit import BenchFit

EXAMPLE = "zfslab plan 8x12TB --layouts raidz2:8,4xmirror:2"


def add_parser(sub) -> None:
    p = sub.add_parser("plan", epilog=f"example: {EXAMPLE}",
                       description="Every sensible layout for a set of identical disks: its exact usable space (as "
                                   "zfs list shows it), the failures it survives, its risks of losing the pool and "
                                   "damaging files, its predicted speed, and the layout to build for your data.")
    p.add_argument("disks", nargs="?", default=None, metavar="COUNTxSIZE",
                   help=f"the disks, e.g. 24x4TB or 8x12TB, or several sizes: 8x12TB,4x8TB (default {DEFAULT_DISKS})")
    # `plan 24 4TB`: the size as a second word, caught to say how to write it (not in the usage)
    p.add_argument("disks_size_word", nargs="?", default=None, help=argparse.SUPPRESS)
    p.add_argument("--disks", dest="disk_count", type=int_arg("--disks", 1, 1024), metavar="N",
                   help="number of disks (with --disk-size or --vdev-bytes)")
    size = p.add_mutually_exclusive_group()
    size.add_argument("--disk-size", type=disk_size_arg, metavar="SIZE",
                      help="size of each whole disk (Linux partitioning applies): 4TB, 3.64TiB, 4000787030016")
    size.add_argument("--vdev-bytes", type=size_arg, metavar="N",
                      help="exact bytes ZFS sees of each vdev (a file, a partition, a FreeBSD raw disk)")
    p.add_argument("--layouts", metavar="L,L", help="only these layouts (comma-separated), e.g. raidz2:6,12xmirror:2; "
                                                   "on disks of several sizes, raidz2:8@12TB+raidz2:4@8TB")
    p.add_argument("--allow-unused", action="store_true",
                   help="let a layout of --layouts use fewer disks than given (the row says how many are unused)")
    p.add_argument("--no-spares", action="store_true", help="leave out layouts with hot spares")
    p.add_argument("--no-draid", action="store_true", help="leave out dRAID layouts")
    add_zfs_options(p)
    add_risk_options(p)
    p.add_argument("--no-risk", action="store_true", help="leave out the risk columns (and the risk budget)")
    p.add_argument("--recordsize", default=None, metavar="R",
                   help="recordsize for the speed model (default 128K); for --workload vm and database also the block "
                        "size their space is weighed at (default 16K)")
    p.add_argument("--no-speed", action="store_true", help="leave out the speed columns")
    p.add_argument("--db", metavar="FILE",
                   help="bench results: fit the speed model on the latest run's streaming tests and predict every "
                        "layout from it, with 90 %% ranges (--wide, --json); the disks default to that run's")
    add_goal_options(p)
    _data_fit.add_data_options(p)
    shown_ = p.add_argument_group("what the table shows")
    shown_.add_argument("--all", action="store_true",
                        help="every layout, not only the recommended one and those worth considering")
    shown_.add_argument("--wide", action="store_true", help="every column, however wide the terminal")
    shown_.add_argument("--explain", action="store_true",
                        help="after the table, what each column means and every risk and speed input")
    shown_.add_argument("--columns", metavar="K,K", help="exactly these columns: " + ", ".join(column_keys(Goal())))
    add_output_options(p)
    p.set_defaults(func=run)


def _plan_disks(args: argparse.Namespace) -> DiskSet:
    unused = args.allow_unused
    if args.disks_size_word is not None:
        word = args.disks_size_word
        if args.disks is not None and args.disks.strip().isdigit():
            joined = args.disks.strip() + ("" if word.strip()[:1] in ("x", "X", "×") else "x") + word.strip()
            raise UsageError(f"write the disks as one word: zfslab plan {shown(joined)} (see zfslab plan --help)")
        raise UsageError(f"unexpected argument {clip(word)}: give the disks once, as COUNTxSIZE (e.g. 24x4TB)")
    if args.disks is not None:
        if args.disk_count or args.disk_size or args.vdev_bytes:
            raise UsageError("give the disks once: either COUNTxSIZE (e.g. 24x4TB) or --disks with --disk-size")
        return read_disks(args.disks, sector_bytes=args.sector_size, allow_unused=unused)
    if args.disk_size or args.vdev_bytes:
        if not args.disk_count:
            raise UsageError("say how many disks with --disks N (or write COUNTxSIZE, e.g. 24x4TB)")
        if args.vdev_bytes:
            return mixed_disk_set([(args.disk_count, args.vdev_bytes)], exact_vdev=True, allow_unused=unused)
        return mixed_disk_set([(args.disk_count, args.disk_size)], sector_bytes=args.sector_size, allow_unused=unused)
    if args.disk_count:
        raise UsageError("say the size of each disk with --disk-size SIZE, e.g. --disk-size 4TB")
    return read_disks(DEFAULT_DISKS, sector_bytes=args.sector_size, allow_unused=unused)


def _columns(text: str | None) -> list[str] | None:
    if text is None:
        return None
    keys = [k.strip() for k in text.split(",") if k.strip()]
    known = column_keys(Goal())
    bad = [k for k in keys if k not in known]
    if bad or not keys:
        raise UsageError(f"--columns {clip(text)}: {'unknown ' + ', '.join(map(repr, bad)) if bad else 'none given'}; "
                         f"choose from {', '.join(known)}")
    return keys


def _table_width() -> int:
    """The terminal's width; for a pipe, $COLUMNS or 100."""
    probe = Console()
    if probe.is_terminal:
        return probe.width
    text = os.environ.get("COLUMNS", "")
    return int(text) if text.isdigit() and 40 <= int(text) <= 1000 else 100


def run(args: argparse.Namespace) -> int:
    disk = load_disk_type(args.disk_type)
    calibration = _bench_fit(args, disk)
    disks = _calibration_disks(calibration, args) if calibration and _no_disks_given(args) else _plan_disks(args)
    rules = rules_for(args.zfs_version)
    layouts = [parse_layout(t) for t in args.layouts.split(",")] if args.layouts else None
    keys = _columns(args.columns)
    goal, horizons = goal_from_args(args)
    risk, resilvers = _risk(args, horizons, disk, calibration)
    speed = None if args.no_speed else disk.speed if calibration is None else calibration.profile(disk.speed)
    recordsize = parse_blocksize(args.recordsize or "128K")
    # vm and database: space weighed in their blocks (16K, or the --recordsize given), not zfs list's 128K
    # (docs/recommend.md#space-at-the-workloads-block-size); the other workloads keep zfs list's figure
    space_block = (recordsize if args.recordsize else goal.work.space_block_bytes) if goal.work.space_block_bytes else 0
    rows = plan(disks, ashift=args.ashift, rules=rules, layouts=layouts,
                hot_spares=not args.no_spares, draid=not args.no_draid, risk=risk,
                speed=speed, recordsize=recordsize, prices=prices_from_args(args, disks.sizes), space_block=space_block)
    if calibration is not None:  # deliberate lazy loading: the fit's code only for plan --db
        from zfslab.model.bench_fit import fit_ranges
        from zfslab.report.bench_fit_text import fit_dict, fit_fields, resilver_dicts
    calibrated = None if calibration is None else fit_ranges(calibration, [r.layout for r in rows], args.ashift, recordsize)
    other_disks = _other_disks(calibration, disks, disk)
    data = _data_fit.load(args)
    fits = _data_fit.fit(rows, data, args) if data else {}
    rec = recommend(_data_fit.with_room(rows, fits, args) if fits else rows, goal)
    if args.csv:
        from zfslab.report.plan_csv import plan_csv  # deliberate lazy loading: only --csv writes CSV
        extra = {r.layout: (fit_fields(r.layout, calibration, calibrated) if calibration is not None else {})
                 | (_data_fit.fields(fits, r.layout) if fits else {}) for r in rows}  # as --json adds them
        print(plan_csv(rows, rec, {v.layout: v.why_out or v.advice for v in rec.over_budget}, extra), end="")
        return 0
    if args.json:
        basis = {} if calibration is None else {"speed_fit": fit_dict(calibration, calibrated.level),
                                                "speed_fit_other_disks": other_disks,
                                                "resilver_measured": resilver_dicts(resilvers)}
        print(to_json({"disks": disks.label, "disk_count": disks.count, "disk_bytes": disks.disk_bytes,
                       "vdev_bytes": disks.vdev_bytes, "ashift": args.ashift, "zfs_accounting": rules.software,
                       "disk_type": disk.name, "risk_inputs": None if risk is None else inputs_text(risk), **basis,
                       "recommendation": rec.as_dict(), "layouts": _json_rows(rows, rec, calibration, calibrated, fits)}))
        return 0
    shown_rows, fitted, out, page = _fit_table(rows, rec, goal, risk, speed, calibrated, keys, args)
    class_vdevs = any(c.alloc_class in ("special", "dedup") for lay in layouts or () for c in lay.classes)
    _print_head(out, page, disks, accounting_name(rules, class_vdevs), goal, rec, fitted, args, rows)
    if fits:  # the user's data, before the footer that ends the answer (issue 33: it came after it)
        for line in _data_fit.lines(fits, shown_rows, data, args):
            out.print(line)
    for line in _footer(rows, shown_rows, rec, goal, fitted, disk, risk, speed, args, calibration, resilvers,
                        other_disks):
        for part in wrapped_lines(line, page):
            out.print(Text(part, style="dim"), soft_wrap=True)
    return 0


def _fit_table(rows, rec, goal: Goal, risk, speed, calibrated, keys, args):
    """The rows shown (the short list, or --all), the table fitted to the page, a console as wide
    as the page, and the page's width."""
    out = console()
    width = None if args.wide else _table_width()
    shown_rows = rows if args.all else [r for r in rows if r.layout in rec.shortlist]
    if not args.all:
        shown_rows.sort(key=lambda r: -r.usable_bytes)
    have = ({"risk"} if risk else set()) | ({"speed"} if speed else set()) | ({"interval"} if calibrated else set()) \
        | ({"cost"} if args.disk_price else set()) | ({"block"} if any(r.space_block_bytes for r in rows) else set())
    fitted = fit_table(shown_rows, goal, rec, width=width, have=have, keys=keys, calibrated=calibrated)
    # --wide: as wide as the table, whatever the terminal (the user asked for every column)
    page = width if width is not None else max(table_width(fitted.table), _table_width())
    out = Console(highlight=False, width=page, force_terminal=out.is_terminal, no_color=not out.is_terminal)
    return shown_rows, fitted, out, page


def star_reason(rec, pick, goal: Goal) -> str:
    """The recommendation's reason less what the screen already shows (issue 33: 102-144 words,
    8-11 lines at 80 columns): the budget is in the header, the pick's figures in its row of the
    table. What stays: why this layout, its shape, and the trade-offs against the others. The
    reason's words are recommend's; this only leaves parts out (when they are not found as
    written, the reason is shown whole)."""
    text = rec.reason
    if pick is None or not rec.within_budget:
        return text
    text = text.replace(f" for {goal.data} data [{budget_text(goal)}]", "")
    # which figures the workload weighs: the table's speed columns and --explain name them
    metrics = ", ".join(METRIC_NAMES.get(m, m) for m in goal.metrics)
    text = text.replace(f" ({metrics})", "", 1).replace(f"({metrics}, ", "(", 1)
    # the price stays: the table has the price per TB at most, never what the disks cost
    price = "" if pick.price_per_usable_tb is None else \
        f": {money(pick.price_per_usable_tb)} per usable TB (the disks {money(pick.disks_price)})"
    text = text.replace(f": {pick_figures(pick, goal)}.", f"{price}.", 1)
    # the safer choice is a row of the table: its name and what it costs in space, not its figures again
    return re.sub(r"Safer: (\S+): ([^,.]+(?:\.[0-9][^,.]*)?)(?:, [^.]+(?:\.[0-9][^.]*)*)?\.", r"Safer: \1, at \2.", text,
                  count=1)


def _print_head(out, page: int, disks: DiskSet, accounting: str, goal: Goal, rec, fitted, args, rows) -> None:
    """The disks and the goal above the table, the table, and the recommendation below it."""
    how = "whole disks, Linux partitioning" if disks.whole_disk else "exact vdev size"
    # no disks given and none from --db: say that these are an example, and how to give one's own
    if _no_disks_given(args) and not args.db:
        for line in wrapped_lines(f"No disks given: an example of {DEFAULT_DISKS}; give yours, e.g. zfslab plan 8x12TB.",
                                  page):
            out.print(Text(line, style="bold"), soft_wrap=True)
    for line in wrapped_lines(f"{disks.label} disks ({how}), ashift {args.ashift}, {accounting} accounting", page):
        out.print(Text(line, style="bold"), soft_wrap=True)
    for line in wrapped_lines(f"For {goal.data} data [{budget_text(goal)}], {workload_text(goal)}, "
                              f"priority {goal.priority}:", page):
        out.print(Text(line), soft_wrap=True)
    out.print(fitted.table)
    out.print()
    # prose cut between words, never inside a number or between a number and its unit
    lead = "★ Recommended: "
    pick = next((r for r in rows if r.layout == rec.layout), None)
    reason = rec.reason if args.explain else star_reason(rec, pick, goal)  # --explain: the whole reason, figures too
    first, *more = wrapped_lines(lead + reason, page)
    out.print(Text.assemble((lead, "bold"), first[len(lead):]), soft_wrap=True)
    for line in more:
        out.print(Text(line), soft_wrap=True)


def _bench_fit(args: argparse.Namespace, disk) -> BenchFit | None:
    """--db: the speed model fitted on the database's latest bench run; None without --db."""
    if not args.db:
        return None
    if args.no_speed:
        raise UsageError("--db fits the speed columns: leave out --no-speed (or --db)")
    from zfslab.store.bench_fit import fit_bench_run  # deliberate lazy loading: the store only for --db
    return fit_bench_run(args.db, disk.speed)


def _risk(args: argparse.Namespace, horizons, disk, calibration: BenchFit | None):
    """The risk inputs (None with --no-risk) and the resilver rates drill measured on the fitted
    run's disks, which they use unless --resilver-mbps says the rate."""
    if args.no_risk:
        return None, {}
    risk = risk_params(args, None, horizons, disk)  # plan() sizes it from `disks`
    if calibration is None or args.resilver_mbps is not None:  # the user's rate wins
        return risk, {}
    from zfslab.model.bench_fit import with_measured_resilvers  # deliberate lazy loading: only for --db
    from zfslab.store.bench_fit import measured_resilvers
    resilvers = measured_resilvers(args.db, calibration)
    return with_measured_resilvers(risk, resilvers), resilvers


def _json_rows(rows, rec, calibration: BenchFit | None, calibrated, fits) -> list[dict]:
    """plan --json's rows: each row's figures, whether it is recommended or shortlisted and why not,
    and, with --db or --data, the fit's ranges and measured figures."""
    why_out = {v.layout: v.why_out or v.advice for v in rec.over_budget}
    records = []
    for row in rows:
        record = row.as_dict() | {"recommended": row.layout == rec.layout, "shortlisted": row.layout in rec.shortlist,
                                  "left_out_because": list(why_out.get(row.layout, ()))}
        if calibration is not None:
            from zfslab.report.bench_fit_text import fit_fields  # deliberate lazy loading: only for --db
            record |= fit_fields(row.layout, calibration, calibrated)
        if fits:
            record |= _data_fit.fields(fits, row.layout)
        records.append(record)
    return records


def _other_disks(calibration: BenchFit | None, disks: DiskSet, disk) -> str | None:
    """--db: one line when the planned disks differ from those the fit's run measured, else None."""
    if calibration is None:
        return None
    from zfslab.model.disk_basis import PRESET_ROTATIONAL, DiskBasis, mismatch_line
    from zfslab.model.disk_types import DISK_TYPES
    measured = DiskBasis(calibration.disk_count, (calibration.disk_bytes,) if calibration.disk_bytes else (),
                         calibration.disk_rotational)
    planned_kind = PRESET_ROTATIONAL.get(disk.name) if DISK_TYPES.get(disk.name) is disk else None
    return mismatch_line(measured, DiskBasis(disks.count, tuple(disks.sizes), planned_kind))


def _footer(rows, shown_rows, rec, goal: Goal, fitted, disk, risk, speed, args, calibration=None,
            resilvers=None, other_disks: str | None = None) -> list[str]:
    h = f"{goal.horizon_years:g} year{'s' * (goal.horizon_years != 1)}"
    out = len(rec.over_budget)
    if args.all:
        lines = [f"◆ worth considering. {out} of {len(rows)} layouts are outside the budget or against OpenZFS practice."]
    else:
        hidden = len(rows) - len(shown_rows)
        # what is left out, not what is shown: when no layout meets the budget the closest is shown
        # and is itself outside it (the footer counted it, and said "-1 beaten" for 2 x 4 TB of business data)
        shown = {r.layout for r in shown_rows}
        out = sum(1 for v in rec.over_budget if v.layout not in shown)
        safer = sum(1 for v in rec.over_budget if v.layout not in shown and not v.why_out
                    and v.advice[-1].endswith("much safer"))
        parts = [(out - safer, "outside the budget or against OpenZFS practice"),
                 (safer, "replaced by one as good and much safer"),
                 (hidden - out, "beaten on space, speed and risk by one shown")]
        why = ", ".join(f"{n} {text}" for n, text in parts if n)  # a reason no layout has is not listed
        lines = [f"◆ worth considering. {hidden} more layout{'s' * (hidden != 1)}"
                 + (f": {why}" if why else "") + " (--all shows them)."]
    draids: dict[str, list[str]] = {}  # dRAID's fixed stripe width: what small blocks cost, wherever it is shown
    for r in shown_rows:
        if r.small_blocks and r.layout != rec.layout:  # the pick's reason says it
            draids.setdefault(small_blocks_text(r), []).append(r.layout)
    if draids:
        lines.append("dRAID pads each block to whole stripes, efficiency: " + "; ".join(
            f"{names[0]}{' and alike' if len(names) > 1 else ''} {text}" for text, names in
            list(draids.items())[:None if args.explain else 3])
            + (f"; {len(draids) - 3} more in --explain" if len(draids) > 3 and not args.explain else "") + ".")
    if other_disks and speed is not None:
        lines.append(other_disks)
    if speed is not None and calibration is not None and calibration.host_spread is not None:
        from zfslab.report.bench_fit_text import host_spread_line  # deliberate lazy loading: only for --db
        lines.append(host_spread_line(calibration))
    block = next((r.space_block_bytes for r in rows if r.space_block_bytes), 0)
    if block and not args.explain:  # vm, database: the space the recommendation weighs is not zfs list's
        lines.append(f"Space is weighed in {format_recordsize(block)} blocks, as {goal.workload} data is written "
                     f"(at {format_recordsize(block)} TB): raidz stores each with its own parity and padding.")
    legend = _legend(rows, goal, disk, risk, speed, args, h, calibration, resilvers, other_disks)
    if args.explain:
        if fitted.left_out:
            lines.append(f"Left out for width: {', '.join(fitted.left_out)} (--wide shows all, --columns chooses).")
        return lines + legend
    # the table's own words stay short (issue 23, and issue 33: plan 24x4TB fits a 24-line terminal at
    # 80 columns): the inputs and the count of columns left out in one sentence, the rest behind --explain
    basis = f"{disk.name} disks" + (f", {failure_inputs_text(risk)}" if risk is not None else "")
    how = (f"speed fitted on {len(calibration.measured)} measured layouts {_fit_source(calibration)}"
           if speed is not None and calibration is not None else "speed uncalibrated" if speed is not None
           else "")
    hidden = " More columns with --wide;" if fitted.left_out else ""
    return lines + [f"Figures: {basis}" + (f"; {how}" if how else "") + f".{hidden} --explain says what each means."]


def _fit_source(calibration, note: str = "") -> str:
    """Where the fitted layouts came from: one run, or the runs of several hosts (a fleet's merged --db)."""
    if calibration.hosts > 1:
        return f"from {calibration.hosts} hosts ({len(calibration.run_ids)} runs{note})"
    return f"(run {calibration.run_id}{note})"


def _legend(rows, goal: Goal, disk, risk, speed, args, h: str, calibration, resilvers,
            other_disks: str | None = None) -> list[str]:
    """What each column means and the inputs behind the figures (plan --explain)."""
    lines = ["usable: zfs list USED+AVAIL of the empty pool. can fail: disks, at once, whichever they are."]
    block = next((r.space_block_bytes for r in rows if r.space_block_bytes), 0)
    if block:
        b = format_recordsize(block)
        lines.append(f"at {b} TB: what the empty pool holds in {b} blocks ({goal.workload} data's"
                     + (", --recordsize" if args.recordsize else "") + "): usable times the share of it such blocks "
                     "fill, as each is stored with its own parity and padding (raidz, dRAID; mirrors lose nothing). "
                     "The recommendation weighs space by it (docs/recommend.md#space-at-the-workloads-block-size).")
    lines.append(f"disks: {disk.name} ({disk.source}).")
    if args.disk_price:
        lines.append(f"price/TB: what the disks a layout uses cost (--disk-price {args.disk_price}, in its currency) "
                     "per usable TB.")
    if risk is not None:
        lines.append(f"P(loss): pool lost; P(damage): some files damaged (read errors in resilvers); within {h}. "
                     f"Inputs: {inputs_text(risk)}.")
        if resilvers:
            from zfslab.report.bench_fit_text import resilver_line  # deliberate lazy loading: only for --db
            lines.append(resilver_line(resilvers))
    if speed is not None and calibration is not None:
        from zfslab.report.bench_fit_text import iops_line  # deliberate lazy loading: only for --db
        n = len(calibration.measured)
        iops = "fitted" if calibration.iops is not None else f"from {disk.name}"
        lines.append(f"speed ×disk: {goal.workload} workload as multiples of one disk's "
                     f"{one_disk_figures(rows, goal.metrics)} (MB/s fitted, IOPS {iops}).")
        lines.append(f"Speed figures: fitted on {n} layout{'s' * (n != 1)} measured on "
                     f"{'other disks (above)' if other_disks else 'these disks'} "
                     f"{_fit_source(calibration, ', SANDBOX file vdevs' if calibration.sandbox else '')}; "
                     "m: measured; 90 % ranges with --wide or --json (docs/speed.md#plan---db).")
        lines.append(iops_line(calibration, disk.name))
    elif speed is not None:
        lines.append(f"speed ×disk: {goal.workload} workload as multiples of one disk's "
                     f"{one_disk_figures(rows, goal.metrics)}, predicted from the {disk.name} preset, uncalibrated (no host limit): `bench --layouts "
                     "calibration`, then `plan --db`, fits it to your disks.")
    return lines


def _no_disks_given(args) -> bool:
    return args.disks is None and not (args.disk_count or args.disk_size or args.vdev_bytes)


def _calibration_disks(calibration: BenchFit, args) -> DiskSet:
    """The disks the fitted run measured, as whole disks."""
    if not calibration.disk_bytes or calibration.disk_bytes <= 0:
        raise UsageError(f"run {calibration.run_id} does not say its disks' size (a sandbox run): give the disks, "
                         f"e.g. zfslab plan {calibration.disk_count}x4TB --db FILE")
    return mixed_disk_set([(calibration.disk_count, calibration.disk_bytes)], sector_bytes=args.sector_size,
                          allow_unused=args.allow_unused)
