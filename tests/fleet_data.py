"""Synthetic results databases for merge tests and its benchmark: runs of several hosts, each a
uid, its disks and measurements, and drills; a run may be copied, whole or in part, to several files."""

from __future__ import annotations

import json
from dataclasses import dataclass

from zfslab.store.schema import atomic, connect

FIO_JSON = json.dumps({"fio version": "fio-3.33", "jobs": [{"read": {"bw": 1000}}]})


@dataclass(frozen=True)
class RunSpec:
    uid: str | None           # None: a run from before migration 5
    host: str
    started_at: str
    measurements: tuple[tuple[str, str, int], ...]   # (layout, test, repeat)
    finished: bool = True


def figure(uid: str, layout: str, test: str, repeat: int) -> float:
    """A measurement's value, fixed by what it is: every copy of it holds the same number."""
    return float(sum(map(ord, f"{uid}{layout}{test}{repeat}")) % 997 + 1)


_TEMPLATE: dict[str, str] = {}


def _empty_db() -> str:
    """A new zfslab database made once by connect() (migrations and all), copied for each file:
    hundreds of files then cost a copy each, not a migration's fsyncs."""
    if "path" not in _TEMPLATE:
        import atexit
        import os
        import tempfile
        fd, path = tempfile.mkstemp(suffix=".sqlite")
        os.close(fd)
        os.unlink(path)
        conn = connect(path)
        conn.execute("PRAGMA journal_mode = DELETE")
        conn.close()
        atexit.register(os.unlink, path)
        _TEMPLATE["path"] = path
    return _TEMPLATE["path"]


def write_db(path: str, runs: list[RunSpec], drills: list[tuple[str | None, str, str]] = (),
             fio_json: str = FIO_JSON) -> None:
    """A zfslab database holding `runs` and `drills` (uid, host, started_at)."""
    import shutil
    import sqlite3
    shutil.copyfile(_empty_db(), path)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA synchronous = OFF")   # test data: a power cut need not find it whole
    try:
        with atomic(conn):
            for r in runs:
                rid = conn.execute(
                    "INSERT INTO runs (key, started_at, finished_at, command, suite, repeats, options_json, sandbox, "
                    "zfs_version, hostname, uid, origin) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                    (f"key-{r.host}", r.started_at, r.started_at if r.finished else None, "zfslab bench", "quick", 3,
                     '{"ashift": 12}', 0, "2.1.11", r.host, r.uid, r.host)).lastrowid
                for i in range(4):
                    conn.execute("INSERT INTO run_disks (run_id, position, device, serial, model, size_bytes, "
                                 "rotational) VALUES (?,?,?,?,?,?,?)",
                                 (rid, i, f"/dev/sd{'abcd'[i]}", f"{r.host}-S{i}", "HGST", 4_000_787_030_016, 1))
                for layout, test, repeat in r.measurements:
                    v = figure(r.uid or r.started_at, layout, test, repeat)
                    conn.execute(
                        "INSERT INTO measurements (run_id, layout, test, repeat, started_at, seconds, read_mb_s, "
                        "write_mb_s, read_iops, write_iops, disk_read_mb, disk_write_mb, disk_util_max, "
                        "cache_suspect, fio_json) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                        (rid, layout, test, repeat, r.started_at, 60.0, v, v / 2, v * 10, v * 5, v, v, 90.0, 0,
                         fio_json))
                for layout in sorted({m[0] for m in r.measurements}):
                    conn.execute("INSERT INTO layout_capacity VALUES (?,?,?,?)", (rid, layout, 10**12, 8 * 10**11))
            for uid, host, started_at in drills:
                conn.execute("INSERT INTO drills (layout, scenario, started_at, seconds, outcome, verdict, data_json, "
                             "zfs_version, sandbox, uid, origin) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                             ("mirror:2", "offline", started_at, 1.5, "survived", "ok", "{}", "2.1.11", 0, uid, host))
    finally:
        conn.close()


def content(path: str) -> dict[str, list]:
    """Every table's rows without the file's own ids (runs and drills by uid), sorted: what the file says."""
    import sqlite3
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        uid = dict(conn.execute("SELECT id, uid FROM runs"))
        duid = dict(conn.execute("SELECT id, uid FROM drills"))
        out = {
            "runs": sorted(conn.execute("SELECT uid, origin, key, started_at, finished_at, hostname FROM runs")),
            "run_disks": sorted((uid[r[0]], *r[1:]) for r in conn.execute("SELECT * FROM run_disks")),
            "measurements": sorted((uid[r[0]], *r[1:]) for r in conn.execute(
                "SELECT run_id, layout, test, repeat, read_mb_s, write_iops, fio_json FROM measurements")),
            "layout_capacity": sorted((uid[r[0]], *r[1:]) for r in conn.execute("SELECT * FROM layout_capacity")),
            "drills": sorted(conn.execute("SELECT uid, origin, layout, scenario, started_at FROM drills")),
        }
        assert len(duid) == len(out["drills"])
        return out
    finally:
        conn.close()
