"""What a fleet bench's merged database (--db) already holds, read-only: which layouts a host
finished, and which a host's runs left unfinished (system/fleet_bench.py plans --resume on it)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable

from zfslab.store.readback import read_results
from zfslab.store.schema import has_table, open_readonly


def bench_progress(db: str, options: dict, disk_count: int,
                   origins: Iterable[str]) -> tuple[dict[str, str], dict[str, set[str]]]:
    """layout -> the host whose finished run measured it, and host -> layouts its unfinished runs
    measured in part; only runs of these hosts, with these options and as many disks."""
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
    finally:
        conn.close()
    finished: dict[str, str] = {}
    unfinished: dict[str, set[str]] = {}
    for r in rows:
        if r["origin"] not in hosts or r["disks"] != disk_count or _canonical(r["options_json"]) != wanted:
            continue
        if r["finished_at"] is not None:
            finished.setdefault(r["layout"], r["origin"])
        else:
            unfinished.setdefault(r["origin"], set()).add(r["layout"])
    return finished, unfinished


def _canonical(text: str | None) -> str | None:
    try:
        return json.dumps(json.loads(text or ""), sort_keys=True)
    except ValueError:
        return None
