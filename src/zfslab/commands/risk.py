"""`zfslab risk`: the risk of data loss of one layout over the years."""

from __future__ import annotations

import argparse
import math
import sys
import time

from zfslab.commands._common import (add_risk_options, afr_by_age, float_arg, inputs_text, int_arg, mttdl_text, console,
                                     risk_params, sci, size_arg)
from zfslab.errors import UsageError
from zfslab.model.layouts import Layout, parse_layout
from zfslab.model.reliability.params import RiskParams
from zfslab.model.units import format_bytes
from zfslab.report.tables import Column, render_table, to_json


EXAMPLE = "zfslab risk raidz2:6 --disk-size 16TB --afr 2 --years 1,5,10"


def add_parser(sub) -> None:
    p = sub.add_parser("risk", epilog=f"example: {EXAMPLE}", help="risk of data loss over the years for one layout",
                       description="Probability of losing the pool or damaging blocks within 1, 5 and 10 years, "
                                   "expected bytes lost and MTTDL, from an exact Markov chain or a Monte Carlo "
                                   "simulation; or another calculator's number for comparison (--model).")
    p.add_argument("layout", help="e.g. raidz2:6, 2xraidz2:6, 12xmirror:2, draid2:8d:24c:1s")
    p.add_argument("--disk-size", type=size_arg, required=True, metavar="SIZE", help="size of each disk, e.g. 16TB")
    add_risk_options(p)
    p.add_argument("--spares", type=int_arg("--spares", 0, 100), metavar="N",
                   help="hot spares (replaces any spare:N in the layout)")
    p.add_argument("--model", choices=("zfs", "classic", "wintelguy", "backblaze"), default="zfs",
                   help="zfs (default): read errors cost blocks, not the pool; classic: a read error in a "
                        "rebuild loses the array; wintelguy / backblaze: those calculators' formulas")
    p.add_argument("--engine", choices=("markov", "montecarlo"), default="markov",
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
    p.add_argument("--ashift", type=int_arg("--ashift", 9, 16), default=12, help="for the usable bytes (default 12)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def _layout_with_spares(text: str, spares: int | None) -> Layout:
    layout = parse_layout(text)
    if spares is None:
        return layout
    return Layout(layout.groups, spares)


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from zfslab.model.capacity import whole_disk_capacity
    from zfslab.model.reliability.montecarlo import Lifetime, simulate
    from zfslab.model.reliability.risk import compute_risk, markov_risk

    layout = _layout_with_spares(args.layout, args.spares)
    params = risk_params(args, args.disk_size)
    usable = whole_disk_capacity(layout, args.disk_size, ashift=args.ashift).usable_bytes
    if args.engine == "montecarlo":
        if args.model not in ("zfs", "classic"):
            raise UsageError(f"--model {args.model} is a closed formula; use it with --engine markov")
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
    else:
        result = compute_risk(layout, params, usable_bytes=usable, model=args.model)
    ours = None
    if args.model in ("wintelguy", "backblaze"):
        ours = markov_risk(layout, params, usable_bytes=usable)
    record = {"layout": str(layout), "shape": layout.describe(), "disk_bytes": args.disk_size,
              "usable_bytes": usable, "inputs": _params_record(params)} | result.as_dict()
    if ours is not None:
        record["zfslab_zfs_model"] = {"p_loss": ours.as_dict()["p_loss"], "mttdl_hours": ours.mttdl_hours}
    if args.json:
        print(to_json(record))
        return 0
    _print_risk(layout, params, result, ours)
    return 0


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
            "lse_per_hour": p.lse_per_hour, "parallel_repair": p.parallel_repair, "years": list(p.years)}


def _print_risk(layout: Layout, params: RiskParams, result, ours) -> None:
    out = console()
    out.print(f"[bold]{layout}[/bold]: {layout.describe()}")
    out.print(f"model {result.model}, engine {result.engine}; inputs: {inputs_text(params)}")
    rows = list(range(len(result.years)))
    cols = [
        Column("years", lambda i: f"{result.years[i]:g}"),
        Column("P(pool loss)", lambda i: sci(result.p_loss[i])),
    ]
    if result.model in ("zfs", "classic"):
        cols += [
            Column("P(damaged blocks)", lambda i: sci(result.p_damage[i])),
            Column("E(bytes lost): blocks", lambda i: format_bytes(result.expected_bytes_lost[i])),
            Column("E(bytes lost): pool", lambda i: format_bytes(result.expected_bytes_lost_pool[i])),
        ]
    if "ci95" in result.extra:
        cols.insert(2, Column("95 % interval", lambda i: "{:.2e} .. {:.2e}".format(
            *result.extra["ci95"]["p_loss"][f"{result.years[i]:g}"])))
    if ours is not None:
        cols.append(Column("zfslab (zfs model)", lambda i: sci(ours.p_loss[i])))
    render_table(rows, cols, console=out)
    hours = f" ({result.mttdl_hours:.4g} h)" if math.isfinite(result.mttdl_hours) else " (beyond a float's range)"
    out.print(f"MTTDL {mttdl_text(result.mttdl_hours)}{hours}. " + (
        "MTTDL is a mean over constant rates; judge by P(loss) over the years."))
    out.print(f"dominant cause: {result.dominant_cause}")
    if "trials" in result.extra:
        errors = ", ".join(f"{y} y: {100 * e:.1f} %" if math.isfinite(e) else f"{y} y: no loss seen by then"
                           for y, e in result.extra["relative_error"].items())
        why = {"trials": "the --trials asked for", "target error": "--target-error was met",
               "trial budget": "--max-trials was reached before --target-error",
               "time budget": "--max-seconds ran out before --target-error"}[result.extra["stopped_by"]]
        out.print(f"Monte Carlo: {result.extra['trials']:,} trials per vdev, seed {result.extra.get('seed')} "
                  f"(--seed repeats it); 95 % relative error of P(loss): {errors}")
        out.print(f"Monte Carlo stopped: {why}")
    if ours is not None:
        out.print(f"why they differ: {result.model} " + (
            "counts a read error during any rebuild of a full disk as the loss of the array, and uses MTTDL as "
            "an exponential law; ZFS resilvers only allocated data, and a read error then costs a block, not the pool."
            if result.model == "wintelguy" else
            "counts losses in fixed replacement periods with the raw AFR; the zfs model follows each failure "
            "through its own repair time and the vdev's parity."))
