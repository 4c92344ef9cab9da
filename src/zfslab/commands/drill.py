"""`zfslab drill`: fail disks, resilver, corrupt blocks on a pool of one layout, the data verified."""

from __future__ import annotations

import argparse
import sys
import time

from zfslab.commands._common import float_arg, int_arg
from zfslab.commands._disks import add_disk_options
from zfslab.errors import UsageError
from zfslab.model.layouts import check_pool_name, parse_layout
from zfslab.report.tables import to_json

SCENARIOS = ("degraded", "resilver", "corrupt")  # as system/drill.py runs them, in this order


EXAMPLE = "zfslab drill --sandbox /var/tmp/zfslab-drill --layout raidz2:6 --fill 0.2"


def add_parser(sub) -> None:
    p = sub.add_parser("drill", epilog=f"example: {EXAMPLE}", help="fail disks, time resilvers, corrupt blocks: with the data verified",
                       description="Build a pool of one layout (same safety rules as bench), fill it with "
                                   "checksummed data, then take disks away, resilver, and corrupt members behind "
                                   "ZFS's back; every byte is verified. --dry-run prints every step first. "
                                   "--pool NAME --read-only only reports an existing pool's health.")
    src = add_disk_options(p, disks_help="whole disks for the pool", sandbox_help="sparse files in DIR as vdevs")
    src.add_argument("--pool", metavar="NAME", help="an existing pool (with --read-only)")
    p.add_argument("--read-only", action="store_true", help="with --pool: status, scrub age and error counters only")
    p.add_argument("--layout", help="e.g. raidz2:6 (default: all given disks in one raidz2, or a mirror of 2)")
    p.add_argument("--spare-disk", metavar="DEV", help="a fresh disk to resilver onto")
    p.add_argument("--sequential-rebuild", action="store_true",
                   help="on a mirror, also time a sequential rebuild (zpool replace -s) beside the healing resilver; "
                        "off by default: OpenZFS before openzfs/zfs#18276 (2026), e.g. Debian's 2.1.11 and 2.3.2, "
                        "can crash the kernel in it")
    p.add_argument("--fill", type=float_arg("--fill", 0.01, 0.9), default=0.5, metavar="F",
                   help="fraction of the pool to fill, 0.01 to 0.9 (default 0.5)")
    p.add_argument("--scenarios", default=",".join(SCENARIOS), metavar="S,S", help="degraded,resilver,corrupt (default all)")
    p.add_argument("--corrupt-mb", type=int_arg("--corrupt-mb", 1, 32), default=4, metavar="MB",
                   help="corruption density: MB/4 overwritten in every 8 MiB of each corrupted disk (default 4: 1 MiB)")
    p.add_argument("--dry-run", action="store_true",
                   help="print every step in order (zpool, fio, and what zfslab writes itself) and stop; "
                        "nothing is written")
    p.add_argument("--json", action="store_true", help="print one JSON object (with --dry-run: the steps)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from zfslab.system.runner import Runner
    from zfslab.system.zfs import ZfsCli

    runner = Runner()
    zfs = ZfsCli(runner)
    if args.pool is not None:
        if args.dry_run:
            raise UsageError("--dry-run plans a drill on disks zfslab builds its pool on; --pool NAME --read-only "
                             "only reads, so drop --dry-run")
        if not args.read_only:
            raise UsageError("--pool works only with --read-only: zfslab drills only pools it builds itself")
        check_pool_name(args.pool)
        return _health(zfs, args)
    if args.read_only:
        raise UsageError("--read-only goes with --pool NAME")
    if args.sandbox and args.spare_disk:
        raise UsageError("--spare-disk goes with --disks; with --sandbox, zfslab makes the spare file itself")
    scenarios = [s.strip() for s in args.scenarios.split(",") if s.strip()]
    bad = [s for s in scenarios if s not in SCENARIOS]
    if bad:
        raise UsageError(f"--scenarios {bad[0]}: use {', '.join(SCENARIOS)}")
    return _run(zfs, runner, args, scenarios)


def _run(zfs, runner, args, scenarios) -> int:
    from zfslab.commands._disks import (device_list, dry_run_verdict, gate, history_recorder, inspect, make_sandbox,
                                        sandbox_paths)
    from zfslab.report.verdict import verdict
    from zfslab.store.results import Results
    from zfslab.store.schema import connect
    from zfslab.system.bench import check_replication, destroy_own_pool
    from zfslab.system.drill import MARK, POOL, Drill, format_steps, plan_drill
    from zfslab.system.fio import Fio

    sandbox = bool(args.sandbox)
    if sandbox:
        layout = parse_layout(args.layout or "raidz2:6")
        paths, sandbox_bytes = sandbox_paths(args.sandbox, layout.disks + 1, args.sandbox_size)
        devices, spare = paths[:layout.disks], paths[-1]
    else:
        devices = device_list(args.disks)
        layout = parse_layout(args.layout) if args.layout else parse_layout(
            f"raidz2:{len(devices)}" if len(devices) >= 4 else "mirror:2")
        if layout.disks != len(devices):
            raise UsageError(f"layout {layout} needs {layout.disks} disks, {len(devices)} were given")
        spare = args.spare_disk
    # zpool create would refuse it without -f, after the disks were wiped
    check_replication(layout, f"drill one of its parts, e.g. --layout {layout.groups[0].token}")
    targets = devices + ([spare] if spare else [])
    guids, intents = _drill_records(args.db)

    def plan_for(infos):
        """The whole drill, computed before its first write; the fill from the smallest vdev."""
        sizes = {i.given: i.size_bytes for i in infos}
        vdev_bytes = min(sizes.get(d, sandbox_bytes) for d in devices) if sandbox else min(sizes[d] for d in devices)
        return plan_drill(layout, devices, spare, scenarios=scenarios, fill=args.fill, vdev_bytes=vdev_bytes,
                          sandbox=sandbox, ashift=args.ashift, corrupt_mb=args.corrupt_mb,
                          sequential_rebuild=args.sequential_rebuild, dirty=[i.given for i in infos if i.reasons],
                          fio=Fio(runner))

    if args.dry_run:  # reads the disks and the database if there is one; writes nothing anywhere
        infos = inspect(targets, runner, sandbox, args.db)
        plan = plan_for(infos)
        if args.json:  # the same steps as data: what zfslab does itself (wipe, corrupt) has no command
            print(to_json({"dry_run": True, "layout": str(layout), "fill": args.fill, "fill_bytes": plan.fill_bytes,
                           "steps": [{"kind": s.kind, "scenario": s.scenario, "title": s.title or None,
                                      "devices": list(s.devices), "command": list(s.argv) or None, "line": s.line}
                                     for s in plan.steps]}))
        else:
            print("\n".join(format_steps(plan)))
        return dry_run_verdict(infos, guids, args, sandbox)

    log = lambda text: print(f"zfslab: {text}", file=sys.stderr)  # noqa: E731
    zfs.log = log
    if not sandbox:  # a mistyped disk is the user's to fix before zpool is even looked for
        from zfslab.system.disks import check_block_device
        for target in targets:
            check_block_device(target)

    def adopt(guid: str, layout: str) -> None:  # killed between its create and the GUID's record
        conn = connect(args.db)
        try:
            Results(conn).record_pool(guid, POOL, "drill", layout)
        finally:
            conn.close()
        guids.add(guid)
    destroy_own_pool(zfs, POOL, guids, "drill", log, intents, MARK, adopt)
    infos = inspect(targets, runner, sandbox, args.db)
    gate(infos, guids, args, sandbox)
    plan = plan_for(infos)
    results = Results(connect(args.db))
    if sandbox:
        make_sandbox(paths, sandbox_bytes)
    drill = Drill(zfs, Fio(runner), layout, devices, spare, args.fill, args.ashift,
                  log=log, corrupt_mb=args.corrupt_mb, sequential_rebuild=args.sequential_rebuild,
                  on_created=lambda guid: results.record_pool(guid, POOL, "drill", str(layout)),
                  on_creating=lambda mark: results.record_intent(POOL, "drill", str(layout), mark),
                  on_wiped=history_recorder(infos, runner, results),
                  sandbox=sandbox, runner=runner)
    t0 = time.monotonic()
    drill.run(plan)
    line = verdict(str(layout), args.fill, drill.results)
    version = zfs.version().kernel
    given = {i.given: i for i in infos}
    disks = [{"device": d, "serial": getattr(given.get(d), "serial", None), "role": "pool"} for d in devices]
    disks += [{"device": spare, "serial": getattr(given.get(spare), "serial", None), "role": "spare"}] if spare else []
    results.add_drill(str(layout), drill.results, line, version, sandbox, disks)
    if args.json:
        print(to_json({"layout": str(layout), "fill": args.fill, "verdict": line, "zfs_version": version,
                       "sandbox": sandbox, "seconds": time.monotonic() - t0,
                       "scenarios": [{"scenario": r.scenario, "outcome": r.outcome, "seconds": r.seconds,
                                      **r.detail} for r in drill.results]}))
    else:
        print(line + (" (sandbox: file vdevs)" if sandbox else ""))
    return 0


def _drill_records(db: str) -> tuple[set[str], dict]:
    """GUIDs of the pools earlier drills recorded in this database, and the creates they recorded
    before running them (read-only: nothing written)."""
    import os

    from zfslab.store.results import Results
    from zfslab.store.schema import open_readonly
    if not os.path.exists(db):
        return set(), {}
    conn = open_readonly(db)
    try:
        results = Results(conn)
        return results.pool_guids(purpose="drill"), results.intents(purpose="drill")
    finally:
        conn.close()


def _health(zfs, args) -> int:
    import datetime

    from zfslab.system.health import health_report, scan_age_days

    status = zfs.status(args.pool)
    report = health_report(status, scan_age_days(status, datetime.datetime.now()))
    if args.json:
        print(to_json(report))
    else:
        print(f"{report['pool']}: {'healthy' if report['healthy'] else 'NEEDS ATTENTION'} ({report['state']}); "
              f"last scan: {report['scan'] or 'none'}")
        for problem in report["problems"]:
            print(f"  - {problem}")
    return 0 if report["healthy"] else 1
