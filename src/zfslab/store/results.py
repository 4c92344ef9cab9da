"""Reading and writing bench results; every write is one transaction."""

from __future__ import annotations

import datetime
import json
import platform
import sqlite3
import statistics
import uuid
from dataclasses import dataclass

from zfslab.model.drill_results import ScenarioResult
from zfslab.store.schema import atomic, has_table


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


@dataclass(frozen=True, slots=True)
class Measurement:
    layout: str
    test: str
    repeat: int
    seconds: float
    read_mb_s: float | None  # None: the engine could not time it (bonnie++ prints +++++ for a test too fast)
    write_mb_s: float | None
    read_iops: float
    write_iops: float
    read_clat_p50_us: float | None
    read_clat_p99_us: float | None
    write_clat_p50_us: float | None
    write_clat_p99_us: float | None
    sync_mean_us: float | None
    disk_read_mb: float
    disk_write_mb: float
    disk_util_max: float
    cache_suspect: bool
    fio_json: str  # the engine's raw output: fio's JSON, or bonnie++'s CSV line (suite bonnie)
    diskstats_json: str
    iostat_text: str


@dataclass(frozen=True, slots=True)
class MeasurementRecord:
    """One test of one layout in one run: the median of its repeats, and their spread. What the
    store hands out of its measurements (summary(), and report through store/readback.py), so
    that no caller reads the table's column names."""

    run_id: int
    layout: str  # as stored; the reader parses it
    test: str
    repeats: int
    read_mb_s: float | None  # None: no repeat timed it
    write_mb_s: float | None
    read_iops: float | None
    write_iops: float | None
    read_mb_s_range: tuple[float | None, float | None]   # (lowest, highest) repeat; (None, None) as above
    write_mb_s_range: tuple[float | None, float | None]
    cache_suspect: bool   # some repeat read more than the disks delivered

    def as_json(self) -> dict:
        """bench --json's row (report --json adds the run): the fields by name, in this order."""
        return {"layout": self.layout, "test": self.test, "repeats": self.repeats, "read_mb_s": self.read_mb_s,
                "write_mb_s": self.write_mb_s, "read_iops": self.read_iops, "write_iops": self.write_iops,
                "read_mb_s_range": self.read_mb_s_range, "write_mb_s_range": self.write_mb_s_range,
                "cache_suspect": self.cache_suspect}


class Results:
    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def find_run(self, key: str) -> sqlite3.Row | None:
        return self.conn.execute("SELECT * FROM runs WHERE key = ? ORDER BY id DESC LIMIT 1", (key,)).fetchone()

    def start_run(self, *, key: str, command: str, suite: str, repeats: int, options: dict, sandbox: bool,
                  facts: dict, disks: list[dict]) -> int:
        with atomic(self.conn):
            cur = self.conn.execute(
                "INSERT INTO runs (key, started_at, command, suite, repeats, options_json, sandbox, zfs_version, "
                "kernel, cpu, ram_bytes, hostname, uid, origin) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (key, now(), command, suite, repeats, json.dumps(options, sort_keys=True), int(sandbox),
                 facts.get("zfs_version"), facts.get("kernel"), facts.get("cpu"), facts.get("ram_bytes"),
                 facts.get("hostname"), uuid.uuid4().hex,
                 facts.get("origin") or facts.get("hostname") or platform.node() or None))
            run_id = cur.lastrowid
            for i, d in enumerate(disks):
                self.conn.execute(
                    "INSERT INTO run_disks (run_id, position, device, serial, model, size_bytes, rotational) "
                    "VALUES (?,?,?,?,?,?,?)", (run_id, i, d["device"], d.get("serial"), d.get("model"),
                                               d.get("size_bytes"), _rotational(d.get("rotational"))))
        return int(run_id)

    def run_serials(self, run_id: int) -> set[str]:
        return {r[0] for r in self.conn.execute("SELECT serial FROM run_disks WHERE run_id = ?", (run_id,)) if r[0]}

    def finish_run(self, run_id: int) -> None:
        with atomic(self.conn):
            self.conn.execute("UPDATE runs SET finished_at = ? WHERE id = ?", (now(), run_id))

    def done(self, run_id: int) -> set[tuple[str, str, int]]:
        return {(r["layout"], r["test"], r["repeat"]) for r in
                self.conn.execute("SELECT layout, test, repeat FROM measurements WHERE run_id = ?", (run_id,))}

    def add(self, run_id: int, *ms: Measurement) -> None:
        """Store measurements in one transaction: all of them or, after a crash, none."""
        with atomic(self.conn):
            for m in ms:
                self.conn.execute(
                    "INSERT INTO measurements (run_id, layout, test, repeat, started_at, seconds, read_mb_s, "
                    "write_mb_s, read_iops, write_iops, read_clat_p50_us, read_clat_p99_us, write_clat_p50_us, "
                    "write_clat_p99_us, sync_mean_us, disk_read_mb, disk_write_mb, disk_util_max, cache_suspect, "
                    "fio_json, diskstats_json, iostat_text) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (run_id, m.layout, m.test, m.repeat, now(), m.seconds, m.read_mb_s, m.write_mb_s, m.read_iops,
                     m.write_iops, m.read_clat_p50_us, m.read_clat_p99_us, m.write_clat_p50_us, m.write_clat_p99_us,
                     m.sync_mean_us, m.disk_read_mb, m.disk_write_mb, m.disk_util_max, int(m.cache_suspect),
                     m.fio_json, m.diskstats_json, m.iostat_text))

    def record_pool(self, guid: str, name: str, purpose: str, layout: str, run_id: int | None = None) -> None:
        """A pool zfslab just created: the proof, later, that disks carrying its labels are zfslab's."""
        with atomic(self.conn):
            self.conn.execute("INSERT OR REPLACE INTO pools (guid, name, purpose, run_id, layout, created_at) "
                              "VALUES (?,?,?,?,?,?)", (guid, name, purpose, run_id, layout, now()))

    def pool_guids(self, *, run_id: int | None = None, purpose: str | None = None) -> set[str]:
        """GUIDs of the pools zfslab recorded: those of one bench run, or of every drill."""
        if not has_table(self.conn, "pools"):  # a database from before zfslab recorded them
            return set()
        if run_id is not None:
            rows = self.conn.execute("SELECT guid FROM pools WHERE run_id = ?", (run_id,))
        else:
            rows = self.conn.execute("SELECT guid FROM pools WHERE purpose = ?", (purpose,))
        return {r[0] for r in rows}

    def record_intent(self, name: str, purpose: str, layout: str, mark: str, run_id: int | None = None) -> None:
        """A pool about to be created (before `zpool create`): see pool_intents in schema.py."""
        with atomic(self.conn):
            self.conn.execute("INSERT INTO pool_intents (name, purpose, run_id, layout, mark, created_at) "
                              "VALUES (?,?,?,?,?,?)", (name, purpose, run_id, layout, mark, now()))

    def intents(self, *, run_id: int | None = None, purpose: str | None = None) -> dict[tuple[str, str], str]:
        """(pool name, mark) -> layout of the creates zfslab recorded before running them: those of
        one bench run, or of every drill."""
        if not has_table(self.conn, "pool_intents"):
            return {}
        if run_id is not None:
            rows = self.conn.execute("SELECT name, mark, layout FROM pool_intents WHERE run_id = ?", (run_id,))
        else:
            rows = self.conn.execute("SELECT name, mark, layout FROM pool_intents WHERE purpose = ?", (purpose,))
        return {(r[0], r[1]): r[2] for r in rows}

    def record_disk_history(self, serial: str, written_bytes: int) -> None:
        """A disk's SMART writes counter right after zfslab wiped it."""
        with atomic(self.conn):
            self.conn.execute("INSERT OR REPLACE INTO disk_history (serial, written_bytes, recorded_at) VALUES (?,?,?)",
                              (serial, written_bytes, now()))

    def disk_histories(self) -> dict[str, int]:
        if not has_table(self.conn, "disk_history"):
            return {}
        return {r[0]: r[1] for r in self.conn.execute("SELECT serial, written_bytes FROM disk_history")
                if type(r[1]) is int and r[1] >= 0}

    def add_drill(self, layout: str, results: list[ScenarioResult], verdict: str, zfs_version: str, sandbox: bool,
                  disks: list[dict] | None = None) -> None:
        """A drill's scenarios (model/drill_results.py), in one transaction;
        each resilver it timed also as a row of its own, with the drill's `disks` ({device, serial,
        role}: pool or spare) so plan can tell the disks it was measured on."""
        with atomic(self.conn):
            for r in results:
                cur = self.conn.execute(
                    "INSERT INTO drills (layout, scenario, started_at, seconds, outcome, verdict, data_json, "
                    "zfs_version, sandbox, uid, origin) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                    (layout, r.scenario, now(), r.seconds, r.outcome, verdict, json.dumps(r.detail_dict()), zfs_version,
                     int(sandbox), uuid.uuid4().hex, platform.node() or None))
                for timed in r.timed_resilvers():
                    rid = self.conn.execute(
                        "INSERT INTO resilvers (drill_id, layout, vdev_kind, how, fill, fill_bytes, resilvered_bytes, "
                        "seconds, sandbox) VALUES (?,?,?,?,?,?,?,?,?)",
                        (cur.lastrowid, layout, timed.vdev_kind, timed.how, timed.fill, timed.fill_bytes,
                         timed.resilvered_bytes, timed.seconds, int(sandbox))).lastrowid
                    for i, d in enumerate(disks or ()):
                        self.conn.execute("INSERT INTO resilver_disks (resilver_id, position, device, serial, role) "
                                          "VALUES (?,?,?,?,?)", (rid, i, d["device"], d.get("serial"), d["role"]))

    def add_capacity(self, run_id: int, layout: str, size_bytes: int, usable_bytes: int) -> None:
        with atomic(self.conn):
            self.conn.execute("INSERT OR REPLACE INTO layout_capacity VALUES (?,?,?,?)",
                              (run_id, layout, size_bytes, usable_bytes))

    def summary(self, run_id: int) -> list[MeasurementRecord]:
        """Median and spread per (layout, test) over the repeats, in the order first measured."""
        rows = self.conn.execute("SELECT * FROM measurements WHERE run_id = ? ORDER BY id", (run_id,)).fetchall()
        groups: dict[tuple[str, str], list[sqlite3.Row]] = {}
        for r in rows:
            groups.setdefault((r["layout"], r["test"]), []).append(r)
        out = []
        for (layout, test), rs in groups.items():
            def med(col):
                vals = [r[col] for r in rs if r[col] is not None]
                return statistics.median(vals) if vals else None

            def spread(col):
                vals = [r[col] for r in rs if r[col] is not None]
                return (min(vals), max(vals)) if vals else (None, None)
            out.append(MeasurementRecord(run_id, layout, test, len(rs), med("read_mb_s"), med("write_mb_s"),
                                         med("read_iops"), med("write_iops"), spread("read_mb_s"),
                                         spread("write_mb_s"), any(r["cache_suspect"] for r in rs)))
        return out

def _rotational(value) -> int | None:
    """1 or 0 as the disk said; NULL when not known (sandbox files, a caller that did not read it),
    so plan --db does not take an unknown disk for a solid-state one."""
    return None if value is None else int(bool(value))
