"""report --db, plan --db and bench --dry-run --db read a database without leaving a file beside
it: no -shm or -wal index is created, whoever's file it is, also when it is refused (issue 26).
The WAL-mode files are made by the sqlite3 program and by a live writer, as another program would."""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess

import pytest

from tests.unit.test_plan_db import bench_db

pytestmark = pytest.mark.usefixtures("needs_sqlite3")  # skips, or fails under ZFSLAB_TEST_REQUIRE_TOOLS=1


def readers(path: str, sandbox: str) -> list[tuple[str, ...]]:
    return [("report", "--db", path, "--json"), ("plan", "--db", path, "6x4TB"),
            ("bench", "--dry-run", "--db", path, "--sandbox", sandbox, "--layouts", "mirror:2")]


def _listing(folder) -> dict[str, bytes]:
    return {name: (folder / name).read_bytes() for name in sorted(os.listdir(folder))}


def _live_writer(path: str) -> sqlite3.Connection:
    """Another program's writer in the middle of its work: rows in the -wal, not yet in the file."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    conn.execute("CREATE TABLE IF NOT EXISTS notes (x)")
    conn.execute("INSERT INTO notes VALUES ('written, not checkpointed')")
    return conn


def _foreign_wal_db(folder) -> str:
    path = str(folder / "app.db")
    subprocess.run(["sqlite3", path, "PRAGMA journal_mode=WAL; CREATE TABLE t (x); INSERT INTO t VALUES (1);"],
                   check=True, capture_output=True)
    return path


def _copy_without_index(src: str, folder, *, index: bool = False) -> str:
    """The file and its -wal without the -shm: a copy, or a crash the index did not outlive
    (index: with the -shm as the running writer had it)."""
    os.makedirs(folder, exist_ok=True)
    dst = str(folder / os.path.basename(src))
    shutil.copyfile(src, dst)
    shutil.copyfile(src + "-wal", dst + "-wal")
    if index:
        shutil.copyfile(src + "-shm", dst + "-shm")
    return dst


@pytest.mark.parametrize("case", ["wal-mode, no log", "live writer", "log without index"])
def test_another_programs_wal_file_is_refused_and_nothing_is_created(run_cli, tmp_path, case):
    path = _foreign_wal_db(tmp_path)
    writer = _live_writer(path) if case != "wal-mode, no log" else None
    try:
        if case == "log without index":
            path = _copy_without_index(path, tmp_path / "copy")
        folder = tmp_path / "copy" if case == "log without index" else tmp_path
        before = _listing(folder)
        for args in readers(path, str(tmp_path / "sandbox")):
            r = run_cli(*args)
            assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1, (args, r.stderr)
            assert _listing(folder) == before, args
    finally:
        if writer:
            writer.close()


def test_zfslabs_own_log_without_index_is_read_with_its_logged_rows(run_cli, tmp_path):
    path = bench_db(tmp_path / "r.sqlite")
    conn = sqlite3.connect(path, isolation_level=None)   # a bench killed before its checkpoint
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    conn.execute("UPDATE runs SET zfs_version = '2.9.99-logged'")
    try:
        copy = _copy_without_index(path, tmp_path / "copy")
    finally:
        conn.close()
    before = _listing(tmp_path / "copy")
    for args in readers(copy, str(tmp_path / "sandbox")):
        r = run_cli(*args)
        assert r.exit_code in (0, 10), (args, r.stderr)
        assert _listing(tmp_path / "copy") == before, args
    assert "2.9.99-logged" in run_cli("report", "--db", copy, "--json").stdout   # the row only the log held


def test_a_copy_with_its_index_keeps_the_index_byte_for_byte(run_cli, tmp_path):
    """Issue 38's fuzz: zfslab's tables in the file, another program's row in the log, copied with
    its -shm; a mode=ro reader rewrote that -shm."""
    path = bench_db(tmp_path / "r.sqlite")
    writer = _live_writer(path)
    try:
        copy = _copy_without_index(path, tmp_path / "copy", index=True)
    finally:
        writer.close()
    before = _listing(tmp_path / "copy")
    for args in readers(copy, str(tmp_path / "sandbox")):
        r = run_cli(*args)
        assert r.exit_code == 2 and "not zfslab's (tables: " in r.stderr and "notes" in r.stderr, (args, r.stderr)
        assert _listing(tmp_path / "copy") == before, args


def test_zfslabs_own_file_with_a_live_writer_is_read_and_nothing_is_created(run_cli, tmp_path):
    path = bench_db(tmp_path / "r.sqlite")
    conn = sqlite3.connect(path, isolation_level=None)   # a bench still running: -wal and -shm exist
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    conn.execute("UPDATE runs SET command = command")
    try:
        names = sorted(os.listdir(tmp_path))
        assert f"r.sqlite-wal" in names and "r.sqlite-shm" in names
        before = _listing(tmp_path)
        r = run_cli("report", "--db", path, "--json")
        assert r.exit_code == 0, r.stderr
        assert _listing(tmp_path) == before   # the -shm too: a mode=ro reader writes its read marks there
    finally:
        conn.close()
