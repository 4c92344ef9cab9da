"""`zfslab profile-disk`: measure one disk's speed with fio, for `plan --disk-model`; with --hosts,
every disk of every host, read-only, and the disks and hosts slower than their peers."""

from __future__ import annotations

import argparse
import sys

from zfslab.commands._common import int_arg
from zfslab.commands._hosts import add_host_options, add_stop_with_session, hosts_from_args, stop_with_session
from zfslab.errors import Interrupted, UsageError, shown
from zfslab.report.tables import to_json


EXAMPLE = "zfslab profile-disk /dev/disk/by-id/ata-EXAMPLE --output disk.toml"


def add_parser(sub) -> None:
    p = sub.add_parser("profile-disk", epilog=f"example: {EXAMPLE}\n"
                                             "fleet: zfslab profile-disk --hosts st01,st02 --disks /dev/sdb,/dev/sdc",
                       description="Measure a disk's streaming and random speed with fio and print a profile for "
                                   "`plan --disk-model`. Read-only unless --write-tests, which needs an empty disk. "
                                   "With --hosts (or --inventory): every disk of every host, read-only and in "
                                   "parallel, and each disk or host more than --threshold below the median of its "
                                   "identical peers (docs/fleet.md).")
    p.add_argument("device", nargs="?", help="a block device, e.g. /dev/disk/by-id/ata-... (not with --hosts)")
    p.add_argument("--seconds", type=int_arg("--seconds", 1, 3600), default=20, help="runtime of each test (default 20)")
    p.add_argument("--write-tests", action="store_true",
                   help="also measure writes and sync latency (refused on a disk that holds data; not with --hosts)")
    p.add_argument("--output", metavar="FILE", help="write the profile to this file (TOML; with --hosts: JSON)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--disks", metavar="DEV,DEV,...", help="with --hosts: the disks to profile, the same names on "
                                                          "every host")
    p.add_argument("--threshold", default="15%", metavar="PCT",
                   help="with --hosts: flag a disk or host this far below its peers' median (default 15%%)")
    add_host_options(p)
    add_stop_with_session(p, "profile-disk")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from zfslab.report.files import check_output_path, write_atomically
    from zfslab.system.profile import profile_dict, profile_disk, profile_toml

    stop_with_session(args)
    hosts = hosts_from_args(args)
    if hosts is not None:
        return _fleet(args, hosts)
    if args.device is None:
        raise UsageError("name the disk to profile, e.g. zfslab profile-disk /dev/sdb; or --hosts H,H --disks D,D "
                         "for every disk of several hosts")
    for flag, given in (("--disks", args.disks), ("--threshold", args.threshold != "15%"),
                        ("--ssh-config", args.ssh_config)):
        if given:
            raise UsageError(f"{flag} goes with --hosts or --inventory; for one disk here: zfslab profile-disk DEVICE")
    if args.output:
        check_output_path(args.output)  # before minutes of measuring, not after
    try:
        profile = profile_disk(args.device, seconds=args.seconds, write_tests=args.write_tests)
    except KeyboardInterrupt:   # fio ends with zfslab (the runner's children die with it)
        raise Interrupted("nothing was kept: the profile is printed only once every test has run; run the same "
                          "command again") from None
    if args.output:
        write_atomically(args.output, profile_toml(profile))
    if args.json:
        print(to_json(profile_dict(profile)))
    else:
        print(profile_toml(profile), end="")
    return 0


def _fleet(args: argparse.Namespace, hosts) -> int:
    """Every disk of every host; exit 0 with outliers (a finding, not a failure), 4 if a host or disk gave
    no figures, 10 if a host's zfslab refused a disk (model/fleet_exit.py)."""
    from zfslab import __version__
    from zfslab.commands._disks import device_list
    from zfslab.commands._hosts import transport_from_args
    from zfslab.report.fleet_text import profile_lines
    from zfslab.report.files import check_output_path, write_atomically
    from zfslab.system.fleet_profile import profile_fleet

    if args.device is not None:
        raise UsageError(f"{args.device}: with --hosts, name the disks with --disks {args.device},... (the same on "
                         "every host), not as a device")
    if args.write_tests:
        raise UsageError("--write-tests is not for --hosts: a fleet profile only reads; profile one empty disk "
                         "with zfslab profile-disk DEVICE --write-tests on its host")
    if args.disks is None:
        raise UsageError("--hosts needs --disks DEV,DEV,...: the disks to profile, the same names on every host")
    disks, threshold = device_list(args.disks), parse_threshold(args.threshold)
    if args.output:
        check_output_path(args.output)
    transport = transport_from_args(args)
    try:
        found = profile_fleet(transport, hosts, disks, seconds=args.seconds, controller_version=__version__,
                              limit=args.parallel)
    except KeyboardInterrupt:   # fan_out has closed every session: each host's profile-disk stops with it
        raise Interrupted(INTERRUPTED_FLEET) from None
    finally:
        transport.close()
    data = found.as_dict(threshold)
    if args.output:
        write_atomically(args.output, to_json(data) + "\n")
    if args.json:
        print(to_json(data))
    else:
        print("\n".join(profile_lines(found, threshold, width=_width(), wrap=sys.stdout.isatty())))
    for line in found.failures if args.json else ():   # the text answer lists them; JSON's reader sees them here
        print(f"zfslab: not measured: {line}", file=sys.stderr)
    from zfslab.model.fleet_exit import fleet_code   # one rule for every fleet command (docs/fleet.md#exit-codes)
    return fleet_code(found.exit_codes)


# what a Ctrl-C of profile-disk --hosts keeps: nothing, it only reads and answers at the end
INTERRUPTED_FLEET = ("each host's profile-disk was stopped with its ssh session (and its fio with it); nothing "
                     "was kept, as a fleet profile is printed and written only once every host has answered: "
                     "run the same command again")


def _width() -> int:
    import shutil
    return max(80, min(120, shutil.get_terminal_size((100, 24)).columns))


def parse_threshold(text: str) -> float:
    """--threshold as a user gives it: '15%' or '15' (per cent), or '0.15' (a share)."""
    raw = text.strip().removesuffix("%").strip()
    try:
        number = float(raw)
    except ValueError:
        number = float("nan")
    share = number / 100 if text.strip().endswith("%") or number >= 1 else number
    if not 0 < share < 1:   # NaN fails this too
        raise UsageError(f"--threshold {shown(text, 40)}: give a share below the peers' median, e.g. 15% or 0.15")
    return share
