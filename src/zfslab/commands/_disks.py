"""What bench and drill share about disks: the options that name them, the safety gate's
inputs (the disks, the sandbox files, the typed serial numbers) and the sandbox itself."""

from __future__ import annotations

import argparse
import os
import sys

from zfslab.commands._common import DEFAULT_DB, int_arg
from zfslab.errors import UsageError
from zfslab.model.units import format_bytes
from zfslab.system.sandbox import make_sandbox, sandbox_paths  # noqa: F401 - bench and drill take them from here
from zfslab.system.disks import (BadDeviceList, DisksRefused, check_wipe_allowed, inspect_disks, inspect_file,
                                 is_leftover_of, refusal_lines)

def device_list(text: str) -> list[str]:
    devices = [d.strip() for d in text.split(",") if d.strip()]
    if not devices:
        raise UsageError("--disks: name at least one disk, e.g. --disks /dev/disk/by-id/ata-A,/dev/disk/by-id/ata-B")
    return devices


def inspect(devices: list[str], runner, sandbox: bool):
    """What each disk holds (every check reads only); for a sandbox, the files already there."""
    if sandbox:
        return [inspect_file(d, runner) for d in devices if os.path.exists(d)]
    return inspect_disks(devices, runner)


def same_size(infos) -> None:
    if len({i.size_bytes for i in infos}) > 1:
        listing = ", ".join(f"{i.given} {format_bytes(i.size_bytes)}" for i in infos)
        raise BadDeviceList(f"the disks differ in size ({listing}); bench compares layouts on identical disks")


def confirm_serials(dirty, args) -> set[str]:
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


def add_disk_options(p: argparse.ArgumentParser, *, disks_help: str, sandbox_help: str):
    """The options bench and drill share; returns the group where --disks and --sandbox exclude
    each other (drill adds --pool to it)."""
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--disks", metavar="DEV,DEV,...", help=disks_help)
    src.add_argument("--sandbox", metavar="DIR", help=sandbox_help)
    p.add_argument("--sandbox-size", default="1GiB", metavar="SIZE", help="size of each sandbox file (default 1GiB)")
    p.add_argument("--ashift", type=int_arg("--ashift", 9, 16), default=12, help="pool ashift, 9 to 16 (default 12)")
    p.add_argument("--db", default=DEFAULT_DB, metavar="FILE", help=f"results database (default {DEFAULT_DB})")
    p.add_argument("--wipe", action="store_true", help="allow disks that hold data (needs their serial numbers)")
    p.add_argument("--confirm-serials", metavar="S,S,...", help="the serial numbers of the disks to wipe, for scripts")
    return src


def gate(infos, own_guids, args: argparse.Namespace, sandbox: bool) -> None:
    """The safety gate: refuse unless every disk is empty, or holds only what a pool this database
    recorded (by GUID) left, or --wipe came with the serial numbers of the rest. Sandbox files
    that zfslab did not leave are refused outright: they have no serial number to confirm."""
    foreign = [i for i in infos if i.reasons and not is_leftover_of(i, own_guids)]
    if sandbox and foreign:
        raise DisksRefused("files in the sandbox directory that zfslab did not leave there (nothing was "
                           "written):\n  " + "\n  ".join(refusal_lines(foreign))
                           + "\nremove them or choose another --sandbox directory")
    check_wipe_allowed(foreign, wipe=args.wipe, confirmed_serials=confirm_serials(foreign, args))


def dry_run_verdict(infos, own_guids, args: argparse.Namespace, sandbox: bool) -> int:
    """What the gate would do with these disks, said on stderr without prompting: 0 when the run
    would go ahead (wiping the disks that hold data, if --wipe came with their serials), 10 when it
    would refuse."""
    foreign = [i for i in infos if i.reasons and not is_leftover_of(i, own_guids)]
    if not foreign:
        return 0
    lines = "\n  " + "\n  ".join(refusal_lines(foreign))
    confirmed = {x.strip() for x in (args.confirm_serials or "").split(",") if x.strip()}
    if not sandbox and args.wipe and all(i.serial and i.serial in confirmed for i in foreign):
        print("these disks hold data and the run would wipe them first (--wipe, serials confirmed):" + lines,
              file=sys.stderr)
        return 0
    if not sandbox and args.wipe and args.confirm_serials is None and sys.stdin.isatty():
        print("these disks hold data; the run would ask for their serial numbers, then wipe them:" + lines,
              file=sys.stderr)
        return 0
    print("these disks would be refused (nothing was written):" + lines, file=sys.stderr)
    return 10
