"""What bench and drill read from a results database before they write anything (read-only:
a dry run and a refused run leave the file as they found it), and the store they write to."""

from __future__ import annotations

import os
from dataclasses import dataclass

from zfslab.store.readback import read_results
from zfslab.store.results import Results
from zfslab.store.schema import connect, open_readonly


@dataclass(frozen=True)
class PriorRun:
    """What the database says of an earlier run of this same bench (nothing if there is none)."""

    run_id: int | None = None
    resuming: bool = False  # it did not finish: its measurements are left out, its pools are ours
    done: frozenset = frozenset()  # (layout, test, repeat) measured
    guids: frozenset[str] = frozenset()  # the pools it created, when resuming


def prior_bench_run(db: str, key: str) -> PriorRun:
    """The latest run with this key (system/bench_plan.py run_key), read, never written."""
    if not os.path.exists(db):
        return PriorRun()
    read_results(db)  # every stored value through the check report and plan --db use: damage refused alike
    conn = open_readonly(db)
    try:
        results = Results(conn)
        run = results.find_run(key)
        if run is None:
            return PriorRun()
        resuming = run["finished_at"] is None
        return PriorRun(run["id"], resuming, frozenset(results.done(run["id"])),
                        frozenset(results.pool_guids(run_id=run["id"])) if resuming else frozenset())
    finally:
        conn.close()


def drill_pool_guids(db: str) -> frozenset[str]:
    """GUIDs of the pools earlier drills recorded in this database (read-only: nothing written)."""
    if not os.path.exists(db):
        return frozenset()
    conn = open_readonly(db)
    try:
        return frozenset(Results(conn).pool_guids(purpose="drill"))
    finally:
        conn.close()


def open_results(db: str) -> Results:
    """The results store at `db`, created or migrated (store/schema.py), for writing."""
    return Results(connect(db))
