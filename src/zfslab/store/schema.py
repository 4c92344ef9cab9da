"""The results database (SQLite): numbered migrations, one transaction per measurement.

Each migration is a list of statements applied once, in order, recorded in schema_version;
a database from a newer zfslab (a higher version than we know) is refused rather than guessed at.

zfslab changes only its own databases: a new file (or an empty one) becomes one, marked with
SQLite's application_id; a file with tables that are not zfslab's is refused before anything
is written, and readers (`report`, a dry run) open the file read-only and never migrate it.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from contextlib import contextmanager
from urllib.parse import quote

from zfslab.errors import ZfslabError
from zfslab.store.wal_copy import CopyFailed, log_beside, open_copy

MIGRATIONS: list[list[str]] = [
    [  # 1: bench runs and their measurements
        """CREATE TABLE runs (
            id INTEGER PRIMARY KEY,
            key TEXT NOT NULL,              -- the same command on the same disks resumes the same run
            started_at TEXT NOT NULL,
            finished_at TEXT,
            command TEXT NOT NULL,
            suite TEXT NOT NULL,
            repeats INTEGER NOT NULL,
            options_json TEXT NOT NULL,
            sandbox INTEGER NOT NULL DEFAULT 0,  -- 1: file vdevs, not representative of disks
            zfs_version TEXT, kernel TEXT, cpu TEXT, ram_bytes INTEGER, hostname TEXT
        )""",
        "CREATE INDEX runs_key ON runs(key)",
        """CREATE TABLE run_disks (
            run_id INTEGER NOT NULL REFERENCES runs(id),
            position INTEGER NOT NULL,
            device TEXT NOT NULL, serial TEXT, model TEXT, size_bytes INTEGER, rotational INTEGER,
            PRIMARY KEY (run_id, position)
        )""",
        """CREATE TABLE measurements (
            id INTEGER PRIMARY KEY,
            run_id INTEGER NOT NULL REFERENCES runs(id),
            layout TEXT NOT NULL,
            test TEXT NOT NULL,
            repeat INTEGER NOT NULL,
            started_at TEXT NOT NULL,
            seconds REAL NOT NULL,
            read_mb_s REAL, write_mb_s REAL, read_iops REAL, write_iops REAL,
            read_clat_p50_us REAL, read_clat_p99_us REAL, write_clat_p50_us REAL, write_clat_p99_us REAL,
            sync_mean_us REAL,
            disk_read_mb REAL, disk_write_mb REAL, disk_util_max REAL,   -- from /proc/diskstats
            cache_suspect INTEGER NOT NULL DEFAULT 0,                     -- reads above what the disks delivered
            fio_json TEXT NOT NULL,
            diskstats_json TEXT,
            iostat_text TEXT,
            UNIQUE (run_id, layout, test, repeat)
        )""",
        """CREATE TABLE layout_capacity (
            run_id INTEGER NOT NULL REFERENCES runs(id),
            layout TEXT NOT NULL,
            size_bytes INTEGER, usable_bytes INTEGER,
            PRIMARY KEY (run_id, layout)
        )""",
    ],
    [  # 2: fault drills
        """CREATE TABLE drills (
            id INTEGER PRIMARY KEY,
            layout TEXT NOT NULL,
            scenario TEXT NOT NULL,
            started_at TEXT NOT NULL,
            seconds REAL,
            outcome TEXT NOT NULL,
            verdict TEXT NOT NULL,
            data_json TEXT NOT NULL,
            zfs_version TEXT, sandbox INTEGER NOT NULL DEFAULT 0
        )""",
    ],
    [  # 3: every pool zfslab creates, by GUID: a disk is zfslab's leftover only when its ZFS
       #    label names one of these (a pool of the same name made by anyone else is not)
        """CREATE TABLE pools (
            guid TEXT PRIMARY KEY,          -- zpool get guid, decimal as zpool prints it
            name TEXT NOT NULL,
            purpose TEXT NOT NULL,          -- bench | drill
            run_id INTEGER REFERENCES runs(id),  -- the bench run that made it
            layout TEXT NOT NULL,
            created_at TEXT NOT NULL
        )""",
    ],
    [  # 4: each resilver a drill timed, with what it needs to stand for these disks in plan's risk
       #    columns: the vdev kind, the disks, the fill, and ZFS's own count of resilvered bytes
        """CREATE TABLE resilvers (
            id INTEGER PRIMARY KEY,
            drill_id INTEGER NOT NULL REFERENCES drills(id),
            layout TEXT NOT NULL,
            vdev_kind TEXT NOT NULL,        -- mirror | raidz | draid: the vdev resilvered
            how TEXT NOT NULL,              -- fresh disk | hot spare | distributed spare | sequential
            fill REAL NOT NULL,             -- share of the pool's USED+AVAIL filled before it
            fill_bytes INTEGER NOT NULL,
            resilvered_bytes INTEGER NOT NULL,  -- zpool status: bytes repair wrote to the new disk
            seconds REAL NOT NULL,
            sandbox INTEGER NOT NULL DEFAULT 0
        )""",
        """CREATE TABLE resilver_disks (
            resilver_id INTEGER NOT NULL REFERENCES resilvers(id),
            position INTEGER NOT NULL,
            device TEXT NOT NULL, serial TEXT,  -- as given (by-id) and as read, as bench records them
            role TEXT NOT NULL,             -- pool | spare
            PRIMARY KEY (resilver_id, position)
        )""",
    ],
    [  # 5: runs and drills known across machines, for `zfslab merge` and fleet runs (docs/fleet.md#merge):
       #    a random uid (the local id is only this file's), and origin, the host that measured it
        "ALTER TABLE runs ADD COLUMN uid TEXT",
        "ALTER TABLE runs ADD COLUMN origin TEXT",
        "CREATE UNIQUE INDEX runs_uid ON runs(uid)",
        "ALTER TABLE drills ADD COLUMN uid TEXT",
        "ALTER TABLE drills ADD COLUMN origin TEXT",
        "CREATE UNIQUE INDEX drills_uid ON drills(uid)",
    ],
    [  # 6: a pool zfslab is about to create, recorded before `zpool create`: a run killed before
       #    the pool's GUID reached `pools` finds its pool again by name and mark (the user property
       #    the create sets), and records the GUID then
        """CREATE TABLE pool_intents (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            purpose TEXT NOT NULL,          -- bench | drill
            run_id INTEGER REFERENCES runs(id),
            layout TEXT NOT NULL,
            mark TEXT NOT NULL,             -- the value of zfslab:bench / zfslab:drill on the pool
            created_at TEXT NOT NULL
        )""",
        # each disk's SMART writes counter as it was after zfslab's own wipe: more written since
        # is someone else's (docs/safety.md#the-disks-own-history)
        """CREATE TABLE disk_history (
            serial TEXT PRIMARY KEY,
            written_bytes INTEGER NOT NULL,
            recorded_at TEXT NOT NULL
        )""",
    ],
]
SCHEMA_VERSION = len(MIGRATIONS)


# 'zfsl' in ASCII: SQLite's header field for the application that owns the file
APPLICATION_ID = 0x7A66736C
KNOWN_TABLES = {"schema_version", "runs", "run_disks", "measurements", "layout_capacity", "drills", "pools",
                "resilvers", "resilver_disks", "pool_intents", "disk_history"}


class DatabaseTooNew(ZfslabError):
    """{} has schema version {}, newer than this zfslab knows ({}); upgrade zfslab to read it"""

    exit_code = 2


class NotOurDatabase(ZfslabError):
    """{}: {}; give --db a zfslab results file (or a new file name)"""

    exit_code = 2


class EmptyDatabase(NotOurDatabase):
    """{}: {}; give --db a zfslab results file (or a new file name)"""


class NoDatabase(ZfslabError):
    """{}: no such results file; run `zfslab bench` or `zfslab drill` first, or give --db the file they wrote"""

    exit_code = 2


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def stored_version(conn: sqlite3.Connection, path: str) -> int:
    """The schema version of a zfslab database (0: an empty file, not yet one); refuses a file
    whose tables or version are not zfslab's, or a version newer than this zfslab knows."""
    tables = _tables(conn)
    if not tables:
        return 0
    app = conn.execute("PRAGMA application_id").fetchone()[0]
    if app not in (0, APPLICATION_ID):  # 0: files made before zfslab set it
        raise NotOurDatabase(path, f"an SQLite database of another program (application_id {app:#x})")
    foreign = sorted(tables - KNOWN_TABLES)
    if foreign and app == APPLICATION_ID and "schema_version" in tables:
        # a newer zfslab's own file: its new tables are not foreign, its version says why we cannot read it
        newer = [r[0] for r in conn.execute("SELECT version FROM schema_version") if type(r[0]) is int]
        if newer and max(newer) > SCHEMA_VERSION:
            raise DatabaseTooNew(path, max(newer), SCHEMA_VERSION)
    if "schema_version" not in tables or foreign:
        raise NotOurDatabase(path, "an SQLite database that is not zfslab's (tables: "
                                   f"{', '.join(sorted(tables)[:6])})")
    versions = [r[0] for r in conn.execute("SELECT version FROM schema_version")]
    if not versions or not all(type(v) is int for v in versions):
        raise NotOurDatabase(path, "its schema_version table does not hold zfslab's version numbers")
    version = max(versions)
    if version > SCHEMA_VERSION:
        raise DatabaseTooNew(path, version, SCHEMA_VERSION)
    return version


def migrate(conn: sqlite3.Connection, path: str = ":memory:") -> int:
    """Apply the migrations this database lacks; returns the version it is at."""
    version = stored_version(conn, path)
    for number in range(version + 1, SCHEMA_VERSION + 1):
        with atomic(conn):
            if number == 1:
                # a new file's version table and id commit with its first migration: a reader (a
                # fleet's probe) never meets a version table without a version in it, which reads
                # as another program's file (the header's id is transactional too)
                conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
                conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            for statement in MIGRATIONS[number - 1]:
                conn.execute(statement)
            conn.execute("INSERT INTO schema_version (version) VALUES (?)", (number,))
    return SCHEMA_VERSION


@contextmanager
def atomic(conn: sqlite3.Connection):
    """One transaction: committed whole, or rolled back whole."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _file_problem(path: str) -> str | None:
    """Why path cannot be an SQLite file, before SQLite is let near it."""
    if os.path.isdir(path):
        return "a directory, not a results file"
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO would block the read below
            return "not a regular file, not a results file"
    except OSError as e:
        return f"cannot be read ({e.strerror})"
    try:
        with open(path, "rb") as f:
            head = f.read(16)
    except OSError as e:
        return f"cannot be read ({e.strerror})"
    if head and head != b"SQLite format 3\x00":
        return "not an SQLite database"
    return None


def _sqlite_error(path: str, e: sqlite3.Error) -> NotOurDatabase:
    return NotOurDatabase(path, f"not a usable SQLite database ({e})")


def connect(path: str) -> sqlite3.Connection:
    """Open (or create) a zfslab results database for writing, migrated to this version.
    A file that is not zfslab's is refused before anything is written to it."""
    if path != ":memory:":
        problem = _file_problem(path) if os.path.exists(path) else None
        if problem:
            raise NotOurDatabase(path, problem)
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise NotOurDatabase(path, f"the folder {folder} does not exist")
    try:
        conn = sqlite3.connect(path, isolation_level=None, timeout=30)
        conn.row_factory = sqlite3.Row
        stored_version(conn, path)  # refuse before the first write, journal mode included
        conn.execute("PRAGMA foreign_keys = ON")
        if path != ":memory:":
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = FULL")  # a measurement survives a power cut once committed
        migrate(conn, path)
    except sqlite3.DatabaseError as e:
        raise _sqlite_error(path, e) from None
    except UnicodeDecodeError:  # a damaged schema whose names are not UTF-8
        raise NotOurDatabase(path, "its schema holds text that is not UTF-8") from None
    return conn


def open_readonly(path: str) -> sqlite3.Connection:
    """Open an existing zfslab results database without changing a byte of it, or creating one
    beside it (SQLite's immutable=1, or a private copy when a log lies beside it: no tables, no
    migration, no journal-mode switch). An older zfslab's database reads as far as its tables go;
    readers must not assume the newest tables exist."""
    if not os.path.exists(path):
        raise NoDatabase(path)
    problem = _file_problem(path)
    if problem:
        raise NotOurDatabase(path, problem)
    # First the main file alone, immutable=1: SQLite then creates no -wal or -shm file beside it,
    # whoever's file it is, and another program's file is refused on what this read shows.
    conn = _open_uri(path, "mode=ro&immutable=1")
    version = _version_or_close(conn, path)
    log = log_beside(path)
    if log is not None:
        # a log (a bench still running, one killed, another program's writer) may hold committed
        # rows: a mode=ro reader would create the -shm beside the file or write into it, so a
        # private copy with the log replayed is read instead (store/wal_copy.py)
        conn.close()
        try:
            conn = open_copy(path, log, lambda copy: _open_uri(copy, "mode=ro&immutable=1", shown_as=path))
        except CopyFailed as e:
            raise NotOurDatabase(path, str(e)) from None
        version = _version_or_close(conn, path)
    if version == 0:
        conn.close()
        raise EmptyDatabase(path, "an empty SQLite database, with no zfslab results in it")
    return conn


def _open_uri(path: str, flags: str, shown_as: str | None = None) -> sqlite3.Connection:
    try:
        conn = sqlite3.connect(f"file:{_uri_path(path)}?{flags}", uri=True, isolation_level=None, timeout=30)
    except sqlite3.DatabaseError as e:
        raise _sqlite_error(shown_as or path, e) from None
    conn.row_factory = sqlite3.Row
    return conn


def _version_or_close(conn: sqlite3.Connection, path: str) -> int:
    try:
        return stored_version(conn, path)
    except sqlite3.DatabaseError as e:
        conn.close()
        raise _sqlite_error(path, e) from None
    except UnicodeDecodeError:  # a damaged schema whose names are not UTF-8
        conn.close()
        raise NotOurDatabase(path, "its schema holds text that is not UTF-8") from None
    except BaseException:
        conn.close()
        raise


def has_table(conn: sqlite3.Connection, name: str) -> bool:
    return name in _tables(conn)


def _uri_path(path: str) -> str:
    return quote(os.path.abspath(path))
