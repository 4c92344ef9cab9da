"""`zfslab bench`: build each layout on the disks, run the suite, store every measurement."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass, field

from zfslab.commands._common import int_arg
from zfslab.commands._disks import (add_disk_options, device_list, dry_run_verdict, gate, history_recorder, inspect,
                                    make_sandbox, same_size, sandbox_paths)
from zfslab.errors import UsageError
from zfslab.model.candidates import candidate_layouts
from zfslab.model.layouts import Layout, parse_layout
from zfslab.model.units import parse_blocksize, parse_fio_size
from zfslab.report.tables import Column, render_table, to_json
from zfslab.system.disks import is_leftover_of

# Bounds on what the user asks for: beyond them the work (or the dry run's listing) is no
# longer something a person meant.
MAX_SANDBOX_DISKS = 64
MAX_FIO_BYTES = 1 << 50


EXAMPLE = "zfslab bench --disks /dev/disk/by-id/ata-A,/dev/disk/by-id/ata-B --layouts mirror:2 --dry-run"


def add_parser(sub) -> None:
    p = sub.add_parser("bench", epilog=f"example: {EXAMPLE}", help="build each layout on your disks, run fio, store every result",
                       description="For each layout: create the pool on the given disks, run the suite, repeat, "
                                   "destroy, next. Refuses disks that hold data unless --wipe and their serial "
                                   "numbers are given. Results go to SQLite, one transaction per measurement; the "
                                   "same command run again resumes where it stopped.")
    add_disk_options(p, disks_help="whole disks, e.g. /dev/disk/by-id/ata-A,/dev/disk/by-id/ata-B",
                     sandbox_help="sparse files in DIR as vdevs (results not representative of disks)")
    p.add_argument("--sandbox-disks", type=int_arg("--sandbox-disks", 1, MAX_SANDBOX_DISKS), default=6, metavar="N",
                   help=f"how many sandbox files (default 6, at most {MAX_SANDBOX_DISKS})")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--layouts", metavar="L,L,...",
                       help="layouts to run, comma-separated (default: what plan lists); 'calibration': only those "
                            "the speed model's calibration design picks from them, to fit with plan --db")
    which.add_argument("--all", action="store_true", help="every layout plan lists for these disks (the default)")
    p.add_argument("--suite", default="quick", metavar="S", help="ars, seq, quick (default), bonnie (bonnie++ as calomel ran it) or FILE.fio")
    p.add_argument("--repeats", type=int_arg("--repeats", 1, 100), default=3, metavar="N",
                   help="runs of each test, 1 to 100; the median is kept (default 3)")
    p.add_argument("--recordsize", default="128K", metavar="R", help="dataset recordsize (default 128K)")
    p.add_argument("--compression", choices=("off", "lz4"), default="off", help="dataset compression (default off)")
    p.add_argument("--size", metavar="SIZE", help="file size per fio job, or bonnie++'s file (default by suite: quick 1g, ars 4g, seq and bonnie 16g)")
    p.add_argument("--runtime", type=int_arg("--runtime", 1, 86400), metavar="S",
                   help="seconds per time-based test (default by suite)")
    p.add_argument("--ramp", type=int_arg("--ramp", 0, 3600), metavar="S",
                   help="ramp-up seconds not counted (default by suite)")
    p.add_argument("--dry-run", action="store_true", help="print every zpool/zfs/fio command in order and stop")
    p.add_argument("--json", action="store_true", help="print the results (with --dry-run: the steps) as JSON")
    p.set_defaults(func=run)


def _layouts(args, disks: int) -> tuple[list[Layout], list]:
    """The layouts to run and, for --layouts calibration, the CalibrationPicks that chose them."""
    from zfslab.system.bench import check_bench_layouts

    picks = []
    if args.layouts and args.layouts.strip() == "calibration":
        from zfslab.model.calibration import calibration_design
        picks = calibration_design(candidate_layouts(disks))
        layouts = [p.layout for p in picks]
    elif args.layouts:
        layouts = [parse_layout(t) for t in args.layouts.split(",") if t.strip()]
    else:
        layouts = candidate_layouts(disks)
    for x in layouts:
        if x.disks > disks:
            raise UsageError(f"layout {x} needs {x.disks} disks but only {disks} were given")
    check_bench_layouts(layouts)  # zpool create would refuse it without -f, after the disks were wiped
    return layouts, picks


def _calibration_lines(picks, disks: int) -> list[str]:
    """What the dry run says of a calibration: each chosen layout, the rule and what it pins."""
    listed = len(candidate_layouts(disks))
    lines = [(f"# calibration: {len(picks)} of the {listed} layouts plan lists for {disks} disks "
              "(docs/speed.md#calibration-design); plan --db fits the speed model on them")]
    lines += [f"# {p.layout}: {p.rule}; pins {', '.join(p.pins)}" for p in picks]
    return lines


def _options(args):
    from zfslab.system.bench import BenchOptions
    from zfslab.system.suites import DEFAULTS, suite_tests

    parse_blocksize(args.recordsize)
    job_file = None
    if args.suite.endswith(".fio"):
        if not os.path.isfile(args.suite):
            raise UsageError(f"--suite {args.suite}: no such fio job file")
        job_file, tests, defaults = os.path.abspath(args.suite), (), ("1g", 60, 10)
    else:
        tests, defaults = tuple(suite_tests(args.suite)), DEFAULTS[args.suite]
    size, runtime, ramp = defaults
    if args.size and not 0 < parse_fio_size(args.size) <= MAX_FIO_BYTES:
        raise UsageError(f"--size {args.size}: give a size from 1 byte to 1 PiB, e.g. 4g")
    return BenchOptions(args.suite, tests, args.repeats, args.ashift, args.recordsize, args.compression,
                        args.size or size, args.runtime if args.runtime is not None else runtime,
                        args.ramp if args.ramp is not None else ramp, job_file)








def run(args: argparse.Namespace) -> int:
    from zfslab.store.results import Results
    from zfslab.store.schema import connect
    from zfslab.system.bench import MARK, POOL, Bench, destroy_own_pool, format_steps, plan_steps, run_key
    from zfslab.system.bonnie import Bonnie
    from zfslab.system.facts import host_facts
    from zfslab.system.fio import Fio
    from zfslab.system.runner import PACKAGES, Runner, ToolMissing
    from zfslab.system.zfs import ZfsCli

    options = _options(args)
    runner = Runner()
    sandbox = bool(args.sandbox)
    if sandbox:
        devices, sandbox_bytes = sandbox_paths(args.sandbox, args.sandbox_disks, args.sandbox_size)
        ids = devices
    else:
        devices = device_list(args.disks)
    layouts, picks = _layouts(args, len(devices))  # a layout zfslab cannot build is refused before any disk is read
    infos = inspect(devices, runner, sandbox, args.db)
    if not sandbox:
        same_size(infos)
        ids = [i.serial or i.device for i in infos]
    key = run_key(layouts, ids, options)
    prior = prior_run(args.db, key)
    if args.dry_run:  # reads the database if there is one, writes nothing anywhere
        steps = plan_steps(layouts, devices, options, key, Fio(runner), prior.done if prior.resuming else frozenset(),
                           dirty=_wiped(infos, prior.guids, args, sandbox))
        skipped = len(prior.done) if prior.resuming else 0
        if args.json:  # the same steps as data: zfslab's own (a wipe) have no command
            calibration = {"calibration": [{"layout": str(p.layout), "rule": p.rule, "pins": list(p.pins)}
                                           for p in picks]} if picks else {}
            print(to_json({"dry_run": True, "layouts": [str(x) for x in layouts], **calibration,
                           "measurements_stored": skipped,
                           "steps": [{"kind": s.kind, "layout": s.layout, "test": s.test or None,
                                      "repeat": s.repeat or None, "devices": list(s.devices),
                                      "command": list(s.argv) if s.kind != "wipe" else None, "line": s.line}
                                     for s in steps]}))
        else:
            print("\n".join((_calibration_lines(picks, len(devices)) if picks else []) + format_steps(steps, skipped)))
        return dry_run_verdict(infos, prior.guids, args, sandbox)

    log = lambda text: print(f"zfslab: {text}", file=sys.stderr)  # noqa: E731
    engine = options.engine if not options.job_file else "fio"
    if runner.which(engine) is None:  # before any pool is made, not after the first layout
        raise ToolMissing(engine, PACKAGES.get(engine, engine))
    zfs = ZfsCli(runner, log=log)
    guids = set(prior.guids)

    def adopt(guid: str, layout: str) -> None:  # killed between its create and the GUID's record
        conn = connect(args.db)
        try:
            Results(conn).record_pool(guid, POOL, "bench", layout, prior.run_id)
        finally:
            conn.close()
        guids.add(guid)
    if destroy_own_pool(zfs, POOL, guids, "bench", log, prior.intents, MARK, adopt):
        infos = inspect(devices, runner, sandbox, args.db)  # its labels remain, no longer busy
    gate(infos, guids, args, sandbox)

    results = Results(connect(args.db))
    if sandbox:
        make_sandbox(devices, sandbox_bytes)
    facts = host_facts() | {"zfs_version": zfs.version().kernel}
    if prior.resuming:
        run_id = prior.run_id
    else:
        disk_rows = [{"device": i.given, "serial": i.serial, "model": i.model, "size_bytes": i.size_bytes,
                      "rotational": i.rotational} for i in infos if not sandbox] or [{"device": d} for d in devices]
        run_id = results.start_run(key=key, command=" ".join(sys.argv), suite=options.suite, repeats=options.repeats,
                                   options=options.as_dict(), sandbox=sandbox, facts=facts, disks=disk_rows)
    bench = Bench(zfs, Fio(runner), results, runner, options, layouts, devices, key, run_id, sandbox, Bonnie(runner),
                  log=log, on_wiped=history_recorder(infos, runner, results))
    dirty = tuple(i.given for i in infos if i.reasons)
    if dirty:
        log(f"wiping {', '.join(dirty)}")
    _run_with_progress(bench, plan_steps(layouts, devices, options, key, Fio(runner), results.done(run_id),
                                         bench.mountpoint, dirty=dirty))
    summary = results.summary(run_id)
    if args.json:
        print(to_json({"run_id": run_id, "sandbox": sandbox, "facts": facts, "results": summary}))
    else:
        _print_summary(summary, sandbox, args.db, run_id)
    return 0








@dataclass(frozen=True)
class PriorRun:
    """What the database says of an earlier run of this same command (nothing if there is none)."""

    run_id: int | None = None
    resuming: bool = False
    done: frozenset = frozenset()
    guids: frozenset[str] = frozenset()
    intents: dict = field(default_factory=dict)  # (pool name, mark) -> layout: creates recorded before they ran


def prior_run(db: str, key: str) -> PriorRun:
    """Read, never written: a dry run and a refused run leave the file as they found it."""
    from zfslab.store.results import Results
    from zfslab.store.schema import open_readonly
    from zfslab.store.readback import read_results
    if not os.path.exists(db):
        return PriorRun()
    read_results(db)  # every stored value through the check report and plan --db use: damage refused alike
    conn = open_readonly(db)
    try:
        results = Results(conn)
        run = results.find_run(key)
        if run is None:
            return PriorRun()
        resuming = run["finished_at"] is None
        return PriorRun(run["id"], resuming, frozenset(results.done(run["id"])),
                        frozenset(results.pool_guids(run_id=run["id"])) if resuming else frozenset(),
                        results.intents(run_id=run["id"]) if resuming else {})
    finally:
        conn.close()


def _wiped(infos, guids, args, sandbox) -> tuple[str, ...]:
    """The disks a dry run shows being wiped: those holding data whose serials --wipe confirmed."""
    confirmed = {x.strip() for x in (args.confirm_serials or "").split(",") if x.strip()}
    if sandbox or not args.wipe:
        return ()
    return tuple(i.given for i in infos if i.reasons and not is_leftover_of(i, guids) and i.serial in confirmed)


def _run_with_progress(bench, steps) -> None:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    console = Console(stderr=True)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=console, transient=not console.is_terminal) as progress:
        task = progress.add_task("bench", total=None)

        def update(text: str, done: int, total: int) -> None:
            progress.update(task, description=text, completed=done, total=total)
        bench.progress = update
        bench.run(steps)


def _print_summary(summary: list[dict], sandbox: bool, db: str, run_id: int) -> None:
    from rich.console import Console

    def num(v, fmt="{:,.1f}"):
        return "-" if v is None or v == 0 else fmt.format(v)

    cols = [Column("layout", lambda r: r["layout"], "left", no_wrap=True), Column("test", lambda r: r["test"], "left"),
            Column("n", lambda r: str(r["repeats"])),
            Column("read MB/s", lambda r: num(r["read_mb_s"])), Column("write MB/s", lambda r: num(r["write_mb_s"])),
            Column("read IOPS", lambda r: num(r["read_iops"], "{:,.0f}")),
            Column("write IOPS", lambda r: num(r["write_iops"], "{:,.0f}")),
            Column("spread (MB/s)", lambda r: _spread(r)), Column("note", lambda r: "cached?" if r["cache_suspect"] else "", "left")]
    caption = f"medians of the repeats; all measurements in {db} (run {run_id})"
    if sandbox:
        caption += "; SANDBOX: file vdevs, not representative of disks"
    render_table(summary, cols, console=Console(width=None if Console().is_terminal else 160), caption=caption)


def _spread(r: dict) -> str:
    lo, hi = r["read_mb_s_range"] if r["read_mb_s"] else r["write_mb_s_range"]
    return "-" if lo is None else f"{lo:,.1f}..{hi:,.1f}"
