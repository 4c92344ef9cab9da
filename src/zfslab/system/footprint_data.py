"""The user's data as blocks, for `zfslab footprint` and `plan --data-from`: a tree walked and
read (every file, or a sample), or a file-size list, or a pool's `zdb -bb` histogram
(docs/footprint.md). A library user calls read_data() with typed settings; the command layer
only parses its options into them and renders the answer."""

from __future__ import annotations

import os
import random
import re
import stat
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from zfslab.errors import InputError, ParamError, clip, shown
from zfslab.model.footprint import DataBlocks, file_block_sizes, merge
from zfslab.model.footprint_metadata import TreeShape, dense_indirect, indirect_levels, merge_indirect
from zfslab.system.footprint_reader import (KEPT_HOLE, ReadCounts, Sample, Walk, compressor, read_sample, size_blocks,
                                            sparse_ranges, walk)
from zfslab.system.size_inputs import detect_format, parse_csv, parse_sizes, parse_zdb
from zfslab.system.text_files import TextFileError, read_text_file
from zfslab.system.zfs_lz4 import zfs_lz4

MAX_SIZE_LIST_BYTES = 256 << 20
FILES_PER_DIRECTORY = 1000   # for a size list, which names no directory
DEFAULT_RECORDSIZE_BYTES = 128 * 1024


@dataclass(frozen=True, slots=True)
class DataReading:
    """The data's blocks, and how the read went: `notes` holds its counts and warnings as
    footprint --json prints them (its `read` object). With a sample, `sampled_records` are the
    (logical size, compressed length) of each record read, out of `population_records`."""

    blocks: DataBlocks
    notes: Mapping[str, object]
    sampled_records: tuple[tuple[int, int], ...] = ()
    population_records: int = 0


def read_data(paths: Sequence[str], *, recordsize_bytes: int = DEFAULT_RECORDSIZE_BYTES, compression: str = "lz4",
              sample_bytes: int | None = None, sample_seconds: float | None = None, seed: int = 1,
              keep_holes: bool = True, progress: Callable[[int, int], None] | None = None) -> DataReading:
    """The data under `paths` (directories; or one size list or zdb -bb file) as blocks of
    `recordsize_bytes` compressed as `compression` would. sample_bytes or sample_seconds: read at
    most that much, records at random (seeded); keep_holes: a copy keeps the files' holes (cp,
    rsync -S) rather than writing zeros. progress(done_bytes, total_bytes) while reading."""
    compression = compression.strip().lower()
    if not 4096 <= recordsize_bytes <= 16 << 20 or recordsize_bytes & (recordsize_bytes - 1):
        raise ParamError("recordsize", str(recordsize_bytes), "give a power of two from 4K to 16M, e.g. 128K")
    comp = compressor(compression)   # refuses a bad name before any reading
    if (sample_bytes is not None and sample_bytes <= 0) or (sample_seconds is not None and sample_seconds <= 0):
        raise ParamError("sample", clip(sample_bytes or sample_seconds), "give a size or a time above 0")
    if len(paths) == 1 and _is_file(paths[0]):
        return DataReading(_size_list(paths[0], recordsize_bytes, compression), {})
    w = walk(list(paths))
    notes: dict = dict(directories=w.directories, symlinks_skipped=w.symlinks, special_files_skipped=w.special,
                       directory_loops=w.loops, unreadable_directories=w.unreadable_dirs, warnings=list(w.examples))
    if not w.files:
        raise InputError(f"{shown(' '.join(paths), 200)}: no regular file found"
                         + (f" ({w.unreadable_dirs:,} directories unreadable)" if w.unreadable_dirs else "")
                         + "; give a tree that holds files")
    seek_counts = ReadCounts()
    extents = sparse_ranges(w, recordsize_bytes, seek_counts)   # which records hold data: lseek only
    walked = _walked_blocks(w, extents, recordsize_bytes, keep_holes, dense=not keep_holes and comp is None)
    if extents:
        notes.update(sparse_files=len(extents), hole_records=walked.hole_records,
                     holes="kept" if keep_holes else "filled")
    if comp is None:
        return DataReading(DataBlocks(walked.written, walked.all_as_is, walked.all_as_is, "off", recordsize_bytes,
                                      len(w.files), w.directories, walked.pointers, True, walked.shape), notes)
    sample = read_sample(w, recordsize_bytes, comp, max_bytes=sample_bytes, max_seconds=sample_seconds,
                         rng=random.Random(seed), progress=progress, extents=extents, keep_holes=keep_holes)
    _note_read(notes, sample, paths, seek_counts)
    data = _read_blocks(w, walked, sample, notes, recordsize_bytes, compression)
    if compression in ("lz4", "on"):   # which lz4 priced it: the module's own, or the package (~2 % high)
        notes["lz4_code"] = "openzfs (libzpool)" if zfs_lz4() is not None else "lz4 package"
    if sample.records and not data.complete:
        return DataReading(data, notes, tuple(sample.records), sample.population_records)
    return DataReading(data, notes)


def _note_read(notes: dict, sample: Sample, paths: Sequence[str], seek_counts: ReadCounts) -> None:
    """What the read met, into `notes`; InputError when not one file could be read."""
    c = sample.counts
    notes.update(files_read=c.read_files, bytes_read=c.read_bytes, read_seconds=round(sample.seconds, 3),
                 unreadable_files=c.unreadable, vanished_files=c.vanished, shrunk_files=c.shrunk,
                 warnings=notes["warnings"] + seek_counts.examples + c.examples)
    if not sample.read and not sample.records and (c.unreadable or c.vanished):
        raise InputError(f"{shown(' '.join(paths), 200)}: no file could be read ({c.unreadable:,} unreadable, "
                         f"{c.vanished:,} vanished); run as a user who can read them")


def _read_blocks(w: Walk, walked: _Walked, sample: Sample, notes: dict, recordsize: int,
                 compression: str) -> DataBlocks:
    """The blocks the read found: sampled records (to be scaled), or every file read whole."""
    blocks: dict = {}
    read_as_is: dict = {}
    if sample.sampled:
        for lsize, clen in sample.records:
            if clen != KEPT_HOLE:
                blocks[(lsize, clen)] = blocks.get((lsize, clen), 0) + 1
            read_as_is[(lsize, lsize)] = read_as_is.get((lsize, lsize), 0) + 1
        notes.update(records_read=len(sample.records), records_total=sum(walked.all_as_is.values()),
                     data_records=sample.population_records)
        # the records in holes are counted, not sampled: the sample scales to the data records only,
        # and the zeros a copy writes into the holes (--sparse fill) are added as counted
        if sample.complete:
            return DataBlocks(merge(blocks, walked.hole_blocks), read_as_is, read_as_is, compression, recordsize,
                              len(w.files), w.directories, walked.pointers, True, walked.shape)
        return DataBlocks(blocks, read_as_is, walked.data_as_is, compression, recordsize, len(w.files), w.directories,
                          walked.pointers, False, walked.shape, dict(walked.hole_blocks))
    for i, b in sample.read:
        merge(blocks, b)
        merge(read_as_is, size_blocks(w.files[i][3], recordsize))
    return DataBlocks(blocks, read_as_is, read_as_is, compression, recordsize, len(sample.read), w.directories,
                      walked.pointers, True, walked.shape)


@dataclass(frozen=True, slots=True)
class _Walked:
    """What the walk gives without reading a byte: every file's blocks as is, the records that
    hold data as is (a sample's population), the blocks a copy writes with compression off (less
    the holes it keeps), the zero blocks a copy writes into holes (--sparse fill), the tree's shape
    for the metadata, the block pointers and the records in holes."""

    all_as_is: dict
    data_as_is: dict
    written: dict
    hole_blocks: dict
    shape: TreeShape
    pointers: int
    hole_records: int


def _walked_blocks(w: Walk, extents: dict, recordsize: int, keep_holes: bool, dense: bool) -> _Walked:
    """From the walk and the files' data records, counted by runs (never a record at a time: an
    8 TiB file has 2^31 records of 4K). `dense`: holes filled with zeros and stored (compression
    off), so the indirect blocks cover every record."""
    all_as_is: dict = {}
    data_as_is: dict = {}
    written: dict = {}        # the blocks with compression off: all_as_is less the holes a copy keeps
    hole_blocks: dict = {}
    indirect: dict = {}
    by_blocks: dict[int, int] = {}
    pointers = hole_records = 0
    for i, f in enumerate(w.files):
        n, lsize = file_block_sizes(f[3], recordsize)
        as_is = size_blocks(f[3], recordsize)
        merge(all_as_is, as_is)
        pointers += n if n > 1 else 0
        e = extents.get(i)
        if e is None:
            merge(written, as_is)
            merge(data_as_is, as_is)
            by_blocks[n] = by_blocks.get(n, 0) + 1
            continue
        data_records = e.count
        hole_records += n - data_records
        if data_records:
            data_as_is[(lsize, lsize)] = data_as_is.get((lsize, lsize), 0) + data_records
        if n > data_records and not keep_holes:
            hole_blocks[(lsize, 0)] = hole_blocks.get((lsize, 0), 0) + n - data_records
        kept = data_records if keep_holes else n
        if kept:
            written[(lsize, lsize)] = written.get((lsize, lsize), 0) + kept
        # indirect blocks over the records that are not holes (zeros are holes with compression on)
        r = e.ranges
        merge_indirect(indirect, dense_indirect(n) if dense else indirect_levels(r, r[-1][1] - 1 if r else 0))
    for n, count in by_blocks.items():
        merge_indirect(indirect, dense_indirect(n), count)
    shape = TreeShape(len(w.files), w.directories, w.symlinks, w.special, w.long_symlinks,
                      dict(w.directory_shapes), indirect, dict(w.spills))
    return _Walked(all_as_is, data_as_is, written, hole_blocks, shape, pointers, hole_records)


def _is_file(path: str) -> bool:
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def _not_a_size_list(path: str) -> InputError:
    return InputError(f"{shown(path, 200)}: a file that is not a size list (find DIR -type f -printf '%s\\n') nor "
                      "zdb -bb output; to price its data, give the directory that holds it")


def _size_list(path: str, recordsize: int, compression: str) -> DataBlocks:
    try:
        text = read_text_file(path, "size list", max_bytes=MAX_SIZE_LIST_BYTES, kind="size list")
    except TextFileError as e:
        if e.binary:   # a file of data, not a list
            raise _not_a_size_list(path) from None
        raise
    name = f"size list {shown(path, 200)}"
    if detect_format(text) == "zdb":
        return _zdb_blocks(parse_zdb(text, f"zdb output {shown(path, 200)}"), recordsize)
    first = next((line for line in text.splitlines() if line.strip()), "")
    if not re.match(r"\s*\d", first):
        raise _not_a_size_list(path)
    # parsed first: a file that is no size list (a PATH that is one file of data) says so
    sizes = parse_csv(text, name) if "," in first else parse_sizes(text, name)
    if compression != "off":
        raise InputError(f"{shown(path, 200)} is a size list: it says nothing of how the data compresses; give "
                         "`compression` off, or the directory itself to read it")
    blocks: dict = {}
    pointers = files = 0
    for size, count in sizes.items():
        n, lsize = file_block_sizes(size, recordsize)
        if n:
            blocks[(lsize, lsize)] = blocks.get((lsize, lsize), 0) + n * count
        pointers += n * count if n > 1 else 0
        files += count
    return DataBlocks(blocks, blocks, blocks, "off", recordsize, files, files // FILES_PER_DIRECTORY + 1, pointers,
                      True)


def _zdb_blocks(stats, recordsize: int) -> DataBlocks:
    """A pool's blocks as zdb -bb measured them (data and metadata, already compressed): each
    histogram bin's blocks at the bin's mean psize, rounded up to 512 B, stored as they are."""
    blocks: dict = {}
    for _, count, psize in stats.psize_bins:
        if count:
            size = -(-(psize // count) // 512) * 512
            blocks[(size, size)] = blocks.get((size, size), 0) + count
    if not blocks:
        raise InputError("zdb output: its Block Size Histogram counts no block; give zdb -bb of a pool that holds data")
    return DataBlocks(blocks, blocks, blocks, "as measured by zdb", recordsize, 0, 0, 0, True)
