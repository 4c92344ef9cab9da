"""plan --data-from: the user's data (a tree footprint reads, or a saved `footprint --json`) on
every layout of the plan: how many times it fits, and what is free after it (docs/footprint.md).
Kept apart from plan.py so that the plan table and the recommendation stay as they are."""

from __future__ import annotations

import argparse
import os
import re
from typing import TYPE_CHECKING

from rich.text import Text

from zfslab.errors import UsageError, clip

if TYPE_CHECKING:
    from zfslab.model.data_fit import DataFit
    from zfslab.model.footprint import DataBlocks


def add_data_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("your data (docs/footprint.md)")
    g.add_argument("--data-from", metavar="PATH|JSON",
                   help="a directory to read (lz4, every file) or a saved `zfslab footprint --json`: adds how many "
                        "times that data fits and what is free after it")
    g.add_argument("--grow", metavar="PCT", help="with --data-from: recommend only layouts with room for the data "
                                                 "plus this growth, e.g. 50%%")


def _grow(text: str | None) -> float:
    if text is None:
        return 0.0
    m = re.fullmatch(r"\s*([0-9]{1,7}(?:\.[0-9]{1,3})?)\s*%?\s*", text, re.ASCII)
    if not m:
        raise UsageError(f"--grow {clip(text)}: give a percentage, e.g. 50%")
    return float(m.group(1)) / 100


def load(args) -> DataBlocks | None:
    if args.grow is not None and not args.data_from:
        raise UsageError("--grow needs --data-from PATH (the data to make room for)")
    _grow(args.grow)
    if not args.data_from:
        return None
    if os.path.isdir(args.data_from):
        # deliberate lazy loading: the tree's reader (lz4, zstandard), only with --data-from
        from zfslab.system.footprint_data import read_data

        return read_data([args.data_from], compression="lz4").blocks
    from zfslab.commands._saved_footprint import load_saved

    return load_saved(args.data_from)


def fit(rows, data: DataBlocks, args) -> dict[str, DataFit]:
    """Per plan row's layout: the data's USED and the fit (model/data_fit.py), from the options."""
    from zfslab.model.data_fit import data_fits  # deliberate lazy loading: only with --data-from
    return data_fits(rows, data, ashift=args.ashift, zfs_version=args.zfs_version, growth=_grow(args.grow))


def with_room(rows, fits: dict[str, DataFit], args) -> list:
    """The rows the recommendation may choose from: those with room for the data and its growth."""
    room = [r for r in rows if fits[r.layout].room]
    if not room:
        need = min(f.used_bytes for f in fits.values()) * (1 + _grow(args.grow))
        from zfslab.model.units import format_bytes
        raise UsageError(f"no layout of these disks holds your data plus {args.grow or '0%'} growth "
                         f"(at least {format_bytes(need)}); add disks, or larger ones")
    return room


def fields(fits: dict[str, DataFit], layout: str) -> dict:
    f = fits[layout]
    return {"data_used_bytes": round(f.used_bytes), "data_fits_times": round(f.fits_times, 3),
            "free_after_data_bytes": round(f.free_after_bytes), "room_for_data": f.room}


def lines(fits: dict[str, DataFit], shown_rows, data: DataBlocks, args) -> list[Text]:
    from zfslab.model.units import format_bytes
    from zfslab.report.tables import times_text

    name = max([len("layout")] + [len(r.layout) for r in shown_rows])  # a layout's name whole, never cut
    head = f"Your data ({data.files:,} files, compression {data.compression}"
    head += ", exact)" if data.complete else ", sampled)"
    out = [Text(head + (f"; room for it plus {args.grow} growth required:" if args.grow else ":"), style="bold")]
    out.append(Text(f"{'layout':{name}} {'data USED':>11} {'fits':>9} {'free after your data':>21}"))
    for r in shown_rows:
        f = fits[r.layout]
        mark = "" if f.room else "  too small"
        out.append(Text(f"{r.layout:{name}} {format_bytes(f.used_bytes):>11} {times_text(f.fits_times):>9} "
                        f"{format_bytes(f.free_after_bytes):>21}{mark}"))
    return out
