"""Walks the user's trees and reads their files record by record, for `zfslab footprint`.

Safety (docs/footprint.md#reading): symlinks are never followed (a walk uses lstat and
O_NOFOLLOW); sockets, FIFOs and devices are counted and never opened; a file is opened
O_NONBLOCK (a FIFO swapped in after the walk cannot block) and O_NOATIME where the kernel
permits it (it refuses for files of other users: then plainly); nothing is written. A
directory met twice (a bind mount loop) is walked once. Unreadable, vanished and shrinking
files are counted warnings."""

from __future__ import annotations

import bisect
import errno
import os
import random
import stat
import time
import zlib
from array import array
from dataclasses import dataclass, field
from typing import Callable

from zfslab.errors import InputError, ParamError, clip, shown
from zfslab.model.footprint import clen_key, file_block_sizes
from zfslab.model.footprint_metadata import (MZAP_ENT_LEN, MZAP_MAX_BLKSZ, MZAP_NAME_LEN, SYMLINK_IN_BONUS_BYTES,
                                             DirShape, microzap_block, spill_block)
from zfslab.system.zfs_lz4 import zfs_lz4

LZ4_HEADER_BYTES = 4    # lz4_compress_zfs: the compressed length, big-endian, ahead of the data
ZSTD_HEADER_BYTES = 8   # zfs_zstd_compress: c_len and the version+level word
ZSTD_DEFAULT_LEVEL = 3  # ZIO_ZSTD_LEVEL_DEFAULT
GZIP_DEFAULT_LEVEL = 6


def compressor(name: str) -> Callable[[bytes], int] | None:
    """The compressed length ZFS would store for one record, or None for compression=off.
    lz4: OpenZFS's own code from libzpool where present, else the `lz4` package's block format
    with lz4_zfs.c's header (about 2 % longer than the module's); zstd: the `zstandard` package in the
    magicless frame without checksum or content size, as zfs_zstd.c; gzip-N: zlib's stream."""
    text = name.strip().lower()
    if text == "off":
        return None
    if text in ("lz4", "on"):
        own = zfs_lz4()   # OpenZFS's own lz4 where libzpool has it (system/zfs_lz4.py)
        if own is not None:
            return own
        # deliberate lazy loading: the lz4 package, only when footprint prices lz4 without libzpool
        import lz4.block

        return lambda data: LZ4_HEADER_BYTES + len(lz4.block.compress(data, mode="default", store_size=False))
    base, _, level_text = text.partition("-")
    # ASCII digits, at most two: str.isdigit() takes '²' and 5,000 digits, which int() refuses
    level_ok = not level_text or (len(level_text) <= 2 and level_text.isascii() and level_text.isdigit())
    if base == "zstd" and level_ok and (not level_text or 1 <= int(level_text) <= 19):
        # deliberate lazy loading: zstandard, only when footprint prices zstd
        import zstandard

        level = int(level_text or ZSTD_DEFAULT_LEVEL)
        contexts: dict[int, object] = {}

        def zstd_len(data: bytes) -> int:
            # ZSTD_compress2 knows the record's size and sizes its tables to it: one context per size
            if len(data) not in contexts:
                params = zstandard.ZstdCompressionParameters.from_level(
                    level, source_size=len(data), format=zstandard.FORMAT_ZSTD1_MAGICLESS,
                    write_checksum=0, write_content_size=0, write_dict_id=0)
                contexts[len(data)] = zstandard.ZstdCompressor(compression_params=params)
            return ZSTD_HEADER_BYTES + len(contexts[len(data)].compress(data))
        return zstd_len
    if base == "gzip" and level_ok and (not level_text or 1 <= int(level_text) <= 9):
        level = int(level_text or GZIP_DEFAULT_LEVEL)
        return lambda data: len(zlib.compress(data, level))
    raise ParamError("compression", clip(name), "give off, lz4, zstd, zstd-N (1-19), gzip or gzip-N (1-9)")


@dataclass
class Walk:
    """Regular files found: (path, device, inode, size) and what was left out."""

    files: list[tuple[str, int, int, int]] = field(default_factory=list)
    directories: int = 0
    symlinks: int = 0
    long_symlinks: int = 0    # target longer than the dnode's bonus holds: a spill block each
    spills: dict[tuple[int, int], int] = field(default_factory=dict)      # (lsize, lz4 length): count
    directory_shapes: dict[DirShape, int] = field(default_factory=dict)   # (entries, name bytes, long name, lz4)
    maybe_sparse: set[int] = field(default_factory=set)   # indices into files: fewer blocks than bytes
    special: int = 0          # sockets, FIFOs, devices
    loops: int = 0            # directories met a second time
    unreadable_dirs: int = 0
    examples: list[str] = field(default_factory=list)

    def warn(self, text: str) -> None:
        if len(self.examples) < 5:
            self.examples.append(text)


# DT_* of the ZPL's directory entries (zfs_dir.c ZFS_DIRENT_MAKE, IFTODT)
_DT_DIR, _DT_REG, _DT_LNK = 4, 8, 10


def walk(paths: list[str]) -> Walk:
    """Every regular file under the trees, without following a symlink. Metadata is always lz4
    in ZFS, so each directory's microzap and each long symlink's spill block is built as ZFS would
    write it and given to lz4 here (model/footprint_metadata.py)."""
    w = Walk()
    meta_lz4 = compressor("lz4")
    seen: set[tuple[int, int]] = set()
    for root in paths:
        try:
            st = os.lstat(root)
        except FileNotFoundError:
            raise InputError(f"{shown(root, 200)}: no such file or directory; give a directory to read") from None
        except OSError as e:
            raise InputError(f"{shown(root, 200)}: cannot be read ({e.strerror})") from None
        if stat.S_ISLNK(st.st_mode):
            raise InputError(f"{shown(root, 200)}: a symlink, which footprint does not follow; give the directory it "
                             "points to")
        if not stat.S_ISDIR(st.st_mode):
            raise InputError(f"{shown(root, 200)}: {_kind(st.st_mode)}, not a directory; give a directory (or one size "
                             "list file, find DIR -type f -printf '%s\\n')")
        stack = [root]
        while stack:
            d = stack.pop()
            try:
                dst = os.lstat(d)
                if (dst.st_dev, dst.st_ino) in seen:
                    w.loops += 1
                    w.warn(f"{d}: a directory already walked (a loop), walked once")
                    continue
                seen.add((dst.st_dev, dst.st_ino))
                entries = list(os.scandir(d))
            except OSError as e:
                w.unreadable_dirs += 1
                w.warn(f"{d}: {e.strerror}")
                continue
            w.directories += 1
            _add_directory(w, entries, meta_lz4)
            for e in entries:
                try:
                    est = e.stat(follow_symlinks=False)
                except OSError:
                    continue  # vanished since the listing
                if stat.S_ISLNK(est.st_mode):
                    w.symlinks += 1
                    if est.st_size > SYMLINK_IN_BONUS_BYTES:   # lstat's size: the target's length
                        w.long_symlinks += 1
                        _add_spill(w, e.path, meta_lz4)
                elif stat.S_ISDIR(est.st_mode):
                    stack.append(e.path)
                elif stat.S_ISREG(est.st_mode):
                    if est.st_blocks * 512 < est.st_size:   # holes, or compressed by its own file system
                        w.maybe_sparse.add(len(w.files))
                    w.files.append((e.path, est.st_dev, est.st_ino, est.st_size))
                else:
                    w.special += 1
    return w


def _add_directory(w: Walk, entries: list[os.DirEntry], lz4) -> None:
    """The directory's shape; a microzap's lz4 length from its bytes (its names, in listing order)."""
    names = [os.fsencode(e.name) for e in entries]
    long_name = any(len(n) >= MZAP_NAME_LEN for n in names)
    clen = 0
    if not long_name and (len(names) + 1) * MZAP_ENT_LEN <= MZAP_MAX_BLKSZ:
        kinds = [_DT_LNK if e.is_symlink() else _DT_DIR if e.is_dir(follow_symlinks=False) else _DT_REG
                 for e in entries]
        first_object = w.directories + w.symlinks + len(w.files) + w.special + 8   # the ZPL's own 8 first
        clen = lz4(microzap_block(names, kinds, first_object))
    shape = (len(names), sum(map(len, names)), long_name, clen)
    w.directory_shapes[shape] = w.directory_shapes.get(shape, 0) + 1


def _add_spill(w: Walk, path: str, lz4) -> None:
    try:
        block = spill_block(os.readlink(os.fsencode(path)))
    except OSError:
        block = b"\xff" * 512     # vanished or unreadable: priced as a spill that does not compress
        key = (len(block), len(block))
    else:
        key = (len(block), lz4(block))
    w.spills[key] = w.spills.get(key, 0) + 1


def _kind(mode: int) -> str:
    if stat.S_ISREG(mode):
        return "a file"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a directory"


def size_blocks(size: int, recordsize: int) -> dict[tuple[int, int], int]:
    """A file's blocks when its data is not read: each stored as is."""
    n, lsize = file_block_sizes(size, recordsize)
    return {(lsize, lsize): n} if n else {}


@dataclass
class ReadCounts:
    read_files: int = 0
    read_bytes: int = 0
    unreadable: int = 0
    vanished: int = 0
    shrunk: int = 0
    examples: list[str] = field(default_factory=list)

    def warn(self, text: str) -> None:
        if len(self.examples) < 5:
            self.examples.append(text)


_NOATIME = getattr(os, "O_NOATIME", 0)


def _open(path: str) -> int:
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        return os.open(path, flags | _NOATIME)
    except PermissionError:
        if not _NOATIME:
            raise
        return os.open(path, flags)  # O_NOATIME is refused on others' files (EPERM): plain read


def _open_walked(path: str, dev: int, ino: int, counts: ReadCounts) -> int | None:
    """The file the walk saw, opened (the caller closes it), or None, counted, when it vanished,
    was replaced by another file since, or cannot be opened."""
    try:
        fd = _open(path)
    except FileNotFoundError:
        counts.vanished += 1
        counts.warn(f"{path}: vanished")
        return None
    except OSError as e:
        counts.unreadable += 1
        counts.warn(f"{path}: {e.strerror}")
        return None
    try:
        st = os.fstat(fd)
    except OSError as e:
        os.close(fd)
        counts.unreadable += 1
        counts.warn(f"{path}: {e.strerror}")
        return None
    if not stat.S_ISREG(st.st_mode) or (st.st_dev, st.st_ino) != (dev, ino):
        os.close(fd)
        counts.vanished += 1
        counts.warn(f"{path}: replaced since the walk")
        return None
    return fd


KEPT_HOLE = -1          # a sampled record in a hole that the copy keeps: no block at all
MAX_EXTENTS = 1 << 16   # SEEK_DATA/SEEK_HOLE pairs asked of one file; the rest is checked as read
Ranges = list[tuple[int, int]]


@dataclass(frozen=True, slots=True)
class DataRecords:
    """Which records of a sparse file hold data, as SEEK_DATA/SEEK_HOLE said: the sorted, disjoint
    [a, b) of `ranges`. A record that holds one byte of data is data (ZFS writes the whole record);
    the others lie wholly in holes. Records from `unchecked_from` on were not asked (a file of more
    than MAX_EXTENTS extents): they count as data until read, and each is asked when read."""

    ranges: Ranges
    unchecked_from: int

    @property
    def count(self) -> int:
        return sum(b - a for a, b in self.ranges)


def record_ranges(fd: int, size: int, recordsize: int) -> DataRecords | None:
    """The records of an open file that hold data, from SEEK_DATA/SEEK_HOLE, no byte read. Each
    pair of calls finds at least one more record of data (the next SEEK_DATA starts at the record
    after the last one found), so the calls are at most twice the records read later, and at most
    MAX_EXTENTS pairs. None when the file system cannot say (then every record is data)."""
    n, _ = file_block_sizes(size, recordsize)
    out: Ranges = []
    pos = 0
    for _ in range(MAX_EXTENTS):
        if pos >= size:
            return DataRecords(out, n)
        start = _seek(fd, pos, os.SEEK_DATA)
        if start is None or start >= size:
            return DataRecords(out, n)      # no data past pos
        if start < 0:
            return None
        end = _seek(fd, start, os.SEEK_HOLE)
        if end is None or end < 0:
            return None
        a, b = start // recordsize, min(n, -(-min(end, size) // recordsize))
        if out and out[-1][1] >= a:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
        pos = b * recordsize
    a = pos // recordsize                 # extents left unasked: data until read
    if a < n:
        if out and out[-1][1] >= a:
            out[-1] = (out[-1][0], n)
        else:
            out.append((a, n))
    return DataRecords(out, a)


def _seek(fd: int, pos: int, whence: int) -> int | None:
    """lseek's answer; None for ENXIO (no data past pos), -1 when the file system cannot say."""
    try:
        return os.lseek(fd, pos, whence)
    except OSError as e:
        return None if e.errno == errno.ENXIO else -1


def next_data_record(fd: int, index: int, recordsize: int) -> int | None:
    """The first record from `index` on that holds data (SEEK_DATA), None when none does; `index`
    itself when the file system cannot say."""
    start = _seek(fd, index * recordsize, os.SEEK_DATA)
    if start is None:
        return None
    return index if start < 0 else start // recordsize


def sparse_ranges(w: Walk, recordsize: int, counts: ReadCounts) -> dict[int, DataRecords]:
    """The data records of the files that may have holes (fewer blocks than bytes), by index into
    w.files: lseek only, no data read. A file without holes is left out."""
    out: dict[int, DataRecords] = {}
    for i in sorted(w.maybe_sparse):
        path, dev, ino, size = w.files[i]
        fd = _open_walked(path, dev, ino, counts)
        if fd is None:
            continue
        try:
            extents = record_ranges(fd, size, recordsize)
        finally:
            os.close(fd)
        n, _ = file_block_sizes(size, recordsize)
        if extents is not None and extents.ranges != [(0, n)]:
            out[i] = extents
    return out


def pread_data(fd: int, want: int, offset: int) -> bytes:
    """pread of a sparse file that reads only its data extents and gives the holes as zeros: a
    record that holds 4K of data reads 4K, not the record (16M at most). Shorter than `want` when
    the file ends sooner (it shrank since the walk)."""
    end = min(offset + want, max(offset, os.fstat(fd).st_size))
    first = _seek(fd, offset, os.SEEK_DATA)
    if first is not None and first <= offset:   # data from the start: to its end?
        hole = _seek(fd, offset, os.SEEK_HOLE)
        if first < 0 or hole is None or hole < 0 or hole >= end:
            return os.pread(fd, end - offset, offset)    # all data (the usual record), or it cannot say
    buf = bytearray(end - offset)
    pos = offset
    while pos < end:
        start = _seek(fd, pos, os.SEEK_DATA)
        if start is None or start >= end:
            break
        start = max(start, pos)
        stop = _seek(fd, start, os.SEEK_HOLE)
        stop = end if stop is None or stop < 0 else min(stop, end)
        chunk = os.pread(fd, stop - start, start)
        buf[start - offset:start - offset + len(chunk)] = chunk
        if len(chunk) < stop - start:
            return bytes(buf[:start - offset + len(chunk)])   # shrank while read
        pos = stop
    return bytes(buf)


def _records_to_read(fd: int, n: int, recordsize: int, extents: DataRecords | None):
    """The indices of the records that hold data, in order; past extents.unchecked_from each is
    found by SEEK_DATA as the read goes, so no hole is read there either."""
    if extents is None:
        yield from range(n)
        return
    for a, b in extents.ranges:
        index = a
        while index < b:
            if index >= extents.unchecked_from:
                found = next_data_record(fd, index, recordsize)
                if found is None:
                    return
                index = found
                if index >= b:
                    break
            yield index
            index += 1


def read_file_blocks(path: str, dev: int, ino: int, size: int, recordsize: int, compress: Callable[[bytes], int],
                     counts: ReadCounts, extents: DataRecords | None = None,
                     keep_holes: bool = True) -> dict[tuple[int, int], int] | None:
    """(lsize, clen) histogram of one file read now, or None when it cannot be read. Reads at
    most the size the walk saw; a file that ends sooner is counted as shrunk and priced as read.
    `extents`: the records that hold data (record_ranges); the others are holes, never read: a copy
    that keeps holes writes no block there (keep_holes), one that fills them writes zeros."""
    fd = _open_walked(path, dev, ino, counts)
    if fd is None:
        return None
    try:
        n, lsize = file_block_sizes(size, recordsize)
        blocks: dict[tuple[int, int], int] = {}
        got = data_records = 0
        short = False
        for index in _records_to_read(fd, n, recordsize, extents):
            want = min(recordsize, size - index * recordsize)
            try:
                data = os.pread(fd, want, index * recordsize) if extents is None else \
                    pread_data(fd, want, index * recordsize)
            except OSError as e:
                counts.unreadable += 1
                counts.warn(f"{path}: {e.strerror}")
                return None
            got += len(data)
            data_records += 1
            if len(data) < want:
                short = True
                counts.shrunk += 1
                counts.warn(f"{path}: shrank from {size:,} bytes while read")
                if not data:
                    break
            record = data if len(data) == lsize else data + bytes(lsize - len(data))  # ZFS compresses the padded record
            key = (lsize, 0) if data.count(0) == len(data) else (lsize, clen_key(lsize, compress(record)))
            blocks[key] = blocks.get(key, 0) + 1
            if short:
                break
        holes = n - data_records if extents is not None and not short else 0
        if holes and not keep_holes:
            blocks[(lsize, 0)] = blocks.get((lsize, 0), 0) + holes   # zeros written by the copy
        counts.read_files += 1
        counts.read_bytes += got
        return blocks
    finally:
        os.close(fd)


@dataclass
class Sample:
    """What was read. A full read (no budget): per file, (index into walk.files, its blocks).
    A budgeted read samples the records that hold data, each equally likely: `records` holds
    (lsize, clen) of each record read, and `population_records` how many records hold data (the
    records in holes are counted exactly beside the sample, never drawn)."""

    read: list[tuple[int, dict[tuple[int, int], int]]]
    records: list[tuple[int, int]]   # clen KEPT_HOLE: a hole the copy keeps (no block)
    population_records: int
    counts: ReadCounts
    seconds: float
    complete: bool            # every file read, or every record of data (then the answer is exact)
    sampled: bool = False     # read within a budget: `records`, not `read`


def read_sample(w: Walk, recordsize: int, compress: Callable[[bytes], int], *, max_bytes: int | None,
                max_seconds: float | None, rng: random.Random, progress=None,
                extents: dict[int, DataRecords] | None = None, keep_holes: bool = True) -> Sample:
    """Every file whole without a budget; with one, records that hold data drawn at random without
    replacement until the byte or time budget is spent. Records, not files, are the sampling unit:
    a record's allocation is bounded, so the interval holds where file sizes are heavy-tailed.
    `extents` (by file index, sparse_ranges) says which records hold data: the others are holes,
    never read nor drawn, so a tree that is mostly holes is sampled only where it has data."""
    counts = ReadCounts()
    extents = extents or {}
    start = time.monotonic()
    total = sum(f[3] for f in w.files)
    if max_bytes is None and max_seconds is None:
        read: list[tuple[int, dict]] = []
        done = 0
        for i, (path, dev, ino, size) in enumerate(w.files):
            blocks = read_file_blocks(path, dev, ino, size, recordsize, compress, counts, extents.get(i), keep_holes)
            done += size
            if blocks is not None:
                read.append((i, blocks))
            if progress is not None:
                progress(done, total)
        return Sample(read, [], 0, counts, time.monotonic() - start, True)
    # the records that hold data, as runs (file, first record) from sample index `starts`: one run a
    # file without holes, one a data extent of a sparse file, never one a record; 8 bytes a number
    starts, run_file, run_first = array("q", [0]), array("q"), array("q")
    for i, f in enumerate(w.files):
        for a, b in (extents[i].ranges if i in extents else [(0, file_block_sizes(f[3], recordsize)[0])]):
            if b > a:
                run_file.append(i)
                run_first.append(a)
                starts.append(starts[-1] + b - a)
    population = starts[-1]
    budget = population if max_bytes is None else max(1, min(population, -(-max_bytes // recordsize) * 4))
    records: list[tuple[int, int]] = []
    files_read: set[int] = set()
    done = 0
    goal = total if max_bytes is None else min(total, max_bytes)
    for r in _draw(rng, population, min(population, budget, MAX_SAMPLED_RECORDS)):
        if records and max_bytes is not None and done >= max_bytes:
            break
        if records and max_seconds is not None and time.monotonic() - start >= max_seconds:
            break
        k = bisect.bisect_right(starts, r) - 1
        i, first = run_file[k], run_first[k]
        path, dev, ino, size = w.files[i]
        index = first + r - starts[k]
        unchecked = i in extents and index >= extents[i].unchecked_from
        key = read_record(path, dev, ino, size, index, recordsize, compress, counts, check_hole=unchecked,
                          sparse=i in extents)
        if key is not None:
            if key[1] == KEPT_HOLE and not keep_holes:
                key = (key[0], 0)   # a hole the copy fills: zeros
            records.append(key)
            files_read.add(i)
            done += key[0]
            counts.read_bytes += key[0] if key[1] != KEPT_HOLE else 0
        if progress is not None:
            progress(done, goal)
    counts.read_files = len(files_read)
    return Sample([], records, population, counts, time.monotonic() - start, len(records) == population, True)


MAX_SAMPLED_RECORDS = 1_000_000


def _draw(rng: random.Random, population: int, k: int):
    """k distinct indices of range(population) in random order, drawn as needed: a time budget
    may stop after a few, so memory follows what was drawn, not the population."""
    if 2 * k >= population:
        yield from rng.sample(range(population), k)
        return
    seen: set[int] = set()
    while len(seen) < k:
        r = rng.randrange(population)
        if r not in seen:
            seen.add(r)
            yield r


def read_record(path: str, dev: int, ino: int, size: int, index: int, recordsize: int,
                compress: Callable[[bytes], int], counts: ReadCounts, check_hole: bool = False,
                sparse: bool = False) -> tuple[int, int] | None:
    """(lsize, clen) of one record of a file, or None (counted) when it cannot be read whole.
    check_hole: ask SEEK_DATA first, and give (lsize, KEPT_HOLE) without reading a record that
    lies wholly in a hole; sparse: read only the record's data extents (pread_data)."""
    n, lsize = file_block_sizes(size, recordsize)
    want = min(lsize, size - index * recordsize)
    fd = _open_walked(path, dev, ino, counts)
    if fd is None:
        return None
    try:
        if check_hole and next_data_record(fd, index, recordsize) != index:
            return lsize, KEPT_HOLE
        data = pread_data(fd, want, index * recordsize) if sparse else os.pread(fd, want, index * recordsize)
    except OSError as e:
        counts.unreadable += 1
        counts.warn(f"{path}: {e.strerror}")
        return None
    finally:
        os.close(fd)
    if len(data) < want:
        counts.shrunk += 1
        counts.warn(f"{path}: shrank below {size:,} bytes while read")
        return None
    if data.count(0) == len(data):
        return lsize, 0
    record = data if len(data) == lsize else data + bytes(lsize - len(data))
    return lsize, clen_key(lsize, compress(record))
