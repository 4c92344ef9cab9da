"""Bench ordering, resume and safety logic, with a fake ZFS and fio (the real ones run in tests/e2e)."""

import dataclasses
import json
import os
import shlex
import sqlite3
from collections.abc import Callable

import pytest

from tests.conftest import DATA
from tests.fakes import FakeZfs
from zfslab.commands._common import PARAM_FLAGS
from zfslab.errors import ZfslabError
from zfslab.model.layout_grammar import parse_layout
from zfslab.store.results import Results
from zfslab.store.schema import SCHEMA_VERSION, DatabaseTooNew, connect
from zfslab.system.bench import BenchError, execute_bench
from zfslab.system.bench_plan import MARK, POOL, BenchOptions, BenchPlan, BenchRequest, plan_bench
from zfslab.system.bonnie import _FIELDS_197, _SHIFT, Bonnie, parse_csv_line
from zfslab.system.disks import DiskInfo, DisksRefused, Finding, check_wipe_allowed
from zfslab.system.fio import Fio, parse_fio_json
from zfslab.system.pool_ops import Drivers
from zfslab.system.pool_safety import MixedReplication, own_leftover
from zfslab.system.runner import Runner
from zfslab.system.suites import BONNIE_TESTS, SUITES
from zfslab.system.zfs import Property

FIO_JSON = open(os.path.join(DATA, "zfs-2.1", "fio_write.json")).read()


class FakeFio(Fio):
    def __init__(self, die_at=None):
        super().__init__(Runner())
        self.ran: list[str] = []
        self.die_at = die_at

    def run(self, job, *, timeout_s=3600):
        if self.die_at is not None and len(self.ran) == self.die_at:
            raise KeyboardInterrupt
        self.ran.append(job.name)
        return parse_fio_json(FIO_JSON)


@dataclasses.dataclass
class BenchRun:
    """A bench run as commands/bench.py drives it: plan_bench over what the store already holds
    (and, on a resume, the pool the interrupted run left), then execute_bench on that plan."""

    zfs: object
    fio: object
    results: Results
    request: BenchRequest
    run_id: int
    bonnie: object = None
    log: Callable[[str], None] = lambda text: None

    @property
    def key(self) -> str:
        return self.request.key

    def leftover(self):
        """The pool an interrupted run left, as the command finds it (refused if it is not ours)."""
        return own_leftover(self.zfs, POOL, self.results.pool_guids(run_id=self.run_id),
                            self.results.intents(run_id=self.run_id), MARK)

    def plan(self) -> BenchPlan:
        return plan_bench(dataclasses.replace(self.request, done=frozenset(self.results.done(self.run_id)),
                                              leftover=self.leftover()))

    def run(self, plan: BenchPlan | None = None) -> None:
        execute_bench(plan or self.plan(), Drivers(self.zfs, self.fio, Runner(), self.bonnie), self.results,
                      run_id=self.run_id, log=self.log)


def make(tmp_path, zfs, fio, layouts=("mirror:2", "raidz1:3"), repeats=2, db=None, opts=None, bonnie=None,
         mountpoint=f"/{POOL}"):
    opts = opts or BenchOptions("quick", tuple(SUITES["quick"][:2]), repeats, 12, "128K", "off", "64m", 1, 0)
    lays = [parse_layout(x) for x in layouts]
    devices = []
    for i in range(3):
        path = tmp_path / f"v{i}"
        path.write_bytes(b"")
        os.truncate(path, 1 << 20)
        devices.append(str(path))
    results = Results(connect(db or ":memory:"))
    request = BenchRequest(tuple(lays), tuple(devices), opts, sandbox=True, mountpoint=mountpoint)
    run = results.find_run(request.key)
    run_id = run["id"] if run else results.start_run(key=request.key, command="t", suite=opts.suite,
                                                      repeats=opts.repeats, options=opts.as_dict(), sandbox=True,
                                                      facts={}, disks=[])
    return BenchRun(zfs, fio, results, request, run_id, bonnie), results


def test_each_layout_is_created_measured_repeated_and_destroyed_in_order(tmp_path):
    zfs, fio = FakeZfs(), FakeFio()
    bench, results = make(tmp_path, zfs, fio)
    bench.run()
    assert zfs.calls == ["create mirror:2", f"destroy {POOL}", "create raidz1:3", f"destroy {POOL}"]
    assert fio.ran == ["seqwrite", "seqread"] * 4  # per layout: repeat 1 of each test, then repeat 2
    assert len(results.done(bench.run_id)) == 8
    summary = results.summary(bench.run_id)
    assert {(s.layout, s.test) for s in summary} == {(x, t) for x in ("mirror:2", "raidz1:3") for t in ("seqwrite", "seqread")}
    assert all(s.repeats == 2 and s.write_mb_s > 0 for s in summary)



def test_the_end_of_run_table_shows_each_summary_record(tmp_path, capsys):
    """bench's table after a run: the records summary() hands out, medians, spread and the cache note."""
    from zfslab.commands.bench import _print_summary
    from zfslab.store.results import MeasurementRecord
    rows = [MeasurementRecord(1, "raidz1:3", "seqread", 3, 812.5, None, 1625.0, None, (790.0, 830.25), (None, None),
                              True),
            MeasurementRecord(1, "mirror:2", "seqwrite", 2, 0.0, 199.75, 0.0, 399.5, (0.0, 0.0), (180.0, 219.5), False)]
    _print_summary(rows, True, "r.sqlite", 1)
    lines = capsys.readouterr().out.splitlines()
    read = next(x for x in lines if "raidz1:3" in x).split("│")
    write = next(x for x in lines if "mirror:2" in x).split("│")
    assert [c.strip() for c in read[1:-1]] == ["raidz1:3", "seqread", "3", "812.5", "-", "1,625", "-", "790.0..830.2",
                                               "cached?"]
    assert [c.strip() for c in write[1:-1]] == ["mirror:2", "seqwrite", "2", "-", "199.8", "-", "400", "180.0..219.5", ""]
    assert "all measurements in r.sqlite (run 1); SANDBOX" in " ".join(lines)

def test_an_interrupted_run_resumes_without_repeating_a_measurement(tmp_path):
    db = str(tmp_path / "r.sqlite")
    zfs = FakeZfs()
    bench, results = make(tmp_path, zfs, FakeFio(die_at=3), db=db)
    with pytest.raises(KeyboardInterrupt):
        bench.run()
    assert not zfs.pools  # cleaned up in finally
    first = {(r["layout"], r["test"], r["repeat"]): r["id"] for r in
             results.conn.execute("SELECT * FROM measurements")}
    assert len(first) == 3
    fio = FakeFio()
    bench2, results2 = make(tmp_path, zfs, fio, db=db)
    assert bench2.run_id == bench.run_id
    bench2.run()
    rows = results2.conn.execute("SELECT layout, test, repeat, id FROM measurements").fetchall()
    assert len(rows) == 8 and len({(r[0], r[1], r[2]) for r in rows}) == 8
    assert {(r[0], r[1], r[2]): r[3] for r in rows if (r[0], r[1], r[2]) in first} == first
    assert len(fio.ran) == 5


def test_leftover_pools_are_destroyed_only_if_ours(tmp_path):
    zfs = FakeZfs()
    zfs.create_pool(POOL, parse_layout("mirror:2"), ["/dev/a", "/dev/b"], fs_props={"zfslab:bench": "abc"})
    zfs.create_pool("tank", parse_layout("disk"), ["/dev/c"])
    zfs.pools[POOL].guid, zfs.pools["tank"].guid = "111", "222"
    bench, results = make(tmp_path, zfs, FakeFio())
    # named like ours, carrying our property, but this run never recorded its GUID: not ours
    with pytest.raises(DisksRefused, match="did not create it"):
        bench.plan()
    assert set(zfs.pools) == {"zfslab-bench", "tank"}
    results.record_pool("111", POOL, "bench", "mirror:2", bench.run_id)
    plan = bench.plan()
    assert plan.steps[0].kind == "leftover" and plan.steps[0].argv == ("zpool", "destroy", "-f", POOL)
    assert plan.render()[:2] == [f"zpool destroy -f {POOL}", f"# {POOL} (GUID 111) is the pool this bench run left when "
                                 "it was interrupted (its GUID is recorded): fio or bonnie++ still running on it are "
                                 "ended before it is destroyed"]
    calls = len(zfs.calls)
    bench.run(plan)
    assert zfs.calls[calls:calls + 2] == [f"destroy {POOL}", "create mirror:2"]  # first, before any layout
    assert list(zfs.pools) == ["tank"]


def test_a_leftover_pool_whose_guid_changed_since_the_plan_is_refused(tmp_path):
    zfs = FakeZfs()
    zfs.create_pool(POOL, parse_layout("mirror:2"), ["/dev/a", "/dev/b"])
    zfs.pools[POOL].guid = "111"
    bench, results = make(tmp_path, zfs, FakeFio())
    results.record_pool("111", POOL, "bench", "mirror:2", bench.run_id)
    plan = bench.plan()
    zfs.pools[POOL].guid = "999"  # between the plan (read before the gate) and its first step: another pool
    with pytest.raises(DisksRefused, match="now has GUID 999, not 111"):
        bench.run(plan)
    assert POOL in zfs.pools and zfs.calls[-1] == "create mirror:2"  # nothing destroyed, nothing created


def test_each_pool_guid_is_recorded_for_its_run(tmp_path):
    zfs = FakeZfs()
    bench, results = make(tmp_path, zfs, FakeFio())
    bench.run()
    assert results.pool_guids(run_id=bench.run_id) == {"10000000000001", "10000000000002"}
    assert results.pool_guids(run_id=bench.run_id + 1) == set()


def test_a_failed_create_leaves_nothing_and_says_so(tmp_path):
    zfs = FakeZfs(fail_create="raidz1:3")
    bench, results = make(tmp_path, zfs, FakeFio())
    with pytest.raises(ZfslabError, match="boom"):
        bench.run()
    assert not zfs.pools and len(results.done(bench.run_id)) == 4


def test_dry_run_plan_lists_every_command():
    opts = BenchOptions("quick", tuple(SUITES["quick"]), 2, 12, "128K", "off", "1g", 10, 2)
    request = BenchRequest((parse_layout("raidz1:3"),), ("/dev/a", "/dev/b", "/dev/c", "/dev/d"), opts)
    steps = plan_bench(request).steps
    kinds = [s.kind for s in steps]
    assert kinds[0] == "create" and kinds.count("test") == 8 and kinds[-4] == "destroy" and kinds[-3:] == ["wipe"] * 3
    assert f"zfslab:bench={request.key}" in " ".join(steps[0].argv) and "-f" not in steps[0].argv
    assert steps[0].argv[-4:] == ("raidz1", "/dev/a", "/dev/b", "/dev/c")


MIXED = ("layout mirror:2+raidz2:6 mixes replication levels (each mirror vdev survives 1 failed disk, each raidz2 "
         "vdev 2): zpool create refuses that without -f (\"mismatched replication level\"), and zfslab never passes "
         "-f; bench its parts as separate layouts: --layouts mirror:2,raidz2:6")


def test_a_mixed_replication_layout_is_refused_before_any_zpool_command(tmp_path):
    zfs, fio = FakeZfs(), FakeFio()
    opts = BenchOptions("quick", tuple(SUITES["quick"][:2]), 1, 12, "128K", "off", "64m", 1, 0)
    layouts = [parse_layout("raidz1:3"), parse_layout("mirror:2+raidz2:6")]  # the bad one second: nothing runs
    devices = [str(tmp_path / f"v{i}") for i in range(8)]
    results = Results(connect(":memory:"))
    request = BenchRequest(tuple(layouts), tuple(devices), opts, sandbox=True)
    run_id = results.start_run(key=request.key, command="t", suite="quick", repeats=1, options=opts.as_dict(),
                               sandbox=True, facts={}, disks=[])
    bench = BenchRun(zfs, fio, results, request, run_id)
    with pytest.raises(MixedReplication) as e:
        bench.run()
    # the library names the setting (`layouts`); the command layer words it as its flag (issue 37)
    assert str(e.value) == MIXED.replace("--layouts", "`layouts`") and e.value.exit_code == 2
    assert e.value.worded(PARAM_FLAGS) == MIXED
    assert zfs.calls == [] and zfs.created == 0 and fio.ran == [] and results.done(run_id) == set()
    assert not any(os.path.exists(d) for d in devices)  # not even the wipe of a sandbox file ran


def test_layouts_of_one_replication_level_are_planned_as_before():
    opts = BenchOptions("quick", tuple(SUITES["quick"][:1]), 1, 12, "128K", "off", "64m", 1, 0)
    # zpool accepts a mirror beside raidz when both survive as many failures, and raidz widths that differ
    for text in ("mirror:3+raidz2:6", "raidz2:6+raidz2:8", "2xmirror:2+spare:1"):
        steps = plan_bench(BenchRequest((parse_layout(text),), tuple(f"/dev/d{i}" for i in range(14)), opts)).steps
        assert steps[0].kind == "create" and "-f" not in steps[0].argv, text
    with pytest.raises(MixedReplication, match="`layouts` disk,mirror:2$"):
        plan_bench(BenchRequest((parse_layout("disk+mirror:2"),), ("/dev/a", "/dev/b", "/dev/c"), opts))


def test_bench_refuses_a_mixed_layout_in_one_line_before_reading_a_disk(run_cli, tmp_path):
    sandbox, db = tmp_path / "s", tmp_path / "r.sqlite"
    for dry in ([], ["--dry-run"]):
        r = run_cli("bench", "--sandbox", str(sandbox), "--sandbox-disks", "8", "--layouts", "raidz1:3,mirror:2+raidz2:6",
                    "--db", str(db), *dry)
        assert (r.exit_code, r.stdout, r.stderr) == (2, "", f"zfslab: error: {MIXED}\n")
    assert not sandbox.exists() and not db.exists()
    # a whole disk that does not exist is not even looked at: the layout is refused first
    r = run_cli("bench", "--disks", "/dev/nonexistent-zfslab-a,/dev/nonexistent-zfslab-b,/dev/nonexistent-zfslab-c",
                "--layouts", "disk+mirror:2", "--dry-run")
    assert r.exit_code == 2 and "layout disk+mirror:2 mixes replication levels" in r.stderr


def disk(serial, reasons=()):
    return DiskInfo("/dev/" + serial, "/dev/" + serial, 10**12, serial, "M", True,
                    tuple(Finding("signature", r) for r in reasons))


def test_safety_gate():
    clean, dirty = disk("A"), disk("B", ["holds a ext4 signature"])
    check_wipe_allowed([clean], wipe=False, confirmed_serials=set())
    with pytest.raises(DisksRefused) as e:
        check_wipe_allowed([clean, dirty], wipe=False, confirmed_serials=set())
    assert "/dev/B (/dev/B, serial B): holds a ext4 signature" in str(e.value)
    assert "/dev/A" not in str(e.value)
    with pytest.raises(DisksRefused, match="not confirmed: /dev/B=B"):
        check_wipe_allowed([dirty], wipe=True, confirmed_serials={"X"})
    check_wipe_allowed([dirty], wipe=True, confirmed_serials={"B"})
    with pytest.raises(DisksRefused, match="no serial"):
        check_wipe_allowed([disk("", ["holds a gpt partition table"])], wipe=True, confirmed_serials={""})


def test_schema_migrations(tmp_path):
    path = str(tmp_path / "s.sqlite")
    conn = connect(path)
    assert conn.execute("SELECT MAX(version) FROM schema_version").fetchone()[0] == SCHEMA_VERSION
    conn.execute("INSERT INTO schema_version VALUES (99)")
    conn.close()
    with pytest.raises(DatabaseTooNew, match="newer than this zfslab knows"):
        connect(path)
    # a newer zfslab's tables are not taken for another program's: the version says why
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE from_the_future (x)")
    conn.commit()
    conn.close()
    with pytest.raises(DatabaseTooNew, match="schema version 99"):
        connect(path)


def test_bench_cli_errors(run_cli, tmp_path):
    r = run_cli("bench", "--sandbox", str(tmp_path / "s"), "--layouts", "raidz2:12", "--dry-run")
    assert r.exit_code == 2 and "layout raidz2:12 needs 12 disks but only 6 were given" in r.stderr
    r = run_cli("bench", "--sandbox", str(tmp_path / "s"), "--suite", "nope")
    assert r.exit_code == 2 and "--suite nope: use ars, seq, quick, bonnie or a FILE.fio job file" in r.stderr
    r = run_cli("bench", "--sandbox", str(tmp_path / "s"), "--size", "1x", "--dry-run")
    assert r.exit_code == 2 and "bad size '1x'" in r.stderr
    r = run_cli("bench", "--sandbox", str(tmp_path / "s"), "--layouts", "mirror:2", "--dry-run", "--repeats", "1")
    assert r.exit_code == 0 and r.stdout.splitlines()[0].startswith("zpool create -o ashift=12")
    r = run_cli("bench", "--disks", "/dev/nonexistent-zfslab", "--dry-run")
    assert r.exit_code == 2 and "/dev/nonexistent-zfslab: no such device" in r.stderr


def test_bench_dry_run_as_json_holds_the_same_commands(run_cli, tmp_path):
    argv = ["bench", "--sandbox", str(tmp_path / "s"), "--layouts", "mirror:2,raidz1:3", "--repeats", "1",
            "--db", str(tmp_path / "r.sqlite"), "--dry-run"]
    text = run_cli(*argv).stdout.splitlines()
    data = json.loads(run_cli(*argv, "--json").stdout)
    assert [shlex.join(s["command"]) for s in data["steps"] if s["command"]] == [x for x in text if x[0] != "#"]
    assert [line for s in data["steps"] for line in s["lines"]] == text
    assert [s["line"] for s in data["steps"]] == [x for x in text if not x.startswith(("# beside", "# zpool create"))]
    assert [s["kind"] for s in data["steps"]].count("wipe") == 5 and data["layouts"] == ["mirror:2", "raidz1:3"]
    assert not (tmp_path / "s").exists() and not (tmp_path / "r.sqlite").exists()


class FakeZfsAt(FakeZfs):
    """Mounts its pools in a real directory, so a real benchmark program can run there."""

    def __init__(self, mnt):
        super().__init__()
        self.mnt = str(mnt)

    def get(self, name, *props):
        out = super().get(name, *props)
        if "mountpoint" in props:
            out["mountpoint"] = Property("mountpoint", self.mnt, "local")
        return out


class FakeBonnie:
    """Returns a captured bonnie++ 2.00a line; interrupts on cue."""

    def __init__(self, die_at=None):
        self.ran = 0
        self.die_at = die_at

    def run(self, job):
        if self.die_at is not None and self.ran == self.die_at:
            raise KeyboardInterrupt
        self.ran += 1
        return parse_csv_line(open(os.path.join(DATA, "bonnie", "2.00a-ext4-c4.csv")).read())


def make_bonnie(tmp_path, zfs, bonnie, db=None, size="64m", layouts=("mirror:2", "raidz1:3"), repeats=2):
    opts = BenchOptions("bonnie", (), repeats, 12, "128K", "off", size, 0, 0)
    return make(tmp_path, zfs, FakeFio(), layouts=layouts, db=db, opts=opts, bonnie=bonnie,
                mountpoint=getattr(zfs, "mnt", f"/{POOL}"))


def test_a_pool_mounted_elsewhere_than_planned_stops_before_any_test(tmp_path):
    zfs = FakeZfsAt(tmp_path)  # mounts at tmp_path; the plan runs its tests in /zfslab-bench
    bench, results = make(tmp_path, zfs, FakeFio())
    with pytest.raises(BenchError, match=f"mounted at {tmp_path}, not at /zfslab-bench"):
        bench.run()
    assert bench.fio.ran == [] and not zfs.pools and results.done(bench.run_id) == set()


def test_suite_bonnie_plans_one_bonnie_run_per_repeat():
    opts = BenchOptions("bonnie", (), 3, 12, "128K", "off", "16g", 0, 0)
    steps = plan_bench(BenchRequest((parse_layout("raidz1:3"),), ("/dev/a", "/dev/b", "/dev/c"), opts)).steps
    tests = [s for s in steps if s.kind == "test"]
    assert [s.repeat for s in tests] == [1, 2, 3]
    assert tests[0].argv == ("bonnie++", "-q", "-u", "root", "-r", "1024", "-s", "16384", "-d", f"/{POOL}", "-f",
                             "-n", "1", "-c", "4", "-b")


def test_suite_bonnie_stores_calomels_three_columns_together_and_resumes(tmp_path):
    db = str(tmp_path / "r.sqlite")
    zfs = FakeZfsAt(tmp_path)
    bench, results = make_bonnie(tmp_path, zfs, FakeBonnie(die_at=3), db=db)
    with pytest.raises(KeyboardInterrupt):
        bench.run()
    done = results.done(bench.run_id)
    # three bonnie++ runs finished (mirror:2 twice, raidz1:3 once): their columns, never a part of one
    assert len(done) == 9 and {t for _, t, _ in done} == set(BONNIE_TESTS)
    assert not zfs.pools
    again = FakeBonnie()
    bench2, results2 = make_bonnie(tmp_path, zfs, again, db=db)
    bench2.run()
    assert again.ran == 1 and len(results2.done(bench.run_id)) == 12
    summary = {(s.layout, s.test): s for s in results2.summary(bench.run_id)}
    # 329129 KiB/s written, 496296 rewritten; the read was too fast to time ("+++++")
    assert summary[("raidz1:3", "bonnie-write")].write_mb_s == pytest.approx(329129 * 1024 / 1e6)
    assert summary[("raidz1:3", "bonnie-rewrite")].write_mb_s == pytest.approx(496296 * 1024 / 1e6)
    raw = results2.conn.execute("SELECT DISTINCT fio_json FROM measurements").fetchall()
    assert [r[0] for r in raw] == [open(os.path.join(DATA, "bonnie", "2.00a-ext4-c4.csv")).read().strip()]


def test_suite_bonnie_with_the_real_bonnie(tmp_path, needs_bonnie):
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    # calomel's command (with its 1024-file tests) on a 512 MiB file: about 20 s
    bench, results = make_bonnie(tmp_path, FakeZfsAt(mnt), Bonnie(Runner()), size="512m", layouts=("mirror:2",),
                                 repeats=1)
    bench.run()
    rows = {r[0]: r for r in results.conn.execute("SELECT test, write_mb_s, read_mb_s, fio_json FROM measurements")}
    assert set(rows) == set(BONNIE_TESTS)
    # a fast virtual disk may finish the fsync'd writes before bonnie++ can time them ("+++++"):
    # stored as not measured (NULL), never as 0 MB/s, which plan --db would refuse as a rate
    put_block = rows["bonnie-write"][3].split(",")[_FIELDS_197["put_block"] + _SHIFT[rows["bonnie-write"][3][:4]]]
    assert rows["bonnie-write"][1] is None if put_block.startswith("+") else rows["bonnie-write"][1] > 0
    assert rows["bonnie-write"][3].startswith(("1.97,", "1.98,")) and ",512M," in rows["bonnie-write"][3]


def test_a_bonnie_rate_too_fast_to_time_is_stored_as_not_measured():
    """bonnie++ prints +++++ where a test ended before it could time it: no rate, never 0 MB/s."""
    from zfslab.system.bench import bonnie_measurements
    with open(os.path.join(DATA, "bonnie", "2.00a-too-fast.csv")) as f:
        result = parse_csv_line(f.read().strip())
    disk = {"disk_read_mb": 0.0, "disk_write_mb": 0.0, "disk_util_max": 0.0}
    rows = {m.test: m for m in bonnie_measurements("mirror:2", 0, 1.0, result, disk, 64)}
    assert rows["bonnie-write"].write_mb_s is None
    assert rows["bonnie-rewrite"].write_mb_s is None
    assert rows["bonnie-read"].read_mb_s is None


def test_a_kill_between_the_create_and_the_guid_record_is_resumed(tmp_path):
    """The window issue 26 found: zpool create returned, zfslab died before `pools` had the GUID.
    The create was recorded first (pool_intents), so the resume knows its pool by name and mark,
    records the GUID, and destroys it; before, the resume refused it and the user cleaned up."""
    from tests.fakes import Killed
    db = str(tmp_path / "k.sqlite")
    zfs = FakeZfs(kill_after_create="raidz1:3")
    bench, results = make(tmp_path, zfs, FakeFio(), db=db)
    with pytest.raises(Killed):
        bench.run()
    zfs.dead = False  # the next zfslab process
    guid = zfs.pool_guid(POOL)
    assert guid not in results.pool_guids(run_id=bench.run_id)  # the window: the pool exists, unrecorded
    assert results.intents(run_id=bench.run_id)[(POOL, bench.key)] == "raidz1:3"
    bench2, results2 = make(tmp_path, zfs, FakeFio(), db=db)
    notes = []
    bench2.log = notes.append
    plan = bench2.plan()
    assert plan.steps[0].kind == "leftover" and plan.steps[0].op.own.layout == "raidz1:3"
    lines = plan.render()  # after the line on what is resumed: the destroy, and how the pool is known
    assert lines[0].startswith("# resuming: ") and lines[1] == f"zpool destroy -f {POOL}"
    assert f"from the create this run recorded (zfslab:bench={bench.key})" in lines[2]
    calls = len(zfs.calls)
    bench2.run(plan)
    assert zfs.calls[calls] == f"destroy {POOL}" and not zfs.pools
    assert guid in results2.pool_guids(run_id=bench.run_id)  # its disks' labels now prove them ours
    assert notes[0].endswith("recording its GUID")
    assert notes[1] == f"destroying pool {POOL}, left by an interrupted zfslab bench run"
    assert results2.conn.execute("SELECT finished_at FROM runs").fetchone()[0] is not None


def test_a_pool_of_our_name_is_refused_unless_a_recorded_create_made_it(tmp_path):
    db = str(tmp_path / "k.sqlite")
    zfs = FakeZfs()
    bench, results = make(tmp_path, zfs, FakeFio(), db=db)
    results.record_intent(POOL, "bench", "mirror:2", bench.key, bench.run_id)
    # the user's pool of the same name: no mark, then another run's mark, then this run's mark in another database
    for props in ({}, {"zfslab:bench": "0123456789abcdef"}):
        zfs.create_pool(POOL, parse_layout("mirror:2"), ["/dev/a", "/dev/b"], fs_props=props)
        with pytest.raises(DisksRefused, match="did not create it"):
            bench.plan()
        assert POOL in zfs.pools and zfs.pool_guid(POOL) not in results.pool_guids(run_id=bench.run_id)
        zfs.destroy_pool(POOL)
    zfs.create_pool(POOL, parse_layout("mirror:2"), ["/dev/a", "/dev/b"], fs_props={"zfslab:bench": bench.key})
    other, _ = make(tmp_path, zfs, FakeFio(), db=str(tmp_path / "other.sqlite"))
    with pytest.raises(DisksRefused, match="did not create it"):
        other.plan()
    assert POOL in zfs.pools
