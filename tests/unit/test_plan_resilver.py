"""plan --db: the resilver rate drill measured on the bench run's disks replaces the assumed one in
the risk columns, per vdev kind; the footer and the JSON say so. The database is built by the real
store code, the drill's results by Drill itself over FakeZfs (its clock sets the seconds)."""

from __future__ import annotations

import json
import sqlite3

import pytest

from tests.fakes import Clock, FakeRunner, FakeZfs
from tests.unit.test_plan_db import DISK_BYTES, bench_db
from zfslab.model.layout_grammar import parse_layout
from zfslab.store.results import Results
from zfslab.store.schema import SCHEMA_VERSION, connect

RESILVERED = 64 << 20  # what FakeZfs's zpool status reports resilvered


def drill_into(path, layout: str, devices: list[str], *, seconds: float, spare: str = "/dev/sdz",
               sandbox: bool = False) -> None:
    """Run the resilver scenario of a drill on `devices` (FakeZfs; `seconds` on its clock) and store
    it as `zfslab drill` does."""
    import dataclasses

    from zfslab.system.drill import execute_drill
    from zfslab.system.drill_plan import DrillRequest, plan_drill
    from zfslab.system.fio import Fio
    from zfslab.system.pool_ops import Drivers
    clock = Clock()  # passed in: FakeZfs's resilver moves it
    zfs, runner = FakeZfs(clock=clock, resilver_seconds=seconds), FakeRunner()
    plan = plan_drill(DrillRequest(parse_layout(layout), tuple(devices), spare, 1 << 30, ("resilver",), fill=0.3,
                                   sandbox=sandbox))
    # no device touched; the fill the stored rows carry, as the planned one
    plan = dataclasses.replace(plan, steps=tuple(s for s in plan.steps if s.kind != "wipe"), fill_bytes=200 << 20)
    found = execute_drill(plan, Drivers(zfs, Fio(runner), runner), None, clock)
    disks = [{"device": d, "serial": None, "role": "pool"} for d in devices] + [
        {"device": spare, "serial": None, "role": "spare"}]
    results = Results(connect(str(path)))
    results.add_drill(layout, found, "verdict", "2.3.2", sandbox, disks)
    results.conn.close()


@pytest.fixture
def db(tmp_path):
    path = bench_db(tmp_path / "r.sqlite")  # a seq run on /dev/d0../dev/d5
    drill_into(path, "mirror:2", ["/dev/d0", "/dev/d1"], seconds=40.0)
    drill_into(path, "raidz2:4", ["/dev/d0", "/dev/d1", "/dev/d2", "/dev/d3"], seconds=80.0)
    return path


def mb_s(seconds: float) -> float:
    return RESILVERED / seconds / 1e6


def _loss(run_cli, *args) -> dict[str, float]:
    data = json.loads(run_cli("plan", *args, "--json").stdout)
    return {row["layout"]: row["p_loss"]["5"] for row in data["layouts"]}


def test_the_measured_rates_replace_the_assumed_ones(run_cli, db):
    r = run_cli("plan", "--db", db, "--json")
    assert r.exit_code == 0, r.stderr
    data = json.loads(r.stdout)
    measured = {m["vdev_kind"]: m for m in data["resilver_measured"]}
    assert measured["mirror"]["mb_s"] == pytest.approx(mb_s(40.0))
    assert measured["raidz"]["mb_s"] == pytest.approx(mb_s(80.0))
    assert (measured["raidz"]["drill_id"], measured["raidz"]["fill"]) == (2, 0.3)
    assert f"{mb_s(40.0):.0f} MB/s mirrors (measured by drill), {mb_s(80.0):.0f} MB/s raidz (measured by drill)" \
        in data["risk_inputs"]
    # the risk columns are those of that rate: the same as the user giving it, kind by kind
    fitted = _loss(run_cli, "--db", db)
    disks = ("--disks", "6", "--disk-size", str(DISK_BYTES))  # the bench run's
    mirror = _loss(run_cli, *disks, "--resilver-mbps", f"{mb_s(40.0)!r}", "--layouts", "3xmirror:2")
    raidz = _loss(run_cli, *disks, "--resilver-mbps", f"{mb_s(80.0)!r}", "--layouts", "raidz2:6")
    assumed = _loss(run_cli, *disks, "--layouts", "3xmirror:2,raidz2:6")
    assert fitted["3xmirror:2"] == pytest.approx(mirror["3xmirror:2"])
    assert fitted["raidz2:6"] == pytest.approx(raidz["raidz2:6"])
    assert fitted["raidz2:6"] > assumed["raidz2:6"]  # 0.8 MB/s is slower than half a disk's streaming


def test_the_footer_says_so(run_cli, db):
    out = " ".join(run_cli("plan", "--db", db, "--explain").stdout.split())
    assert (f"resilver rate measured by drill on these disks: {mb_s(40.0):,.0f} MB/s (mirror, drill run 1); "
            f"{mb_s(80.0):,.0f} MB/s (raidz, drill run 2).") in out
    # the user's own rate wins, and nothing claims a measurement then
    out = " ".join(run_cli("plan", "--db", db, "--resilver-mbps", "50", "--explain").stdout.split())
    assert "measured by drill" not in out and "resilver 50 MB/s" in out


def test_drills_on_other_disks_or_files_are_not_used(run_cli, tmp_path):
    path = bench_db(tmp_path / "r.sqlite")
    drill_into(path, "mirror:2", ["/dev/other0", "/dev/other1"], seconds=40.0)
    drill_into(path, "raidz2:4", ["/dev/d0", "/dev/d1", "/dev/d2", "/dev/d3"], seconds=80.0, sandbox=True)
    data = json.loads(run_cli("plan", "--db", path, "--json").stdout)
    assert data["resilver_measured"] == [] and "measured by drill" not in data["risk_inputs"]


def test_a_database_from_before_the_migration_reads_and_migrates(run_cli, tmp_path):
    path = bench_db(tmp_path / "r.sqlite")
    with sqlite3.connect(path) as conn:  # as zfslab before migration 4 left it (5's uids and 6's tables undone too)
        conn.executescript("DROP TABLE resilver_disks; DROP TABLE resilvers; DROP TABLE pool_intents; DROP TABLE disk_history; "
                           "DROP INDEX runs_uid; DROP INDEX drills_uid; ALTER TABLE runs DROP COLUMN uid; "
                           "ALTER TABLE runs DROP COLUMN origin; ALTER TABLE drills DROP COLUMN uid; "
                           "ALTER TABLE drills DROP COLUMN origin; DELETE FROM schema_version WHERE version >= 4;")
    r = run_cli("plan", "--db", path, "--json")
    assert r.exit_code == 0 and json.loads(r.stdout)["resilver_measured"] == []
    drill_into(path, "mirror:2", ["/dev/d0", "/dev/d1"], seconds=40.0)  # migrates it
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT max(version) FROM schema_version").fetchone()[0] == SCHEMA_VERSION
        assert conn.execute("SELECT vdev_kind, how, fill, fill_bytes, resilvered_bytes, seconds FROM resilvers"
                            ).fetchall() == [("mirror", "fresh disk", 0.3, 200 << 20, RESILVERED, 40.0)]
        assert conn.execute("SELECT device, role FROM resilver_disks ORDER BY position").fetchall() == [
            ("/dev/d0", "pool"), ("/dev/d1", "pool"), ("/dev/sdz", "spare")]


@pytest.mark.parametrize("column, value, said", [
    ("seconds", 0.0, "a measured resilver must be above 0"),
    ("resilvered_bytes", -1, "resilvered_bytes = -1, below 0: not a zfslab value"),  # store/readback.py's check
])
def test_a_non_positive_resilver_gets_one_line_and_exit_2(run_cli, db, column, value, said):
    with sqlite3.connect(db) as conn:
        conn.execute(f"UPDATE resilvers SET {column} = ? WHERE vdev_kind = 'raidz'", (value,))
    r = run_cli("plan", "--db", db)
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and said in r.stderr, r.stderr
