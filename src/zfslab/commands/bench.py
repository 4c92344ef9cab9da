"""`zfslab bench`: build each layout on the disks, run the suite, store every measurement."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from typing import TYPE_CHECKING

from zfslab.commands._common import int_arg
from zfslab.commands._fleet_bench import add_fleet_bench_options, fleet_request, run_fleet
from zfslab.commands._fleet_detach import detached_verb
from zfslab.commands._hosts import add_host_options, add_stop_with_session, hosts_from_args, stop_with_session
from zfslab.commands._disks import (add_disk_options, device_list, dry_run_verdict, gate, history_recorder, inspect,
                                    require_disks, same_size)
from zfslab.system.sandbox import make_sandbox, sandbox_paths
from zfslab.errors import UsageError
from zfslab.model.candidates import candidate_layouts
from zfslab.model.layout_grammar import parse_layout
from zfslab.model.layouts import Layout
from zfslab.model.units import parse_blocksize, parse_fio_size
from zfslab.report.tables import Column, render_table, to_json

if TYPE_CHECKING:
    from zfslab.store.results import MeasurementRecord

# Bounds on what the user asks for: beyond them the work (or the dry run's listing) is no
# longer something a person meant.
MAX_SANDBOX_DISKS = 64
MAX_FIO_BYTES = 1 << 50


EXAMPLE = "zfslab bench --disks /dev/disk/by-id/ata-A,/dev/disk/by-id/ata-B --layouts mirror:2 --dry-run"
FLEET_EXAMPLE = ("zfslab bench --hosts root@st01,root@st02 --disks /dev/sdb,/dev/sdc,/dev/sdd --layouts calibration "
                 "--db all.sqlite --dry-run")
FLEET_EXITS = ("with --hosts: 2 a host refused at preflight (nothing started); 10 a host's disks refused by its "
               "gate (nothing started); 4 a host lost or a layout failed: what is left runs with --resume")


def add_parser(sub) -> None:
    p = sub.add_parser("bench", epilog=f"example: {EXAMPLE}\nexample: {FLEET_EXAMPLE}\n{FLEET_EXITS}",
                       description="For each layout: create the pool on the given disks, run the suite, repeat, "
                                   "destroy, next. Refuses disks that hold data unless --wipe and their serial "
                                   "numbers are given. Results go to SQLite, one transaction per measurement; the "
                                   "same command run again resumes where it stopped. With --hosts the layouts are "
                                   "split across identical hosts, each running its part under its own safety gate, "
                                   "and their results merged into --db.")
    add_disk_options(p, disks_help="whole disks, e.g. /dev/disk/by-id/ata-A,/dev/disk/by-id/ata-B",
                     sandbox_help="sparse files in DIR as vdevs (results not representative of disks)",
                     required=False)   # --status, --collect, --stop RUN name no disks
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
    p.add_argument("--origin", metavar="NAME", help="the host's name in merged results (default: this machine's "
                                                   "hostname; bench --hosts passes each host's name)")
    add_stop_with_session(p, "bench")
    add_host_options(p)
    add_fleet_bench_options(p)
    p.set_defaults(func=run)


def _layouts(args, disks: int) -> tuple[list[Layout], list]:
    """The layouts to run and, for --layouts calibration, the CalibrationPicks that chose them."""
    from zfslab.system.bench_plan import check_bench_layouts

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
    from zfslab.system.bench_plan import BenchOptions
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
    from zfslab.store.runs import prior_bench_run
    from zfslab.system.runner import Runner

    stop_with_session(args)
    verb = detached_verb(args)   # --status, --collect, --stop RUN (or a host's probe): no bench of its own
    if verb is not None:
        return verb
    require_disks(args, "zfslab bench")
    options = _options(args)
    hosts = hosts_from_args(args)
    if hosts is not None:
        return _fleet(args, hosts, options)
    if args.reassign or args.resume or args.remote_db or args.every_host:
        raise UsageError("--reassign, --resume, --remote-db and --every-host go with --hosts or --inventory")
    if args.detach:
        raise UsageError("--detach goes with --hosts or --inventory (on this machine, run the bench under "
                         "systemd-run or tmux)")
    runner = Runner()
    sandbox = bool(args.sandbox)
    devices, sandbox_bytes = (sandbox_paths(args.sandbox, args.sandbox_disks, args.sandbox_size) if sandbox
                              else (device_list(args.disks), 0))
    layouts, picks = _layouts(args, len(devices))  # a layout zfslab cannot build is refused before any disk is read
    infos = inspect(devices, runner, sandbox, args.db)
    request = _request(layouts, devices, infos, options, sandbox)
    prior = prior_bench_run(args.db, request.key)  # read, never written
    if args.dry_run:  # reads the database if there is one, writes nothing anywhere
        return _dry_run(args, request, *_as_after_own_pool(runner, prior, infos), picks)
    return _run(args, runner, request, prior, infos, sandbox_bytes)


def _as_after_own_pool(runner, prior, infos, *, run: bool = False):
    """A resumed run's plan first destroys its own leftover pool (imported, e.g. at boot from
    zpool.cache), known by its recorded GUID or, for a kill before that record, by the create's
    intent: the run's gate and its dry run see the disks, and the GUIDs, as after that step (a
    fleet's --resume prechecks with the dry run). Also returns that pool, for the plan. The run
    refuses another pool of that name (own_leftover); its dry run says what the gate would."""
    from zfslab.system.bench_plan import MARK, POOL
    from zfslab.system.pool_safety import as_after_own_pool, own_leftover
    from zfslab.system.zfs import ZfsCli
    if not run and (not (prior.guids or prior.intents) or runner.which("zpool") is None):
        return prior, infos, None
    zfs = ZfsCli(runner, log=_log)
    leftover = own_leftover(zfs, POOL, prior.guids, prior.intents, MARK, refuse_others=run)
    if leftover is None:
        return prior, infos, None
    infos, guids = as_after_own_pool(zfs, POOL, prior.guids, infos, prior.intents, MARK)
    return dataclasses.replace(prior, guids=guids), infos, leftover


def _fleet(args, hosts, options) -> int:
    """bench --hosts: the same disks on every host, the layouts split across them (commands/_fleet_bench.py)."""
    if args.json:
        raise UsageError("--json goes with a bench on this machine, not with --hosts")
    devices = device_list(args.disks) if args.disks is not None else []   # --disks "": refused, as alone
    layouts, picks = _layouts(args, len(devices))
    if picks and args.dry_run:
        print("\n".join(_calibration_lines(picks, len(devices))))
    return run_fleet(args, fleet_request(args, hosts, devices, layouts, options))


def _request(layouts, devices, infos, options, sandbox: bool):
    """The run asked for; whole disks must be alike, and are known by serial number (the run's key)."""
    from zfslab.system.bench_plan import BenchRequest

    if not sandbox:
        same_size(infos)
    ids = devices if sandbox else [i.serial or i.device for i in infos]
    return BenchRequest(tuple(layouts), tuple(devices), options, tuple(ids), sandbox=sandbox)


def _dry_run(args, request, prior, infos, leftover, picks) -> int:
    """Print the plan (what an interrupted run stored left out), and what the gate would say."""
    from zfslab.system.bench_plan import plan_bench

    done = prior.done if prior.resuming else frozenset()
    plan = plan_bench(dataclasses.replace(request, done=done, dirty=_wiped(infos, prior.guids, args, request.sandbox),
                                          leftover=leftover))
    if args.json:  # the same steps as data: zfslab's own (a wipe) have no command
        calibration = {"calibration": [{"layout": str(p.layout), "rule": p.rule, "pins": list(p.pins)}
                                       for p in picks]} if picks else {}
        print(to_json({"dry_run": True, "layouts": [str(x) for x in request.layouts], **calibration,
                       "measurements_stored": len(done), "steps": plan.step_records()}))
    else:
        from zfslab.report.shell_text import script_lines, terminal_columns
        print("\n".join(script_lines((_calibration_lines(picks, len(request.devices)) if picks else []) + plan.render(),
                                      terminal_columns())))
    return dry_run_verdict(infos, prior.guids, args, request.sandbox)


def _run(args, runner, request, prior, infos, sandbox_bytes: int) -> int:
    """Pass the gate, then plan and execute what is left (first the pool an interrupted run left)."""
    from zfslab.store.runs import open_results
    from zfslab.system.bench import execute_bench
    from zfslab.system.bench_plan import plan_bench
    from zfslab.system.bonnie import Bonnie
    from zfslab.system.fio import Fio
    from zfslab.system.pool_ops import Drivers
    from zfslab.system.runner import PACKAGES, ToolMissing
    from zfslab.system.zfs import ZfsCli

    engine = request.options.engine if not request.options.job_file else "fio"
    if runner.which(engine) is None:  # before any pool is made, not after the first layout
        raise ToolMissing(engine, PACKAGES.get(engine, engine))
    zfs = ZfsCli(runner, log=_log)
    prior, infos, leftover = _as_after_own_pool(runner, prior, infos, run=True)
    gate(infos, set(prior.guids), args, request.sandbox)
    results = open_results(args.db)
    if request.sandbox:
        make_sandbox(list(request.devices), sandbox_bytes)
    facts, run_id = _start(args, results, zfs, request, prior, infos)
    dirty = tuple(i.given for i in infos if i.reasons)  # the gate let them through: ours, or confirmed
    if dirty:
        _log(f"wiping {', '.join(dirty)}")
    plan = plan_bench(dataclasses.replace(request, done=frozenset(results.done(run_id)), dirty=dirty,
                                          leftover=leftover))
    drivers = Drivers(zfs, Fio(runner), runner, Bonnie(runner))
    recorder = history_recorder(infos, runner, results)
    _with_progress(lambda progress: execute_bench(plan, drivers, results, run_id=run_id, progress=progress,
                                                  log=_log, on_wiped=recorder))
    summary = results.summary(run_id)
    if args.json:
        print(to_json({"run_id": run_id, "sandbox": request.sandbox, "facts": facts,
                       "results": [m.as_json() for m in summary]}))
    else:
        _print_summary(summary, request.sandbox, args.db, run_id)
    return 0


def _start(args, results, zfs, request, prior, infos) -> tuple[dict, int]:
    """The host's facts, and the run's id: the interrupted run's, or a new run's."""
    from zfslab.system.facts import host_facts

    facts = host_facts() | {"zfs_version": zfs.version().kernel}
    if args.origin:   # the fleet's name for this host, so the merged results say who measured what
        facts["origin"] = args.origin
    if prior.resuming:
        return facts, prior.run_id
    disk_rows = [{"device": i.given, "serial": i.serial, "model": i.model, "size_bytes": i.size_bytes,
                  "rotational": i.rotational} for i in infos if not request.sandbox] or [
                 {"device": d} for d in request.devices]
    options = request.options
    return facts, results.start_run(key=request.key, command=" ".join(sys.argv), suite=options.suite,
                                    repeats=options.repeats, options=options.as_dict(), sandbox=request.sandbox,
                                    facts=facts, disks=disk_rows)


def _log(text: str) -> None:
    print(f"zfslab: {text}", file=sys.stderr)


def _wiped(infos, guids, args, sandbox) -> tuple[str, ...]:
    """The disks a dry run shows being wiped: those holding data whose serials --wipe confirmed."""
    from zfslab.commands._disks import consent
    from zfslab.system.disk_gate import foreign_disks, wiped_first
    return wiped_first(infos, guids, consent(args, foreign_disks(infos, guids), ask=False), sandbox)


def _with_progress(execute) -> None:
    """Run `execute(progress)` under a progress bar on stderr when it is a terminal, else with one
    line per step: a log wants lines, and a bar nobody sees still re-renders ten times a second
    (a quarter of a small bench's CPU in the TCG guest, measured with cProfile)."""
    from rich.console import Console

    console = Console(stderr=True)
    if not console.is_terminal:
        def say(text: str, done: int, total: int) -> None:
            print(f"zfslab: [{done}/{total}] {text}", file=sys.stderr, flush=True)
        execute(say)
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=console) as progress:
        task = progress.add_task("bench", total=None)

        def update(text: str, done: int, total: int) -> None:
            progress.update(task, description=text, completed=done, total=total)
        execute(update)


def _print_summary(summary: list[MeasurementRecord], sandbox: bool, db: str, run_id: int) -> None:
    from rich.console import Console
    from zfslab.report.tables import Console as OutConsole

    def num(v, fmt="{:,.1f}"):
        return "-" if v is None or v == 0 else fmt.format(v)

    cols = [Column("layout", lambda r: r.layout, "left", no_wrap=True), Column("test", lambda r: r.test, "left"),
            Column("n", lambda r: str(r.repeats)),
            Column("read MB/s", lambda r: num(r.read_mb_s)), Column("write MB/s", lambda r: num(r.write_mb_s)),
            Column("read IOPS", lambda r: num(r.read_iops, "{:,.0f}")),
            Column("write IOPS", lambda r: num(r.write_iops, "{:,.0f}")),
            Column("spread (MB/s)", lambda r: _spread(r)), Column("note", lambda r: "cached?" if r.cache_suspect else "", "left")]
    caption = f"medians of the repeats; all measurements in {db} (run {run_id})"
    if sandbox:
        caption += "; SANDBOX: file vdevs, not representative of disks"
    render_table(summary, cols, console=OutConsole(width=None if Console().is_terminal else 160), caption=caption)


def _spread(r: MeasurementRecord) -> str:
    lo, hi = r.read_mb_s_range if r.read_mb_s else r.write_mb_s_range
    return "-" if lo is None else f"{lo:,.1f}..{hi:,.1f}"
