"""`zfslab expand`: a raidz vdev after each `zpool attach` of one more disk (RAID-Z expansion, 2.3+)."""

from __future__ import annotations

import argparse

from rich import box
from rich.table import Table

from zfslab.commands._common import add_ashift_option, console, disk_size_arg, float_arg, int_arg, size_arg
from zfslab.errors import UsageError
from zfslab.model.allocation import format_recordsize
from zfslab.model.capacity import linux_whole_disk_osize
from zfslab.model.expansion import Expansion, expand, parse_release
from zfslab.model.layout_grammar import parse_layout
from zfslab.model.layouts import MAX_CHILDREN
from zfslab.model.units import parse_blocksize, zfs_nicenum
from zfslab.report.tables import to_json

EXAMPLE = "zfslab expand raidz2:6 --add 2 --disk-size 4TB --fill-before 0.5 --rewrite"


def add_parser(sub) -> None:
    p = sub.add_parser(
        "expand", epilog=f"example: {EXAMPLE}",
        description="What zpool list and zfs list show after each zpool attach of one more disk to a raidz vdev "
                    "(OpenZFS 2.3+), the space that is really left, and what zfs rewrite of the old data gains. "
                    "Each disk is one attach and one expansion.")
    p.add_argument("layout", help="one raidz vdev, e.g. raidz2:6")
    p.add_argument("--add", type=int_arg("--add", 1, MAX_CHILDREN), required=True, metavar="N",
                   help="disks to add, one zpool attach each")
    size = p.add_mutually_exclusive_group()
    size.add_argument("--disk-size", type=disk_size_arg, metavar="SIZE",
                      help="size of each whole disk, the new ones alike (Linux partitioning applies; default 4TB)")
    size.add_argument("--vdev-bytes", type=size_arg, metavar="N", help="exact bytes ZFS sees of each vdev (files, partitions)")
    data = p.add_mutually_exclusive_group()
    data.add_argument("--fill-before", type=float_arg("--fill-before", 0, 1), default=0.0, metavar="F",
                      help="fraction of the usable space written (incompressible) before the first attach (default 0)")
    data.add_argument("--written", type=size_arg, metavar="SIZE",
                      help="or the data written before the first attach, e.g. 30TB (at most what fits)")
    p.add_argument("--recordsize", default="128K", metavar="R", help="record size of that data and of new data (default 128K)")
    p.add_argument("--rewrite", action="store_true", help="add a row after zfs rewrite of the old data (2.3.4+)")
    add_ashift_option(p, "log2 of the sector size ZFS uses (default 12)")
    p.add_argument("--zfs-version", default="2.4", metavar="V",
                   help="OpenZFS version: 2.3, 2.4 or a release such as 2.3.9 (default 2.4)")
    p.add_argument("--sector-size", type=int_arg("--sector-size", 512, 4096), choices=(512, 4096), default=512,
                   help="logical sector size of whole disks, for their GPT partitioning (default 512)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    layout = parse_layout(args.layout)
    release = parse_release(args.zfs_version)
    recordsize = parse_blocksize(args.recordsize)
    if args.vdev_bytes:
        vdev_bytes, disk_bytes = args.vdev_bytes, args.vdev_bytes
    else:
        disk_bytes = args.disk_size or 4 * 10**12
        vdev_bytes = linux_whole_disk_osize(disk_bytes, args.sector_size)
    if vdev_bytes <= 0:
        raise UsageError(f"--disk-size {disk_bytes}: too small for a GPT partition; give at least 80MB")
    result = expand(layout, vdev_bytes, args.add, release=release, ashift=args.ashift, fill=args.fill_before,
                    recordsize=recordsize, rewrite=args.rewrite, written_bytes=args.written)
    record = expansion_record(result, disk_bytes)
    if args.json:
        print(to_json(record))
    else:
        _print(result, record)
    return 0


def expansion_record(e: Expansion, disk_bytes: int) -> dict:
    return {
        "layout": str(e.layout), "zfs_version": str(e.release), "zfs_rules": e.release.rules.key, "ashift": e.ashift,
        "disk_bytes": disk_bytes, "vdev_bytes": e.vdev_bytes, "added": e.added, "recordsize_bytes": e.recordsize_bytes,
        "data_bytes": e.data_bytes, "metaslab_shift": e.ms_shift, "deflate_ratio": e.deflate_ratio,
        "estimates": ["alloc_bytes", "free_bytes", "used_bytes", "avail_bytes (once data is written)",
                      "true_free_bytes", "old_ratio_loss_bytes"],
        "steps": [
            {"step": s.label, "width": s.width, "asize_bytes": s.asize_bytes, "metaslabs": s.metaslabs,
             "size_bytes": s.size_bytes, "alloc_bytes": s.alloc_bytes, "free_bytes": s.free_bytes,
             "used_bytes": s.used_bytes, "avail_bytes": s.avail_bytes, "usable_bytes": s.usable_bytes,
             "dspace_bytes": s.dspace_bytes, "slop_bytes": s.slop_bytes, "embedded_log_bytes": s.embedded_log_bytes,
             "true_free_bytes": s.true_free_bytes, "old_ratio_loss_bytes": s.old_ratio_loss_bytes,
             "data_widths": list(s.widths_of_data)}
            for s in e.steps
        ],
    }


def _print(e: Expansion, record: dict) -> None:
    out = console()
    parity = e.layout.groups[0].parity
    rs = format_recordsize(e.recordsize_bytes)
    out.print(f"[bold]{e.layout}[/bold] + {e.added} disk{'s' * (e.added > 1)}, one zpool attach each; "
              f"OpenZFS {e.release}, ashift {e.ashift}")
    table = Table(box=box.SIMPLE_HEAD, header_style="bold", pad_edge=False)
    for header in ("step", "vdev", "SIZE", "ALLOC", "FREE", "USED", "AVAIL", "fits", "locked"):
        table.add_column(header, justify="left" if header in ("step", "vdev") else "right", no_wrap=True)
    for s in e.steps:
        table.add_row(s.label, f"raidz{parity}:{s.width}", *(zfs_nicenum(n) for n in (
            s.size_bytes, s.alloc_bytes, s.free_bytes, s.used_bytes, s.avail_bytes, s.true_free_bytes,
            s.old_ratio_loss_bytes)))
    out.print(table)
    out.print(f"each disk: {record['disk_bytes']:,} B, ZFS sees {e.vdev_bytes:,} B")
    counts = " -> ".join(str(s.metaslabs) for s in e.steps if s.label != "rewritten")
    out.print(f"metaslabs of 2^{e.ms_shift} B: {counts}")
    out.print(f"deflate ratio {e.deflate_ratio}/512, of {e.layout}, kept for good: zfs list counts")
    out.print("new space at the old data-to-parity ratio")
    out.print("exact: SIZE, and USED and AVAIL of an empty pool; estimates (data blocks")
    out.print("only, no metadata): ALLOC, FREE, USED, AVAIL of written data, fits, locked")
    out.print(f"fits: new data that still fits, in {rs} records at the current width")
    out.print("locked: what zfs rewrite of the old blocks would add to fits")
    if e.data_bytes:
        last = e.steps[-1]
        out.print(f"written before the first attach: {e.data_bytes:,} B ({zfs_nicenum(e.data_bytes)})")
        if last.label == "rewritten":
            out.print("rewritten: zfs rewrite -r of that data; a snapshot would keep the old blocks")
