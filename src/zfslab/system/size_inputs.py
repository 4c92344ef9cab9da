"""special-size's inputs, parsed strictly from their text: a file-size list (`find DIR -type f
-printf '%s\\n'`), a size histogram CSV (size_bytes,count), or `zdb -bb`/`-bbb` output (its block
statistics table and Block Size Histogram, OpenZFS 2.1 to 2.3, with or without -P).
Pure functions: the command reads the file (commands/_common.read_text_file)."""

from __future__ import annotations

import re

from zfslab.errors import UsageError, shown
from zfslab.model.special_size import ZdbBlockStats

MAX_FILE_BYTES = 2**63 - 1        # off_t: no file is larger
MAX_COUNT = 10**12                # files of one size in one histogram row
FORMATS = ("auto", "sizes", "csv", "zdb")

_INT = re.compile(r"[0-9]{1,19}", re.ASCII)
_NICE = re.compile(r"([0-9]{1,20}(?:\.[0-9]{1,3})?)([KMGTPE]?)", re.ASCII)
_NICE_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40, "P": 2**50, "E": 2**60}
# zdb's types that are not metadata (dmu_ot[] in module/zfs/dmu.c, ot_metadata FALSE): only
# their level-0 blocks are file data; every other block goes to the special class
_HIST_ROW = re.compile(r"\t\t\t *([0-9]{1,3}): +([0-9]{1,20})(?: \**)?$", re.ASCII)
DATA_TYPES = ("ZFS plain file", "zvol object", "other uint8[]", "other uint64[]", "deduplicated block")


def detect_format(text: str) -> str:
    """zdb output, a CSV or a plain size list, from the text itself."""
    if "Blocks\tLSIZE\tPSIZE\tASIZE" in text or "Block Size Histogram" in text or "bp count:" in text:
        return "zdb"
    first = next((line for line in text.splitlines() if line.strip()), "")
    return "csv" if "," in first else "sizes"


def parse_input(text: str, name: str, fmt: str = "auto"):
    """(format, parsed): sizes and csv give {size_bytes: files}, zdb gives ZdbBlockStats."""
    fmt = detect_format(text) if fmt == "auto" else fmt
    if fmt == "zdb":
        return fmt, parse_zdb(text, name)
    sizes = parse_csv(text, name) if fmt == "csv" else parse_sizes(text, name)
    return fmt, sizes


def _line_error(name: str, n: int, line: str, what: str) -> UsageError:
    return UsageError(f"{name} line {n:,}: {shown(line.strip(), 40)!r} {what}")


def _int(text: str, name: str, n: int, line: str, what: str, hi: int) -> int:
    t = text.strip()
    if not _INT.fullmatch(t) or int(t) > hi:
        raise _line_error(name, n, line, what)
    return int(t)


def parse_sizes(text: str, name: str) -> dict[int, int]:
    """{size: files} from one whole number of bytes per line; blank lines are skipped."""
    sizes: dict[int, int] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        size = _int(line, name, n, line, "is not a file size; give one whole number of bytes per line "
                                         "(find DIR -type f -printf '%s\\n')", MAX_FILE_BYTES)
        sizes[size] = sizes.get(size, 0) + 1
    if not sizes:
        raise UsageError(f"{name}: no file sizes; give one whole number of bytes per line (find DIR -type f -printf '%s\\n')")
    return sizes


def parse_csv(text: str, name: str) -> dict[int, int]:
    """{size: files} from size_bytes,count rows, with or without that header line."""
    sizes: dict[int, int] = {}
    fix = "give size_bytes,count (two whole numbers)"
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        fields = line.split(",")
        if len(fields) != 2:
            raise _line_error(name, n, line, f"is not a histogram row; {fix}")
        if not sizes and n == _first_line(text) and not _INT.fullmatch(fields[0].strip()):
            if [f.strip().lower() for f in fields] != ["size_bytes", "count"]:
                raise _line_error(name, n, line, "is not the header; write size_bytes,count or leave the header out")
            continue
        size = _int(fields[0], name, n, line, f"has no file size; {fix}", MAX_FILE_BYTES)
        count = _int(fields[1], name, n, line, f"has no count from 0 to {MAX_COUNT:,}; {fix}", MAX_COUNT)
        sizes[size] = sizes.get(size, 0) + count
    if not any(sizes.values()):
        raise UsageError(f"{name}: no files counted; give size_bytes,count rows")
    return sizes


def _first_line(text: str) -> int:
    return next((n for n, line in enumerate(text.splitlines(), 1) if line.strip()), 0)


def _nice(text: str, name: str, line: str) -> int:
    """Bytes or a count as zdb prints them: exact with -P, else nicenum's three digits ('1.56M')."""
    t = text.strip()
    if t == "-":
        return 0
    m = _NICE.fullmatch(t)
    if not m:
        raise UsageError(f"{name}: zdb value {shown(t, 20)!r} in {shown(line.strip(), 60)!r} is not a number; "
                         "give the output of zdb -bb POOL unchanged")
    return round(float(m.group(1)) * _NICE_UNITS[m.group(2)])


def parse_zdb(text: str, name: str) -> ZdbBlockStats:
    """The Metadata Total row (or, before OpenZFS 2.2, Total less the data types' level-0
    blocks, which -bbb shows), the Total row and the psize column of the Block Size Histogram."""
    lines = text.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.startswith("Blocks\tLSIZE\tPSIZE\tASIZE"))
    except StopIteration:
        raise UsageError(f"{name}: no block statistics table (Blocks LSIZE PSIZE ASIZE ...); give the output of "
                         "zdb -bb POOL (or zdb -bbb POOL)") from None
    rows: dict[str, tuple[int, int, int, int]] = {}
    sectors: dict[str, dict[int, int]] = {}   # -bbbb: each row's psize histogram, in 512 B sectors
    kind = ""
    for line in lines[start + 1:]:
        if line.count("\t") >= 7 and not line.startswith("\t"):
            fields = line.split("\t")
            kind = "\t".join(fields[7:])
            rows[kind] = tuple(_nice(f, name, line) for f in fields[:4])  # count, lsize, psize, asize
        elif line.startswith("psize (in 512-byte sectors)"):
            sectors[kind] = {}
        elif (m := _HIST_ROW.match(line)) and kind in sectors:
            if int(m.group(2)):
                sectors[kind][int(m.group(1))] = int(m.group(2))
        elif not line.startswith("\t number of ganged blocks"):
            break
    if "Total" not in rows:
        raise UsageError(f"{name}: the block statistics table has no Total row; give the output of zdb -bb POOL unchanged")
    if "Metadata Total" in rows:
        meta_count, _, meta_psize, meta_asize = rows["Metadata Total"]
    elif any(k.startswith("    L0 ") for k in rows) and not _rounded(lines[start + 1:]):
        meta_count, _, meta_psize, meta_asize = rows["Total"]
        for kind in DATA_TYPES:
            data = rows.get(f"    L0 {kind}", rows.get(kind))
            if data:
                meta_count, meta_psize, meta_asize = meta_count - data[0], meta_psize - data[2], meta_asize - data[3]
    else:
        raise UsageError(f"{name}: no Metadata Total row (zdb before OpenZFS 2.2 prints none): give the output of "
                         "zdb -bbb -P POOL, whose exact per-level rows give it")
    bins = _histogram(lines, name)
    data: dict[int, int] = {}
    if sectors:  # -bbbb: the level-0 blocks of the data types, exact up to 128 KiB
        for k in DATA_TYPES:
            for n, count in sectors.get(f"    L0 {k}", sectors.get(k, {})).items():
                data[n] = data.get(n, 0) + count
    return ZdbBlockStats(max(0, meta_count), max(0, meta_psize), max(0, meta_asize), rows["Total"][1], bins,
                         data_psize_sectors=tuple(sorted(data.items())) if sectors else None)


def _rounded(lines: list[str]) -> bool:
    """Whether the table's figures are nicenum's ('1.56M'): a difference of two of them is not exact."""
    for line in lines:
        if line.count("\t") < 7:
            break
        if any(f.strip()[-1:].isalpha() for f in line.split("\t")[:4]):
            return True
    return False


def _histogram(lines: list[str], name: str) -> tuple[tuple[int, int, int], ...]:
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == "Block Size Histogram")
    except StopIteration:
        raise UsageError(f"{name}: no Block Size Histogram; give the whole output of zdb -bb POOL "
                         "(OpenZFS 2.1 or newer prints it)") from None
    bins = []
    for line in lines[start + 1:]:
        fields = line.replace(":", " ", 1).split()
        if not fields or not fields[0][0].isdigit():
            if bins:
                break
            continue  # the two title lines
        if len(fields) != 10:
            raise UsageError(f"{name}: Block Size Histogram row {shown(line.strip(), 60)!r} does not have 10 columns; "
                             "give the output of zdb -bb POOL unchanged")
        low = _nice(fields[0], name, line)
        if low < 512 or low & (low - 1):
            raise UsageError(f"{name}: Block Size Histogram row {shown(line.strip(), 60)!r}: {shown(fields[0])} "
                             "is not a block size")
        bins.append((low, _nice(fields[1], name, line), _nice(fields[2], name, line)))
    if not bins:
        raise UsageError(f"{name}: the Block Size Histogram has no rows; give the whole output of zdb -bb POOL")
    return tuple(bins)
