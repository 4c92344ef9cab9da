"""Command line: parse, call the library, render, exit code. No logic of its own."""

from __future__ import annotations

import argparse
import math
import re
import sys
from collections.abc import Sequence

from zfslab import __version__
from zfslab.errors import UsageError, ZfslabError, clip
from zfslab.model.units import FLOAT_RE, parse_size

DEFAULT_DISKS = "24x4TB"


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage mistake in one line, with the way to help."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{message} (see {self.prog} --help)")


# ASCII only: int() and float() also take '²', '١٢' or '1_000', and float() takes nan, inf and 1e400
_INT_RE = re.compile(r"\s*[+-]?[0-9]{1,30}\s*", re.ASCII)


def _number_arg(name: str, lo: float, hi: float, kind: type = int):
    """An argparse type: a finite number of `kind` within [lo, hi], with a message naming the option."""
    what = "a whole number" if kind is int else "a number"
    shape = _INT_RE if kind is int else FLOAT_RE

    def text_of(v: float) -> str:
        return str(v) if kind is int else f"{v:g}"

    def parse(text: str):
        if not shape.fullmatch(text):
            raise argparse.ArgumentTypeError(f"{name} must be {what}, got {clip(text)}")
        value = kind(text)
        if not (math.isfinite(value) and lo <= value <= hi):
            raise argparse.ArgumentTypeError(f"{name} must be from {text_of(lo)} to {text_of(hi)}, got {clip(text.strip())[1:-1]}")
        return value
    return parse


def _int_arg(name: str, lo: int, hi: int):
    return _number_arg(name, lo, hi, int)


def _float_arg(name: str, lo: float, hi: float):
    return _number_arg(name, lo, hi, float)


def _size_arg(text: str) -> int:
    try:
        return parse_size(text)
    except ZfslabError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _add_zfs_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--ashift", type=_int_arg("--ashift", 9, 16), default=12,
                   help="log2 of the sector size ZFS uses (9 = 512 B, 12 = 4 KiB; default 12)")
    p.add_argument("--zfs-version", default="2.1", metavar="V",
                   help="OpenZFS version whose accounting to apply: slop64, 0.6.5, 0.7, 0.8-2.0, "
                        "2.1-2.3, 2.4, or a release such as 2.3.2 (default 2.1)")
    p.add_argument("--sector-size", type=_int_arg("--sector-size", 512, 4096), choices=(512, 4096), default=512,
                   help="logical sector size of whole disks, for their GPT partitioning (default 512)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="zfslab", description="Compare ZFS pool layouts on speed, space and safety.")
    parser.add_argument("--version", action="version", version=f"zfslab {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p = sub.add_parser("plan", help="every layout for your disks: usable space and failures survived",
                       description="Every sensible layout for a set of identical disks, with its exact usable "
                                   "space (as zfs list shows it) and how many disk failures it survives.")
    p.add_argument("disks", nargs="?", default=None, metavar="COUNTxSIZE",
                   help=f"the disks, e.g. 24x4TB or 8x12TB (default {DEFAULT_DISKS})")
    p.add_argument("--disks", dest="disk_count", type=_int_arg("--disks", 1, 1024), metavar="N",
                   help="number of disks (with --disk-size or --vdev-bytes)")
    size = p.add_mutually_exclusive_group()
    size.add_argument("--disk-size", type=_size_arg, metavar="SIZE",
                      help="size of each whole disk (Linux partitioning applies): 4TB, 3.64TiB, 4000787030016")
    size.add_argument("--vdev-bytes", type=_size_arg, metavar="N",
                      help="exact bytes ZFS sees of each vdev (a file, a partition, a FreeBSD raw disk)")
    p.add_argument("--layouts", metavar="L,L", help="only these layouts (comma-separated), e.g. raidz2:6,12xmirror:2")
    p.add_argument("--no-spares", action="store_true", help="leave out layouts with hot spares")
    p.add_argument("--no-draid", action="store_true", help="leave out dRAID layouts")
    _add_zfs_options(p)
    _add_risk_options(p)
    p.add_argument("--no-risk", action="store_true", help="leave out the risk columns")
    p.add_argument("--disk-model", default="hdd7200", metavar="MODEL",
                   help="speed profile for the speed columns: hdd7200, hdd5400, ssd, nvme or PROFILE.toml (default hdd7200)")
    p.add_argument("--recordsize", default="128K", metavar="R", help="recordsize for the speed model (default 128K)")
    p.add_argument("--no-speed", action="store_true", help="leave out the speed columns")
    p.add_argument("--priority", choices=("speed", "space", "safety", "balanced"),
                   help="mark the Pareto frontier and recommend a layout for this priority")
    p.add_argument("--min-usable", type=_size_arg, metavar="SIZE", help="with --priority: at least this much usable space")
    p.add_argument("--min-failures", type=_int_arg("--min-failures", 0, 255), default=0, metavar="N",
                   help="with --priority: survive at least N failed disks at once")
    _add_output_options(p)

    p = sub.add_parser("capacity", help="exact zpool list SIZE and zfs list USED+AVAIL of one layout",
                       description="Exact capacity of one layout, step by step as OpenZFS computes it.")
    p.add_argument("layout", help="e.g. raidz2:6, 2xraidz2:6, 12xmirror:2, draid2:8d:24c:1s, raidz2:11+spare:1")
    size = p.add_mutually_exclusive_group(required=True)
    size.add_argument("--vdev-bytes", type=_size_arg, metavar="N",
                      help="exact bytes ZFS sees of each vdev (a file, a partition, a FreeBSD raw disk)")
    size.add_argument("--disk-size", type=_size_arg, metavar="SIZE",
                      help="size of each whole disk (Linux partitioning applies): 4TB, 3.64TiB, 4000787030016")
    _add_zfs_options(p)
    p.add_argument("--created-with", metavar="V",
                   help="OpenZFS version that created the vdevs, if older (fixes the metaslab size)")
    p.add_argument("--recordsize", default="128K", metavar="R", help="record size for the efficiency line (default 128K)")
    p.add_argument("--file-size", type=_size_arg, metavar="SIZE",
                   help="also show the raw space one incompressible file of this size takes")
    p.add_argument("--json", action="store_true", help="print one JSON object")

    p = sub.add_parser("risk", help="risk of data loss over the years for one layout",
                       description="Probability of losing the pool or damaging blocks within 1, 5 and 10 years, "
                                   "expected bytes lost and MTTDL, from an exact Markov chain or a Monte Carlo "
                                   "simulation; or another calculator's number for comparison (--model).")
    p.add_argument("layout", help="e.g. raidz2:6, 2xraidz2:6, 12xmirror:2, draid2:8d:24c:1s")
    p.add_argument("--disk-size", type=_size_arg, required=True, metavar="SIZE", help="size of each disk, e.g. 16TB")
    _add_risk_options(p)
    p.add_argument("--spares", type=_int_arg("--spares", 0, 100), metavar="N",
                   help="hot spares (replaces any spare:N in the layout)")
    p.add_argument("--model", choices=("zfs", "classic", "wintelguy", "backblaze"), default="zfs",
                   help="zfs (default): read errors cost blocks, not the pool; classic: a read error in a "
                        "rebuild loses the array; wintelguy / backblaze: those calculators' formulas")
    p.add_argument("--engine", choices=("markov", "montecarlo"), default="markov",
                   help="markov (exact, default) or montecarlo (ageing disks, scrubs, correlation)")
    p.add_argument("--trials", type=_int_arg("--trials", 100, 100_000_000), default=20000, metavar="N",
                   help="Monte Carlo trials per vdev (at least; more until --target-error is met)")
    p.add_argument("--target-error", type=_float_arg("--target-error", 0.001, 1), default=0.1, metavar="RE",
                   help="Monte Carlo: run until the 95 %% half-width of P(loss) is within RE of it (default 0.1)")
    p.add_argument("--max-trials", type=_int_arg("--max-trials", 100, 100_000_000), default=2_000_000, metavar="N",
                   help="Monte Carlo: stop after N trials per vdev even if --target-error is not met (default 2000000)")
    p.add_argument("--max-seconds", type=_float_arg("--max-seconds", 0.1, 86400), default=5.0, metavar="S",
                   help="Monte Carlo: stop after S seconds of simulation, whatever else is not met (default 5)")
    p.add_argument("--seed", type=_int_arg("--seed", 0, 2**63 - 1), metavar="S",
                   help="Monte Carlo random seed (printed, so a run can be repeated)")
    p.add_argument("--weibull-shape", type=_float_arg("--weibull-shape", 0.1, 20), metavar="B", help="Monte Carlo: Weibull lifetimes of this shape (first-year AFR = --afr)")
    p.add_argument("--afr-by-age", metavar="PCT,PCT,...", help="Monte Carlo: AFR for each year of age, e.g. 1.3,1.5,2.2,3.1")
    p.add_argument("--batch-variance", type=_float_arg("--batch-variance", 0, 10), default=0.0, metavar="V",
                   help="Monte Carlo: variance of a gamma frailty shared by each vdev's disks (0 = independent)")
    p.add_argument("--exponential-repair", action="store_true", help="Monte Carlo: exponential instead of fixed repair times")
    p.add_argument("--ashift", type=_int_arg("--ashift", 9, 16), default=12, help="for the usable bytes (default 12)")
    p.add_argument("--json", action="store_true", help="print one JSON object")

    p = sub.add_parser("validate", help="check the speed model on a published table of measurements",
                       description="Fit the speed model on the rows marked calibration=1, predict the others, and "
                                   "compare with the measured MB/s and with the rule of thumb.")
    p.add_argument("dataset", help="CSV: disks,kind,vdevs,width,[write_MBps,rewrite_MBps,read_MBps],calibration")
    p.add_argument("--ashift", type=_int_arg("--ashift", 9, 16), default=12, help="ashift of the measured pools (default 12)")
    p.add_argument("--json", action="store_true", help="print one JSON object")

    p = sub.add_parser("profile-disk", help="measure one disk's speed with fio (read-only by default)",
                       description="Measure a disk's streaming and random speed with fio and print a profile for "
                                   "`plan --disk-model`. Read-only unless --write-tests, which needs an empty disk.")
    p.add_argument("device", help="a block device, e.g. /dev/disk/by-id/ata-...")
    p.add_argument("--seconds", type=_int_arg("--seconds", 1, 3600), default=20, help="runtime of each test (default 20)")
    p.add_argument("--write-tests", action="store_true",
                   help="also measure writes and sync latency (refused on a disk that holds data)")
    p.add_argument("--output", metavar="FILE.toml", help="write the profile to this file")
    p.add_argument("--json", action="store_true", help="print one JSON object")

    from zfslab.bench_cmd import add_parser as add_bench
    from zfslab.drill_cmd import add_parser as add_drill
    from zfslab.report_cmd import add_parser as add_report
    add_bench(sub)
    add_drill(sub)
    add_report(sub, _add_risk_options, _size_arg, _int_arg)

    p = sub.add_parser("layout", help="check a layout, or read one from a zpool create vdev list",
                       description="Validate a layout, describe it, and print its zpool create command; "
                                   "or read a layout from a zpool create vdev list.")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("layout", nargs="?", help="e.g. 2xraidz2:6+spare:1")
    src.add_argument("--from-zpool", metavar="VDEVS",
                     help="a zpool create vdev list, e.g. 'raidz2 sda sdb sdc sdd sde sdf spare sdg'")
    p.add_argument("--devices", metavar="D,D,...", help="devices for the zpool create command, in order")
    p.add_argument("--pool", default="tank", help="pool name for the zpool create command (default tank)")
    p.add_argument("--ashift", type=_int_arg("--ashift", 9, 16), help="add -o ashift=A to the command")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


def _add_risk_options(p: argparse.ArgumentParser) -> None:
    """Inputs of the risk models; unset ones come from --disk-class (see `zfslab risk --help`)."""
    p.add_argument("--disk-class", choices=("hdd", "hdd-enterprise", "ssd", "nvme"), default="hdd",
                   help="defaults for AFR, read-error rate and speed (default hdd: AFR 1.5 %%, BER 1e-14, 150 MB/s)")
    rate = p.add_mutually_exclusive_group()
    rate.add_argument("--afr", type=_float_arg("--afr", 0.0001, 99.9), metavar="PCT", help="annual failure rate in %%")
    rate.add_argument("--mtbf-hours", type=_float_arg("--mtbf-hours", 1, 1e12), metavar="H", help="MTBF in hours instead of an AFR")
    p.add_argument("--ber", type=_float_arg("--ber", 0, 1e-3), metavar="B", help="unrecoverable read errors per bit read")
    p.add_argument("--replace-hours", type=_float_arg("--replace-hours", 0, 1e6), metavar="H",
                   help="hours from a failure until a new disk is in (default 48)")
    p.add_argument("--resilver-mbps", type=_float_arg("--resilver-mbps", 0.001, 1e7), metavar="M",
                   help="resilver rate in MB/s (default: 0.8 x the disk's speed for mirrors, 0.5 x for raidz)")
    p.add_argument("--fill", type=_float_arg("--fill", 0.001, 1), metavar="F", help="allocated fraction of the pool (default 0.7)")
    p.add_argument("--scrub-days", type=_float_arg("--scrub-days", 0.01, 10000), metavar="D", help="days between scrubs (default 30)")
    p.add_argument("--lse-per-hour", type=_float_arg("--lse-per-hour", 0, 1), metavar="R",
                   help="latent sector errors per drive-hour, cleared by scrubs (default 0: BER stands for read errors)")
    p.add_argument("--years", default="1,5,10", metavar="Y,Y,...", help="mission times in years (default 1,5,10)")
    p.add_argument("--repair", choices=("parallel", "serial"), default="parallel",
                   help="failed disks of a vdev resilver together (parallel, default) or one at a time")


def _add_output_options(p: argparse.ArgumentParser) -> None:
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print a JSON list, one object per row")
    out.add_argument("--csv", action="store_true", help="print CSV, one line per row")


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args_list
    if debug:
        args_list = [a for a in args_list if a != "--debug"]
    try:
        args = build_parser().parse_args(args_list)
        if args.command is None:
            build_parser().print_help()
            return 0
        from zfslab import commands  # late import: --help and --version stay fast

        if args.command == "bench":
            from zfslab.bench_cmd import cmd_bench
            return cmd_bench(args)
        if args.command == "report":
            from zfslab.report_cmd import cmd_report
            return cmd_report(args)
        if args.command == "drill":
            from zfslab.drill_cmd import cmd_drill
            return cmd_drill(args)
        return getattr(commands, f"cmd_{args.command.replace('-', '_')}")(args)
    except ZfslabError as e:
        if debug:
            raise
        print(f"zfslab: error: {_one_line(str(e))}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("zfslab: interrupted; every finished measurement is saved: run the same command again to continue",
              file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as e:  # noqa: BLE001 - the last line of defence for a one-line error
        if debug:
            raise
        print(f"zfslab: internal error: {type(e).__name__}: {_one_line(str(e), 500)} (run with --debug for the traceback)",
              file=sys.stderr)
        return 1


def _one_line(message: str, limit: int = 2000) -> str:
    """An error message as one line: a value with a newline or an escape sequence cannot break it."""
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in message)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":  # pragma: no cover
    entry()
