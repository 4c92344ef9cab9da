"""`zfslab bench`: argument handling, the safety gate, progress and the results table."""

from __future__ import annotations

import argparse
import os
import re
import sys

from zfslab.errors import UsageError
from zfslab.model.candidates import candidate_layouts
from zfslab.model.layouts import Layout, parse_layout
from zfslab.model.units import format_bytes, parse_blocksize, parse_fio_size
from zfslab.report.tables import Column, render_table, to_json

OURS = re.compile(r"^holds a (gpt|PMBR|dos|zfs_member) (signature|partition table)( on \S+)?$")


def add_parser(sub) -> None:
    p = sub.add_parser("bench", help="build each layout on your disks, run fio, store every result",
                       description="For each layout: create the pool on the given disks, run the suite, repeat, "
                                   "destroy, next. Refuses disks that hold data unless --wipe and their serial "
                                   "numbers are given. Results go to SQLite, one transaction per measurement; the "
                                   "same command run again resumes where it stopped.")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--disks", metavar="DEV,DEV,...", help="whole disks, e.g. /dev/disk/by-id/ata-A,/dev/disk/by-id/ata-B")
    src.add_argument("--sandbox", metavar="DIR", help="sparse files in DIR as vdevs (results not representative of disks)")
    p.add_argument("--sandbox-disks", type=int, default=6, metavar="N", help="how many sandbox files (default 6)")
    p.add_argument("--sandbox-size", default="1GiB", metavar="SIZE", help="size of each sandbox file (default 1GiB)")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--layouts", metavar="L,L,...", help="layouts to run, comma-separated (default: what plan lists)")
    which.add_argument("--all", action="store_true", help="every layout plan lists for these disks (the default)")
    p.add_argument("--suite", default="quick", metavar="S", help="ars, seq, quick (default), bonnie (bonnie++ as calomel ran it) or FILE.fio")
    p.add_argument("--repeats", type=int, default=3, metavar="N", help="runs of each test; the median is kept (default 3)")
    p.add_argument("--ashift", type=int, default=12, help="pool ashift (default 12)")
    p.add_argument("--recordsize", default="128K", metavar="R", help="dataset recordsize (default 128K)")
    p.add_argument("--compression", choices=("off", "lz4"), default="off", help="dataset compression (default off)")
    p.add_argument("--size", metavar="SIZE", help="file size per fio job, or bonnie++'s file (default by suite: quick 1g, ars 4g, seq and bonnie 16g)")
    p.add_argument("--runtime", type=int, metavar="S", help="seconds per time-based test (default by suite)")
    p.add_argument("--ramp", type=int, metavar="S", help="ramp-up seconds not counted (default by suite)")
    p.add_argument("--db", default="zfslab-results.sqlite", metavar="FILE", help="results database (default zfslab-results.sqlite)")
    p.add_argument("--dry-run", action="store_true", help="print every zpool/zfs/fio command in order and stop")
    p.add_argument("--wipe", action="store_true", help="allow disks that hold data (needs their serial numbers)")
    p.add_argument("--confirm-serials", metavar="S,S,...", help="the serial numbers of the disks to wipe, for scripts")
    p.add_argument("--json", action="store_true", help="print the results as JSON")


def _layouts(args, disks: int) -> list[Layout]:
    if args.layouts:
        layouts = [parse_layout(t) for t in args.layouts.split(",") if t.strip()]
    else:
        layouts = candidate_layouts(disks)
    for x in layouts:
        if x.disks > disks:
            raise UsageError(f"layout {x} needs {x.disks} disks but only {disks} were given")
    return layouts


def _options(args):
    from zfslab.system.bench import BenchOptions
    from zfslab.system.suites import DEFAULTS, suite_tests

    if args.repeats < 1:
        raise UsageError(f"--repeats {args.repeats}: run each test at least once")
    if not 9 <= args.ashift <= 16:
        raise UsageError(f"--ashift {args.ashift}: OpenZFS accepts 9 to 16")
    parse_blocksize(args.recordsize)
    job_file = None
    if args.suite.endswith(".fio"):
        if not os.path.isfile(args.suite):
            raise UsageError(f"--suite {args.suite}: no such fio job file")
        job_file, tests, defaults = os.path.abspath(args.suite), (), ("1g", 60, 10)
    else:
        tests, defaults = tuple(suite_tests(args.suite)), DEFAULTS[args.suite]
    size, runtime, ramp = defaults
    if args.size:
        parse_fio_size(args.size)
    return BenchOptions(args.suite, tests, args.repeats, args.ashift, args.recordsize, args.compression,
                        args.size or size, args.runtime if args.runtime is not None else runtime,
                        args.ramp if args.ramp is not None else ramp, job_file)


def _sandbox_files(directory: str, count: int, size_text: str) -> list[str]:
    from zfslab.model.units import parse_size
    size = parse_size(size_text)
    if size < 64 << 20:
        raise UsageError(f"--sandbox-size {size_text}: ZFS needs vdevs of at least 64 MiB")
    os.makedirs(directory, exist_ok=True)
    files = []
    for i in range(count):
        path = os.path.join(os.path.abspath(directory), f"vdev{i}")
        if not os.path.exists(path):
            with open(path, "wb") as f:
                f.truncate(size)
        files.append(path)
    return files


def _confirm(dirty, args) -> set[str]:
    if args.confirm_serials is not None:
        return {s.strip() for s in args.confirm_serials.split(",") if s.strip()}
    if not args.wipe or not dirty:
        return set()
    if not sys.stdin.isatty():
        raise UsageError("--wipe needs the serial numbers: type them at the prompt, or give --confirm-serials")
    for d in dirty:
        print(f"  {d.given}: {d.model or '?'} serial {d.serial or '?'}, {format_bytes(d.size_bytes)}: {'; '.join(d.reasons)}",
              file=sys.stderr)
    typed = input("Everything on these disks will be destroyed. Type their serial numbers, separated by spaces: ")
    return set(typed.split())


def cmd_bench(args: argparse.Namespace) -> int:
    from zfslab.store.results import Results
    from zfslab.store.schema import connect
    from zfslab.system.bench import Bench, format_steps, plan_steps, run_key
    from zfslab.system.disks import BadDeviceList, check_wipe_allowed, inspect_disks, refusal_lines
    from zfslab.system.facts import host_facts
    from zfslab.system.fio import Fio
    from zfslab.system.bonnie import Bonnie
    from zfslab.system.runner import PACKAGES, Runner, ToolMissing
    from zfslab.system.zfs import ZfsCli

    options = _options(args)
    runner = Runner()
    sandbox = bool(args.sandbox)
    if sandbox:
        devices = _sandbox_files(args.sandbox, args.sandbox_disks, args.sandbox_size)
        infos, ids = [], devices
    else:
        devices = [d.strip() for d in args.disks.split(",") if d.strip()]
        if not devices:
            raise UsageError("--disks: name at least one disk")
        infos = inspect_disks(devices, runner)
        sizes = {i.size_bytes for i in infos}
        if len(sizes) > 1:
            listing = ", ".join(f"{i.given} {format_bytes(i.size_bytes)}" for i in infos)
            raise BadDeviceList(f"the disks differ in size ({listing}); bench compares layouts on identical disks")
        ids = [i.serial or i.device for i in infos]
    layouts = _layouts(args, len(devices))
    key = run_key(layouts, ids, options)
    fio = Fio(runner)
    if args.dry_run:
        done = set()
        if os.path.exists(args.db):
            results = Results(connect(args.db))
            run = results.find_run(key)
            done = results.done(run["id"]) if run is not None else set()
        print("\n".join(format_steps(plan_steps(layouts, devices, options, key, fio), done)))
        lines = refusal_lines(infos)
        if lines:
            print("these disks would be refused (nothing was written):\n  " + "\n  ".join(lines), file=sys.stderr)
            return 10
        return 0

    results = Results(connect(args.db))
    run = results.find_run(key)
    resuming = run is not None and run["finished_at"] is None
    ours = results.run_serials(run["id"]) if resuming else set()
    # disks an interrupted run of this same command used may still carry its pool's labels
    foreign = [i for i in infos if i.reasons and not (i.serial in ours and all(OURS.match(r) for r in i.reasons))]
    check_wipe_allowed(foreign, wipe=args.wipe, confirmed_serials=_confirm(foreign, args))

    engine = options.engine if not options.job_file else "fio"
    if runner.which(engine) is None:  # before any pool is made, not after the first layout
        raise ToolMissing(engine, PACKAGES.get(engine, engine))
    zfs = ZfsCli(runner)
    facts = host_facts() | {"zfs_version": zfs.version().kernel}
    if resuming:
        run_id = run["id"]
    else:
        disk_rows = [{"device": i.given, "serial": i.serial, "model": i.model, "size_bytes": i.size_bytes,
                      "rotational": i.rotational} for i in infos] or [{"device": d} for d in devices]
        run_id = results.start_run(key=key, command=" ".join(sys.argv), suite=options.suite, repeats=options.repeats,
                                   options=options.as_dict(), sandbox=sandbox, facts=facts, disks=disk_rows)
    bench = Bench(zfs, fio, results, runner, options, layouts, devices, key, run_id, sandbox, Bonnie(runner),
                  log=lambda text: print(f"zfslab: {text}", file=sys.stderr))
    bench.destroy_leftovers()
    dirty = [i.given for i in infos if i.reasons]
    if dirty:
        print(f"zfslab: wiping {', '.join(dirty)}", file=sys.stderr)
        bench.wipe(dirty)
    _run_with_progress(bench)
    summary = results.summary(run_id)
    if args.json:
        print(to_json({"run_id": run_id, "sandbox": sandbox, "facts": facts, "results": summary}))
    else:
        _print_summary(summary, sandbox, args.db, run_id)
    return 0


def _run_with_progress(bench) -> None:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    console = Console(stderr=True)
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=console, transient=not console.is_terminal) as progress:
        task = progress.add_task("bench", total=None)

        def update(text: str, done: int, total: int) -> None:
            progress.update(task, description=text, completed=done, total=total)
        bench.progress = update
        bench.run()


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
