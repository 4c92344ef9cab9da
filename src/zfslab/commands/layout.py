"""`zfslab layout`: check a layout, describe it, print its zpool create command (or read one)."""

from __future__ import annotations

import argparse
import shlex

from zfslab.commands._common import console, int_arg
from zfslab.errors import UsageError
from zfslab.model.layouts import Layout, parse_layout, parse_zpool_vdevs, replication_mismatch, zpool_create_argv
from zfslab.report.tables import to_json


EXAMPLE = "zfslab layout 2xraidz2:6+spare:1 --pool tank"


def add_parser(sub) -> None:
    p = sub.add_parser("layout", epilog=f"example: {EXAMPLE}", help="check a layout, or read one from a zpool create vdev list",
                       description="Validate a layout, describe it, and print its zpool create command; "
                                   "or read a layout from a zpool create vdev list.")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("layout", nargs="?", help="e.g. 2xraidz2:6+spare:1")
    src.add_argument("--from-zpool", metavar="VDEVS",
                     help="a zpool create vdev list, e.g. 'raidz2 sda sdb sdc sdd sde sdf spare sdg'")
    p.add_argument("--devices", metavar="D,D,...", help="devices for the zpool create command, in order")
    p.add_argument("--pool", default="tank", help="pool name for the zpool create command (default tank)")
    p.add_argument("--ashift", type=int_arg("--ashift", 9, 16), help="add -o ashift=A to the command")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.from_zpool:
        layout, devices = parse_zpool_vdevs(args.from_zpool)
    else:
        layout = parse_layout(args.layout)
        devices = [d for d in args.devices.split(",") if d] if args.devices else \
            [f"DISK{i}" for i in range(1, layout.disks + 1)]
    if args.devices and args.from_zpool:
        raise UsageError("--devices goes with LAYOUT; a zpool vdev list names its own devices")
    mismatch = replication_mismatch(layout)
    argv = zpool_create_argv(args.pool, layout, devices, ashift=args.ashift, force=mismatch is not None)
    record = _layout_record(layout, argv, mismatch)
    if args.json:
        print(to_json(record))
    else:
        out = console()
        out.print(f"[bold]{layout}[/bold]: {layout.describe()}")
        plural = "s" if layout.top_level_vdevs != 1 else ""
        out.print(f"{layout.disks} disks, {layout.top_level_vdevs} top-level vdev{plural}; survives "
                  f"{layout.failures_guaranteed} failed disks at once (best case {layout.failures_best_case})")
        if mismatch:
            out.print(f"-f: zpool create refuses a \"mismatched replication level\" without it: {mismatch}. "
                      "-f also skips its checks that the devices are unused: check them first.", markup=False)
        print(shlex.join(argv))  # quoted for a POSIX shell; printed plainly, as rich would read [..] as markup
    return 0


def _layout_record(layout: Layout, argv: list[str], mismatch: str | None = None) -> dict:
    return {"layout": str(layout), "shape": layout.describe(), "disks": layout.disks,
            "top_level_vdevs": layout.top_level_vdevs, "hot_spares": layout.hot_spares,
            "failures_guaranteed": layout.failures_guaranteed, "failures_best_case": layout.failures_best_case,
            "zpool_create": argv, "zpool_create_shell": shlex.join(argv), "force_reason": mismatch}
