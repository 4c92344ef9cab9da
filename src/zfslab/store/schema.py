"""The results database (SQLite): numbered migrations, one transaction per measurement.

Each migration is a list of statements applied once, in order, recorded in schema_version;
a database from a newer zfslab (a higher version than we know) is refused rather than guessed at.
"""

from __future__ import annotations

import sqlite3
from contextlib import contextmanager

from zfslab.errors import ZfslabError

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
]
SCHEMA_VERSION = len(MIGRATIONS)


class DatabaseTooNew(ZfslabError):
    """{} has schema version {}, newer than this zfslab knows ({}); upgrade zfslab to read it"""

    exit_code = 2


def current_version(conn: sqlite3.Connection) -> int:
    conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
    row = conn.execute("SELECT MAX(version) FROM schema_version").fetchone()
    return row[0] or 0


def migrate(conn: sqlite3.Connection, path: str = ":memory:") -> int:
    """Apply the migrations this database lacks; returns the version it is at."""
    version = current_version(conn)
    if version > SCHEMA_VERSION:
        raise DatabaseTooNew(path, version, SCHEMA_VERSION)
    for number in range(version + 1, SCHEMA_VERSION + 1):
        with atomic(conn):
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


def connect(path: str) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, timeout=30)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA foreign_keys = ON")
    if path != ":memory:":
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = FULL")  # a measurement survives a power cut once committed
    migrate(conn, path)
    return conn
