"""`zfslab merge`: several hosts' results files into one, inputs untouched, each run once."""

import hashlib
import os
import sqlite3
import tempfile

import pytest

from tests.fleet_data import RunSpec, content, write_db
from zfslab.store.merge import merge

M = (("raidz2:6", "seqread", 0), ("raidz2:6", "seqread", 1), ("mirror:2", "randread", 0))


def _sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def _two_hosts(tmp_path):
    a, b = str(tmp_path / "st01.sqlite"), str(tmp_path / "st02.sqlite")
    write_db(a, [RunSpec("u1", "st01", "2026-11-01T10:00:00+00:00", M)], drills=[("d1", "st01", "2026-11-01T12:00")])
    write_db(b, [RunSpec("u2", "st02", "2026-11-01T10:00:05+00:00", M[:2])])
    return a, b


def test_merge_two_hosts_then_plan_reads_it(tmp_path, run_cli):
    a, b = _two_hosts(tmp_path)
    out = str(tmp_path / "all.sqlite")
    r = run_cli("merge", a, b, "-o", out)
    assert r.exit_code == 0, r.stderr
    assert " ".join(r.stdout.split()) == (f"{out}: 2 runs (2 new), 5 measurements, 1 drill results (1 new) from 2 "
                                          "files; hosts: st01, st02")
    assert [row[:2] for row in content(out)["runs"]] == [("u1", "st01"), ("u2", "st02")]
    again = run_cli("merge", a, b, "-o", out, "--json")
    assert '"runs_added": 0' in again.stdout and '"measurements": 5' in again.stdout
    report = run_cli("report", "--db", out, "--json")
    assert report.exit_code == 0 and report.stdout.count("raidz2:6") >= 2, report.stderr
    assert not os.path.exists(out + "-wal") and not [f for f in os.listdir(tmp_path) if f.startswith(".zfslab-merge")]


def test_inputs_are_byte_identical_after_and_gain_no_files(tmp_path, run_cli):
    a, b = _two_hosts(tmp_path)
    before = {p: _sha(p) for p in (a, b)}
    files = sorted(os.listdir(tmp_path))
    assert run_cli("merge", a, b, "-o", str(tmp_path / "all.sqlite")).exit_code == 0
    assert {p: _sha(p) for p in (a, b)} == before
    assert sorted(os.listdir(tmp_path)) == sorted(files + ["all.sqlite"])


def test_a_copy_taken_mid_run_adds_only_what_it_lacks(tmp_path):
    early, late = str(tmp_path / "early.sqlite"), str(tmp_path / "late.sqlite")
    write_db(early, [RunSpec("u1", "st01", "2026-11-01T10:00:00+00:00", M[:1], finished=False)])
    write_db(late, [RunSpec("u1", "st01", "2026-11-01T10:00:00+00:00", M)])
    out = str(tmp_path / "all.sqlite")
    s = merge([early, late], out)
    assert (s.runs, s.measurements) == (1, 3)
    runs = content(out)["runs"]
    assert len(runs) == 1 and runs[0][4] is not None   # the finished copy's row


def test_old_runs_without_uid_are_one_run_in_every_copy(tmp_path):
    a, b = str(tmp_path / "a.sqlite"), str(tmp_path / "b.sqlite")
    spec = RunSpec(None, "st01", "2026-11-01T10:00:00+00:00", M)
    write_db(a, [spec])
    write_db(b, [spec])
    out = str(tmp_path / "all.sqlite")
    assert merge([a, b], out).runs == 1 and merge([out, a], str(tmp_path / "again.sqlite")).runs == 1


def test_refusals_are_one_line(tmp_path, run_cli):
    a, _ = _two_hosts(tmp_path)
    r = run_cli("merge", a, "-o", a)
    assert r.exit_code == 2 and r.stderr.strip().endswith(
        f"-o {a} is also an input, and merge never changes its inputs; give -o a new file name")
    missing = run_cli("merge", str(tmp_path / "nope.sqlite"), "-o", str(tmp_path / "x.sqlite"))
    assert missing.exit_code == 2 and "nope.sqlite: no such file" in missing.stderr
    foreign = str(tmp_path / "foreign.sqlite")
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE t (x)")
    conn.close()
    r = run_cli("merge", foreign, "-o", str(tmp_path / "y.sqlite"))
    assert r.exit_code == 2 and "not zfslab's" in r.stderr and not os.path.exists(tmp_path / "y.sqlite")
    newer = str(tmp_path / "newer.sqlite")
    write_db(newer, [])
    conn = sqlite3.connect(newer)
    conn.execute("INSERT INTO schema_version VALUES (99)")
    conn.commit()
    conn.close()
    r = run_cli("merge", newer, "-o", str(tmp_path / "z.sqlite"))
    assert r.exit_code == 2 and "schema version 99, newer than this zfslab knows" in r.stderr


def test_new_runs_and_drills_carry_a_uid_and_their_host():
    from zfslab.model.drill_results import ScenarioResult, Skipped
    from zfslab.store.results import Results
    from zfslab.store.schema import connect
    conn = connect(":memory:")
    results = Results(conn)
    rid = results.start_run(key="k", command="zfslab bench", suite="quick", repeats=1, options={}, sandbox=False,
                            facts={"hostname": "st07"}, disks=[])
    other = results.start_run(key="k", command="zfslab bench", suite="quick", repeats=1, options={}, sandbox=False,
                              facts={"hostname": "st07"}, disks=[])
    rows = conn.execute("SELECT uid, origin FROM runs WHERE id IN (?, ?)", (rid, other)).fetchall()
    assert [r["origin"] for r in rows] == ["st07", "st07"] and len({r["uid"] for r in rows}) == 2
    assert all(len(r["uid"]) == 32 for r in rows)
    skipped = ScenarioResult("degraded", "skipped", 0.0, Skipped("no redundancy"))
    results.add_drill("mirror:2", [skipped], "ok", "2.1.11", False)
    uid, origin = conn.execute("SELECT uid, origin FROM drills").fetchone()
    assert len(uid) == 32 and origin


def test_a_version_4_database_gains_the_columns_and_its_old_runs_merge(tmp_path):
    from zfslab.store.schema import MIGRATIONS, atomic, connect
    old = str(tmp_path / "v4.sqlite")
    conn = sqlite3.connect(old, isolation_level=None)
    conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    for number, statements in enumerate(MIGRATIONS[:4], 1):
        with atomic(conn):
            for s in statements:
                conn.execute(s)
            conn.execute("INSERT INTO schema_version VALUES (?)", (number,))
    conn.execute("INSERT INTO runs (key, started_at, command, suite, repeats, options_json, hostname) "
                 "VALUES ('k', '2026-01-01T00:00:00+00:00', 'zfslab bench', 'quick', 1, '{}', 'old-host')")
    conn.close()
    out = str(tmp_path / "all.sqlite")
    assert merge([old], out).origins == ("old-host",)   # read as it is: a version 4 file, never migrated
    assert sqlite3.connect(old).execute("SELECT MAX(version) FROM schema_version").fetchone()[0] == 4
    migrated = connect(old)
    assert tuple(migrated.execute("SELECT uid, origin FROM runs").fetchone()) == (None, None)
    migrated.close()
    assert merge([old], out).runs_added == 0   # the same run, by its digest, before and after migrating


# --- issue 38: inputs with a write-ahead log, an output folder that cannot be written, merge's own words

def _listing(folder):
    return {p: _sha(os.path.join(folder, p)) for p in sorted(os.listdir(folder))}


def _with_log(tmp_path, name="live.sqlite"):
    """A zfslab file whose newest run is committed to its -wal only (a bench killed, or running)."""
    path = str(tmp_path / name)
    write_db(path, [RunSpec("u1", "st01", "2026-11-01T10:00:00+00:00", M)])
    writer = sqlite3.connect(path, isolation_level=None)
    writer.execute("PRAGMA journal_mode = WAL")
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    writer.execute("UPDATE measurements SET write_mb_s = 123.0")
    return path, writer


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """tempfile's folder for this test alone: merge's private copies must be gone after it."""
    folder = tmp_path / "private"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def test_a_wal_input_is_read_whole_and_nothing_appears_or_changes_beside_it(tmp_path, private_tmp, run_cli):
    import shutil
    inputs = tmp_path / "in"
    inputs.mkdir()
    live, writer = _with_log(inputs, "running.sqlite")   # a bench running: its -wal and -shm beside it
    killed = str(inputs / "killed.sqlite")
    shutil.copyfile(live, killed)
    shutil.copyfile(live + "-wal", killed + "-wal")      # as a bench killed mid-run leaves it: a -wal, no -shm
    before = _listing(inputs)
    assert sorted(before) == ["killed.sqlite", "killed.sqlite-wal", "running.sqlite", "running.sqlite-shm",
                              "running.sqlite-wal"]
    out = str(tmp_path / "all.sqlite")
    for path in (killed, live):
        r = run_cli("merge", path, "-o", out)
        assert r.exit_code == 0, r.stderr
        # the rows only the log held are merged
        assert {row[0] for row in sqlite3.connect(out).execute("SELECT write_mb_s FROM measurements")} == {123.0}
        os.unlink(out)
    # nothing created or changed beside the inputs, not even the -shm a mode=ro reader writes its marks to
    assert _listing(inputs) == before
    writer.close()
    assert os.listdir(private_tmp) == []


def test_an_output_folder_that_cannot_be_written_is_one_line(tmp_path, run_cli, monkeypatch):
    a, _ = _two_hosts(tmp_path)

    def refused(*args, **kwargs):   # as for a user without write permission on the folder (the suite runs as root)
        raise PermissionError(13, "Permission denied")
    monkeypatch.setattr(tempfile, "mkstemp", refused)
    r = run_cli("merge", a, "-o", str(tmp_path / "all.sqlite"))
    assert r.exit_code == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "cannot be written (Permission denied); give -o a file in a folder you can write" in r.stderr


def test_merges_refusals_name_its_own_options_not_db(tmp_path, run_cli):
    foreign = str(tmp_path / "foreign.sqlite")
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE t (x)")
    conn.close()
    (tmp_path / "junk.sqlite").write_text("hello")
    damaged, _ = _two_hosts(tmp_path)
    conn = sqlite3.connect(damaged)
    conn.execute("UPDATE measurements SET write_mb_s = -5")
    conn.commit()
    conn.close()
    for args in ([foreign], [str(tmp_path / "junk.sqlite")], [damaged], [str(tmp_path / "nope.sqlite")],
                 [str(tmp_path)]):
        r = run_cli("merge", *args, "-o", str(tmp_path / "all.sqlite"))
        assert r.exit_code == 2 and r.stderr.count("\n") == 1, r.stderr
        assert "--db" not in r.stderr and "give results files bench, drill or merge wrote" in r.stderr, r.stderr
