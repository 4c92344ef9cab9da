"""A drill's dry run is the plan that runs (issue 17): the steps `drill --dry-run` prints against
the argv the real ZfsCli and Fio hand the process runner while Drill.run executes that plan.
FakeZfs keeps the pool's state; every change is also given to the real ZfsCli, whose runner only
records. The disks are sparse files in tmp_path: the corruption and the wipes really write them."""

import dataclasses
import json
import os
import shlex

import pytest

from tests.conftest import DATA
from tests.fakes import Clock, FakeRunner, FakeZfs
from zfslab.model.layout_grammar import parse_layout
from zfslab.system.drill import DrillError, execute_drill
from zfslab.system.drill_plan import MOUNTPOINT, POOL, DrillRequest, format_steps, leaf_name, plan_drill
from zfslab.system.fio import Fio
from zfslab.system.pool_ops import CREATE_WRAPPER, OFFLINE_WRAPPER, REPLACE_WRAPPER, Drivers
from zfslab.system.zfs import Property, ZfsCli

FIO_JSON = open(os.path.join(DATA, "zfs-2.1", "fio_write.json")).read()
FILE_BYTES = 64 << 20


RecordingRunner = FakeRunner


class RecordingZfs(FakeZfs):
    """FakeZfs whose every change first goes through the real ZfsCli (its argv recorded)."""

    def __init__(self, runner, **kw):
        super().__init__(**kw)
        self.cli = ZfsCli(runner)

    def create_pool(self, name, layout, devices, **kw):
        self.cli.create_pool(name, layout, devices, **kw)
        super().create_pool(name, layout, devices, **kw)

    def destroy_pool(self, name, *, force=False):
        self.cli.destroy_pool(name, force=force)
        super().destroy_pool(name, force=force)

    def pool_set(self, pool, prop, value):
        self.cli.pool_set(pool, prop, value)
        super().pool_set(pool, prop, value)

    def offline(self, pool, device, *, temporary=False):
        self.cli.offline(pool, device, temporary=temporary)
        super().offline(pool, device, temporary=temporary)  # refused, as zpool, without redundancy left

    def online(self, pool, device):
        self.cli.online(pool, device)
        super().online(pool, device)

    def replace(self, pool, old, new=None, *, sequential=False, wait=False, timeout_s=None):
        self.cli.replace(pool, old, new, sequential=sequential, wait=wait, timeout_s=timeout_s)
        super().replace(pool, old, new, sequential=sequential, wait=wait, timeout_s=timeout_s)

    def clear(self, pool):
        self.cli.clear(pool)
        super().clear(pool)

    def scrub(self, pool, *, wait=False, timeout_s=None):
        self.cli.scrub(pool, wait=wait, timeout_s=timeout_s)
        super().scrub(pool, wait=wait, timeout_s=timeout_s)

    def wait(self, pool, activity, *, timeout_s=None):
        self.cli.wait(pool, activity, timeout_s=timeout_s)
        super().wait(pool, activity, timeout_s=timeout_s)


def files(tmp_path, n):
    paths = []
    for i in range(n):
        path = tmp_path / f"vdev{i}"
        with open(path, "wb") as f:
            f.truncate(FILE_BYTES)
        paths.append(str(path))
    return paths


def drill_on(tmp_path, layout_text, *, spare=True, scenarios=("degraded", "resilver", "corrupt"), zfs_class=RecordingZfs,
             fail_fio_read_at=None, sequential_rebuild=False):
    """(plan, printed lines, executed argv, drill) of one drill on sparse files."""
    layout = parse_layout(layout_text)
    paths = files(tmp_path, layout.disks + 1)
    devices, spare_disk = paths[:layout.disks], paths[-1] if spare else None
    runner = RecordingRunner(fail_fio_read_at)
    fio = Fio(runner)
    plan = plan_drill(DrillRequest(layout, tuple(devices), spare_disk, FILE_BYTES, tuple(scenarios), fill=0.5,
                                   sandbox=True, sequential_rebuild=sequential_rebuild))
    printed = plan.render()  # what --dry-run prints
    logged = []
    zfs = zfs_class(runner)
    found = execute_drill(plan, Drivers(zfs, fio, runner), None, Clock(), log=logged.append)
    drill = Ran(zfs, found, logged)
    return plan, printed, [shlex.join(a) for a in runner.calls], drill


@dataclasses.dataclass
class Ran:
    zfs: FakeZfs
    results: list
    logged: list


WRAPPERS = (CREATE_WRAPPER, OFFLINE_WRAPPER, REPLACE_WRAPPER)


def commands(printed):
    return [line for line in printed if not line.startswith("#")]


@pytest.mark.parametrize("layout,sequential", [
    ("raidz2:4", False), ("mirror:2", True), ("2xmirror:2", False), ("raidz1:3+spare:1", False),
    ("draid1:2d:5c:1s", False), ("3xdisk", False),
])
def test_the_executed_commands_are_the_printed_ones(tmp_path, layout, sequential):
    plan, printed, executed, drill = drill_on(tmp_path, layout, sequential_rebuild=sequential)
    assert executed == commands(printed)
    assert executed[0].startswith("zpool create -o ashift=12 ") and " -f " not in executed[0]
    assert executed[-1] == f"zpool destroy -f {POOL}" and not drill.zfs.pools
    # what zfslab writes itself is in the plan too: the corruption, then the wipes (all back to zeros)
    corrupted = [r for r in drill.results if r.scenario.startswith("corrupt")]
    assert [r.detail.bytes_overwritten > 0 for r in corrupted] == [True] * len(corrupted)
    assert sum(line.startswith("# corrupt /") for line in printed) == len(corrupted) > 0
    for path in [*plan.devices, plan.spare]:
        assert not corrupted_windows(path), path


def corrupted_windows(path):
    """Offsets of the regions a corruption writes (every 8 MiB from 4 MiB) that are not zero."""
    with open(path, "rb") as f:
        out = []
        for offset in range(4 << 20, FILE_BYTES - (1 << 20), 8 << 20):
            f.seek(offset)
            if f.read(64 << 10).strip(b"\0"):
                out.append(offset)
        return out


def test_a_raidz2_drill_plans_each_scenario_on_the_disks_it_names(tmp_path):
    plan, printed, executed, drill = drill_on(tmp_path, "raidz2:4")
    d, spare = plan.devices, plan.spare
    assert [(r.scenario, r.outcome) for r in drill.results] == [
        ("degraded", "survived"), ("resilver", "survived"), ("corrupt", "repaired"), ("corrupt-beyond-parity", "repaired")]
    degraded = drill.results[0].detail
    assert [s.failed for s in degraded.steps] == [1, 2] and degraded.across_vdevs is None
    assert degraded.beyond_parity.zfs_refused == f"cannot offline {d[2]}: no valid replicas"
    assert f"zpool replace -w {POOL} {d[0]} {spare}" in executed
    # after the fresh disk took the first disk's place, it is the first member corrupted
    assert f"# corrupt {spare}, {d[1]}: zfslab writes 1024 KiB of random bytes in every 8 MiB of each one's data " \
           f"region (after the front labels, before the back ones)" in printed
    assert plan.fill_bytes % (1 << 20) == 0 and f"--size={plan.fill_bytes}" in executed[2]
    assert all(f"--directory={MOUNTPOINT}" in c for c in executed if c.startswith("fio"))


def test_the_corruption_writes_the_disks_the_plan_names_and_no_other(tmp_path):
    layout = parse_layout("raidz2:4")
    paths = files(tmp_path, 5)
    runner = RecordingRunner()
    plan = plan_drill(DrillRequest(layout, tuple(paths[:4]), paths[4], FILE_BYTES, ("resilver", "corrupt"), fill=0.5,
                                   sandbox=True))
    kept = dataclasses.replace(plan, steps=tuple(s for s in plan.steps if s.kind != "wipe"))  # to look at them
    execute_drill(kept, Drivers(RecordingZfs(runner), Fio(runner), runner), None, Clock())
    # the fresh disk stands where the first one was: it and the next two are written (p + 1 = 3), no other
    assert [bool(corrupted_windows(p)) for p in paths] == [False, True, True, False, True]


def test_a_verification_that_fails_leaves_out_only_the_failures_piled_on_it(tmp_path):
    # the first read-back (1 disk of raidz2:4 offline) fails: 2 disks offline and p+1 are not tried
    _, printed, executed, drill = drill_on(tmp_path, "raidz2:4", scenarios=("degraded",), fail_fio_read_at=1)
    degraded = drill.results[0]
    assert degraded.outcome == "lost" and [s.failed for s in degraded.detail.steps] == [1]
    assert degraded.detail.beyond_parity is None
    first_level = printed.index(next(line for line in printed if line.startswith("# degraded: 1 failed")))
    second_level = printed.index(next(line for line in printed if line.startswith("# degraded: 2 failed")))
    cleanup = printed.index(next(line for line in printed if line.startswith("# cleanup:")))
    assert executed == commands(printed[:second_level]) + commands(printed[cleanup:])
    assert len(commands(printed[second_level:cleanup])) == 7 + 6  # 2 failed disks, then p+1
    assert any("left out of the plan: 7 steps (2 failed disks" in line for line in drill.logged)
    assert any("left out of the plan: 6 steps (3 disks" in line for line in drill.logged)
    assert first_level < second_level


class MountedElsewhere(RecordingZfs):
    def get(self, name, *props):
        out = super().get(name, *props)
        if "mountpoint" in props:
            out["mountpoint"] = Property("mountpoint", "/mnt/zfslab-drill", "inherited")
        return out


def test_a_pool_that_is_not_where_the_plan_put_it_stops_the_drill_before_any_data(tmp_path):
    layout, paths, runner = parse_layout("mirror:2"), files(tmp_path, 3), RecordingRunner()
    zfs = MountedElsewhere(runner)
    plan = plan_drill(DrillRequest(layout, tuple(paths[:2]), paths[2], FILE_BYTES, ("degraded",), fill=0.5,
                                   sandbox=True))
    with pytest.raises(DrillError, match=f"mounted at /mnt/zfslab-drill, not at {MOUNTPOINT} where the plan runs fio"):
        execute_drill(plan, Drivers(zfs, Fio(runner), runner), None, Clock())
    # the create, then straight to the clean-up: no fill, no failure, the pool gone
    assert [shlex.join(a) for a in runner.calls] == [commands(format_steps(plan))[0], f"zpool destroy -f {POOL}"]
    assert not zfs.pools


def test_zpool_names_files_by_path_and_disks_by_name():
    assert leaf_name("/var/tmp/s/vdev0", sandbox=True) == "/var/tmp/s/vdev0"
    assert leaf_name("/dev/disk/by-id/ata-WDC_X", sandbox=False) == "ata-WDC_X"
    assert leaf_name("/dev/sdb", sandbox=False) == "sdb"


def test_the_plan_without_a_spare_skips_the_resilver_and_touches_no_disk_for_it():
    layout = parse_layout("mirror:2")
    plan = plan_drill(DrillRequest(layout, ("/dev/sda", "/dev/sdb"), None, 4 * 10**12, ("resilver",), fill=0.1))
    printed = format_steps(plan)
    assert "# resilver: skipped: no spare disk given (--spare-disk)" in printed
    assert not any(line.startswith(("zpool offline", "zpool replace")) for line in printed)
    # whole disks: the plan names them as zpool status does, and the fill follows the model of 4 TB disks
    assert plan.fill_bytes > 360 * 10**9 and plan.fill_bytes % (1 << 20) == 0


def test_drill_dry_run_prints_the_plan_and_writes_nothing(run_cli, tmp_path):
    sandbox, db = tmp_path / "s", tmp_path / "d.sqlite"
    r = run_cli("drill", "--sandbox", str(sandbox), "--layout", "raidz1:3", "--fill", "0.2", "--db", str(db),
                "--dry-run")
    assert r.exit_code == 0 and r.stderr == ""
    paths = [os.path.join(str(sandbox), f"vdev{i}") for i in range(4)]
    plan = plan_drill(DrillRequest(parse_layout("raidz1:3"), tuple(paths[:3]), paths[3], 1 << 30, fill=0.2,
                                   sandbox=True))
    assert r.stdout.splitlines() == format_steps(plan)
    assert not sandbox.exists() and not db.exists()


def test_drill_dry_run_as_json_holds_the_same_steps(run_cli, tmp_path):
    argv = ["drill", "--sandbox", str(tmp_path / "s"), "--layout", "2xmirror:2", "--db", str(tmp_path / "d.sqlite"),
            "--dry-run"]
    text = run_cli(*argv).stdout.splitlines()
    data = json.loads(run_cli(*argv, "--json").stdout)
    assert [shlex.join(s["command"]) for s in data["steps"] if s["command"]] == commands(text)
    headings = {text[0]} | {f"# {s['scenario']}: {s['title']}" for s in data["steps"] if s["title"]}
    assert [line for s in data["steps"] for line in s["lines"]] == [x for x in text if x not in headings]
    assert [s["line"] for s in data["steps"]] == [x for x in text if x not in headings and x not in WRAPPERS]
    assert [s["kind"] for s in data["steps"] if s["command"] is None] == ["corrupt", "corrupt"] + ["wipe"] * 5
    assert not (tmp_path / "s").exists() and not (tmp_path / "d.sqlite").exists()


def test_drill_refuses_what_it_cannot_plan_in_one_line(run_cli, tmp_path):
    r = run_cli("drill", "--sandbox", str(tmp_path / "s"), "--layout", "mirror:2+raidz2:6", "--dry-run")
    assert r.exit_code == 2 and r.stderr == (
        "zfslab: error: layout mirror:2+raidz2:6 mixes replication levels (each mirror vdev survives 1 failed disk, "
        "each raidz2 vdev 2): zpool create refuses that without -f (\"mismatched replication level\"), and zfslab "
        "never passes -f; drill one of its parts, e.g. --layout mirror:2\n")
    r = run_cli("drill", "--pool", "tank", "--read-only", "--dry-run")
    assert r.exit_code == 2 and "--pool NAME --read-only only reads, so drop --dry-run" in r.stderr
    assert not (tmp_path / "s").exists()


def test_a_sandbox_is_bounded_like_benchs(run_cli, tmp_path):
    # 256 file vdevs of the sandbox size were made for draid3:8d:255c:100s
    r = run_cli("drill", "--dry-run", "--sandbox", str(tmp_path / "sb"), "--layout", "draid3:8d:255c:100s")
    assert r.exit_code == 2 and r.stderr.count("\n") == 1
    assert "needs 256 file vdevs; a sandbox holds at most 65" in r.stderr
    assert not (tmp_path / "sb").exists()


def test_a_drill_killed_before_its_guid_was_saved_is_known_by_its_recorded_create(tmp_path):
    """The create's intent (name and mark) is recorded before zpool create; a drill killed once
    the create returned leaves a pool whose mark matches it: the next drill records the GUID and
    destroys it. A pool of the same name with another mark is refused."""
    from tests.fakes import Killed
    from zfslab.store.results import Results
    from zfslab.store.schema import connect
    from zfslab.system.disks import DisksRefused
    from zfslab.system.drill_plan import MARK, drill_mark
    from zfslab.system.pool_safety import destroy_own_pool
    layout, paths, runner = parse_layout("mirror:2"), files(tmp_path, 3), RecordingRunner()
    results = Results(connect(str(tmp_path / "d.sqlite")))
    plan = plan_drill(DrillRequest(layout, tuple(paths[:2]), paths[2], FILE_BYTES, ("degraded",), fill=0.5,
                                   sandbox=True))
    assert f"{MARK}={drill_mark(layout, paths[:2])}" in commands(format_steps(plan))[0]  # the dry run shows it
    zfs = FakeZfs(kill_after_create="mirror:2")
    with pytest.raises(Killed):  # the executor records the create (its mark) in `results` before it runs
        execute_drill(plan, Drivers(zfs, Fio(runner), runner), results, Clock())
    zfs.dead = False  # the next zfslab process
    guid = zfs.pool_guid(POOL)
    assert results.pool_guids(purpose="drill") == set()
    intents = results.intents(purpose="drill")
    assert destroy_own_pool(zfs, POOL, set(), "drill", lambda t: None, intents, MARK,
                            lambda g, lay: results.record_pool(g, POOL, "drill", lay)) == [POOL]
    assert results.pool_guids(purpose="drill") == {guid} and not zfs.pools
    zfs.create_pool(POOL, layout, paths[:2], fs_props={MARK: drill_mark(layout, paths[1:3])})  # other disks
    with pytest.raises(DisksRefused, match="did not create it"):
        destroy_own_pool(zfs, POOL, set(), "drill", lambda t: None, intents, MARK)
    assert POOL in zfs.pools


def test_a_fill_the_real_pool_cannot_hold_stops_the_drill_in_the_librarys_words(tmp_path):
    # the library names the setting (`fill`); the command layer words it as --fill (issue 37)
    from zfslab.commands._common import PARAM_FLAGS
    layout, paths, runner = parse_layout("mirror:2"), files(tmp_path, 3), RecordingRunner()
    zfs = RecordingZfs(runner)
    plan = plan_drill(DrillRequest(layout, tuple(paths[:2]), paths[2], FILE_BYTES, ("degraded",), fill=0.5,
                                   sandbox=True))
    plan = dataclasses.replace(plan, fill_bytes=1 << 50)  # far beyond what FakeZfs's pool holds
    with pytest.raises(DrillError, match="give a smaller `fill` and report the layout$") as e:
        execute_drill(plan, Drivers(zfs, Fio(runner), runner), None, Clock())
    assert e.value.worded(PARAM_FLAGS).endswith("give a smaller --fill and report the layout")
    assert not zfs.pools  # nothing filled, the pool destroyed
