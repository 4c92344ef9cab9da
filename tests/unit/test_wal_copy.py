"""store/wal_copy.py: a database read while its writer closes. SQLite's last close checkpoints the
whole -wal into the file and deletes it; a reader that saw the log a moment before must then read
the file alone, not fail (a fleet guest's probe once said "-wal cannot be read (No such file or
directory)" of a host's database as its bench ended)."""

import os
import shutil
import sqlite3

import pytest

from zfslab.store import wal_copy


def _writer(path):
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA wal_autocheckpoint = 0")   # every row stays in the -wal until the close
    conn.execute("CREATE TABLE t (x INTEGER)")
    conn.executemany("INSERT INTO t VALUES (?)", [(i,) for i in range(100)])
    assert os.path.getsize(path + "-wal") > 0
    return conn


def _rows(copy):
    conn = sqlite3.connect(f"file:{copy}?mode=ro&immutable=1", uri=True)
    try:
        return conn.execute("SELECT COUNT(*), SUM(x) FROM t").fetchone()
    finally:
        conn.close()


def test_a_log_removed_by_the_writers_close_during_the_copy_reads_the_whole_file(tmp_path, monkeypatch):
    path = str(tmp_path / "db.sqlite")
    writer = _writer(path)
    real = shutil.copyfile
    closed = []

    def close_first(src, dst):   # the writer's last close lands between the look at the log and its copy
        if src.endswith("-wal") and not closed:
            writer.close()
            closed.append(src)
        return real(src, dst)
    monkeypatch.setattr(wal_copy.shutil, "copyfile", close_first)
    copy = str(tmp_path / "copy.sqlite")
    wal_copy.copy_with_log(path, "-wal", copy)
    assert closed and not os.path.exists(path + "-wal")
    assert _rows(copy) == (100, sum(range(100)))
    assert sorted(os.listdir(tmp_path)) == ["copy.sqlite", "db.sqlite"]   # no stale log beside the copy


def test_a_log_still_there_is_replayed_into_the_copy(tmp_path):
    path = str(tmp_path / "db.sqlite")
    writer = _writer(path)
    try:
        copy = str(tmp_path / "copy.sqlite")
        wal_copy.copy_with_log(path, "-wal", copy)
        assert _rows(copy) == (100, sum(range(100)))   # every row was only in the -wal
    finally:
        writer.close()


def _changing(monkeypatch, writer, times):
    """copyfile that commits a row in the writer as the log is copied, `times` times."""
    real, commits = shutil.copyfile, []

    def commit_then_copy(src, dst):
        if src.endswith("-wal") and len(commits) < times:
            writer.execute("INSERT INTO t VALUES (?)", (1000 + len(commits),))
            commits.append(src)
        return real(src, dst)
    monkeypatch.setattr(wal_copy.shutil, "copyfile", commit_then_copy)
    return commits


def test_a_burst_of_commits_during_the_copy_is_waited_out_with_growing_pauses(tmp_path, monkeypatch):
    """A bench creating its file commits its migrations in a burst: a fleet probe's five copies back
    to back all met changes and it refused the host's database (a CI-like run). Six changes in a
    row are now waited out (fails before: five attempts, no pause)."""
    path = str(tmp_path / "db.sqlite")
    writer = _writer(path)
    pauses = []
    monkeypatch.setattr(wal_copy, "_pause", pauses.append)
    try:
        commits = _changing(monkeypatch, writer, 6)
        copy = str(tmp_path / "copy.sqlite")
        wal_copy.copy_with_log(path, "-wal", copy)
        assert len(commits) == 6
        assert _rows(copy) == (106, sum(range(100)) + sum(range(1000, 1006)))   # the last commit is in
        assert pauses == sorted(pauses) and len(pauses) == 6 and pauses[0] > 0
    finally:
        writer.close()


def test_a_file_that_never_stops_changing_is_refused_after_the_pauses(tmp_path, monkeypatch):
    path = str(tmp_path / "db.sqlite")
    writer = _writer(path)
    pauses = []
    monkeypatch.setattr(wal_copy, "_pause", pauses.append)
    try:
        _changing(monkeypatch, writer, 10 ** 6)
        with pytest.raises(wal_copy.CopyFailed, match=f"changed {wal_copy.COPY_ATTEMPTS} times"):
            wal_copy.copy_with_log(path, "-wal", str(tmp_path / "copy.sqlite"))
        assert sum(pauses) >= 1.0   # waited longer than a burst lasts before refusing
    finally:
        writer.close()
