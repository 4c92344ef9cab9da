"""`zfslab profile-disk`: measure one disk's speed with fio, for `plan --disk-model`."""

from __future__ import annotations

import argparse

from zfslab.commands._common import int_arg
from zfslab.report.tables import to_json


EXAMPLE = "zfslab profile-disk /dev/disk/by-id/ata-EXAMPLE --output disk.toml"


def add_parser(sub) -> None:
    p = sub.add_parser("profile-disk", epilog=f"example: {EXAMPLE}", help="measure one disk's speed with fio (read-only by default)",
                       description="Measure a disk's streaming and random speed with fio and print a profile for "
                                   "`plan --disk-model`. Read-only unless --write-tests, which needs an empty disk.")
    p.add_argument("device", help="a block device, e.g. /dev/disk/by-id/ata-...")
    p.add_argument("--seconds", type=int_arg("--seconds", 1, 3600), default=20, help="runtime of each test (default 20)")
    p.add_argument("--write-tests", action="store_true",
                   help="also measure writes and sync latency (refused on a disk that holds data)")
    p.add_argument("--output", metavar="FILE.toml", help="write the profile to this file")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from zfslab.system.profile import profile_dict, profile_disk, profile_toml

    from zfslab.report.files import check_output_path, write_atomically
    if args.output:
        check_output_path(args.output)  # before minutes of measuring, not after
    profile = profile_disk(args.device, seconds=args.seconds, write_tests=args.write_tests)
    if args.output:
        write_atomically(args.output, profile_toml(profile))
    if args.json:
        print(to_json(profile_dict(profile)))
    else:
        print(profile_toml(profile), end="")
    return 0
