"""Small text files the user hands zfslab (a size list, a dataset, an inventory, a disk profile,
a saved footprint), read with bounds: a regular file only, at most so many bytes, UTF-8 or
UTF-16 with its BOM, no NUL. The errors name the file by the setting it was given as."""

from __future__ import annotations

import codecs
import os
import stat
from collections.abc import Iterator

from zfslab.errors import ParamError, shown

TEXT_CHUNK_BYTES = 1 << 20


class TextFileError(ParamError):
    """A file that cannot be read as text: `param` the setting (or what the file is, `size list`)
    that named it, `binary` when it is a file of data, not text."""

    def __init__(self, what: str, path: str, rule: str, *, binary: bool = False) -> None:
        super().__init__(what, shown(path, 200), rule)
        self.binary = binary


def read_text_file(path: str, what: str, *, max_bytes: int, kind: str = "CSV") -> str:
    """A small text file's contents: UTF-8 (a BOM is dropped) or UTF-16 with its BOM; a regular
    file only (a directory, a FIFO or /dev/zero is refused before reading); one-line errors."""
    return "".join(read_text_chunks(path, what, max_bytes=max_bytes, kind=kind))


def read_text_chunks(path: str, what: str, *, max_bytes: int, kind: str = "CSV",
                     chunk_bytes: int = TEXT_CHUNK_BYTES) -> Iterator[str]:
    """A text file's contents as read_text_file() checks them, a chunk at a time: a binary or
    mis-encoded file is refused at its first bad chunk, not after reading it whole."""
    as_text = "text" if kind == "text" else f"{kind} text"
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer (it has no effect on a regular file)
        f = open(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb")
    except FileNotFoundError:
        raise TextFileError(what, path, "no such file") from None
    except IsADirectoryError:
        raise TextFileError(what, path, f"a directory; give a {kind} file") from None
    except OSError as e:
        raise TextFileError(what, path, f"cannot be read ({e.strerror})") from None
    with f:
        st = os.fstat(f.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise TextFileError(what, path, f"not a regular file; give a {kind} file")
        if st.st_size > max_bytes:
            raise TextFileError(what, path, f"{st.st_size:,} bytes; at most {max_bytes:,} are read")
        decoder = None
        offset = 0
        while True:
            try:
                data = f.read(min(chunk_bytes, max_bytes + 1 - offset))
            except OSError as e:
                raise TextFileError(what, path, f"cannot be read ({e.strerror})") from None
            if decoder is None:
                # Excel's "Unicode text" is UTF-16 with a BOM that says the byte order
                encoding = "utf-16" if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)) else "utf-8-sig"
                decoder = codecs.getincrementaldecoder(encoding)()
            if offset + len(data) > max_bytes:   # the file grew after fstat
                raise TextFileError(what, path, f"over {max_bytes:,} bytes; at most {max_bytes:,} are read")
            try:
                text = decoder.decode(data, final=not data)
            except UnicodeDecodeError as e:
                raise TextFileError(what, path, f"not {'UTF-16' if encoding == 'utf-16' else 'UTF-8'} text (byte "
                                    f"{offset + e.start:,}); save it as UTF-8 {kind}", binary=True) from None
            if "\x00" in text:
                raise TextFileError(what, path, f"holds NUL characters: a binary file, not {as_text}", binary=True)
            if text:
                yield text
            if not data:
                return
            offset += len(data)
