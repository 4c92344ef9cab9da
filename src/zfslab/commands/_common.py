"""What the commands share: number and size option types, the option groups several commands take
(ZFS accounting, risk inputs, output format), defaults, and the few helpers that turn their
values into library inputs. One place for each, so an option means the same everywhere."""

from __future__ import annotations

import argparse
import math
import re

from zfslab.report.tables import Console

from zfslab.errors import UsageError, ZfslabError, clip
from zfslab.model.performance import DiskProfile
from zfslab.model.disk_types import DiskType
from zfslab.model.reliability.params import RiskParams
from zfslab.model.units import FLOAT_RE, parse_size


DEFAULT_DISKS = "24x4TB"
# the flag that sets each model input, for errors the model raises in its own words (errors.ParamError)
PARAM_FLAGS = {
    "afr_pct": "--afr", "mtbf_hours": "--mtbf-hours", "ber_per_bit": "--ber", "replace_hours": "--replace-hours",
    "resilver_mb_s": "--resilver-mbps", "fill": "--fill", "scrub_days": "--scrub-days", "years": "--years",
    "error_model": "--error-model", "lse_episodes_per_year": "--lse-rate", "lse_per_hour": "--lse-per-hour",
    "weibull_shape": "--weibull-shape", "afr_by_age": "--afr-by-age", "model": "--model", "trials": "--trials",
    "disk_bytes": "disk size", "disk_class": "--disk-type", "disk_count": "disk count",
    # zfslab expand (model/expansion.py)
    "release": "--zfs-version", "added": "--add", "fill_before": "--fill-before", "recordsize": "--recordsize",
    "rewrite": "--rewrite", "written_bytes": "--written",
    # settings the model names in backquotes in its messages (errors.ZfslabError.worded)
    "allow_unused": "--allow-unused", "vdev_bytes": "--disk-size or --vdev-bytes",
    "calibration=auto": "--calibration auto", "loo": "--loo",
    # the library's settings (system/, store/), in its errors (issue 37)
    "sandbox": "--sandbox", "sandbox_size": "--sandbox-size", "suite": "--suite", "parallel": "--parallel",
    "compression": "--compression", "db": "--db", "layouts": "--layouts", "disk_devices": "--disks",
    "output": "-o", "skip_host": "--skip-host", "disk_type": "--disk-type", "sample": "--sample", "growth": "--grow",
}
DEFAULT_DB = "zfslab-results.sqlite"


def parse_number(text: str, name: str, lo: float, hi: float) -> float:
    """A finite decimal number within [lo, hi]; a UsageError naming the option `name` and the value otherwise."""
    value = float(text) if FLOAT_RE.fullmatch(text) else math.nan
    if not (math.isfinite(value) and lo <= value <= hi):
        raise UsageError(f"{name} {clip(text)}: give a number from {lo:g} to {hi:g}")
    return value


MIN_DEVICE_BYTES = 64 * 2**20  # ZFS's smallest vdev (SPA_MINDEVSIZE)


def parse_disk_set(text: str, *, mixed: bool = False):
    """(count, bytes) from '24x4TB' or '8 x 12TB'; with `mixed`, a list of such pairs from
    disks of several sizes joined by ',' or '+': '8x12TB,4x8TB'."""
    if mixed:
        parts = re.split(r"[,+]", text)
        if len(parts) > 1:
            if not all(p.strip() for p in parts):
                raise UsageError(f"cannot read disks {text!r}: write COUNTxSIZE,COUNTxSIZE, e.g. 8x12TB,4x8TB")
            return [parse_disk_set(p) for p in parts]
        return [parse_disk_set(text)]
    from zfslab.model.plan import MAX_DISKS
    m = re.fullmatch(r"\s*([0-9]+)\s*[xX×]\s*(.+?)\s*", text, re.ASCII | re.DOTALL)
    if not m:
        if re.fullmatch(r"\s*[0-9]+\s*", text):
            raise UsageError(f"cannot read disks {clip(text)}: say their size too, e.g. {text.strip()[:6]}x4TB")
        raise UsageError(f"cannot read disks {clip(text)}: write COUNTxSIZE, e.g. 24x4TB or 8x12TB")
    count, size = m.groups()
    # the count's length first: int() of 4,301 digits raises ValueError (CPython's digit limit)
    if len(count.lstrip("0")) > 4 or not 1 <= int(count) <= MAX_DISKS:
        raise UsageError(f"disks {clip(text)}: zfslab plans for 1 to {MAX_DISKS:,} disks; give COUNTxSIZE "
                         "with a count in that range, e.g. 24x4TB")
    unit = missing_unit(size)
    if unit:
        raise UsageError(f"cannot read disks {clip(text)}: {size} bytes is no disk; give the unit, "
                         f"e.g. {count}x{size}{unit}")
    return int(count), parse_size(size)


def read_disks(text: str, *, sector_bytes: int = 512, allow_unused: bool = False):
    """The DiskSet a COUNTxSIZE description names, of one size or several (8x12TB,4x8TB): the one
    reader of plan's and report's disks."""
    from zfslab.model.plan import mixed_disk_set
    return mixed_disk_set(parse_disk_set(text, mixed=True), sector_bytes=sector_bytes, allow_unused=allow_unused)


def missing_unit(size: str) -> str:
    """The unit a disk size most likely lacks ('TB', 'GB'), or '': a bare number is bytes, and one
    below ZFS's smallest vdev is a size whose unit was left out (4 means 4TB, 500 means 500GB)."""
    if not re.fullmatch(r"\s*[0-9]+(\.[0-9]+)?\s*", size, re.ASCII) or float(size) >= MIN_DEVICE_BYTES:
        return ""
    return "TB" if float(size) < 100 else "GB"


# ASCII only: int() and float() also take '²', '١٢' or '1_000', and float() takes nan, inf and 1e400
_INT_RE = re.compile(r"\s*[+-]?[0-9]{1,30}\s*", re.ASCII)


def number_arg(name: str, lo: float, hi: float, kind: type = int):
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


def choice_arg(choices):
    """An argparse type for lower-case choices that takes any case: SSD, Media, VM."""
    def parse(text: str) -> str:
        return text.lower() if text.lower() in choices else text
    return parse


def int_arg(name: str, lo: int, hi: int):
    return number_arg(name, lo, hi, int)


def float_arg(name: str, lo: float, hi: float):
    return number_arg(name, lo, hi, float)


def size_arg(text: str) -> int:
    try:
        return parse_size(text)
    except ZfslabError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def pool_size_arg(text: str) -> int:
    """size_arg for an amount of space (--min-usable 40TB): a bare number is refused, as a disk's
    size is; its unit is what the user left out, not bytes (issue 33: 40 was taken as 40 bytes)."""
    if re.fullmatch(r"\s*[0-9]+(\.[0-9]+)?\s*", text, re.ASCII):
        raise argparse.ArgumentTypeError(f"{text.strip()} has no unit; give one, e.g. {text.strip()}TB "
                                         f"(or {text.strip()}B for bytes)")
    return size_arg(text)


def disk_size_arg(text: str) -> int:
    """size_arg for a disk, that names the unit a too small bare number lacks."""
    unit = missing_unit(text)
    if unit:
        raise argparse.ArgumentTypeError(f"{text.strip()} bytes is no disk; give the unit, e.g. {text.strip()}{unit}")
    return size_arg(text)


def add_ashift_option(p, help: str | None = None, *, default: int | None = 12) -> None:
    """--ashift as every command takes it: 9 (512 B sectors) to 16 (64 KiB), default 12; each command
    words what it applies to."""
    p.add_argument("--ashift", type=int_arg("--ashift", 9, 16), default=default, help=help)


def add_zfs_options(p: argparse.ArgumentParser) -> None:
    add_ashift_option(p, "log2 of the sector size ZFS uses (9 = 512 B, 12 = 4 KiB; default 12)")
    p.add_argument("--zfs-version", default="2.1", metavar="V",
                   help="OpenZFS version whose accounting to apply: slop64, 0.6.5, 0.7, 0.8-2.0, "
                        "2.1-2.3 (to 2.3.6), 2.3.7, 2.4.0, 2.4 (2.4.1+), or a release such as 2.3.2 (default 2.1)")
    p.add_argument("--sector-size", type=int_arg("--sector-size", 512, 4096), choices=(512, 4096), default=512,
                   help="logical sector size of whole disks, for their GPT partitioning (default 512)")


def add_risk_options(p: argparse.ArgumentParser) -> None:
    """The disk (speed and failure figures) and the risk inputs; unset ones come from --disk-type."""
    from zfslab.model.disk_types import DEFAULT_DISK_TYPE, DISK_TYPES
    p.add_argument("--disk-type", "--disk-class", "--disk-model", dest="disk_type", default=DEFAULT_DISK_TYPE,
                   metavar="TYPE",
                   help="the disks, for speed and risk alike: " + ", ".join(DISK_TYPES)
                        + f" or a PROFILE.toml from profile-disk (default {DEFAULT_DISK_TYPE}; "
                          "--disk-class and --disk-model are older names)")
    rate = p.add_mutually_exclusive_group()
    rate.add_argument("--afr", type=float_arg("--afr", 0.0001, 99.9), metavar="PCT", help="annual failure rate in %%")
    rate.add_argument("--mtbf-hours", type=float_arg("--mtbf-hours", 1, 1e12), metavar="H", help="MTBF in hours instead of an AFR")
    p.add_argument("--error-model", choices=("field", "datasheet"), type=choice_arg(("field", "datasheet")),
                   help="read errors as field studies count them, latent errors that scrubs clear (field, the "
                        "default), or the datasheet's BER per bit read, as RAID calculators take it (datasheet; "
                        "the default when --ber is given)")
    p.add_argument("--ber", type=float_arg("--ber", 0, 1e-3), metavar="B",
                   help="unrecoverable read errors per bit read (the datasheet model)")
    p.add_argument("--lse-rate", type=float_arg("--lse-rate", 0, 365), metavar="R",
                   help="latent-error episodes per disk-year, at every age (the field model; default: the disk "
                        "type's by age, e.g. 0.045 in the first year, 0.048 after for hdd)")
    p.add_argument("--replace-hours", type=float_arg("--replace-hours", 0, 1e6), metavar="H",
                   help="hours from a failure until a new disk is in (default 48)")
    p.add_argument("--resilver-mbps", type=float_arg("--resilver-mbps", 0.001, 1e7), metavar="M",
                   help="resilver rate in MB/s (default: 0.8 x the disk's speed for mirrors, 0.5 x for raidz)")
    p.add_argument("--fill", type=float_arg("--fill", 0.001, 1), metavar="F", help="allocated fraction of the pool (default 0.7)")
    p.add_argument("--scrub-days", type=float_arg("--scrub-days", 0.01, 10000), metavar="D", help="days between scrubs (default 30)")
    p.add_argument("--lse-per-hour", type=float_arg("--lse-per-hour", 0, 1), metavar="R",
                   help="latent sector errors per drive-hour, cleared by scrubs (default 0: BER stands for read errors)")
    p.add_argument("--years", default="1,5,10", metavar="Y,Y,...", help="mission times in years (default 1,5,10)")
    p.add_argument("--repair", choices=("parallel", "serial"), type=choice_arg(("parallel", "serial")), default="parallel",
                   help="failed disks of a vdev resilver together (parallel, default) or one at a time")


def add_output_options(p: argparse.ArgumentParser) -> None:
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print a JSON list, one object per row")
    out.add_argument("--csv", action="store_true", help="print CSV, one line per row")


def add_goal_options(p: argparse.ArgumentParser) -> None:
    """What the recommendation weighs: how important the data is, the workload, the priority."""
    from zfslab.model.recommend import DATA_LEVELS, DEFAULT_DATA, PRIORITIES, WORKLOADS
    g = p.add_argument_group("recommendation (docs/recommend.md)")
    g.add_argument("--data", choices=tuple(DATA_LEVELS), type=choice_arg(DATA_LEVELS), default=DEFAULT_DATA,
                   help="how important the data is; sets the risk budget: "
                        + "; ".join(f"{d.name}: {d.meaning}" for d in DATA_LEVELS.values()) + f" (default {DEFAULT_DATA})")
    defaults = {}
    for d in DATA_LEVELS.values():
        defaults.setdefault(d.workload, []).append(d.name)
    g.add_argument("--workload", choices=tuple(WORKLOADS), type=choice_arg(WORKLOADS), default=None,
                   help="which speed figures count: " + "; ".join(f"{w.name}: {w.meaning}" for w in WORKLOADS.values())
                        + " (default: the data's, " + "; ".join(f"{w} for {', '.join(names)}" for w, names in
                                                              defaults.items()) + ")")
    g.add_argument("--priority", choices=PRIORITIES, type=choice_arg(PRIORITIES), default="balanced",
                   help="within the risk budget, what to maximise (default balanced: space and speed alike; cost: the "
                        "lowest price per usable TB, with --disk-price)")
    g.add_argument("--max-risk", type=float_arg("--max-risk", 1e-15, 1), metavar="P",
                   help="most P(pool loss) to accept over --horizon, e.g. 1e-5 (overrides --data's)")
    g.add_argument("--max-damage", type=float_arg("--max-damage", 1e-15, 1), metavar="P",
                   help="most P(some files damaged) to accept over --horizon (overrides --data's)")
    g.add_argument("--horizon", type=float_arg("--horizon", 0.01, MAX_YEARS), metavar="YEARS",
                   help="years the risk budget and the table's risks refer to (default: 5 if in --years, else its longest)")
    g.add_argument("--min-usable", type=pool_size_arg, metavar="SIZE",
                   help="at least this much usable space, with its unit, e.g. 40TB")
    g.add_argument("--min-failures", type=int_arg("--min-failures", 0, 255), metavar="N",
                   help="survive at least N failed disks at once (default: --data's; 0 allows a stripe)")
    g.add_argument("--disk-price", metavar="PRICE",
                   help="what one disk costs, a plain number in any currency (e.g. 250), or one per size for disks "
                        "of several sizes (e.g. 12TB=250,8TB=150): adds the price per usable TB")


def prices_from_args(args: argparse.Namespace, sizes: dict[int, int]):
    """--disk-price for these disks ({bytes: how many}), or None; a one-line UsageError if it does not fit them."""
    from zfslab.commands._prices import check_prices, parse_disk_prices
    if args.disk_price is None:
        if args.priority == "cost":
            raise UsageError("--priority cost needs what the disks cost: add --disk-price PRICE, e.g. --disk-price 250")
        return None
    prices = parse_disk_prices(args.disk_price)
    check_prices(prices, sizes, args.disk_price)
    return prices


def goal_from_args(args: argparse.Namespace):
    """The Goal and the risk horizons to compute (the goal's horizon among them)."""
    from zfslab.model.recommend import REFERENCE_YEARS, Goal
    horizons = years(args.years)
    if args.horizon is not None:
        horizon = args.horizon
    else:  # 5 years when asked for (the budgets' own horizon), else the longest asked for
        horizon = next((y for y in horizons if math.isclose(y, REFERENCE_YEARS)), max(horizons))
    if not any(math.isclose(horizon, y, rel_tol=1e-9) for y in horizons):
        horizons = tuple(sorted(horizons + (horizon,)))
    goal = Goal(priority=args.priority, data=args.data, workload=args.workload, horizon_years=horizon,
                max_loss=args.max_risk, max_damage=args.max_damage, min_failures=args.min_failures,
                min_usable_bytes=args.min_usable or 0)
    return goal, horizons


def console() -> Console:
    # A pipe or a file gets $COLUMNS, or a wide table instead of rich's 80-column default.
    from zfslab.report.tables import pipe_columns
    probe = Console()
    return Console(highlight=False, width=None if probe.is_terminal else pipe_columns(220))


def pct(x: float) -> str:
    return f"{100 * x:.1f} %" if math.isfinite(x) else "-"


MAX_YEARS = 100.0  # mission times: a century is past any disk's life, and keeps exp() in range


MAX_HORIZONS = 20


def years(text: str) -> tuple[float, ...]:
    parts = [y for y in text.split(",") if y.strip()]
    if not parts or len(parts) > MAX_HORIZONS:
        raise UsageError(f"--years {clip(text)}: give 1 to {MAX_HORIZONS} years separated by commas, e.g. 1,5,10")
    years = tuple(parse_number(y, "--years", 0.001, MAX_YEARS) for y in parts)
    if any(y <= 0 for y in years):
        raise UsageError(f"--years {clip(text)}: give positive years separated by commas, e.g. 1,5,10")
    return years


def afr_by_age(text: str) -> tuple[float, ...]:
    parts = text.split(",")
    if len(parts) > MAX_HORIZONS * 5:
        raise UsageError(f"--afr-by-age {clip(text)}: at most {MAX_HORIZONS * 5} years of age")
    return tuple(parse_number(a, "--afr-by-age", 0.0001, 99.9) / 100 for a in parts)


def risk_params(args: argparse.Namespace, disk_bytes: int | None, horizons: tuple[float, ...] | None = None,
                disk: DiskType | None = None) -> RiskParams:
    from zfslab.model.reliability.params import field_inputs, with_overrides
    disk = disk or load_disk_type(args.disk_type)
    error_model = getattr(args, "error_model", None) or ("datasheet" if args.ber is not None else "field")
    if error_model == "field" and args.ber is not None:
        raise UsageError(f"--ber {args.ber:g}: a datasheet rate; add --error-model datasheet to use it, or give the "
                         "field model's --lse-rate")
    if error_model == "datasheet" and getattr(args, "lse_rate", None) is not None:
        raise UsageError(f"--lse-rate {args.lse_rate:g}: the field model's input; drop --error-model datasheet")
    base = RiskParams(disk_bytes=disk_bytes, afr=disk.afr, ber_per_bit=disk.ber_per_bit,
                      streaming_mb_s=disk.streaming_mb_s,
                      **field_inputs(disk.name, seeks=disk.speed.rand_read_iops_qd1 < 1000, error_model=error_model))
    overrides = dict(
        afr=args.afr / 100 if args.afr is not None else None, mtbf_hours=args.mtbf_hours, ber_per_bit=args.ber,
        replace_hours=args.replace_hours, resilver_mb_s=args.resilver_mbps, fill=args.fill,
        scrub_days=args.scrub_days, lse_per_hour=args.lse_per_hour, years=horizons or years(args.years),
        lse_episodes_per_year=getattr(args, "lse_rate", None),
        parallel_repair=args.repair == "parallel",
    )
    return with_overrides(base, overrides)


def mttdl_text(hours: float | None) -> str:
    if hours is None:
        return "-"
    if not math.isfinite(hours):
        return "unbounded"
    years = hours / 8760
    from zfslab.model.units import power_of_ten
    if years >= 1e6:
        return f"{power_of_ten(years)} y"  # as odds() writes large counts
    return f"{years:.3g} y" if years < 100 else f"{float(f'{years:.3g}'):,.0f} y"


def failure_inputs_text(p: RiskParams) -> str:
    """How often disks fail and are replaced: the inputs plan's short footer names."""
    rate = f"MTBF {p.mtbf_hours:g} h" if p.mtbf_hours else f"AFR {100 * p.afr:g} %"
    if p.field:  # the field error model: read errors are latent ones a scrub finds; inputs_text() adds the rate
        errors = f"scrub {p.scrub_days:g} d"
    else:
        errors = f"BER {p.ber_per_bit:g}"
    return f"{rate}, {errors}, replacement {p.replace_hours:g} h"


def inputs_text(p: RiskParams) -> str:
    resilver = f"{p.resilver_mb_s:g} MB/s" if p.resilver_mb_s else ", ".join(
        f"{p.healing_mb_s(mirror):.0f} MB/s {kind}{' (measured by drill)' if p.resilver_measured(mirror) else ''}"
        for mirror, kind in ((True, "mirrors"), (False, "raidz")))
    bands = p.lse_by_age().bands  # the rate of new disks, then from each age on (docs/reliability.md#by-age)
    later = "".join(f", {rate:.2g} from age {start:g} y" for start, rate in bands[1:])
    latent = f", field read errors {bands[0][1]:.2g} latent errors/disk-year{later}" if p.field else ""
    return (f"{failure_inputs_text(p)}{latent}, resilver {resilver}, "
            f"{100 * p.fill:g} % full, {'parallel' if p.parallel_repair else 'serial'} repair")


def load_disk_type(text: str) -> DiskType:
    """--disk-type: a preset name, or a PROFILE.toml written by `zfslab profile-disk`
    (system/profile.py reads it; its errors name the setting `disk_type`, worded --disk-type)."""
    from zfslab.model.disk_types import DISK_TYPES, named_disk_type
    preset = named_disk_type(text)
    if preset is not None:
        return preset
    if not text.endswith(".toml"):
        raise UsageError(f"--disk-type {clip(text)}: use one of {', '.join(DISK_TYPES)} or a PROFILE.toml file")
    from zfslab.system.profile import read_disk_type  # lazy: profile-disk's module, only for a file
    return read_disk_type(text)


def load_disk_model(text: str) -> DiskProfile:
    """The speed half of a disk type (for commands that model speed only)."""
    return load_disk_type(text).speed


MAX_DATASET_BYTES = 10 * 2**20


def plain(value):
    """numpy numbers to Python ones, for JSON."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if hasattr(value, "item"):
        return value.item()
    return value
