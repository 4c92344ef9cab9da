"""The results database read back for reports and `plan --db`: every row checked for the types
zfslab writes, the file opened read-only and never changed (docs/safety.md)."""

from __future__ import annotations

import json
import math
import os
import sqlite3
import stat
import statistics
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from zfslab.errors import ParamError, ZfslabError, clip, shown
from zfslab.model.json_input import JsonInputError
from zfslab.model.json_input import parse as parse_json
from zfslab.model.layouts import MAX_POOL_DISKS
from zfslab.model.per_host import HostMeasurement
from zfslab.model.units import MAX_SIZE, parse_blocksize
from zfslab.store.results import MeasurementRecord, Results
from zfslab.store.schema import has_table, open_readonly


class DamagedDatabase(ZfslabError):
    """--db {}: {}; the file is damaged or was not written by zfslab"""

    exit_code = 2


# What report reads of each row, and the types a zfslab database holds there (None: NULL allowed)
_RUN_COLUMNS = {"id": (int,), "started_at": (str,), "zfs_version": (str, None), "kernel": (str, None),
                "cpu": (str, None), "ram_bytes": (int, None), "sandbox": (int,)}
_DISK_COLUMNS = {"device": (str,), "serial": (str, None), "size_bytes": (int, None), "rotational": (int, None)}
_DRILL_COLUMNS = {"layout": (str,), "scenario": (str,), "outcome": (str,), "verdict": (str,),
                  "seconds": (int, float, None)}
_BENCH_COLUMNS = {"layout": (str,), "test": (str,), "repeats": (int,), "read_mb_s": (int, float, None),
                  "write_mb_s": (int, float, None), "read_iops": (int, float, None),
                  "write_iops": (int, float, None), "cache_suspect": (int, bool)}


# Stored figures zfslab never writes below 0: a rate, a count, a size, a duration
_NOT_NEGATIVE = {"read_mb_s", "write_mb_s", "read_iops", "write_iops", "repeats", "ram_bytes", "size_bytes",
                 "seconds", "fill", "fill_bytes", "resilvered_bytes"}
# ... nor above what any pool zfslab plans can do (1,024 disks at 100 GB/s and 10 million IOPS
# each): a rate of 1e308 is finite, but its mean, sum or square overflows the model's arithmetic
_AT_MOST = {"read_mb_s": 1e8, "write_mb_s": 1e8, "read_iops": 1e10, "write_iops": 1e10}


def _checked(row: dict, columns: dict, what: str, path: str) -> dict:
    """The one check every stored value passes before report, plan --db or bench uses it: the
    type zfslab writes there, finite, and not below 0 where zfslab never writes a negative."""
    for name, types in columns.items():
        value = row[name]
        ok = (value is None and None in types) or (
            value is not None and isinstance(value, tuple(t for t in types if t is not None))
            and not (isinstance(value, float) and not math.isfinite(value)))
        if ok and name in _NOT_NEGATIVE and value is not None and value < 0:
            raise DamagedDatabase(shown(path, 200), f"{what} has {name} = {clip(value)}, below 0: not a zfslab value")
        if ok and name in _AT_MOST and value is not None and value > _AT_MOST[name]:
            raise DamagedDatabase(shown(path, 200), f"{what} has {name} = {clip(value)}, above {_AT_MOST[name]:g}, "
                                                    "more than any pool: not a zfslab value")
        if not ok:
            raise DamagedDatabase(shown(path, 200), f"{what} has {name} = {clip(value)}, not a zfslab value")
    return row


def _checked_options(row: dict, path: str) -> dict:
    """A run's options_json: a JSON object whose ashift (9 to 16) and recordsize zfslab can use."""
    what = f"run {clip(row['id'])} (table runs)"

    def refuse(detail: str) -> DamagedDatabase:
        return DamagedDatabase(shown(path, 200), f"{what} has options_json {detail}, not a zfslab value")
    text = row.get("options_json")
    if not isinstance(text, str) or len(text) > 100_000:
        raise refuse(f"= {clip(text)}")
    try:   # the bounded reader: NaN, Infinity, 1e400, 10**400 and deep nesting are not JSON zfslab writes
        options = parse_json(text)
    except JsonInputError as e:
        raise refuse(f"= {clip(text)} ({e})") from None
    if not isinstance(options, dict):
        raise refuse(f"= {clip(text)}")
    ashift = options.get("ashift", 12)
    if type(ashift) is not int or not 9 <= ashift <= 16:
        raise refuse(f"with ashift {clip(ashift)}")
    try:
        parse_blocksize(str(options.get("recordsize", "128K")))
    except (ValueError, ZfslabError):
        raise refuse(f"with recordsize {clip(options.get('recordsize'))}") from None
    return row


def read_results(path: str | None) -> StoredResults:
    """Runs, bench summaries, drills and the latest run with disks, read without changing the file."""
    if not path:
        return StoredResults(BenchHistory((), ()), (), None)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise ParamError("db", shown(path, 200),
                         f"no such file; `zfslab bench ... --db {shown(path, 200)}` makes one") from None
    except OSError as e:
        raise ParamError("db", shown(path, 200), f"cannot be read ({e.strerror})") from None
    if stat.S_ISDIR(st.st_mode):
        raise ParamError("db", shown(path, 200), "a directory; give the results file bench or drill wrote")
    if not stat.S_ISREG(st.st_mode):  # a FIFO would block the reader, a device is not ours to read
        raise ParamError("db", shown(path, 200), "not a regular file; give the results file bench or drill wrote")
    with reading(path) as conn:  # SQLite mode=ro: no tables, no migration, no journal-mode switch
        return _read(conn, path, has_table)


@contextmanager
def reading(path: str) -> Iterator[sqlite3.Connection]:
    """A read-only connection to `path` (open_readonly) on which damage, in whichever table a read
    meets it, is a one-line DamagedDatabase: a page damaged past the header is an error only when
    read, and sqlite3 decodes a table's column names and each TEXT value as UTF-8 only as it hands
    them over (a damaged byte in the CREATE TABLE of resilvers surfaced as an internal error in
    `plan --db`, issue 38's fuzz campaign of 2026-11-28)."""
    try:
        conn = open_readonly(path)
    except UnicodeDecodeError:  # a table name that is not UTF-8: damaged bytes in the schema
        raise DamagedDatabase(shown(path, 200), "its schema holds text that is not UTF-8") from None
    try:
        yield conn
    except sqlite3.DatabaseError as e:
        raise DamagedDatabase(shown(path, 200), f"SQLite cannot read it ({shown(str(e), 80)})") from None
    except UnicodeDecodeError:
        raise DamagedDatabase(shown(path, 200), "a row or a table's schema holds text that is not UTF-8") from None
    except (KeyError, IndexError) as e:  # a table of ours without the columns we wrote
        raise DamagedDatabase(shown(path, 200), f"a table lacks the column {clip(str(e), 40)}") from None
    finally:
        conn.close()


def _read(conn: sqlite3.Connection, path: str, has_table) -> StoredResults:
    results = Results(conn)
    rows = [_checked_options(_checked(dict(r), _RUN_COLUMNS, f"run {clip(r['id'])} (table runs)", path), path)
            for r in conn.execute("SELECT * FROM runs ORDER BY id")] if has_table(conn, "runs") else []
    runs, bench = [], []
    for r in rows:
        disks = [_checked(dict(d), _DISK_COLUMNS, f"a disk of run {r['id']} (table run_disks)", path) for d in conn.execute(
            "SELECT device, serial, size_bytes, rotational FROM run_disks WHERE run_id = ? ORDER BY position", (r["id"],))]
        runs.append(_run_record(r, disks))
        if has_table(conn, "measurements"):
            _check_stored_rates(conn, r["id"], path)
            try:
                summary = results.summary(r["id"])
            except (TypeError, ValueError, statistics.StatisticsError):  # text where numbers belong
                raise DamagedDatabase(shown(path, 200), f"the measurements of run {r['id']} (table measurements) "
                                                        "are not numbers") from None
            bench += [_checked_record(m, _BENCH_COLUMNS, f"a measurement of run {r['id']} (table measurements, "
                                      f"{shown(m.layout, 40)} {shown(m.test, 40)})", path) for m in summary]
    drills = [_drill_record(_checked(dict(d), _DRILL_COLUMNS, f"drill {clip(d['id'])} (table drills)", path))
              for d in conn.execute("SELECT * FROM drills ORDER BY id")] if has_table(conn, "drills") else []
    # the plan's default disks: the latest run whose disks zfslab can plan for
    latest = next((r for r in reversed(runs) if r.disk_bytes and 0 < r.disk_bytes <= MAX_SIZE
                   and 1 <= r.disk_count <= MAX_POOL_DISKS), None)
    return StoredResults(BenchHistory(tuple(runs), tuple(bench)), tuple(drills), latest)


def _checked_record(record, columns: dict, what: str, path: str):
    """_checked() on a record's fields of those names."""
    _checked({name: getattr(record, name) for name in columns}, columns, what, path)
    return record


def _check_stored_rates(conn: sqlite3.Connection, run_id: int, path: str) -> None:
    """Each stored rate of a run, before any mean or sum of them: a number is finite, not below 0
    and not above _AT_MOST (text where a number belongs is the summary's to refuse)."""
    for m in conn.execute("SELECT layout, test, read_mb_s, write_mb_s, read_iops, write_iops FROM measurements "
                          "WHERE run_id = ?", (run_id,)):
        m = dict(m)
        numbers = {k: m[k] for k in _AT_MOST if isinstance(m[k], (int, float)) and not isinstance(m[k], bool)}
        _checked(numbers, {k: (int, float) for k in numbers}, f"a measurement of run {run_id} (table measurements, "
                 f"{shown(m['layout'], 40)} {shown(m['test'], 40)})", path)


_RESILVER_COLUMNS = {"id": (int,), "drill_id": (int,), "layout": (str,), "vdev_kind": (str,), "how": (str,),
                     "fill": (int, float), "fill_bytes": (int,), "resilvered_bytes": (int,),
                     "seconds": (int, float), "sandbox": (int,)}
_RESILVER_DISK_COLUMNS = {"device": (str,), "serial": (str, None), "role": (str,)}


def read_resilvers(path: str) -> list[dict]:
    """Every resilver drill timed (migration 4), each with its disks, read without changing the file;
    [] for a database from before drill recorded them. Call after read_results() has vetted `path`."""
    with reading(path) as conn:
        if not has_table(conn, "resilvers"):
            return []
        out = []
        for r in conn.execute("SELECT * FROM resilvers ORDER BY id"):
            row = _checked(dict(r), _RESILVER_COLUMNS, f"resilver {clip(r['id'])}", path)
            disks = conn.execute("SELECT device, serial, role FROM resilver_disks WHERE resilver_id = ? "
                                 "ORDER BY position", (row["id"],))
            row["disks"] = [_checked(dict(d), _RESILVER_DISK_COLUMNS, f"a disk of resilver {row['id']}", path)
                            for d in disks]
            out.append(row)
        return out


# Typed reads: what the store hands out of the rows the checks above passed (store/bench_fit.py,
# report, and through them the model): records with fields, never the tables' column names


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One bench run: its host, its disks and the options it measured with (options_json decoded)."""

    id: int
    sandbox: bool
    disk_ids: tuple[str, ...]  # serials when bench read every one, else the paths it was given
    disk_count: int
    disk_bytes: int | None  # None: sandbox files, or disks whose size bench could not read
    ashift: int
    recordsize_bytes: int
    origin: str | None         # the host that measured it: its origin (migration 5, set by merge), else its hostname
    options_key: str           # its options, canonical JSON: runs alike in all but layouts and host
    disk_rotational: bool | None   # every disk rotational, none, or None: mixed or not known
    started_at: str
    zfs_version: str | None    # None, here and in the three below: the run did not record it
    kernel: str | None
    cpu: str | None
    ram_bytes: int | None
    devices: tuple[str, ...]   # the disks as bench was given them, in order
    # every column of its row as the table holds it, in the table's order: report --json prints
    # the run whole, and a database from before a migration has fewer columns
    stored: tuple[tuple[str, object], ...]

    def as_json(self) -> dict:
        """report --json's run: its stored columns by name, then what the store read of its disks."""
        return dict(self.stored) | {"disks": ", ".join(self.devices), "disk_ids": self.disk_ids,
                                    "disk_count": self.disk_count, "disk_bytes": self.disk_bytes,
                                    "disk_rotational": self.disk_rotational}


@dataclass(frozen=True, slots=True)
class DrillRecord:
    """One scenario a drill ran on one layout, and what it found."""

    layout: str
    scenario: str
    outcome: str
    verdict: str
    seconds: float | None   # None: not timed
    stored: tuple[tuple[str, object], ...]   # its row whole, as RunRecord.stored, for report --json

    def as_json(self) -> dict:
        return dict(self.stored)


@dataclass(frozen=True, slots=True)
class ResilverRecord:
    """One resilver a drill timed, with the ids of its pool's disks (serials when all are known)."""

    id: int
    drill_id: int
    layout: str
    vdev_kind: str
    how: str  # healing | sequential
    fill: float
    resilvered_bytes: int
    seconds: float
    sandbox: bool
    pool_disk_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class BenchHistory:
    """What a results database holds of bench: its runs and their measurements, oldest first."""

    runs: tuple[RunRecord, ...]
    measurements: tuple[MeasurementRecord, ...]

    def run(self, run_id: int) -> RunRecord:
        return next(r for r in self.runs if r.id == run_id)

    def host_measurements(self, only: Sequence[MeasurementRecord] | None = None) -> tuple[HostMeasurement, ...]:
        """Each measurement (or those of `only`) with the host of its run, for model/per_host.py
        (whose record it is: the model never imports the store)."""
        host = {r.id: r.origin for r in self.runs}
        return tuple(HostMeasurement(host[m.run_id], m.layout, m.test, m.read_mb_s, m.write_mb_s, m.read_iops,
                                     m.write_iops) for m in (self.measurements if only is None else only))


@dataclass(frozen=True, slots=True)
class StoredResults:
    """A results database read back (read_results): its bench runs and measurements, its drills,
    and the run whose disks plan and report take when none are given."""

    bench: BenchHistory
    drills: tuple[DrillRecord, ...]
    latest: RunRecord | None   # the latest run whose disks zfslab can plan for


def _run_record(run: dict, disks: list[dict]) -> RunRecord:
    """A checked runs row and its checked disks as a record."""
    options = json.loads(run.get("options_json") or "{}")  # _checked_options vetted it
    origin = run.get("origin") or run.get("hostname")
    kinds = {d["rotational"] for d in disks}   # one kind for every disk, else not known
    return RunRecord(
        id=run["id"], sandbox=bool(run["sandbox"]),
        # the disks' identity: their serials when bench read every one, else the paths it was given
        disk_ids=tuple(d["serial"] if all(x["serial"] for x in disks) else d["device"] for d in disks),
        disk_count=len(disks), disk_bytes=disks[0]["size_bytes"] if disks else None,
        ashift=int(options.get("ashift", 12)), recordsize_bytes=parse_blocksize(str(options.get("recordsize", "128K"))),
        origin=origin if isinstance(origin, str) else None, options_key=json.dumps(options, sort_keys=True),
        disk_rotational=bool(kinds.pop()) if len(kinds) == 1 and None not in kinds else None,
        started_at=run["started_at"], zfs_version=run["zfs_version"], kernel=run["kernel"], cpu=run["cpu"],
        ram_bytes=run["ram_bytes"], devices=tuple(d["device"] for d in disks), stored=tuple(run.items()))


def _drill_record(drill: dict) -> DrillRecord:
    return DrillRecord(drill["layout"], drill["scenario"], drill["outcome"], drill["verdict"], drill["seconds"],
                       tuple(drill.items()))


def read_bench_history(path: str) -> BenchHistory:
    """The bench runs and measurements of `path`, checked (read_results) and typed."""
    return read_results(path).bench


def read_resilver_records(path: str) -> list[ResilverRecord]:
    """read_resilvers() typed: each resilver with its pool disks' ids."""
    out = []
    for r in read_resilvers(path):
        pool = [d for d in r["disks"] if d["role"] == "pool"]
        ids = tuple(d["serial"] if all(x["serial"] for x in pool) else d["device"] for d in pool)
        out.append(ResilverRecord(r["id"], r["drill_id"], r["layout"], r["vdev_kind"], r["how"], r["fill"],
                                  r["resilvered_bytes"], r["seconds"], bool(r["sandbox"]), ids))
    return out
