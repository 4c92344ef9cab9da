"""What a fleet bench's merged database (--db) already holds, read-only: which layouts a host
finished, and which a host's runs left unfinished (system/fleet_bench.py plans --resume on it)."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterable

from zfslab.store.readback import read_results
from zfslab.store.schema import has_table, open_readonly


def bench_progress(db: str, options: dict, disk_count: int, origins: Iterable[str], *,
                   every_finisher: bool = False) -> tuple[dict, dict[str, set[str]]]:
    """layout -> the host whose finished run measured it first (every_finisher: the set of them),
    and host -> layouts its unfinished runs measured in part; only runs of these hosts, with these
    options and as many disks."""
    if not os.path.exists(db):
        return {}, {}
    read_results(db)   # vetted as plan --db and report read it: a damaged file is refused here too
    wanted = json.dumps(options, sort_keys=True)
    hosts = set(origins)
    conn = open_readonly(db)
    try:
        if not has_table(conn, "measurements"):
            return {}, {}
        rows = conn.execute(
            "SELECT r.id, r.origin, r.finished_at, r.options_json, m.layout, "
            "(SELECT COUNT(*) FROM run_disks d WHERE d.run_id = r.id) AS disks "
            "FROM runs r JOIN measurements m ON m.run_id = r.id GROUP BY r.id, m.layout ORDER BY r.id").fetchall()
        # a run killed before its first measurement: its pool names its layout (one layout a run)
        rows += conn.execute(
            "SELECT r.id, r.origin, r.finished_at, r.options_json, p.layout, "
            "(SELECT COUNT(*) FROM run_disks d WHERE d.run_id = r.id) AS disks "
            "FROM runs r JOIN pools p ON p.run_id = r.id WHERE r.finished_at IS NULL "
            "GROUP BY r.id, p.layout ORDER BY r.id").fetchall() if has_table(conn, "pools") else []
        # ... or killed between its create and the pool's record: the create's intent names it
        rows += conn.execute(
            "SELECT r.id, r.origin, r.finished_at, r.options_json, i.layout, "
            "(SELECT COUNT(*) FROM run_disks d WHERE d.run_id = r.id) AS disks "
            "FROM runs r JOIN pool_intents i ON i.run_id = r.id WHERE r.finished_at IS NULL AND i.purpose = 'bench' "
            "GROUP BY r.id, i.layout ORDER BY r.id").fetchall() if has_table(conn, "pool_intents") else []
    finally:
        conn.close()
    finished: dict = {}
    unfinished: dict[str, set[str]] = {}
    for r in rows:
        if r["origin"] not in hosts or r["disks"] != disk_count or _canonical(r["options_json"]) != wanted:
            continue
        if r["finished_at"] is not None and every_finisher:
            finished.setdefault(r["layout"], set()).add(r["origin"])
        elif r["finished_at"] is not None:
            finished.setdefault(r["layout"], r["origin"])
        else:
            unfinished.setdefault(r["origin"], set()).add(r["layout"])
    return finished, unfinished


def private_copy(db: str, target: str) -> None:
    """Copy --db, if it exists, to `target` (SQLite's backup API, read through a read-only
    connection): a dry run merges the hosts' databases into the copy, never into the user's file."""
    if not os.path.exists(db):
        return
    source, copy = open_readonly(db), sqlite3.connect(target)
    try:
        source.backup(copy)
    finally:
        source.close()
        copy.close()


def late_results(paths: Iterable[str], options: dict, disk_count: int,
                 origins: Iterable[str]) -> set[tuple[str, str]]:
    """(host, layout) whose runs in these files are all unfinished while another host finished the
    layout: a lost host's partial result for a layout run again elsewhere, which must not count."""
    finished: dict[str, set[str]] = {}
    unfinished: dict[str, set[str]] = {}
    for path in paths:
        done, partial = bench_progress(path, options, disk_count, origins, every_finisher=True)
        for layout, hosts in done.items():
            finished.setdefault(layout, set()).update(hosts)
        for host, layouts in partial.items():
            unfinished.setdefault(host, set()).update(layouts)
    return {(h, layout) for h, layouts in unfinished.items() for layout in layouts
            if layout in finished and h not in finished[layout]}


def _canonical(text: str | None) -> str | None:
    try:
        return json.dumps(json.loads(text or ""), sort_keys=True)
    except ValueError:
        return None
