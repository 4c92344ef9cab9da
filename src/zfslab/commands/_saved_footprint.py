"""plan --data-from FILE: a saved `zfslab footprint --json`, read back with every value checked
(docs/footprint.md). The text goes through the bounded JSON reader (model/json_input.py: depth,
integer digits, finite floats); then each field has the type footprint writes and a range no real
tree leaves: block sizes up to the largest recordsize, counts below 2^63, data below 2^64 bytes."""

from __future__ import annotations

from zfslab.errors import UsageError, clip, shown
from zfslab.model.footprint import DataBlocks

MAX_SAVED_BYTES = 16 << 20      # a saved footprint is one histogram row per (size, compressed size): ~1 MB a tree
MAX_BLOCK_BYTES = 16 << 20      # the largest recordsize
MAX_COUNT = 2**63 - 1


def load_saved(path: str) -> DataBlocks:
    """DataBlocks from a saved `footprint --json`, every value checked: the right type, in range."""
    from zfslab.system.text_files import read_text_file
    from zfslab.model.json_input import JsonInputError, parse
    from zfslab.model.units import MAX_SIZE

    where = f"--data-from {shown(path, 200)}"
    text = read_text_file(path, "--data-from", max_bytes=MAX_SAVED_BYTES, kind="JSON")

    def bad(detail: str) -> UsageError:
        return UsageError(f"{where}: {detail}, not the output of zfslab footprint --json; give a directory, "
                          "or the file `zfslab footprint DIR --json` wrote")
    try:
        r = parse(text)
    except JsonInputError as e:
        raise bad(str(e)) from None
    if not isinstance(r, dict):
        raise bad(f"a JSON {type(r).__name__}, not an object")

    def whole(name: str, value, lo: int, hi: int) -> int:
        if type(value) is not int or not lo <= value <= hi:
            raise bad(f"{name} = {clip(value)}, not a whole number from {lo:,} to {hi:,}")
        return value

    def field(name: str):
        if name not in r:
            raise bad(f"no {name!r}")
        return r[name]

    def hist(name: str) -> dict[tuple[int, int], int]:
        rows = field(name)
        if not isinstance(rows, list):
            raise bad(f"{name} = {clip(rows)}, not a list of [size, compressed size, count]")
        out: dict[tuple[int, int], int] = {}
        for row in rows:
            if not isinstance(row, list) or len(row) != 3:
                raise bad(f"{name} holds {clip(row)}, not [size, compressed size, count]")
            key = (whole(f"a {name} size", row[0], 0, MAX_BLOCK_BYTES),
                   whole(f"a {name} compressed size", row[1], 0, MAX_BLOCK_BYTES))
            out[key] = out.get(key, 0) + whole(f"a {name} count", row[2], 0, MAX_COUNT)
        if sum(size * n for (size, _), n in out.items()) > MAX_SIZE:
            raise bad(f"{name} holds more than 2^64 bytes, more than any pool")
        return out
    compression = field("compression")
    if not isinstance(compression, str) or not 0 < len(compression) <= 100:
        raise bad(f"compression = {clip(compression)}, not a compression's name")
    recordsize = whole("recordsize_bytes", field("recordsize_bytes"), 512, MAX_BLOCK_BYTES)
    if recordsize & (recordsize - 1):
        raise bad(f"recordsize_bytes = {recordsize:,}, not a power of two")
    complete = field("complete")
    if not isinstance(complete, bool):
        raise bad(f"complete = {clip(complete)}, not true or false")
    return DataBlocks(hist("blocks"), hist("read_as_is"), hist("all_as_is"), compression, recordsize,
                      whole("files", field("files"), 0, MAX_COUNT),
                      whole("directories", field("directories"), 0, MAX_COUNT),
                      whole("pointers", field("pointers"), 0, MAX_COUNT), complete,
                      hole_blocks=hist("hole_blocks") if "hole_blocks" in r else {})
