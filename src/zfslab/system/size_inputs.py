"""special-size's inputs, parsed strictly from their text: a file-size list (`find DIR -type f
-printf '%s\\n'`), a size histogram CSV (size_bytes,count), or `zdb -bb`/`-bbb` output (its block
statistics table and Block Size Histogram, OpenZFS 2.1 to 2.3, with or without -P).
Pure functions: the command reads the file (system/text_files.read_text_chunks) and hands the
text over in chunks; a size list or CSV is parsed chunk by chunk into arrays of sizes and counts,
so its memory is one chunk's whatever the file's length (zdb output is parsed whole)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

import numpy as np

from zfslab.errors import InputError, shown
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


def _line_error(name: str, n: int, line: str, what: str) -> InputError:
    return InputError(f"{name} line {n:,}: {shown(line.strip(), 40)!r} {what}")


def _int(text: str, name: str, n: int, line: str, what: str, hi: int) -> int:
    t = text.strip()
    if not _INT.fullmatch(t) or int(t) > hi:
        raise _line_error(name, n, line, what)
    return int(t)


SIZES_FIX = "give one whole number of bytes per line (find DIR -type f -printf '%s\\n')"
CSV_FIX = "give size_bytes,count (two whole numbers)"
# a chunk's bytes by class, for checking a whole chunk's shape in numpy (a regular expression
# costs 0.2 us a line: 25 s for the 128 M lines of "1" a 256 MiB list holds)
_OTHER, _DIGIT, _BLANK, _NEWLINE, _COMMA = range(5)
_CLASS = np.zeros(256, np.uint8)
_CLASS[np.frombuffer(b"0123456789", np.uint8)] = _DIGIT
_CLASS[np.frombuffer(b" \t", np.uint8)] = _BLANK
_CLASS[np.frombuffer(b"\r\n", np.uint8)] = _NEWLINE
_CLASS[ord(",")] = _COMMA
MAX_CARRY_CHARS = 1 << 20   # a chunk's unfinished last line; longer without a newline: parsed as it is


def size_chunks(chunks: Iterable[str], name: str, fmt: str) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(sizes, counts) int64 arrays, one pair per chunk of a size list (fmt "sizes": every count 1)
    or a size_bytes,count CSV (fmt "csv", its header line optional); a one-line error names the
    first bad line. The pieces of text may split lines anywhere."""
    csv = fmt == "csv"
    line_no = 0              # lines before the current piece
    header_due = csv         # the first non-blank line of a CSV may be its header
    any_file = False
    carry = ""
    pieces = iter(chunks)
    done = False
    while not done:
        piece = next(pieces, None)
        if piece is None:
            done, text = True, carry + ("\n" if carry else "")
        else:
            text = carry + piece
            cut = text.rfind("\n") + 1
            if cut == 0 and len(text) > MAX_CARRY_CHARS:
                cut = len(text)          # no newline for a megabyte: old Mac line ends, or not a list
            text, carry = text[:cut], text[cut:]
        if not text:
            continue
        if header_due:
            first = next((i for i, line in enumerate(text.splitlines(keepends=True)) if line.strip()), None)
            if first is not None:
                lines = text.splitlines(keepends=True)
                head = "".join(lines[:first + 1])
                sizes, counts = _slow(head, name, line_no, csv, header=True)
                line_no += len(lines[:first + 1])
                text = "".join(lines[first + 1:])
                header_due = False
                if sizes.size:
                    any_file = any_file or bool(counts.any())
                    yield sizes, counts
        numbers = _plain(text, csv)
        parsed = _fast(text, csv, numbers) if numbers >= 0 else None
        if parsed is None:    # a bad line, a value out of range, or rare line ends: line by line
            parsed = _slow(text, name, line_no, csv, header=False)
        sizes, counts = parsed
        line_no += text.count("\n") if numbers >= 0 else len(text.splitlines())
        if sizes.size:
            any_file = any_file or bool(counts.any())
            yield sizes, counts
    if not any_file:
        raise InputError(f"{name}: no files counted; give size_bytes,count rows" if csv else
                         f"{name}: no file sizes; {SIZES_FIX}")


def _plain(text: str, csv: bool) -> int:
    """How many numbers the chunk holds when every line is blank, or one number of at most 19
    digits (csv: two, joined by a comma) with blanks around: the shape _fast() parses; -1 for
    any other chunk, which goes line by line."""
    if not text.isascii():
        return -1
    cls = _CLASS[np.frombuffer(text.encode("ascii"), np.uint8)]
    if (cls == _OTHER).any() or (not csv and (cls == _COMMA).any()):
        return -1
    if (cls == _BLANK).any():
        solid = np.flatnonzero(cls != _BLANK)      # the chunk without its blanks
        seq = cls[solid]
        digit = seq == _DIGIT
        joined = digit[1:] & digit[:-1]            # digits next to each other once blanks are gone
        if (joined & (np.diff(solid) > 1)).any():  # ... that a blank parted: two numbers on a line
            return -1
    else:                                          # find's own output: no blanks
        seq, digit = cls, cls == _DIGIT
        joined = digit[1:] & digit[:-1]
    starts = np.flatnonzero(digit & ~np.concatenate(([False], digit[:-1])))
    ends = np.flatnonzero(digit & ~np.concatenate((digit[1:], [False])))
    if starts.size and int((ends - starts).max()) >= 19:
        return -1
    if not csv:
        return starts.size
    tokens = np.delete(seq, np.flatnonzero(joined) + 1)   # each number one token
    commas = np.flatnonzero(tokens == _COMMA)
    if 2 * commas.size != int((tokens == _DIGIT).sum()):
        return -1
    padded = np.concatenate(([_NEWLINE, _NEWLINE], tokens, [_NEWLINE, _NEWLINE]))
    at = commas + 2
    ok = ((padded[at - 1] == _DIGIT) & (padded[at + 1] == _DIGIT)
          & (padded[at - 2] == _NEWLINE) & (padded[at + 2] == _NEWLINE)).all()
    return starts.size if ok else -1


def _fast(text: str, csv: bool, numbers: int) -> tuple[np.ndarray, np.ndarray] | None:
    """A chunk of the plain shape as arrays (numpy's C parser: 128 M lines of "1" in seconds);
    None when a value may be out of range, for _slow to name it: the parser clamps a number past
    int64 to 2^63 - 1, so that value is checked line by line (no file is that large)."""
    if numbers == 0:   # numpy reads a text of blanks alone as [0]
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    values = np.fromstring(text.replace(",", " ") if csv else text, dtype=np.int64, sep=" ")
    if values.size != numbers:
        return None
    sizes, counts = (values[0::2], values[1::2]) if csv else (values, np.ones(values.size, np.int64))
    if sizes.size and (int(sizes.max()) >= MAX_FILE_BYTES or int(counts.max()) > MAX_COUNT):
        return None
    return _merged(sizes, counts)


def _merged(sizes: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One entry per distinct size (a find listing repeats its sizes: fewer for the model to
    compute). A chunk's counts add up to under 2^63: at most 2 M rows of at most 10^12 files."""
    order = np.argsort(sizes)
    ordered = sizes[order]
    firsts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1]))) if ordered.size else order
    return ordered[firsts], np.add.reduceat(counts[order], firsts) if firsts.size else counts[:0]


def _slow(text: str, name: str, line_no: int, csv: bool, *, header: bool) -> tuple[np.ndarray, np.ndarray]:
    """The chunk's lines one by one, as str.splitlines() cuts them (every line ending Python knows)."""
    sizes: list[int] = []
    counts: list[int] = []
    for n, line in enumerate(text.splitlines(), line_no + 1):
        if not line.strip():
            continue
        if not csv:
            sizes.append(_int(line, name, n, line, f"is not a file size; {SIZES_FIX}", MAX_FILE_BYTES))
            counts.append(1)
            continue
        fields = line.split(",")
        if len(fields) != 2:
            raise _line_error(name, n, line, f"is not a histogram row; {CSV_FIX}")
        if header and not _INT.fullmatch(fields[0].strip()):
            if [f.strip().lower() for f in fields] != ["size_bytes", "count"]:
                raise _line_error(name, n, line, "is not the header; write size_bytes,count or leave the header out")
            continue
        sizes.append(_int(fields[0], name, n, line, f"has no file size; {CSV_FIX}", MAX_FILE_BYTES))
        counts.append(_int(fields[1], name, n, line, f"has no count from 0 to {MAX_COUNT:,}; {CSV_FIX}", MAX_COUNT))
    return np.array(sizes, dtype=np.int64), np.array(counts, dtype=np.int64)


def _tally_dict(pairs: Iterator[tuple[np.ndarray, np.ndarray]]) -> dict[int, int]:
    out: dict[int, int] = {}
    for sizes, counts in pairs:
        for size, count in zip(sizes.tolist(), counts.tolist()):
            out[size] = out.get(size, 0) + count
    return out


def parse_sizes(text: str, name: str) -> dict[int, int]:
    """{size: files} from one whole number of bytes per line; blank lines are skipped."""
    return _tally_dict(size_chunks([text], name, "sizes"))


def parse_csv(text: str, name: str) -> dict[int, int]:
    """{size: files} from size_bytes,count rows, with or without that header line."""
    return _tally_dict(size_chunks([text], name, "csv"))


def _first_line(text: str) -> int:
    return next((n for n, line in enumerate(text.splitlines(), 1) if line.strip()), 0)


def _nice(text: str, name: str, line: str) -> int:
    """Bytes or a count as zdb prints them: exact with -P, else nicenum's three digits ('1.56M')."""
    t = text.strip()
    if t == "-":
        return 0
    m = _NICE.fullmatch(t)
    if not m:
        raise InputError(f"{name}: zdb value {shown(t, 20)!r} in {shown(line.strip(), 60)!r} is not a number; "
                         "give the output of zdb -bb POOL unchanged")
    return round(float(m.group(1)) * _NICE_UNITS[m.group(2)])


def parse_zdb(text: str, name: str) -> ZdbBlockStats:
    """The Metadata Total row (or, before OpenZFS 2.2, Total less the data types' level-0
    blocks, which -bbb shows), the Total row and the psize column of the Block Size Histogram."""
    lines = text.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.startswith("Blocks\tLSIZE\tPSIZE\tASIZE"))
    except StopIteration:
        raise InputError(f"{name}: no block statistics table (Blocks LSIZE PSIZE ASIZE ...); give the output of "
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
        raise InputError(f"{name}: the block statistics table has no Total row; give the output of zdb -bb POOL unchanged")
    if "Metadata Total" in rows:
        meta_count, _, meta_psize, meta_asize = rows["Metadata Total"]
    elif any(k.startswith("    L0 ") for k in rows) and not _rounded(lines[start + 1:]):
        meta_count, _, meta_psize, meta_asize = rows["Total"]
        for kind in DATA_TYPES:
            data = rows.get(f"    L0 {kind}", rows.get(kind))
            if data:
                meta_count, meta_psize, meta_asize = meta_count - data[0], meta_psize - data[2], meta_asize - data[3]
    else:
        raise InputError(f"{name}: no Metadata Total row (zdb before OpenZFS 2.2 prints none): give the output of "
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
        raise InputError(f"{name}: no Block Size Histogram; give the whole output of zdb -bb POOL "
                         "(OpenZFS 2.1 or newer prints it)") from None
    bins = []
    for line in lines[start + 1:]:
        fields = line.replace(":", " ", 1).split()
        if not fields or not fields[0][0].isdigit():
            if bins:
                break
            continue  # the two title lines
        if len(fields) != 10:
            raise InputError(f"{name}: Block Size Histogram row {shown(line.strip(), 60)!r} does not have 10 columns; "
                             "give the output of zdb -bb POOL unchanged")
        low = _nice(fields[0], name, line)
        if low < 512 or low & (low - 1):
            raise InputError(f"{name}: Block Size Histogram row {shown(line.strip(), 60)!r}: {shown(fields[0])} "
                             "is not a block size")
        bins.append((low, _nice(fields[1], name, line), _nice(fields[2], name, line)))
    if not bins:
        raise InputError(f"{name}: the Block Size Histogram has no rows; give the whole output of zdb -bb POOL")
    return tuple(bins)
