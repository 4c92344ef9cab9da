"""`zfslab pool [POOL...]`: read a live pool (read-only), check zfslab's model against it, and
list what an expert would flag (docs/pool.md)."""

from __future__ import annotations

import argparse
import sys
import time

from zfslab.commands._common import choice_arg, console, disk_size_arg, parse_disk_set
from zfslab.commands._hosts import add_host_options, hosts_from_args
from zfslab.errors import Interrupted, UsageError
from zfslab.model.pool_findings import findings
from zfslab.model.growth_outlook import outlook
from zfslab.model.pool_growth import growth, replacement
from zfslab.model.recommend import Goal
from zfslab.model.reliability.params import DISK_CLASSES
from zfslab.model.pool_model import check_model
from zfslab.model.pool_state import disk_class
from zfslab.model.pool_risk import risk_now
from zfslab.report.pool_view import (finding_lines, footprint_advice, growth_lines, growth_record, pool_lines,
                                     pool_record, risk_lines, risk_record)
from zfslab.report.tables import print_wrapped, text_width, to_json
from zfslab.system.live_pool import pool_names, read_pool
from zfslab.system.runner import Runner

EXAMPLE = "zfslab pool tank --add 4x12TB"


def add_parser(sub) -> None:
    p = sub.add_parser("pool", epilog=f"example: {EXAMPLE}",
                       description="Read a pool that exists (zpool status, list, get; zfs get; lsblk), "
                                   "never writing anything: its vdevs and their state, zfslab's SIZE and "
                                   "USED+AVAIL for its layout beside the pool's, and what an expert would "
                                   "flag (docs/pool.md).")
    p.add_argument("pools", nargs="*", metavar="POOL", help="pools to read (default: every imported pool)")
    p.add_argument("--add", metavar="NxSIZE", help="new disks to grow the pool with, e.g. 4x12TB: every way "
                                                    "zpool add or attach can take them, the usable space after "
                                                    "each, and what to watch (nothing is run)")
    p.add_argument("--replace-with", metavar="SIZE", type=disk_size_arg,
                   help="a larger disk size, e.g. 16TB: the pool after every data disk is replaced by one of "
                        "it (autoexpand), the time of the resilvers, and the commands (nothing is run)")
    from zfslab.model.recommend import DATA_LEVELS, DEFAULT_DATA, WORKLOADS
    p.add_argument("--data", choices=tuple(DATA_LEVELS), type=choice_arg(DATA_LEVELS), default=DEFAULT_DATA,
                   help="how important the data is, as for plan: the risk budget --add's and --replace-with's "
                        f"options are ranked by (default {DEFAULT_DATA}; docs/recommend.md)")
    p.add_argument("--workload", choices=tuple(WORKLOADS), type=choice_arg(WORKLOADS), default=None,
                   help="which predicted speed figures count, as for plan (default: the data's)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    add_host_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    hosts = hosts_from_args(args)
    if hosts is not None:
        return _fleet(args, hosts)
    new = parse_disk_set(args.add) if args.add is not None else None  # bad input fails before any zpool runs
    # plan's goal, but P(damage) is not weighed: the pool's risk engine gives the loss of the pool only
    goal = Goal(data=args.data, workload=args.workload, max_damage=1.0)
    runner = Runner()
    names = pool_names(runner)
    wanted = args.pools or names
    now_s = int(time.time())
    records, out = [], console()
    for i, name in enumerate(wanted):
        live = read_pool(runner, name, names)
        check = check_model(live.state, live.version, expanded=live.state.expanded, attached=live.attached)
        found = findings(live.state, live.disks, now_s, live.ram_bytes, live.health)
        advice = footprint_advice(live.state, check.layout)
        risk = risk_now(live.state, check.vdev_bytes, live.disks, live.health)
        grown = growth(live.state, check, *new, attached=live.attached) if new else None
        replaced = replacement(live.state, check, args.replace_with, streaming_mb_s=_streaming_mb_s(live.disks)) \
            if args.replace_with else None
        # each option's risk, speed and rank (model/growth_outlook.py): the pool's own disks and ages
        looks = {id(g): outlook(live.state, check.vdev_bytes, g, live.disks, live.health, goal=goal,
                                ashift=check.ashift) for g in (grown, replaced) if g is not None}
        if args.json:
            records.append(pool_record(live.state, check, found) | {"footprint_advice": advice or None}
                           | {"risk": risk_record(risk)}
                           | ({"growth": growth_record(grown, looks[id(grown)])} if grown else {})
                           | ({"replacement": growth_record(replaced, looks[id(replaced)])} if replaced else {}))
            continue
        if i:
            out.print()
        for line in pool_lines(live.state, check):
            out.print(line, markup=False, soft_wrap=True)
        advice_lines = [f"- {advice}"] if advice else []
        for line in finding_lines(check, found) + advice_lines + risk_lines(risk):  # prose: wrapped to the terminal
            print_wrapped(out, line)
        for answer in (grown, replaced):
            for line, indent in growth_lines(answer, text_width(out, None), looks[id(answer)]) if answer else ():
                if indent is None:  # a command, whole
                    out.print(line, markup=False, soft_wrap=True)
                else:
                    print_wrapped(out, line, indent=indent)
    if args.json:
        print(to_json({"pools": records}))
    elif not wanted:
        out.print("no pools imported (zpool list shows none)")
    return 0


def _streaming_mb_s(disks) -> float:
    """The streaming rate of the pool's disks' class (model/pool_state.py disk_class)."""
    return DISK_CLASSES[disk_class(disks)].streaming_mb_s


def _fleet(args: argparse.Namespace, hosts) -> int:
    """Every host's pools in one table, each host's findings after it (docs/pool.md#many-hosts); exit 0,
    or as model/fleet_exit.py counts the hosts that gave no report."""
    from zfslab.commands._hosts import transport_from_args
    from zfslab.model.fleet_exit import fleet_code
    from zfslab.report.pool_view import fleet_lines, fleet_record
    from zfslab.system.fleet_pool import pools_fleet

    for flag, value in (("--add", args.add), ("--replace-with", args.replace_with)):
        if value is not None:
            raise UsageError(f"{flag} is for one host's pool: run zfslab pool POOL {flag} ... on that host "
                             "(--hosts reads every host's pools and findings)")
    transport = transport_from_args(args)
    try:
        fleet = pools_fleet(transport, hosts, args.pools, limit=args.parallel)
    except KeyboardInterrupt:   # fan_out closed every session; nothing was written anywhere
        raise Interrupted("every host's zfslab pool was stopped with its ssh session; it only reads, so "
                          "nothing is left to clean up: run the same command again") from None
    finally:
        transport.close()
    if args.json:
        print(to_json(fleet_record(fleet)))
        for line in fleet.failures:   # the JSON's reader sees them here too
            print(f"zfslab: no report from {line}", file=sys.stderr)
    else:
        out = console()
        for line, indent in fleet_lines(fleet):
            if indent is None:
                out.print(line, markup=False, soft_wrap=True, crop=False)
            else:
                print_wrapped(out, line, indent=indent)
    return fleet_code(fleet.exit_codes)
