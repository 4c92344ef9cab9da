"""`zfslab bench`: argument handling, the safety gate, progress and the results table."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass

from zfslab.argtypes import int_arg
from zfslab.errors import UsageError
from zfslab.model.candidates import candidate_layouts
from zfslab.model.layouts import Layout, parse_layout
from zfslab.model.units import format_bytes, parse_blocksize, parse_fio_size
from zfslab.report.tables import Column, render_table, to_json
from zfslab.system.disks import (BadDeviceList, DisksRefused, check_wipe_allowed, inspect_disks, inspect_file,
                                 is_leftover_of, refusal_lines)

# Bounds on what the user asks for: beyond them the work (or the dry run's listing) is no
# longer something a person meant. A sandbox file is sparse, so its size is bounded by what
# the file system allows rather than by free space.
MAX_SANDBOX_DISKS = 64
MAX_SANDBOX_BYTES = 16 << 40
MAX_FIO_BYTES = 1 << 50


def add_parser(sub) -> None:
    p = sub.add_parser("bench", help="build each layout on your disks, run fio, store every result",
                       description="For each layout: create the pool on the given disks, run the suite, repeat, "
                                   "destroy, next. Refuses disks that hold data unless --wipe and their serial "
                                   "numbers are given. Results go to SQLite, one transaction per measurement; the "
                                   "same command run again resumes where it stopped.")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--disks", metavar="DEV,DEV,...", help="whole disks, e.g. /dev/disk/by-id/ata-A,/dev/disk/by-id/ata-B")
    src.add_argument("--sandbox", metavar="DIR", help="sparse files in DIR as vdevs (results not representative of disks)")
    p.add_argument("--sandbox-disks", type=int_arg("--sandbox-disks", 1, MAX_SANDBOX_DISKS), default=6, metavar="N",
                   help=f"how many sandbox files (default 6, at most {MAX_SANDBOX_DISKS})")
    p.add_argument("--sandbox-size", default="1GiB", metavar="SIZE", help="size of each sandbox file (default 1GiB)")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--layouts", metavar="L,L,...", help="layouts to run, comma-separated (default: what plan lists)")
    which.add_argument("--all", action="store_true", help="every layout plan lists for these disks (the default)")
    p.add_argument("--suite", default="quick", metavar="S", help="ars, seq, quick (default), bonnie (bonnie++ as calomel ran it) or FILE.fio")
    p.add_argument("--repeats", type=int_arg("--repeats", 1, 100), default=3, metavar="N",
                   help="runs of each test, 1 to 100; the median is kept (default 3)")
    p.add_argument("--ashift", type=int_arg("--ashift", 9, 16), default=12, help="pool ashift, 9 to 16 (default 12)")
    p.add_argument("--recordsize", default="128K", metavar="R", help="dataset recordsize (default 128K)")
    p.add_argument("--compression", choices=("off", "lz4"), default="off", help="dataset compression (default off)")
    p.add_argument("--size", metavar="SIZE", help="file size per fio job, or bonnie++'s file (default by suite: quick 1g, ars 4g, seq and bonnie 16g)")
    p.add_argument("--runtime", type=int_arg("--runtime", 1, 86400), metavar="S",
                   help="seconds per time-based test (default by suite)")
    p.add_argument("--ramp", type=int_arg("--ramp", 0, 3600), metavar="S",
                   help="ramp-up seconds not counted (default by suite)")
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


def sandbox_paths(directory: str, count: int, size_text: str) -> tuple[list[str], int]:
    """The sandbox's file vdevs and their size, checked; nothing is created (see make_sandbox)."""
    from zfslab.model.units import parse_size
    size = parse_size(size_text)
    if not 64 << 20 <= size <= MAX_SANDBOX_BYTES:
        raise UsageError(f"--sandbox-size {size_text}: give 64MiB to 16TiB (ZFS needs vdevs of at least 64 MiB)")
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise UsageError(f"--sandbox {directory}: not a directory; give a directory for the file vdevs")
    return [os.path.join(os.path.abspath(directory), f"vdev{i}") for i in range(count)], size


def make_sandbox(paths: list[str], size: int) -> None:
    """Create the sparse files that do not exist yet (a file already there is an earlier run's)."""
    try:
        os.makedirs(os.path.dirname(paths[0]), exist_ok=True)
        for path in paths:
            if not os.path.exists(path):
                with open(path, "wb") as f:
                    f.truncate(size)
    except OSError as e:
        raise UsageError(f"--sandbox {os.path.dirname(paths[0])}: cannot create {size:,}-byte sparse files there "
                         f"({e.strerror}); choose another directory or a smaller --sandbox-size") from None


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
    from zfslab.system.bench import POOL, Bench, destroy_own_pool, format_steps, plan_steps, run_key
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
    infos = _inspect(devices, runner, sandbox)
    if not sandbox:
        _same_size(infos)
        ids = [i.serial or i.device for i in infos]
    layouts = _layouts(args, len(devices))
    key = run_key(layouts, ids, options)
    prior = prior_run(args.db, key)
    if args.dry_run:  # reads the database if there is one, writes nothing anywhere
        steps = plan_steps(layouts, devices, options, key, Fio(runner), prior.done if prior.resuming else frozenset())
        print("\n".join(format_steps(steps, len(prior.done) if prior.resuming else 0)))
        foreign = [i for i in infos if i.reasons and not is_leftover_of(i, prior.guids)]
        lines = refusal_lines(foreign)
        if lines:
            print("these disks would be refused (nothing was written):\n  " + "\n  ".join(lines), file=sys.stderr)
            return 10
        return 0

    log = lambda text: print(f"zfslab: {text}", file=sys.stderr)  # noqa: E731
    engine = options.engine if not options.job_file else "fio"
    if runner.which(engine) is None:  # before any pool is made, not after the first layout
        raise ToolMissing(engine, PACKAGES.get(engine, engine))
    zfs = ZfsCli(runner, log=log)
    if destroy_own_pool(zfs, POOL, prior.guids, "bench", log):
        infos = _inspect(devices, runner, sandbox)  # its labels remain, no longer busy
    # a disk is this run's own leftover only when its label names a pool this run created
    foreign = [i for i in infos if i.reasons and not is_leftover_of(i, prior.guids)]
    if sandbox and foreign:
        raise DisksRefused("files in the sandbox directory that zfslab did not leave there (nothing was "
                           "written):\n  " + "\n  ".join(refusal_lines(foreign))
                           + "\nremove them or choose another --sandbox directory")
    check_wipe_allowed(foreign, wipe=args.wipe, confirmed_serials=_confirm(foreign, args))

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
                  log=log)
    dirty = [i.given for i in infos if i.reasons]
    if dirty:
        log(f"wiping {', '.join(dirty)}")
        bench.wipe(dirty)
    _run_with_progress(bench)
    summary = results.summary(run_id)
    if args.json:
        print(to_json({"run_id": run_id, "sandbox": sandbox, "facts": facts, "results": summary}))
    else:
        _print_summary(summary, sandbox, args.db, run_id)
    return 0


def device_list(text: str) -> list[str]:
    devices = [d.strip() for d in text.split(",") if d.strip()]
    if not devices:
        raise UsageError("--disks: name at least one disk, e.g. --disks /dev/disk/by-id/ata-A,/dev/disk/by-id/ata-B")
    return devices


def _inspect(devices: list[str], runner, sandbox: bool):
    """What each disk holds (every check reads only); for a sandbox, the files already there."""
    if sandbox:
        return [inspect_file(d, runner) for d in devices if os.path.exists(d)]
    return inspect_disks(devices, runner)


def _same_size(infos) -> None:
    if len({i.size_bytes for i in infos}) > 1:
        listing = ", ".join(f"{i.given} {format_bytes(i.size_bytes)}" for i in infos)
        raise BadDeviceList(f"the disks differ in size ({listing}); bench compares layouts on identical disks")


@dataclass(frozen=True)
class PriorRun:
    """What the database says of an earlier run of this same command (nothing if there is none)."""

    run_id: int | None = None
    resuming: bool = False
    done: frozenset = frozenset()
    guids: frozenset[str] = frozenset()


def prior_run(db: str, key: str) -> PriorRun:
    """Read, never written: a dry run and a refused run leave the file as they found it."""
    from zfslab.store.results import Results
    from zfslab.store.schema import open_readonly
    if not os.path.exists(db):
        return PriorRun()
    conn = open_readonly(db)
    try:
        results = Results(conn)
        run = results.find_run(key)
        if run is None:
            return PriorRun()
        resuming = run["finished_at"] is None
        return PriorRun(run["id"], resuming, frozenset(results.done(run["id"])),
                        frozenset(results.pool_guids(run_id=run["id"])) if resuming else frozenset())
    finally:
        conn.close()


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
