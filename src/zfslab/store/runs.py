"""What bench and drill read from a results database before they write anything (read-only:
a dry run and a refused run leave the file as they found it), and the store they write to."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from zfslab.store.readback import read_results, reading
from zfslab.store.results import Results
from zfslab.store.schema import connect


@dataclass(frozen=True)
class PriorRun:
    """What the database says of an earlier run of this same bench (nothing if there is none)."""

    run_id: int | None = None
    resuming: bool = False  # it did not finish: its measurements are left out, its pools are ours
    done: frozenset = frozenset()  # (layout, test, repeat) measured
    guids: frozenset[str] = frozenset()  # the pools it created, when resuming
    intents: dict = field(default_factory=dict)  # (pool name, mark) -> layout: creates recorded before they ran


def prior_bench_run(db: str, key: str) -> PriorRun:
    """The latest run with this key (system/bench_plan.py run_key), read, never written."""
    if not os.path.exists(db):
        return PriorRun()
    read_results(db)  # every stored value through the check report and plan --db use: damage refused alike
    with reading(db) as conn:
        results = Results(conn)
        run = results.find_run(key)
        if run is None:
            return PriorRun()
        resuming = run["finished_at"] is None
        return PriorRun(run["id"], resuming, frozenset(results.done(run["id"])),
                        frozenset(results.pool_guids(run_id=run["id"])) if resuming else frozenset(),
                        results.intents(run_id=run["id"]) if resuming else {})


def drill_records(db: str) -> tuple[set[str], dict]:
    """GUIDs of the pools earlier drills recorded in this database, and the creates they recorded
    before running them ((name, mark) -> layout); read-only: nothing written."""
    if not os.path.exists(db):
        return set(), {}
    with reading(db) as conn:
        results = Results(conn)
        return set(results.pool_guids(purpose="drill")), results.intents(purpose="drill")


def recorded_histories(db: str | None) -> dict[str, int]:
    """serial -> SMART bytes written, as zfslab recorded them after its own wipes (read-only)."""
    if not db or not os.path.exists(db):
        return {}
    with reading(db) as conn:
        return Results(conn).disk_histories()


def adopt_pool(db: str, guid: str, pool: str, purpose: str, layout: str, run_id: int | None = None) -> None:
    """Record the GUID of a pool a run was creating when it was killed (system/pool_safety.py
    destroy_own_pool proved it by its recorded create), so its disks' labels prove them ours."""
    conn = connect(db)
    try:
        Results(conn).record_pool(guid, pool, purpose, layout, run_id)
    finally:
        conn.close()


def open_results(db: str) -> Results:
    """The results store at `db`, created or migrated (store/schema.py), for writing."""
    return Results(connect(db))
