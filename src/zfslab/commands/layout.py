"""`zfslab layout`: check a layout, describe it, print its zpool create command (or read one)."""

from __future__ import annotations

import argparse
import shlex

from zfslab.commands._common import add_ashift_option, console
from zfslab.errors import UsageError
from zfslab.model.layout_grammar import parse_layout
from zfslab.model.layouts import Layout
from zfslab.model.zpool_syntax import class_redundancy_risk, replication_mismatch, zpool_create_argv
from zfslab.model.zpool_vdev_list import parse_zpool_vdevs
from zfslab.report.tables import print_wrapped, text_width, to_json


EXAMPLE = "zfslab layout 2xraidz2:6+spare:1 --pool tank"
# the zfslab grammar for allocation classes, shown in --help (docs/capacity.md#allocation-classes)
CLASS_EXAMPLE = "raidz2:6+special=mirror:3@1TB+log=mirror:2@400GB"


def add_parser(sub) -> None:
    p = sub.add_parser("layout", epilog=f"example: {EXAMPLE}",
                       description="Validate a layout, describe it, and print its zpool create command; "
                                   "or read a layout from a zpool create vdev list.")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("layout", nargs="?", help=f"e.g. 2xraidz2:6+spare:1, or with allocation classes {CLASS_EXAMPLE} (and +cache:2@2TB)")
    src.add_argument("--from-zpool", metavar="VDEVS",
                     help="a zpool create vdev list, e.g. 'raidz2 sda sdb sdc sdd sde sdf spare sdg' or "
                          "'raidz2 a b c d e f special mirror g h i log mirror j k cache l'")
    p.add_argument("--devices", metavar="D,D,...", help="devices for the zpool create command, in order")
    p.add_argument("--pool", default="tank", help="pool name for the zpool create command (default tank)")
    add_ashift_option(p, "add -o ashift=A to the command", default=None)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.from_zpool:
        layout, devices = parse_zpool_vdevs(args.from_zpool)
    else:
        layout = parse_layout(args.layout)
        devices = [d for d in args.devices.split(",") if d] if args.devices else \
            _device_names(layout)
    if args.devices and args.from_zpool:
        raise UsageError("--devices goes with LAYOUT; a zpool vdev list names its own devices")
    mismatch = replication_mismatch(layout)
    argv = zpool_create_argv(args.pool, layout, devices, ashift=args.ashift, force=mismatch is not None)
    record = _layout_record(layout, argv, mismatch)
    if args.json:
        print(to_json(record))
    else:
        out = console()
        print_wrapped(out, f"{layout}: {layout.describe()}")
        plural = "s" if layout.top_level_vdevs != 1 else ""
        counts = [f"{sum(g.disks for g in layout.of_class(k))} {k}" for k in ("special", "dedup", "log")
                  if layout.of_class(k)] + [f"{layout.cache_devices} cache"] * bool(layout.cache_devices)
        extra = f" (+ {', '.join(counts)})" if counts else ""
        survives = layout.failures_guaranteed
        print_wrapped(out, f"{layout.disks} disks{extra}, {layout.top_level_vdevs} top-level vdev{plural}; survives "
                           f"{survives} failed disk{'s' * (survives != 1)} at once (best case "
                           f"{layout.failures_best_case})")
        for line in class_notes(layout, warn=mismatch is None):
            print_wrapped(out, line)
        if mismatch:
            print_wrapped(out, f"-f: zpool create refuses a \"mismatched replication level\" without it: {mismatch}. "
                               "-f also skips its checks that the devices are unused: check them first.")
        # quoted for a POSIX shell; printed plainly, as rich would read [..] as markup
        print(shell_lines(argv, text_width(out, None)))
    return 0


def shell_lines(argv: list[str], width: int | None) -> str:
    """The command as a shell reads it; wider than the terminal, it is broken between words with
    a trailing backslash, so it is still one command when pasted."""
    words = [shlex.quote(w) for w in argv]
    if width is None or len(" ".join(words)) <= width:
        return " ".join(words)
    lines, line = [], words[0]
    for w in words[1:]:
        if len(line) + 1 + len(w) + 2 > width:  # room for " \\"
            lines.append(line + " \\")
            line = "  " + w
        else:
            line += " " + w
    return "\n".join(lines + [line])


def _device_names(layout: Layout) -> list[str]:
    """Placeholders in zpool_vdev_args order: DISK1.. for data and spares, SSD1.. for the class devices."""
    data = [f"DISK{i}" for i in range(1, sum(g.disks for g in layout.groups) + 1)]
    ssd = [f"SSD{i}" for i in range(1, layout.class_disks + 1)]
    spares = [f"DISK{len(data) + i}" for i in range(1, layout.hot_spares + 1)]
    n_class = layout.class_disks - layout.cache_devices
    return data + ssd[:n_class] + spares + ssd[n_class:]


def class_notes(layout: Layout, *, warn: bool = True) -> list[str]:
    """What each class vdev means for the pool, and (warn) the warning when one is its weak point
    (replication_mismatch already says it when zpool create wants -f for it)."""
    notes = []
    why = class_redundancy_risk(layout)
    if why and warn:
        notes.append(f"warning: {why}")
    if layout.of_class("log"):
        notes.append("log: its loss alone loses nothing; with a crash at the same moment, the last seconds "
                     "of sync writes")
    if layout.cache_devices:
        notes.append("cache: L2ARC, a read cache; its loss loses nothing")
    return notes


def _layout_record(layout: Layout, argv: list[str], mismatch: str | None = None) -> dict:
    return {"layout": str(layout), "shape": layout.describe(), "disks": layout.disks,
            "class_disks": layout.class_disks,
            "classes": [{"class": c.alloc_class, "vdev": c.group.token, "vdevs": c.group.count,
                         "disks": c.group.disks, "failures_survived": c.failures_survived} for c in layout.classes],
            "cache_devices": layout.cache_devices, "class_redundancy_risk": class_redundancy_risk(layout),
            "top_level_vdevs": layout.top_level_vdevs, "hot_spares": layout.hot_spares,
            "failures_guaranteed": layout.failures_guaranteed, "failures_best_case": layout.failures_best_case,
            "zpool_create": argv, "zpool_create_shell": shlex.join(argv), "force_reason": mismatch}
