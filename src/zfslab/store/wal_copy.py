"""Reading an SQLite file that has a log beside it without creating or changing a byte beside it.

A file in WAL mode may hold committed rows only in its `-wal` (a bench still running, or one
killed before a checkpoint). SQLite reads a -wal only through its `-shm` index: a reader opened
with mode=ro creates the -shm where there is none and writes its read marks into one that
exists; one opened with immutable=1 ignores the log and misses those rows. So the file and its
log (a -wal, or a rollback -journal) are copied into a private folder, the log first and the
file after it (a checkpoint meanwhile only moves rows into the file, copied after, so none is
lost), again while either changed during the copy; SQLite replays the log into the copy there;
the copy is opened immutable and its names removed at once (the open descriptor keeps it
readable), so nothing is left even if the process is killed afterwards (docs/safety.md#files).
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import stat
import tempfile
import time
from collections.abc import Callable

# The pause before each attempt. A bench commits its migrations in a burst as it creates its file
# and a row a measurement after that: five attempts back to back fell within one burst in a CI-like
# run (a fleet probe then refused the host's database); these span 1.9 s, longer than any burst.
RETRY_PAUSES_S = (0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)
COPY_ATTEMPTS = len(RETRY_PAUSES_S)
_pause = time.sleep   # a test records the pauses instead of taking them
LOGS = ("-wal", "-journal")


class CopyFailed(Exception):
    """Why the file and its log could not be copied (a one-line reason, no path)."""


def log_beside(path: str) -> str | None:
    """The suffix of the log lying beside path ("-wal" or "-journal"), or None."""
    return next((s for s in LOGS if os.path.lexists(path + s)), None)


def _marks(path: str) -> tuple:
    try:
        st = os.stat(path)
    except OSError as e:
        raise CopyFailed(f"{os.path.basename(path)} cannot be read ({e.strerror})") from None
    if not stat.S_ISREG(st.st_mode):   # a FIFO would block the copy, a device is not ours to read
        raise CopyFailed(f"{os.path.basename(path)} is not a regular file")
    return st.st_mtime_ns, st.st_size, st.st_ino


def _marks_if_there(path: str) -> tuple | None:
    """_marks, or None once the file is gone (a log the last writer removed on closing)."""
    return _marks(path) if os.path.lexists(path) else None


def copy_with_log(path: str, log: str, copy: str) -> None:
    """path and path+log copied to `copy`, the log replayed into the copy and gone (see the module's doc).
    A log that goes away meanwhile is a writer's last close: SQLite checkpoints the whole -wal into
    the file before it deletes it, so the file alone is then complete, and is copied alone (seen on
    a fleet guest: a probe read a host's database as its bench closed it)."""
    for pause_s in RETRY_PAUSES_S:
        if pause_s:
            _pause(pause_s)
        log_before = _marks_if_there(path + log)
        before = (_marks(path), log_before)
        try:
            if log_before is not None:
                shutil.copyfile(path + log, copy + log)
            elif os.path.lexists(copy + log):
                os.unlink(copy + log)   # an earlier attempt's copy of the log: stale now
            shutil.copyfile(path, copy)
        except FileNotFoundError:
            continue   # the log went between its look and its copy: look again
        except OSError as e:
            raise CopyFailed(f"it cannot be copied to be read ({e.strerror})") from None
        if (_marks(path), _marks_if_there(path + log)) == before:
            break
    else:
        raise CopyFailed(f"it changed {COPY_ATTEMPTS} times while it was copied to be read (a bench still "
                         "writing it?); try again when that run has finished")
    with open(copy, "rb") as f:
        ours = f.read(16) == b"SQLite format 3\x00"
    if ours:
        try:   # our own copy: SQLite replays (or rolls back) the log into it, checksums refusing a torn one
            conn = sqlite3.connect(copy, isolation_level=None)
            try:
                conn.execute("PRAGMA journal_mode = DELETE")
            finally:
                conn.close()
        except sqlite3.Error:
            pass   # a damaged file: the reader says what it is
    for leftover in (copy + "-wal", copy + "-shm", copy + "-journal"):   # the copy is read immutable, alone
        if os.path.exists(leftover):
            os.unlink(leftover)


def open_copy(path: str, log: str, open_immutable: Callable[[str], sqlite3.Connection]) -> sqlite3.Connection:
    """A connection to a private, log-replayed copy of path, whose names are already removed."""
    folder = tempfile.mkdtemp(prefix="zfslab-read-")
    try:
        copy = os.path.join(folder, "copy.sqlite")
        copy_with_log(path, log, copy)
        return open_immutable(copy)   # SQLite holds the file open: the folder can go now
    finally:
        shutil.rmtree(folder, ignore_errors=True)
