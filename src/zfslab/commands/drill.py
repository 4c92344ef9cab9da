"""`zfslab drill`: fail disks, resilver, corrupt blocks on a pool of one layout, the data verified."""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass

from zfslab.commands._common import float_arg, int_arg
from zfslab.commands._disks import add_disk_options, device_list, dry_run_verdict, gate, history_recorder, inspect
from zfslab.commands._hosts import add_host_options, add_stop_with_session, hosts_from_args, stop_with_session
from zfslab.errors import Interrupted, UsageError
from zfslab.model.layout_grammar import parse_layout
from zfslab.model.layouts import Layout
from zfslab.model.zpool_syntax import check_pool_name
from zfslab.report.tables import to_json
from zfslab.system.sandbox import make_sandbox, sandbox_paths

SCENARIOS = ("degraded", "resilver", "corrupt")  # as system/drill.py runs them, in this order


EXAMPLE = "zfslab drill --sandbox /var/tmp/zfslab-drill --layout raidz2:6 --fill 0.2"


def add_parser(sub) -> None:
    p = sub.add_parser("drill", epilog=f"example: {EXAMPLE}",
                       description="Build a pool of one layout (same safety rules as bench), fill it with "
                                   "checksummed data, then take disks away, resilver, and corrupt members behind "
                                   "ZFS's back; every byte is verified. --dry-run prints every step first. "
                                   "--pool NAME --read-only only reports an existing pool's health. With --hosts (or "
                                   "--inventory): the same drill on every host at once, each on its own disks under "
                                   "its own safety gate (docs/fleet.md).")
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
    add_host_options(p)
    add_stop_with_session(p, "drill")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from zfslab.system.runner import Runner
    from zfslab.system.zfs import ZfsCli

    stop_with_session(args)
    hosts = hosts_from_args(args)
    if hosts is not None:
        return _fleet(args, hosts)
    if args.ssh_config is not None:
        raise UsageError("--ssh-config goes with --hosts or --inventory")
    if any("=" in v for v in args.confirm_serials or ()):
        raise UsageError("--confirm-serials HOST=S,S goes with --hosts; for this machine give the serials alone")
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
    return _run(zfs, runner, args, _scenarios(args.scenarios))


@dataclass(frozen=True)
class _Disks:
    """The drill's pool disks and spare as given (or the sandbox files), and its layout."""

    layout: Layout
    devices: tuple[str, ...]
    spare: str | None
    sandbox_bytes: int = 0  # a sandbox: each file's size

    @property
    def targets(self) -> list[str]:
        return [*self.devices, *([self.spare] if self.spare else [])]


def _disks(args) -> _Disks:
    if args.sandbox:
        layout = parse_layout(args.layout or "raidz2:6")
        paths, size = sandbox_paths(args.sandbox, layout.disks + 1, args.sandbox_size)
        return _Disks(layout, tuple(paths[:layout.disks]), paths[-1], size)
    devices = device_list(args.disks)
    layout = parse_layout(args.layout or (f"raidz2:{len(devices)}" if len(devices) >= 4 else "mirror:2"))
    if layout.disks != len(devices):
        raise UsageError(f"layout {layout} needs {layout.disks} disks, {len(devices)} were given")
    return _Disks(layout, tuple(devices), args.spare_disk)


def _run(zfs, runner, args, scenarios) -> int:
    from zfslab.store.runs import drill_records
    from zfslab.system.pool_safety import check_replication

    disks = _disks(args)
    # zpool create would refuse it without -f, after the disks were wiped
    check_replication(disks.layout, f"drill one of its parts, e.g. --layout {disks.layout.groups[0].token}")
    guids, intents = drill_records(args.db)
    if args.dry_run:  # reads the disks and the database if there is one; writes nothing anywhere
        infos = inspect(disks.targets, runner, bool(args.sandbox), args.db)
        plan = _plan(args, disks, scenarios, infos)
        if args.json:  # the same steps as data: what zfslab does itself (wipe, corrupt) has no command
            print(to_json({"dry_run": True, "layout": str(disks.layout), "fill": args.fill,
                           "fill_bytes": plan.fill_bytes, "steps": plan.step_records()}))
        else:
            from zfslab.report.shell_text import script_lines, terminal_columns
            print("\n".join(script_lines(plan.render(), terminal_columns())))
        return dry_run_verdict(infos, guids, args, bool(args.sandbox))
    return _execute(zfs, runner, args, disks, scenarios, guids, intents)


def _plan(args, disks: _Disks, scenarios, infos):
    """The whole drill, computed before its first write; the fill from the smallest vdev."""
    from zfslab.system.drill_plan import DrillRequest, plan_drill

    sizes = {i.given: i.size_bytes for i in infos}
    vdev_bytes = min(sizes.get(d, disks.sandbox_bytes) if args.sandbox else sizes[d] for d in disks.devices)
    return plan_drill(DrillRequest(disks.layout, disks.devices, disks.spare, vdev_bytes, tuple(scenarios), args.fill,
                                   bool(args.sandbox), args.ashift, args.corrupt_mb, args.sequential_rebuild,
                                   tuple(i.given for i in infos if i.reasons)))


def _execute(zfs, runner, args, disks: _Disks, scenarios, guids: set[str], intents: dict) -> int:
    from zfslab.report.verdict import verdict
    from zfslab.store.runs import adopt_pool, open_results
    from zfslab.system.disks import check_block_device
    from zfslab.system.drill import execute_drill
    from zfslab.system.drill_plan import MARK, POOL
    from zfslab.system.fio import Fio
    from zfslab.system.pool_ops import Drivers
    from zfslab.system.pool_safety import destroy_own_pool

    sandbox = bool(args.sandbox)
    zfs.log = _log
    for target in ([] if sandbox else disks.targets):  # a mistyped disk is the user's to fix first
        check_block_device(target)

    def adopt(guid: str, layout: str) -> None:  # killed between its create and the GUID's record
        adopt_pool(args.db, guid, POOL, "drill", layout)
        guids.add(guid)
    destroy_own_pool(zfs, POOL, guids, "drill", _log, intents, MARK, adopt)
    infos = inspect(disks.targets, runner, sandbox, args.db)
    gate(infos, guids, args, sandbox)
    plan = _plan(args, disks, scenarios, infos)
    results = open_results(args.db)
    if sandbox:
        make_sandbox(disks.targets, disks.sandbox_bytes)
    t0 = time.monotonic()
    found = execute_drill(plan, Drivers(zfs, Fio(runner), runner), results, log=_log,
                          on_wiped=history_recorder(infos, runner, results))
    line = verdict(str(disks.layout), args.fill, found)
    version = zfs.version().kernel
    serials = {i.given: i.serial for i in infos}
    rows = [{"device": d, "serial": serials.get(d), "role": "pool" if d in disks.devices else "spare"}
            for d in disks.targets]
    results.add_drill(str(disks.layout), found, line, version, sandbox, rows)
    if args.json:
        print(to_json({"layout": str(disks.layout), "fill": args.fill, "verdict": line, "zfs_version": version,
                       "sandbox": sandbox, "seconds": time.monotonic() - t0,
                       "scenarios": [{"scenario": r.scenario, "outcome": r.outcome, "seconds": r.seconds,
                                      **r.detail_dict()} for r in found]}))
    else:
        print(line + (" (sandbox: file vdevs)" if sandbox else ""))
    return 0


def _fleet(args: argparse.Namespace, hosts) -> int:
    """The same drill on every host at once, each by its own zfslab on its own disks, under its own
    safety gate; exit 10 if a host's zfslab refused (or its dry run's gate would), 4 if a host gave no
    answer or failed (model/fleet_exit.py)."""
    from zfslab import __version__
    from zfslab.commands._hosts import host_serials, transport_from_args
    from zfslab.report.fleet_text import drill_lines, plan_lines
    from zfslab.system.fleet_drill import fleet_drill

    if args.pool is not None or args.read_only:
        raise UsageError("--pool and --read-only are for this machine's pools; drop --hosts, or drill with --disks")
    scenarios = _scenarios(args.scenarios)
    serials = host_serials(args.confirm_serials, [h.name for h in hosts])
    remote = _remote_drill(args, scenarios)
    transport = transport_from_args(args)
    try:
        found = fleet_drill(transport, hosts, remote, serials=serials, controller_version=__version__,
                            limit=args.parallel)
    except KeyboardInterrupt:   # fan_out has closed every session: each host's drill stops with it
        raise Interrupted(INTERRUPTED_FLEET_DRY_RUN if args.dry_run else INTERRUPTED_FLEET) from None
    finally:
        transport.close()
    if args.json:
        print(to_json({"dry_run": args.dry_run, "failures": list(found.failures),
                       "hosts": [{"host": p.host, "exit_code": p.exit_code, "notes": list(p.notes),
                                  "plan": _json_or_text(p.text)} for p in found.plans] if args.dry_run else
                       [{"host": d.host, **d.data} for d in found.drills]}))
    else:
        width = _terminal_width()
        print("\n".join(plan_lines(found.plans, found.failures, width=width) if args.dry_run
                        else drill_lines(found.drills, found.failures, scenarios, width=width)))
    from zfslab.model.fleet_exit import fleet_code   # one rule for every fleet command (docs/fleet.md#exit-codes)
    return fleet_code([*found.exit_codes, *(p.exit_code for p in found.plans)])


# what a Ctrl-C of drill --hosts keeps: each host's drill (started with --stop-with-session) ends
# with its session, as on Ctrl-C there: its pool destroyed; the controller has collected nothing
INTERRUPTED_FLEET = ("each host's drill was stopped with its ssh session and, as on Ctrl-C there, destroys its "
                     "pool; no result was collected here: run the same command again to drill again")
INTERRUPTED_FLEET_DRY_RUN = "the hosts' dry runs were stopped; nothing was written anywhere"


def _terminal_width() -> int | None:
    """The terminal's columns for prose (80 to 120); None in a pipe: each line whole, for grep."""
    import shutil
    return max(80, min(120, shutil.get_terminal_size().columns)) if sys.stdout.isatty() else None


def _scenarios(text: str) -> list[str]:
    scenarios = [s.strip() for s in text.split(",") if s.strip()]
    bad = [s for s in scenarios if s not in SCENARIOS]
    if bad:
        raise UsageError(f"--scenarios {bad[0]}: use {', '.join(SCENARIOS)}")
    return scenarios


def _remote_drill(args: argparse.Namespace, scenarios: list[str]):
    """The options as the drill each host runs (system/fleet_drill.py RemoteDrill builds its argv)."""
    from zfslab.system.fleet_drill import RemoteDrill

    # --disks "": refused by device_list, as on this machine
    devices = tuple(device_list(args.disks)) if args.disks is not None else ()
    return RemoteDrill(devices, sandbox=args.sandbox, sandbox_size=args.sandbox_size, layout=args.layout,
                       spare_disk=args.spare_disk, db=args.db, fill=args.fill, scenarios=tuple(scenarios),
                       corrupt_mb=args.corrupt_mb, ashift=args.ashift, sequential_rebuild=args.sequential_rebuild,
                       wipe=args.wipe, dry_run=args.dry_run, json=args.json)


def _json_or_text(text: str):
    import json
    try:
        return json.loads(text)
    except ValueError:
        return text


def _log(text: str) -> None:
    print(f"zfslab: {text}", file=sys.stderr)


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
