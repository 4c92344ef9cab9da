"""store/results.py on a real SQLite file: runs, measurements (one transaction per call),
capacities, pool GUIDs and the per-layout summary over repeats."""

from __future__ import annotations

import datetime
import itertools
import json
import sqlite3
from dataclasses import FrozenInstanceError, replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zfslab.store.results import Measurement, MeasurementRecord, Results
from zfslab.store.schema import MIGRATIONS, connect, open_readonly

FACTS = {"zfs_version": "zfs-2.1.11-1", "kernel": "6.1.0-18-amd64", "cpu": "AMD EPYC 7302P",
         "ram_bytes": 68_719_476_736, "hostname": "benchhost"}
DISKS = [
    {"device": "/dev/disk/by-id/ata-A", "serial": "WD-A", "model": "WD4001FYYG", "size_bytes": 4_000_787_030_016,
     "rotational": True},
    {"device": "/dev/disk/by-id/ata-B", "serial": "WD-B", "model": "WD4001FYYG", "size_bytes": 4_000_787_030_016,
     "rotational": 1},
    {"device": "/tmp/v2"},  # a sandbox file: no serial, model, size or rotational flag
]


def measurement(layout="mirror:2", test="seqwrite", repeat=1, **changes) -> Measurement:
    m = Measurement(layout=layout, test=test, repeat=repeat, seconds=12.5, read_mb_s=0.0, write_mb_s=180.25,
                    read_iops=0.0, write_iops=171.9, read_clat_p50_us=None, read_clat_p99_us=None,
                    write_clat_p50_us=5_800.0, write_clat_p99_us=14_000.0, sync_mean_us=None,
                    disk_read_mb=0.5, disk_write_mb=2_300.0, disk_util_max=0.97, cache_suspect=False,
                    fio_json='{"fio version": "fio-3.33"}', diskstats_json='{"sda": []}', iostat_text="")
    return replace(m, **changes)


def utc(text: str) -> datetime.datetime:
    t = datetime.datetime.fromisoformat(text)
    assert t.utcoffset() == datetime.timedelta(0), text
    return t


def now_s() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)


@pytest.fixture
def db(tmp_path):
    return str(tmp_path / "results.sqlite")


@pytest.fixture
def results(db):
    conn = connect(db)
    yield Results(conn)
    conn.close()


def start(results: Results, key="k1", disks=DISKS, **kw) -> int:
    args = dict(key=key, command="zfslab bench --suite quick", suite="quick", repeats=3,
                options={"suite": "quick", "ashift": 12, "recordsize": "128K"}, sandbox=False, facts=FACTS,
                disks=disks)
    return results.start_run(**(args | kw))


def count(db: str, table: str) -> int:
    """Rows in a table as another connection sees them: what is committed, nothing else."""
    other = sqlite3.connect(db)
    try:
        return other.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    finally:
        other.close()


# ---- runs ------------------------------------------------------------------------------------

def test_start_run_stores_the_run_its_facts_and_its_disks_in_order(results, db):
    before = now_s()
    run_id = start(results)
    after = now_s()
    row = results.conn.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
    assert (row["key"], row["command"], row["suite"], row["repeats"], row["sandbox"]) == (
        "k1", "zfslab bench --suite quick", "quick", 3, 0)
    # sorted keys: the same options always give the same text
    assert row["options_json"] == '{"ashift": 12, "recordsize": "128K", "suite": "quick"}'
    assert (row["zfs_version"], row["kernel"], row["cpu"], row["ram_bytes"], row["hostname"]) == (
        "zfs-2.1.11-1", "6.1.0-18-amd64", "AMD EPYC 7302P", 68_719_476_736, "benchhost")
    assert before <= utc(row["started_at"]) <= after
    assert row["finished_at"] is None
    disks = [tuple(r) for r in results.conn.execute(
        "SELECT position, device, serial, model, size_bytes, rotational FROM run_disks WHERE run_id = ? "
        "ORDER BY position", (run_id,))]
    assert disks == [
        (0, "/dev/disk/by-id/ata-A", "WD-A", "WD4001FYYG", 4_000_787_030_016, 1),
        (1, "/dev/disk/by-id/ata-B", "WD-B", "WD4001FYYG", 4_000_787_030_016, 1),
        (2, "/tmp/v2", None, None, None, None),   # not known: NULL, not "solid-state"
    ]
    assert count(db, "runs") == 1 and count(db, "run_disks") == 3  # committed: another connection sees it


def test_a_sandbox_run_without_facts_stores_nulls(results):
    run_id = start(results, sandbox=True, facts={}, disks=[])
    row = results.conn.execute("SELECT * FROM runs WHERE id = ?", (run_id,)).fetchone()
    assert row["sandbox"] == 1
    assert [row[c] for c in ("zfs_version", "kernel", "cpu", "ram_bytes", "hostname")] == [None] * 5
    assert results.conn.execute("SELECT count(*) FROM run_disks").fetchone()[0] == 0


def test_start_run_is_one_transaction_a_bad_disk_leaves_no_run(results, db):
    bad = DISKS[:2] + [{"serial": "no-device"}]  # the third disk lacks its device
    with pytest.raises(KeyError, match="device"):
        start(results, disks=bad)
    assert count(db, "runs") == 0
    assert count(db, "run_disks") == 0
    assert not results.conn.in_transaction
    assert start(results) == 1  # the connection is usable, and the failed insert left no id behind


def test_find_run_returns_the_newest_run_of_a_key(results):
    assert results.find_run("k1") is None
    first = start(results, key="k1")
    other = start(results, key="k2")
    second = start(results, key="k1")
    assert (first, other, second) == (1, 2, 3)
    assert results.find_run("k1")["id"] == second
    assert results.find_run("k2")["id"] == other
    assert results.find_run("k3") is None


def test_finish_run_sets_finished_at_on_that_run_only(results):
    a, b = start(results, key="a"), start(results, key="b")
    before = now_s()
    results.finish_run(a)
    after = now_s()
    rows = {r["id"]: r for r in results.conn.execute("SELECT * FROM runs")}
    assert before <= utc(rows[a]["finished_at"]) <= after
    assert utc(rows[a]["started_at"]) <= utc(rows[a]["finished_at"])
    assert rows[b]["finished_at"] is None


def test_run_serials_leaves_out_disks_without_one(results):
    run_id = start(results, disks=DISKS + [{"device": "/dev/sdz", "serial": ""}])
    assert results.run_serials(run_id) == {"WD-A", "WD-B"}
    assert results.run_serials(run_id + 1) == set()


# ---- measurements ----------------------------------------------------------------------------

def test_add_stores_every_field_of_a_measurement(results):
    run_id = start(results)
    m = measurement(read_clat_p50_us=110.5, sync_mean_us=8_250.0, cache_suspect=True, iostat_text="sda 1 2\n")
    before = now_s()
    results.add(run_id, m)
    after = now_s()
    row = results.conn.execute("SELECT * FROM measurements").fetchone()
    assert row["run_id"] == run_id
    for name in Measurement.__dataclass_fields__:
        expected = getattr(m, name)
        assert row[name] == (int(expected) if name == "cache_suspect" else expected), name
    assert row["cache_suspect"] == 1
    assert before <= utc(row["started_at"]) <= after


def test_done_lists_the_measurements_of_one_run(results):
    a, b = start(results, key="a"), start(results, key="b")
    assert results.done(a) == set()
    results.add(a, measurement("mirror:2", "seqwrite", 1), measurement("mirror:2", "seqread", 1))
    results.add(a, measurement("raidz1:3", "seqwrite", 2))
    results.add(b, measurement("mirror:2", "seqwrite", 3))
    assert results.done(a) == {("mirror:2", "seqwrite", 1), ("mirror:2", "seqread", 1), ("raidz1:3", "seqwrite", 2)}
    assert results.done(b) == {("mirror:2", "seqwrite", 3)}


def test_add_is_one_transaction_a_duplicate_stores_none_of_the_call(results, db):
    run_id = start(results)
    results.add(run_id, measurement(repeat=1), measurement(repeat=2))
    # the new repeat 3 comes first, then repeat 1 again: UNIQUE(run_id, layout, test, repeat)
    with pytest.raises(sqlite3.IntegrityError, match="UNIQUE constraint failed: measurements.run_id"):
        results.add(run_id, measurement(repeat=3, write_mb_s=1.0), measurement(repeat=1, write_mb_s=2.0))
    assert results.done(run_id) == {("mirror:2", "seqwrite", 1), ("mirror:2", "seqwrite", 2)}
    assert count(db, "measurements") == 2
    # the stored repeat 1 is the first one, not overwritten by the refused call
    assert [r[0] for r in results.conn.execute("SELECT write_mb_s FROM measurements ORDER BY repeat")] == [180.25] * 2
    assert not results.conn.in_transaction
    results.add(run_id, measurement(repeat=3))  # the same connection goes on
    assert count(db, "measurements") == 3


def test_add_twice_the_same_key_in_one_call_stores_nothing(results, db):
    run_id = start(results)
    with pytest.raises(sqlite3.IntegrityError, match="UNIQUE constraint failed"):
        results.add(run_id, measurement(repeat=1), measurement(repeat=1))
    assert results.done(run_id) == set()
    assert count(db, "measurements") == 0


def test_add_rolls_back_on_a_value_sqlite_cannot_store(results, db):
    run_id = start(results)
    with pytest.raises(sqlite3.ProgrammingError):
        results.add(run_id, measurement(repeat=1), measurement(repeat=2, fio_json=object()))
    assert count(db, "measurements") == 0


def test_add_refuses_a_run_that_does_not_exist(results, db):
    # foreign keys are on: a measurement always belongs to a stored run
    with pytest.raises(sqlite3.IntegrityError, match="FOREIGN KEY constraint failed"):
        results.add(42, measurement())
    assert count(db, "measurements") == 0


def test_measurements_survive_reopening_the_file(db):
    conn = connect(db)
    r = Results(conn)
    run_id = start(r)
    r.add(run_id, measurement(repeat=1), measurement(repeat=2, write_mb_s=175.0))
    r.finish_run(run_id)
    conn.close()
    again = Results(open_readonly(db))
    assert again.done(run_id) == {("mirror:2", "seqwrite", 1), ("mirror:2", "seqwrite", 2)}
    assert again.find_run("k1")["finished_at"] is not None
    assert again.summary(run_id)[0].write_mb_s == (180.25 + 175.0) / 2
    again.conn.close()


# ---- capacity and pools ------------------------------------------------------------------------

def test_add_capacity_stores_and_replaces_one_row_per_layout(results):
    run_id = start(results)
    results.add_capacity(run_id, "mirror:2", 4_999_341_932_544, 4_861_902_979_072)
    results.add_capacity(run_id, "raidz1:3", 14_998_025_797_632, 9_667_491_414_016)
    results.add_capacity(run_id, "mirror:2", 1_000, 900)  # measured again after a resume
    rows = [tuple(r) for r in results.conn.execute("SELECT * FROM layout_capacity ORDER BY layout")]
    assert rows == [(run_id, "mirror:2", 1_000, 900), (run_id, "raidz1:3", 14_998_025_797_632, 9_667_491_414_016)]


def test_pool_guids_of_a_run_and_of_the_drills(results):
    a, b = start(results, key="a"), start(results, key="b")
    results.record_pool("1111", "zfslab-bench", "bench", "mirror:2", a)
    results.record_pool("2222", "zfslab-bench", "bench", "raidz1:3", a)
    results.record_pool("3333", "zfslab-bench", "bench", "mirror:2", b)
    results.record_pool("4444", "zfslab-drill", "drill", "raidz2:6")
    results.record_pool("5555", "zfslab-drill", "drill", "mirror:2")
    assert results.pool_guids(run_id=a) == {"1111", "2222"}
    assert results.pool_guids(run_id=b) == {"3333"}
    assert results.pool_guids(purpose="drill") == {"4444", "5555"}
    assert results.pool_guids(purpose="bench") == {"1111", "2222", "3333"}
    row = results.conn.execute("SELECT * FROM pools WHERE guid = '4444'").fetchone()
    assert (row["name"], row["purpose"], row["run_id"], row["layout"]) == ("zfslab-drill", "drill", None, "raidz2:6")


def test_record_pool_again_replaces_the_record_of_that_guid(results):
    run_id = start(results)
    results.record_pool("1111", "zfslab-drill", "drill", "mirror:2")
    results.record_pool("1111", "zfslab-bench", "bench", "raidz1:3", run_id)
    assert results.conn.execute("SELECT count(*) FROM pools").fetchone()[0] == 1
    assert results.pool_guids(purpose="drill") == set()
    assert results.pool_guids(run_id=run_id) == {"1111"}


def test_pool_guids_of_a_database_from_before_pools_were_recorded(tmp_path):
    # a version-2 database, as an older zfslab left it: no pools table
    path = str(tmp_path / "old.sqlite")
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    for number, statements in enumerate(MIGRATIONS[:2], start=1):
        for statement in statements:
            conn.execute(statement)
        conn.execute("INSERT INTO schema_version VALUES (?)", (number,))
    conn.commit()
    conn.close()
    old = Results(open_readonly(path))
    assert old.pool_guids(run_id=1) == set()
    assert old.pool_guids(purpose="drill") == set()
    old.conn.close()


# ---- summary -----------------------------------------------------------------------------------

def test_summary_median_and_range_over_repeats_by_hand(results):
    run_id = start(results)
    results.add(run_id,
                measurement("mirror:2", "seqwrite", 1, write_mb_s=100.0, write_iops=97.0),
                measurement("mirror:2", "seqwrite", 2, write_mb_s=300.0, write_iops=291.0),
                measurement("mirror:2", "seqwrite", 3, write_mb_s=200.0, write_iops=190.0))
    # an even number of repeats: the median is the mean of the middle two (20 and 30)
    for i, (read, iops) in enumerate(((10.0, 1.0), (40.0, 4.0), (20.0, 2.0), (30.0, 3.0)), start=1):
        results.add(run_id, measurement("mirror:2", "randread-4k-t1q1", i, read_mb_s=read, write_mb_s=0.0,
                                        read_iops=iops, write_iops=0.0, cache_suspect=(i == 3)))
    by = {(s.layout, s.test): s for s in results.summary(run_id)}
    w = by[("mirror:2", "seqwrite")]
    assert (w.repeats, w.write_mb_s, w.write_mb_s_range, w.write_iops) == (3, 200.0, (100.0, 300.0), 190.0)
    assert (w.read_mb_s, w.read_mb_s_range, w.cache_suspect) == (0.0, (0.0, 0.0), False)
    r = by[("mirror:2", "randread-4k-t1q1")]
    assert (r.repeats, r.read_mb_s, r.read_mb_s_range, r.read_iops) == (4, 25.0, (10.0, 40.0), 2.5)
    assert r.cache_suspect is True  # one suspect repeat marks the test


def test_summary_one_row_per_layout_and_test_in_the_order_measured(results):
    run_id = start(results)
    other = start(results, key="other")
    results.add(run_id, measurement("raidz1:3", "seqwrite", 1), measurement("mirror:2", "seqwrite", 1))
    results.add(run_id, measurement("raidz1:3", "seqread", 1), measurement("raidz1:3", "seqwrite", 2))
    results.add(other, measurement("stripe", "seqwrite", 1))
    summary = results.summary(run_id)
    assert [(s.layout, s.test, s.repeats) for s in summary] == [
        ("raidz1:3", "seqwrite", 2), ("mirror:2", "seqwrite", 1), ("raidz1:3", "seqread", 1)]
    assert results.summary(other + 1) == []


def test_summary_skips_missing_values_and_says_none_when_all_are(results):
    run_id = start(results)
    # a value that was not measured is stored as NULL: left out of the median, not counted as 0
    results.add(run_id, *(measurement("mirror:2", "bonnie-read", i, read_mb_s=v, write_mb_s=None, read_iops=None,
                                      write_iops=None) for i, v in ((1, None), (2, 50.0), (3, 70.0))))
    s = results.summary(run_id)[0]
    assert (s.repeats, s.read_mb_s, s.read_mb_s_range) == (3, 60.0, (50.0, 70.0))
    assert (s.write_mb_s, s.write_mb_s_range, s.read_iops, s.write_iops) == (None, (None, None), None, None)


def test_summary_hands_out_frozen_records_and_bench_json_keeps_its_keys(results):
    """What bench --json prints of a test: the summary's fields by name, in this order, without the run
    (bench prints the run once, above its results)."""
    run_id = start(results)
    results.add(run_id, measurement(write_mb_s=100.0, cache_suspect=True), measurement(repeat=2, write_mb_s=300.0))
    (s,) = results.summary(run_id)
    assert type(s) is MeasurementRecord and (s.run_id, s.layout, s.test, s.repeats) == (run_id, "mirror:2", "seqwrite", 2)
    with pytest.raises(FrozenInstanceError):
        s.write_mb_s = 0.0
    assert s.as_json() == {"layout": "mirror:2", "test": "seqwrite", "repeats": 2, "read_mb_s": 0.0,
                           "write_mb_s": 200.0, "read_iops": 0.0, "write_iops": 171.9, "read_mb_s_range": (0.0, 0.0),
                           "write_mb_s_range": (100.0, 300.0), "cache_suspect": True}
    assert list(s.as_json()) == ["layout", "test", "repeats", "read_mb_s", "write_mb_s", "read_iops", "write_iops",
                                 "read_mb_s_range", "write_mb_s_range", "cache_suspect"]


_files = itertools.count()


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(values=st.lists(st.floats(0.0, 1e5, allow_nan=False), min_size=1, max_size=7),
       suspect=st.lists(st.booleans(), min_size=7, max_size=7))
def test_summary_median_lies_in_its_range_and_the_range_is_the_extremes(tmp_path, values, suspect):
    conn = connect(str(tmp_path / f"p{next(_files)}.sqlite"))
    r = Results(conn)
    run_id = start(r, disks=[])
    r.add(run_id, *(measurement(repeat=i, write_mb_s=v, cache_suspect=suspect[i])
                    for i, v in enumerate(values)))
    s = r.summary(run_id)
    conn.close()
    assert len(s) == 1 and s[0].repeats == len(values)
    lo, hi = s[0].write_mb_s_range
    assert (lo, hi) == (min(values), max(values))
    assert lo <= s[0].write_mb_s <= hi
    ordered = sorted(values)
    mid = len(values) // 2
    # the median by its definition: the middle value, or the mean of the two middle values
    expected = ordered[mid] if len(values) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
    assert s[0].write_mb_s == pytest.approx(expected, rel=1e-12, abs=1e-12)
    assert s[0].cache_suspect == any(suspect[: len(values)])


def test_options_are_stored_as_json_that_reads_back(results):
    opts = {"size": "1g", "layouts": ["mirror:2", "raidz1:3"], "repeats": 2, "nested": {"b": 1, "a": None}}
    run_id = start(results, options=opts)
    text = results.conn.execute("SELECT options_json FROM runs WHERE id = ?", (run_id,)).fetchone()[0]
    assert json.loads(text) == opts
    assert text.index('"a"') < text.index('"b"')  # keys sorted at every level
