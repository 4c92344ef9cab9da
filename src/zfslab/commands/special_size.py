"""`zfslab special-size`: how big a special vdev must be for a data set, from its file sizes or
from `zdb -bb` of a pool that holds it."""

from __future__ import annotations

import argparse
import re

import itertools

from zfslab.commands._common import add_ashift_option, console, float_arg, int_arg
from zfslab.errors import ParamError, UsageError, clip, shown
from zfslab.model.special_size import (DEFAULT_THRESHOLDS, RESERVE_PCT, SizeTally, SpecialEstimate,
                                      SpecialSettings, check_threshold, from_tally, from_zdb, thresholds_with)
from zfslab.model.units import format_bytes, parse_blocksize
from zfslab.report.tables import print_wrapped, to_json
from zfslab.system.size_inputs import FORMATS, detect_format, parse_zdb, size_chunks
from zfslab.system.text_files import read_text_chunks

EXAMPLE = "zfslab special-size tests/data/special-sizes.txt --special-small-blocks 16K"
MAX_INPUT_BYTES = 256 << 20  # a find listing of about 25 million files, read a chunk at a time
MAX_ZDB_BYTES = 16 << 20     # zdb -bbbb output is some 100 KiB; it is parsed whole
FLAGS = {"special_small_blocks": "--special-small-blocks", "recordsize": "--recordsize", "ashift": "--ashift",
         "compression_ratio": "--compression", "growth_fraction": "--growth", "mirror_width": "--special-layout",
         "files_per_directory": "--files-per-dir"}


def add_parser(sub) -> None:
    p = sub.add_parser("special-size", epilog=f"example: {EXAMPLE}",
                       description="The special vdev a data set needs: its metadata and the file blocks at or "
                                   "under special_small_blocks, as OpenZFS 2.1-2.3 allocates them, with the 25 % "
                                   "it keeps for metadata; a table for several thresholds to choose from.")
    p.add_argument("input", help="file sizes (find DIR -type f -printf '%%s\\n' > sizes.txt), a CSV of "
                                 "size_bytes,count, or the output of zdb -bb POOL / zdb -bbb POOL")
    p.add_argument("--format", choices=FORMATS, default="auto", help="what INPUT is (default auto: from its text)")
    p.add_argument("--special-small-blocks", default="0", metavar="T",
                   help="the dataset's special_small_blocks: 0 (metadata only, default) or a power of two "
                        "from 512 to 16M, e.g. 16K")
    p.add_argument("--recordsize", default="128K", metavar="R", help="the dataset's recordsize (default 128K)")
    add_ashift_option(p, "ashift of the special vdev (and of the pool; default 12)")
    p.add_argument("--special-layout", choices=("mirror:2", "mirror:3"), default="mirror:2",
                   help="the special vdev: raw disk space is its size times the mirror's width (default mirror:2)")
    p.add_argument("--compression", default="off", metavar="C",
                   help="off (default), or lz4-ratio R: file data shrinks R times (the zdb input is measured)")
    p.add_argument("--growth", type=float_arg("--growth", 0, 10000), default=0.0, metavar="PCT",
                   help="room to grow on top of today's need, in %% (default 0)")
    p.add_argument("--files-per-dir", type=int_arg("--files-per-dir", 1, 10**9), default=1000, metavar="N",
                   help="files per directory, for the directory estimate of a size list (default 1000)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def _compression(text: str) -> float:
    if text.strip() == "off":
        return 1.0
    m = re.fullmatch(r"\s*lz4-ratio\s*[ =:]?\s*([0-9]{1,3}(?:\.[0-9]{1,6})?)\s*", text, re.ASCII)
    if not m or not 1.0 <= float(m.group(1)) <= 100.0:
        raise UsageError(f"--compression {clip(text)}: write off, or lz4-ratio R with R from 1 to 100 (e.g. lz4-ratio 1.5)")
    return float(m.group(1))


def _threshold(text: str) -> int:
    if text.strip() == "0":
        return 0
    try:
        return check_threshold(parse_blocksize(text))
    except (ParamError, UsageError, ValueError):
        raise UsageError(f"--special-small-blocks {clip(text)}: give 0, or a power of two from 512 to 16M, "
                         "e.g. 16K") from None


def run(args: argparse.Namespace) -> int:
    threshold = _threshold(args.special_small_blocks)
    try:
        recordsize = parse_blocksize(args.recordsize)
    except ValueError:
        raise UsageError(f"--recordsize {clip(args.recordsize)}: give a power of two from 512 to 16M, e.g. 128K") from None
    try:
        settings = SpecialSettings(recordsize_bytes=recordsize, ashift=args.ashift,
                                   mirror_width=int(args.special_layout.split(":")[1]),
                                   compression_ratio=_compression(args.compression),
                                   growth_fraction=args.growth / 100, files_per_directory=args.files_per_dir)
    except ParamError as e:
        raise UsageError(e.worded(FLAGS)) from None
    estimate = _estimate(args, settings, threshold)
    record = estimate_record(estimate, args.special_layout)
    if args.json:
        print(to_json(record))
        return 0
    _print(estimate, record, args)
    return 0


def _estimate(args: argparse.Namespace, settings: SpecialSettings, threshold: int) -> SpecialEstimate:
    """Streams a size list or CSV into a SizeTally (memory: one chunk); reads zdb output whole."""
    name = f"input {shown(args.input, 200)}"
    chunks = read_text_chunks(args.input, "input", max_bytes=MAX_INPUT_BYTES, kind="text")
    first = next(chunks, "")
    fmt = detect_format(first) if args.format == "auto" else args.format
    rest = itertools.chain([first], chunks)
    if fmt == "zdb":
        text, read = [], 0
        for chunk in rest:
            read += len(chunk)
            if read > MAX_ZDB_BYTES:
                raise UsageError(f"{name}: zdb output over {MAX_ZDB_BYTES >> 20} MiB; give the output of zdb -bb POOL "
                                 "(or -bbbb) alone")
            text.append(chunk)
        return from_zdb(parse_zdb("".join(text), name), settings, small_blocks_bytes=threshold,
                        thresholds=DEFAULT_THRESHOLDS)
    tally = SizeTally(settings, thresholds_with(threshold, DEFAULT_THRESHOLDS))
    for sizes, counts in size_chunks(rest, name, fmt):
        tally.add(sizes, counts)
    return from_tally(tally, small_blocks_bytes=threshold)


def estimate_record(e: SpecialEstimate, layout: str) -> dict:
    s = e.settings

    def row(r):
        return {"special_small_blocks": r.small_blocks_bytes, "small_blocks": r.small_block_count,
                "small_blocks_bytes": r.small_asize_bytes, "metadata_bytes": r.metadata_asize_bytes,
                "needed_bytes": r.needed_bytes, "recommended_bytes": r.recommended_bytes, "raw_bytes": r.raw_bytes,
                "exact": r.exact_up_to}
    return {
        "source": e.source, "files": e.file_count, "data_bytes": e.data_bytes,
        "recordsize_bytes": s.recordsize_bytes, "ashift": s.ashift, "special_layout": layout,
        "compression_ratio": s.compression_ratio, "growth_fraction": s.growth_fraction,
        "metadata": [{"part": p.name, "bytes": p.asize_bytes, "measured": p.measured} for p in e.metadata],
        "metadata_reserve_pct": RESERVE_PCT,
        "chosen": row(e.chosen), "thresholds": [row(r) for r in e.rows],
    }


def _size(n: int) -> str:
    return format_bytes(n) if n else "0"


def _threshold_text(t: int) -> str:
    return "0" if t == 0 else (f"{t // 1024}K" if t >= 1024 else str(t))


def _print(e: SpecialEstimate, record: dict, args: argparse.Namespace) -> None:
    out = console()
    s = e.settings
    comp = "compression off" if s.compression_ratio == 1.0 else f"lz4 at {s.compression_ratio:g}x"
    if e.source == "files":
        print_wrapped(out, f"{e.file_count:,} files, {format_bytes(e.data_bytes)} of data; recordsize "
                           f"{s.recordsize_bytes // 1024}K, {comp}, ashift {s.ashift}, special {args.special_layout}")
    else:
        print_wrapped(out, f"zdb block statistics: {format_bytes(e.data_bytes)} logical; ashift {s.ashift}, "
                           f"special {args.special_layout}")
    print_wrapped(out, ("metadata, measured: " if all(p.measured for p in e.metadata) else "metadata, estimated: ")
                  + ", ".join(f"{p.name} {_size(p.asize_bytes)}" for p in e.metadata))
    head = ("threshold", "small blocks", "bytes", "metadata", "needed", "special SIZE", "raw")
    table = [(_threshold_text(r.small_blocks_bytes), f"{r.small_block_count:,}",
              _size(r.small_asize_bytes) + ("" if r.exact_up_to else "+"), _size(r.metadata_asize_bytes),
              _size(r.needed_bytes), _size(r.recommended_bytes), _size(r.raw_bytes),
              "*" if r is e.chosen or r.small_blocks_bytes == e.chosen.small_blocks_bytes else "")
             for r in e.rows]
    # each column as wide as its widest cell: 7 columns of sizes fit 80 columns on one line
    widths = [max(len(h), *(len(row[i]) for row in table)) for i, h in enumerate(head)]
    out.print("  ".join(h.rjust(w) for h, w in zip(head, widths)), markup=False, soft_wrap=True)
    for row in table:
        out.print(("  ".join(c.rjust(w) for c, w in zip(row, widths)) + f" {row[-1]}").rstrip(), markup=False,
                  soft_wrap=True)
    c = e.chosen
    print_wrapped(out, f"special_small_blocks={_threshold_text(c.small_blocks_bytes)} (*): a special vdev of at least "
                       f"{format_bytes(c.recommended_bytes)} (zpool list SIZE), {format_bytes(c.raw_bytes)} of raw "
                       f"disk as {args.special_layout}. threshold 0: metadata only.")
    print_wrapped(out, f"needed: metadata (every copy) + each small block rounded to {s.sector_bytes} B.")
    print_wrapped(out, f"special SIZE: needed / 0.75 when small blocks go there (OpenZFS stops placing them at "
                       f"{100 - RESERVE_PCT}\u00a0% allocated), needed for metadata only; x (1 + growth "
                       f"{args.growth:g}\u00a0%). docs/capacity.md explains.")
    if e.source == "files":
        print_wrapped(out, "Metadata is an estimate (dnodes, indirect blocks, directories, MOS); small blocks "
                           "are exact.")
    else:
        print_wrapped(out, "Metadata is measured (zdb ASIZE; raidz parity makes it high); small blocks from "
                           "zdb's histograms.")
        if not all(r.exact_up_to for r in e.rows):
            print_wrapped(out, "+: a histogram bin straddles the threshold and is counted whole; zdb -bbbb is exact.")
