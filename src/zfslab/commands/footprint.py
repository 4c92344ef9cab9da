"""`zfslab footprint`: how much of the user's own data each layout holds, with compression and
the raidz/dRAID/mirror allocation of every block (docs/footprint.md)."""

from __future__ import annotations

import argparse
import math
import re
import sys
import time
from collections.abc import Mapping

from zfslab.commands._common import add_ashift_option, console, int_arg, parse_disk_set, size_arg
from zfslab.errors import LayoutError, UsageError, clip, shown
from zfslab.model.candidates import candidate_layouts
from zfslab.model.capacity import rules_for, whole_disk_capacity
from zfslab.model.footprint import (Compression, DataBlocks, Footprint, data_footprint, floors_to_alloc, has_special,
                                   ratio_estimate, used_coster)
from zfslab.model.footprint_metadata import TreeShape
from zfslab.model.layout_grammar import parse_layout
from zfslab.model.layouts import Layout
from zfslab.model.units import format_bytes, parse_blocksize
from zfslab.report.tables import print_wrapped, times_text, to_json
from zfslab.system.footprint_data import DataReading, read_data
from zfslab.system.footprint_reader import KEPT_HOLE, compressor

EXAMPLE = "zfslab footprint /usr/share/doc --layouts raidz2:6,mirror:2 --compression lz4"
PROGRESS_AFTER_S = 2.0


def add_parser(sub) -> None:
    p = sub.add_parser("footprint", epilog=f"example: {EXAMPLE}",
                       description="Reads the given trees (or a file-size list) and prices every block as OpenZFS "
                                   "writes it: the record size per file, compression with ZFS's own rules (12.5 % "
                                   "minimum saving, zeros as holes, embedded tiny blocks), then raidz/dRAID/mirror "
                                   "parity and padding at the ashift. Large trees can be sampled (--sample).")
    p.add_argument("paths", nargs="+", metavar="PATH",
                   help="directories to read (symlinks are not followed), or one file-size list "
                        "(find DIR -type f -printf '%%s\\n') or size_bytes,count CSV")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--layouts", metavar="L,L,...", help="layouts to price, e.g. raidz2:6,mirror:2,draid2:8d:12c:0s")
    which.add_argument("--disks", metavar="NxSIZE", help="the layouts plan lists for these disks, e.g. 8x12TB")
    p.add_argument("--disk-size", type=size_arg, metavar="SIZE",
                   help="size of each disk, for the 'fits' column with --layouts (e.g. 12TB)")
    p.add_argument("--compression", default="lz4", metavar="C",
                   help="off, lz4 (default), zstd, zstd-N, gzip or gzip-N, as the dataset property")
    p.add_argument("--recordsize", default="128K", metavar="R", help="the dataset's recordsize (default 128K)")
    add_ashift_option(p, "the pool's ashift (default 12)")
    p.add_argument("--zfs-version", default="2.3", metavar="V",
                   help="OpenZFS version for the space rules (default 2.3; 2.2 and older: the 12.5 %% "
                        "limit is not rounded to the allocation unit)")
    p.add_argument("--sample", metavar="SIZE|Ns",
                   help="read at most this much (e.g. 20GB) or for this long (e.g. 60s), records of data in random "
                        "order (holes are counted, never drawn); the answer gets a 95 %% interval")
    p.add_argument("--sparse", choices=("keep", "fill"), default="keep",
                   help="how the data is copied in: keep its holes (default, as cp, rsync -S, zfs send do: a hole "
                        "takes no block) or fill them with zeros (rsync without -S, cp --sparse=never; zeros are "
                        "holes anyway with compression on); holes are found with SEEK_HOLE, never read")
    p.add_argument("--special-small-blocks", type=_small_blocks, default=0, metavar="SIZE",
                   help="the dataset's special_small_blocks: data blocks of at most this size after compression go "
                        "to a special vdev of the layout, as metadata always does (default 0: metadata only)")
    p.add_argument("--seed", type=int_arg("--seed", 0, 2**32 - 1), default=1, help="the sample's seed (default 1)")
    p.add_argument("--json", action="store_true", help="print one JSON object (plan --data-from reads it)")
    p.set_defaults(func=run)


def _small_blocks(text: str) -> int:
    """0, or a power of two from 512 B to 16M (zfs_valid_proplist)."""
    try:
        n = 0 if text.strip() == "0" else parse_blocksize(text)
    except ValueError:
        n = -1
    if n and (not 512 <= n <= 16 << 20 or n & (n - 1)):
        raise argparse.ArgumentTypeError(f"{clip(text)}: give 0 or a power of two from 512 to 16M, e.g. 64K")
    return n


def _sample(text: str | None) -> tuple[int | None, float | None]:
    if text is None:
        return None, None
    m = re.fullmatch(r"\s*([0-9]{1,9}(?:\.[0-9]{1,3})?)\s*(s|min|h)\s*", text, re.ASCII)
    if m:
        seconds = float(m.group(1)) * {"s": 1, "min": 60, "h": 3600}[m.group(2)]
        if seconds > 0:
            return None, seconds
    else:
        try:
            n = size_arg(text)
            if n > 0:
                return n, None
        except (UsageError, ValueError, argparse.ArgumentTypeError):
            pass
    raise UsageError(f"--sample {clip(text)}: give a size (20GB) or a time (60s, 5min) above 0")


def _layouts(args) -> tuple[list[Layout], int | None]:
    if args.disks:
        count, disk_bytes = parse_disk_set(args.disks)
        if count < 1:
            raise UsageError(f"--disks {clip(args.disks)}: give at least one disk, e.g. 8x12TB")
        return candidate_layouts(count), args.disk_size or disk_bytes
    texts = [t for t in (args.layouts or "raidz1:3,raidz2:6,mirror:2").split(",")]
    layouts = []
    for t in texts:
        try:
            layouts.append(parse_layout(t))
        except LayoutError as e:
            raise UsageError(f"--layouts: {e}") from None
    return layouts, args.disk_size


class _Progress:
    """A rich progress bar with ETA on stderr, shown only on a terminal and after a few seconds."""

    def __init__(self) -> None:
        self.start, self.bar, self.task = time.monotonic(), None, None

    def __enter__(self):
        return self

    def update(self, done: int, total: int) -> None:
        if self.bar is None:
            if not sys.stderr.isatty() or time.monotonic() - self.start < PROGRESS_AFTER_S:
                return
            from rich.console import Console
            from rich.progress import (BarColumn, DownloadColumn, Progress, TimeRemainingColumn,
                                       TransferSpeedColumn)
            self.bar = Progress("reading", BarColumn(), DownloadColumn(), TransferSpeedColumn(), TimeRemainingColumn(),
                                console=Console(stderr=True), transient=True)
            self.bar.start()
            self.task = self.bar.add_task("read", total=total)
        self.bar.update(self.task, completed=done, total=total)

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.stop()


def run(args: argparse.Namespace) -> int:
    recordsize = _recordsize(args.recordsize)
    compression = args.compression.strip().lower()
    compressor(compression)  # refuses a bad name before any reading
    sample_bytes, sample_seconds = _sample(args.sample)
    rules = rules_for(args.zfs_version)
    layouts, disk_bytes = _layouts(args)
    if args.special_small_blocks and not any(has_special(lay) for lay in layouts):
        raise UsageError(f"--special-small-blocks: no layout given has a special vdev; add one, e.g. "
                         f"--layouts {shown(str(layouts[0]), 60)}+special=mirror:3")
    with _Progress() as progress:
        reading = read_data(args.paths, recordsize_bytes=recordsize, compression=compression,
                            sample_bytes=sample_bytes, sample_seconds=sample_seconds, seed=args.seed,
                            keep_holes=args.sparse == "keep", progress=progress.update)
    data, notes = reading.blocks, reading.notes
    comp = Compression(on=compression != "off", floor_to_alloc=floors_to_alloc(args.zfs_version))
    rows = []
    for layout in layouts:
        fp = data_footprint(data, layout, args.ashift, comp, args.special_small_blocks)
        usable = whole_disk_capacity(layout, disk_bytes, ashift=args.ashift, rules=rules).usable_bytes \
            if disk_bytes else None
        interval = _interval(reading, layout, args.ashift, comp, args.special_small_blocks)
        # what lowers AVAIL: 2.3.7+ and 2.4.1+ add what the special vdevs hold back (spa_update_dspace)
        charged = fp.total_used_bytes - (fp.special_used_bytes if rules.class_alloc_in_dspace else 0.0)
        rows.append((layout, fp, usable, interval, charged))
    if args.json:
        print(to_json(_record(data, notes, rows, args)))
    else:
        _print(data, notes, rows, args)
    return 0


def _recordsize(text: str) -> int:
    """--recordsize: a power of two from 4K to 16M."""
    try:
        recordsize = parse_blocksize(text)
    except ValueError:
        recordsize = 0
    if not 4096 <= recordsize <= 16 << 20 or recordsize & (recordsize - 1):
        raise UsageError(f"--recordsize {clip(text)}: give a power of two from 4K to 16M, e.g. 128K")
    return recordsize


def _interval(reading: DataReading, layout: Layout, ashift: int, comp: Compression, special_small: int):
    """The 95 % interval of USED (data blocks) when records were sampled."""
    data = reading.blocks
    if data.complete or not reading.sampled_records:
        return None
    records, population = reading.sampled_records, reading.population_records
    cost = used_coster(layout, ashift, comp, special_small)
    cost_off = used_coster(layout, ashift, Compression(False), special_small)
    ys = [0.0 if k[1] == KEPT_HOLE else cost(k) for k in records]
    xs = [cost_off((k[0], k[0])) for k in records]
    total_x = sum(cost_off(k) * n for k, n in data.all_as_is.items())
    return ratio_estimate(ys, xs, total_x, population)


def _record(data: DataBlocks, notes: Mapping[str, object], rows, args) -> dict:
    return {
        "compression": data.compression, "recordsize_bytes": data.recordsize_bytes, "ashift": args.ashift,
        "zfs_version": args.zfs_version, "files": data.files, "directories": data.directories,
        "complete": data.complete, "pointers": data.pointers,
        "read": {k: v for k, v in notes.items() if not k.startswith("_")},
        "special_small_blocks_bytes": args.special_small_blocks,
        "layouts": [_layout_record(layout, fp, usable, iv, charged) for layout, fp, usable, iv, charged in rows],
        "blocks": [[lsize, clen, n] for (lsize, clen), n in sorted(data.blocks.items())],
        "read_as_is": [[lsize, clen, n] for (lsize, clen), n in sorted(data.read_as_is.items())],
        "all_as_is": [[lsize, clen, n] for (lsize, clen), n in sorted(data.all_as_is.items())],
        **({"hole_blocks": [[lsize, clen, n] for (lsize, clen), n in sorted(data.hole_blocks.items())]}
           if data.hole_blocks else {}),
        **({"tree_shape": _shape_record(data.shape)} if data.shape else {}),
    }


def _shape_record(shape: TreeShape) -> dict:
    """What the metadata was priced from: directories (entries, bytes of names, a name too long
    for a microzap), indirect blocks (level, pointers), symlinks."""
    return {"symlinks": shape.symlinks, "long_symlinks": shape.long_symlinks, "other_objects": shape.other_objects,
            "directory_shapes": [[e, b, int(lg), n, c] for (e, b, lg, c), n in sorted(shape.directory_shapes.items())],
            "spill_blocks": [[lsize, c, n] for (lsize, c), n in sorted(shape.spills.items())],
            "indirect_blocks": [[lv, k, n] for (lv, k), n in sorted(shape.indirect.items())]}


def _layout_record(layout: Layout, fp: Footprint, usable, iv, charged: float) -> dict:
    r = {"layout": str(layout), "logical_bytes": fp.logical_bytes, "stored_logical_bytes": fp.stored_logical_bytes,
         "psize_bytes": fp.psize_bytes,
         "alloc_bytes": round(fp.total_alloc_bytes), "used_bytes": round(fp.total_used_bytes),
         "data_used_bytes": round(fp.used_bytes), "metadata_used_bytes_estimate": round(fp.metadata_used_bytes),
         "compression_ratio": round(fp.compression_ratio, 4), "parity_bytes": round(fp.parity_bytes),
         "padding_bytes": round(fp.padding_bytes), "sector_waste_bytes": fp.sector_waste_bytes,
         "compression_saved_bytes": fp.compression_saved_bytes, "holes": fp.holes, "embedded_blocks": fp.embedded,
         "compressed_blocks": fp.compressed, "stored_blocks": fp.stored}
    if fp.metadata_on_special:
        r.update(special_used_bytes=round(fp.special_used_bytes))
    if usable:
        r.update(usable_bytes=usable, fits_times=round(usable / charged, 3) if charged else None,
                 free_after_bytes=usable - round(charged))
    if iv is not None:
        finite = math.isfinite(iv.high)   # not with one record read
        r.update(data_used_low_bytes=round(iv.low) if finite else None,
                 data_used_high_bytes=round(iv.high) if finite else None)
    return r


def _fits(usable: int | None, used: float) -> str:
    if not usable or not used:
        return "-"
    times = usable / used
    return times_text(times)  # one notation for large counts (report/tables.py)


def _size(n: float) -> str:
    return format_bytes(n) if n else "0"


def _print(data: DataBlocks, notes: Mapping[str, object], rows, args) -> None:
    out = console()
    logical = rows[0][1].logical_bytes
    how = "every file read" if data.complete else (
        f"sampled: {notes.get('records_read', 0):,} of {notes.get('data_records', 0):,} records of data read "
        f"(from {notes.get('files_read', 0):,} files), scaled" + (", holes counted" if notes.get("hole_records")
                                                                   else ""))
    if data.compression == "off":
        how = "sizes only (compression off reads no data)"
    elif data.compression.startswith("as measured"):
        how = "zdb's block size histogram: data and metadata as that pool stored them, at each bin's mean size"
    count = f"{data.files:,} files" if data.files else f"{sum(data.blocks.values()):,} blocks"
    print_wrapped(out, f"{count}, {_size(logical)} logical in {data.recordsize_bytes // 1024}K records; "
                       f"compression {data.compression}, ashift {args.ashift};")
    print_wrapped(out, how)
    head = ("layout", "logical", "USED", "raw", "ratio", "fits", "redund.", "padding", "sectors", "compr.")
    table = [(str(layout), _size(fp.logical_bytes), _size(fp.total_used_bytes), _size(fp.raw_bytes),
              f"{fp.compression_ratio:.2f}", _fits(usable, charged), _size(fp.parity_bytes), _size(fp.padding_bytes),
              _size(fp.sector_waste_bytes), _size(fp.compression_saved_bytes) if fp.compression_saved_bytes
              else "0") for layout, fp, usable, _iv, charged in rows]
    # at least a 100-column table's widths, wider where a cell is (a long layout, 239.46 MB of padding):
    # no cell is cut, and the row's width is known before it is printed
    widths = [max(least, *(len(c) for c in column))
              for least, column in zip((18, 9, 9, 9, 5, 7, 9, 8, 8, 9), zip(head, *table))]
    # a narrower terminal loses the breakdown from the right, never a cut cell (--json has it all)
    shown_cols = len(head)
    while shown_cols > 6 and sum(widths[:shown_cols]) + shown_cols - 1 > out.width:
        shown_cols -= 1

    def line(cells) -> str:
        return " ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(cells[:shown_cols], widths)))
    out.print(line(head))
    for cells, (_layout, fp, _usable, iv, _charged) in zip(table, rows):
        out.print(line(cells))
        if iv is not None:
            meta = fp.metadata_used_bytes
            out.print(f"{'':{widths[0]}} USED 95 % interval {_size(iv.low + meta)} .. {_size(iv.high + meta)}"
                      if math.isfinite(iv.high) else f"{'':{widths[0]}} USED interval unknown: one record read; "
                                                     "sample more")
    if shown_cols < len(head):
        print_wrapped(out, f"Left out for width: {', '.join(head[shown_cols:])} (a wider terminal or --json shows them).")
    # issue 33: 'logical' and 'ratio' were not explained, and the saving was written as a negative number
    print_wrapped(out, "logical: the files in ZFS blocks (one under the record size rounded up to 512 B, a larger "
                       "one in whole records), so more than the bytes read; ratio: zfs get compressratio; USED: zfs "
                       "list USED (deflated, as AVAIL is); raw: on all disks; fits: times the data fits in the empty "
                       "pool's USED+AVAIL. In raw bytes: redund. (parity, a mirror's copies), padding (raidz skip "
                       "sectors, dRAID rows), sectors (rounding to the ashift); compr.: what compression saved. "
                       "Metadata is an estimate, included. --json adds zpool ALLOC. docs/footprint.md")
    if notes.get("lz4_code") == "lz4 package":
        print_wrapped(out, "lz4: priced with the lz4 package, about 2 % high on compressible data (OpenZFS's own "
                           "lz4 is taken from libzpool where installed: zfsutils-linux brings it).")
    if rows and rows[0][2] is None:
        print_wrapped(out, "fits: give the disks' size (--disk-size 12TB, or --disks 8x12TB for plan's layouts).")
    _print_reading_notes(out, notes)


def _print_reading_notes(out, notes: Mapping[str, object]) -> None:
    """What the read skipped or met on the way, and how fast it read."""
    skipped = [(notes.get(k, 0), what) for k, what in (
        ("symlinks_skipped", "symlinks not followed"), ("special_files_skipped", "special files skipped"),
        ("directory_loops", "directory loops"), ("unreadable_directories", "directories unreadable"),
        ("unreadable_files", "files unreadable"), ("vanished_files", "files vanished"),
        ("shrunk_files", "files shrank while read"))]
    said = [f"{n:,} {what}" for n, what in skipped if n]
    if said:
        out.print("warnings: " + ", ".join(said))
        if notes.get("warnings"):
            print_wrapped(out, f"  e.g. {shown(notes['warnings'][0], 90)}")
    if notes.get("sparse_files"):
        kept = notes.get("holes") == "kept"
        out.print(f"sparse: {notes['sparse_files']:,} files with holes ({notes['hole_records']:,} records never read), "
                  + ("kept as holes as cp and rsync -S copy them (--sparse fill: as written zeros)" if kept
                     else "priced as written zeros (--sparse fill)"))
    if "bytes_read" in notes and notes.get("read_seconds"):
        out.print(f"read {_size(notes['bytes_read'])} in {notes['read_seconds']:.1f} s "
                  f"({notes['bytes_read'] / notes['read_seconds'] / 1e6:.0f} MB/s)")
