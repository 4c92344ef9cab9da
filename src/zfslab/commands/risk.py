"""`zfslab risk`: the risk of data loss of one layout over the years."""

from __future__ import annotations

import argparse
import math
from dataclasses import replace
import sys
import time

from zfslab.commands._common import (add_ashift_option, add_risk_options, afr_by_age, choice_arg, disk_size_arg,
                                     float_arg, inputs_text, int_arg, load_disk_type, mttdl_text, console, risk_params,
                                     size_arg)
from zfslab.errors import UsageError
from zfslab.model.layout_grammar import parse_layout
from zfslab.model.layouts import Layout
from zfslab.model.reliability.params import RiskParams
from zfslab.model.units import format_bytes, odds, power_of_ten
from zfslab.report.tables import Column, print_wrapped, render_table, to_json


EXAMPLE = "zfslab risk raidz2:6 --disk-size 16TB --afr 2 --years 1,5,10"


def add_parser(sub) -> None:
    p = sub.add_parser("risk", epilog=f"example: {EXAMPLE}",
                       description="Probability of losing the pool or damaging blocks within 1, 5 and 10 years, "
                                   "expected bytes lost and MTTDL, from an exact Markov chain or a Monte Carlo "
                                   "simulation; or another calculator's number for comparison (--model).")
    p.add_argument("layout", help="e.g. raidz2:6, 2xraidz2:6, 12xmirror:2, draid2:8d:24c:1s, "
                                  "raidz2:6+special=mirror:3@1TB+log=mirror:2@400GB")
    p.add_argument("--disk-size", type=disk_size_arg, required=True, metavar="SIZE", help="size of each disk, e.g. 16TB")
    add_risk_options(p)
    p.add_argument("--special-disk-type", metavar="TYPE",
                   help="the disks of the special, dedup and log vdevs (their AFR, BER and speed): a --disk-type "
                        "preset such as ssd or nvme, or a PROFILE.toml (default: --disk-type, with its overrides)")
    p.add_argument("--crashes-per-year", type=float_arg("--crashes-per-year", 0, 8760), default=2.0, metavar="N",
                   help="unclean shutdowns a year, for the log vdev's term (default 2)")
    p.add_argument("--spares", type=int_arg("--spares", 0, 100), metavar="N",
                   help="hot spares (replaces any spare:N in the layout)")
    p.add_argument("--model", choices=("zfs", "classic", "wintelguy", "backblaze"),
                   type=choice_arg(("zfs", "classic", "wintelguy", "backblaze")), default="zfs",
                   help="zfs (default): read errors cost blocks, not the pool; classic: a read error in a "
                        "rebuild loses the array; wintelguy / backblaze: those calculators' formulas")
    p.add_argument("--engine", choices=("markov", "montecarlo"), type=choice_arg(("markov", "montecarlo")), default="markov",
                   help="markov (exact, default) or montecarlo (ageing disks, scrubs, correlation)")
    p.add_argument("--trials", type=int_arg("--trials", 100, 100_000_000), default=20000, metavar="N",
                   help="Monte Carlo trials per vdev (at least; more until --target-error is met)")
    p.add_argument("--target-error", type=float_arg("--target-error", 0.001, 1), default=0.1, metavar="RE",
                   help="Monte Carlo: run until the 95 %% half-width of P(loss) is within RE of it (default 0.1)")
    p.add_argument("--max-trials", type=int_arg("--max-trials", 100, 100_000_000), default=2_000_000, metavar="N",
                   help="Monte Carlo: stop after N trials per vdev even if --target-error is not met (default 2000000)")
    p.add_argument("--max-seconds", type=float_arg("--max-seconds", 0.1, 86400), default=5.0, metavar="S",
                   help="Monte Carlo: stop after S seconds of simulation, whatever else is not met (default 5)")
    p.add_argument("--seed", type=int_arg("--seed", 0, 2**63 - 1), metavar="S",
                   help="Monte Carlo random seed (printed, so a run can be repeated)")
    p.add_argument("--weibull-shape", type=float_arg("--weibull-shape", 0.1, 20), metavar="B", help="Monte Carlo: Weibull lifetimes of this shape (first-year AFR = --afr)")
    p.add_argument("--afr-by-age", metavar="PCT,PCT,...", help="Monte Carlo: AFR for each year of age, e.g. 1.3,1.5,2.2,3.1")
    p.add_argument("--batch-variance", type=float_arg("--batch-variance", 0, 10), default=0.0, metavar="V",
                   help="Monte Carlo: variance of a gamma frailty shared by each vdev's disks (0 = independent)")
    p.add_argument("--exponential-repair", action="store_true", help="Monte Carlo: exponential instead of fixed repair times")
    add_ashift_option(p, "for the usable bytes (default 12)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def _layout_with_spares(text: str, spares: int | None) -> Layout:
    layout = parse_layout(text)
    if spares is None:
        return layout
    return replace(layout, hot_spares=spares, spare_bytes=layout.spare_bytes if spares else 0)


def _class_disk(args: argparse.Namespace, params: RiskParams) -> RiskParams | None:
    """Risk inputs of the special, dedup and log disks: their preset's AFR, BER and speed, with the
    pool's replacement time, fill, scrubs, horizons and repair policy; None: the data disks' own."""
    if not args.special_disk_type:
        return None
    from zfslab.model.reliability.params import field_inputs
    disk = load_disk_type(args.special_disk_type)
    # --lse-rate is the data disks'; the special disks keep their own type's latent-error rate
    latent = field_inputs(disk.name, seeks=disk.speed.rand_read_iops_qd1 < 1000, error_model=params.error_model)
    return params.with_(afr=disk.afr, mtbf_hours=None, ber_per_bit=disk.ber_per_bit,
                        streaming_mb_s=disk.streaming_mb_s, resilver_mb_s=None, **latent)


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from zfslab.model.capacity import osizes, whole_disk_capacity
    from zfslab.model.reliability.montecarlo import Lifetime, simulate
    from zfslab.model.reliability.risk import compute_risk, markov_risk

    layout = _layout_with_spares(args.layout, args.spares)
    params = risk_params(args, args.disk_size)
    ssd = _class_disk(args, params)
    usable = whole_disk_capacity(layout, args.disk_size, ashift=args.ashift,
                                 class_vdev_bytes=osizes(layout)).usable_bytes
    if args.engine == "montecarlo":
        if args.model not in ("zfs", "classic"):
            raise UsageError(f"--model {args.model} is a closed formula; use it with --engine markov")
        if layout.classes:
            raise UsageError(f"--engine montecarlo: {layout} has special, dedup or log vdevs, which only the "
                             "Markov engine models; leave out --engine montecarlo")
        seed = args.seed if args.seed is not None else int(np.random.SeedSequence().entropy % 2**32)
        life = None
        if args.afr_by_age:
            life = Lifetime.table(afr_by_age(args.afr_by_age))
        elif args.weibull_shape:
            life = Lifetime.weibull_from_afr(params.afr, args.weibull_shape)
        result = simulate(layout, params, usable_bytes=usable, rng=np.random.default_rng(seed), lifetime=life,
                          trials=args.trials, max_trials=args.max_trials, target_relative_error=args.target_error,
                          classic=args.model == "classic", exponential_repair=args.exponential_repair,
                          batch_variance=args.batch_variance, clock=time.monotonic, max_seconds=args.max_seconds,
                          progress=_progress_line(args) if sys.stderr.isatty() else None)
        if sys.stderr.isatty():
            print(file=sys.stderr)  # end the progress line
        result.extra["seed"] = seed
    elif args.model in ("zfs", "classic"):
        result = markov_risk(layout, params, usable_bytes=usable, model=args.model, class_disk=ssd,
                             crashes_per_year=args.crashes_per_year)
    else:
        result = compute_risk(layout.data_layout, params, usable_bytes=usable, model=args.model)
    ours = None
    if args.model in ("wintelguy", "backblaze"):
        ours = markov_risk(layout, params, usable_bytes=usable, class_disk=ssd, crashes_per_year=args.crashes_per_year)
    record = {"layout": str(layout), "shape": layout.describe(), "disk_bytes": args.disk_size,
              "usable_bytes": usable, "inputs": _params_record(params)} | result.as_dict()
    if ours is not None:
        record["zfslab_zfs_model"] = {"p_loss": ours.as_dict()["p_loss"], "mttdl_hours": ours.mttdl_hours}
    if ssd is not None:
        record["inputs_special_disks"] = _params_record(ssd)
    if args.json:
        print(to_json(record))
        return 0
    _print_risk(layout, params, result, ours)
    _print_classes(layout, result, ssd, args)
    return 0


def _print_classes(layout: Layout, result, ssd: RiskParams | None, args: argparse.Namespace) -> None:
    """Where the risk comes from when the pool has special, dedup, log or cache vdevs."""
    if not (layout.classes or layout.cache_devices):
        return
    out = console()
    i = len(result.years) // 2
    y = f"{result.years[i]:g} y" if result.years else ""
    disks = (f"{args.special_disk_type} disks ({inputs_text(ssd)})" if ssd is not None
             else "the same disk type as the data disks (--special-disk-type sets theirs)")
    if result.model not in ("zfs", "classic"):
        print_wrapped(out, f"{result.model} counts the data vdevs only; the zfslab column adds the special and dedup vdevs")
    for v in result.vdevs or ():
        p_one = 1 - (1 - v.p_loss[i]) ** v.count if v.p_loss else 0.0
        print_wrapped(out, f"P(loss) over {y} of {v.vdev}: {odds(p_one)}" + (
            f"  (a {v.vdev.split('=')[0]} vdev: its loss loses the pool; on {disks})" if "=" in v.vdev else ""))
    log = result.extra.get("log")
    if log:
        p = log["p_sync_write_loss"][f"{result.years[i]:g}"]
        print_wrapped(out, f"log: P(losing the last seconds of synchronous writes) over {y}: {odds(p)}: the log vdev is lost "
                  f"({log['log_vdev_lost_per_year']:.2g} a year) and the system crashes within {log['window_s']:g} s "
                  f"({log['crashes_per_year']:g} unclean shutdowns a year, --crashes-per-year); not a pool loss, "
                  f"and not in P(pool loss)")
    if layout.cache_devices:
        print_wrapped(out, "cache: an L2ARC device holds copies only; its loss costs speed, never data")


def _progress_line(args: argparse.Namespace):
    """Monte Carlo progress on one rewritten stderr line (only when stderr is a terminal)."""
    def show(trials: int, relative_error: float, seconds: float) -> None:
        error = f"{100 * relative_error:.1f} %" if math.isfinite(relative_error) else "no loss seen yet"
        print(f"\rMonte Carlo: {trials:,} trials per vdev, relative error {error} (target {100 * args.target_error:g} %), "
              f"{seconds:.1f} s of {args.max_seconds:g} s", end="", file=sys.stderr, flush=True)
    return show


def _params_record(p: RiskParams) -> dict:
    return {"afr": p.afr, "failure_rate_per_hour": p.failure_rate_per_hour, "mtbf_hours": p.mtbf_hours,
            "ber_per_bit": p.ber_per_bit, "replace_hours": p.replace_hours, "resilver_mb_s": p.resilver_mb_s,
            "streaming_mb_s": p.streaming_mb_s, "fill": p.fill, "scrub_days": p.scrub_days,
            "lse_per_hour": p.lse_per_hour, "error_model": p.error_model,
            "lse_episodes_per_year": p.lse_episodes_per_year if p.field else None,
            # the rates by age the field model used (docs/reliability.md#by-age): [start age years, episodes]
            "lse_by_age": [list(b) for b in p.lse_by_age().bands] if p.field else None,
            "parallel_repair": p.parallel_repair, "years": list(p.years)}


def _print_risk(layout: Layout, params: RiskParams, result, ours) -> None:
    out = console()
    out.print(f"[bold]{layout}[/bold]: {layout.describe()}")
    print_wrapped(out, f"model {result.model}, engine {result.engine}; inputs: {inputs_text(params)}")
    rows = list(range(len(result.years)))
    cols = [
        Column("years", lambda i: f"{result.years[i]:g}"),
        Column("P(pool loss)", lambda i: odds(result.p_loss[i])),
    ]
    if result.model in ("zfs", "classic"):
        cols += [
            Column("P(damaged blocks)", lambda i: odds(result.p_damage[i])),
            Column("E(bytes lost): blocks", lambda i: format_bytes(result.expected_bytes_lost[i])),
            Column("E(bytes lost): pool", lambda i: format_bytes(result.expected_bytes_lost_pool[i])),
        ]
    if "ci95" in result.extra:
        cols.insert(2, Column("95 % interval", lambda i: " .. ".join(
            odds(p) for p in result.extra["ci95"]["p_loss"][f"{result.years[i]:g}"])))
    if ours is not None:
        cols.append(Column("zfslab (zfs model)", lambda i: odds(ours.p_loss[i])))
    render_table(rows, cols, console=out)
    hours = ((f" ({result.mttdl_hours:,.0f} h)" if result.mttdl_hours < 1e6 else f" ({power_of_ten(result.mttdl_hours)} h)")
             if math.isfinite(result.mttdl_hours) else " (beyond a float's range)")
    print_wrapped(out, f"MTTDL {mttdl_text(result.mttdl_hours)}{hours}. " + (
        "MTTDL is a mean over constant rates; judge by P(loss) over the years."))
    print_wrapped(out, f"dominant cause: {result.dominant_cause}")
    if "trials" in result.extra:
        errors = ", ".join(f"{y} y: {100 * e:.1f} %" if math.isfinite(e) else f"{y} y: no loss seen by then"
                           for y, e in result.extra["relative_error"].items())
        why = {"trials": "the --trials asked for", "target error": "--target-error was met",
               "trial budget": "--max-trials was reached before --target-error",
               "time budget": "--max-seconds ran out before --target-error"}[result.extra["stopped_by"]]
        print_wrapped(out, f"Monte Carlo: {result.extra['trials']:,} trials per vdev, seed {result.extra.get('seed')} "
                  f"(--seed repeats it); 95 % relative error of P(loss): {errors}")
        print_wrapped(out, f"Monte Carlo stopped: {why}")
    if ours is not None:
        print_wrapped(out, f"why they differ: {result.model} " + (
            "counts a read error during any rebuild of a full disk as the loss of the array, and uses MTTDL as "
            "an exponential law; ZFS resilvers only allocated data, and a read error then costs a block, not the pool."
            if result.model == "wintelguy" else
            "counts losses in fixed replacement periods with the raw AFR; the zfs model follows each failure "
            "through its own repair time and the vdev's parity."))
