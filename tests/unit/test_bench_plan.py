"""What --dry-run prints is what runs: the plan's commands against the argv the process runner
receives when the real ZfsCli and Fio drivers execute that plan (restic's PlanPrune/Execute).
One path, as commands/bench.py takes it: plan_bench(request), render() for --dry-run,
execute_bench(plan, ...) for the run."""

import dataclasses
import os
import shlex

import pytest

from tests.conftest import DATA
from zfslab.model.layout_grammar import parse_layout
from zfslab.store.results import Results
from zfslab.store.schema import connect
from zfslab.system.bench import execute_bench
from zfslab.system.bench_plan import MARK, POOL, BenchOptions, BenchRequest, plan_bench
from zfslab.system.fio import Fio
from zfslab.system.pool_ops import Drivers
from zfslab.system.pool_safety import own_leftover
from zfslab.system.disks import DisksRefused
from zfslab.system.runner import Completed, Runner
from zfslab.system.suites import SUITES
from zfslab.system.zfs import ZfsCli

FIO_JSON = open(os.path.join(DATA, "zfs-2.1", "fio_write.json")).read()


class ScriptedRunner(Runner):
    """The process runner, minus the processes: records every argv and answers as zpool, zfs
    and fio do (their -Hp tab-separated output; fio's JSON captured from a real run)."""

    def __init__(self):
        super().__init__()
        self.calls: list[tuple[str, ...]] = []
        self.pool = False
        self.guid = "1234567890123"

    def which(self, program):
        return None if program == "udevadm" else f"/usr/sbin/{program}"

    def run(self, argv, *, timeout_s=600.0, check=True, input_text=None, cwd=None):
        argv = tuple(str(a) for a in argv)
        self.calls.append(argv)
        out = ""
        if argv[:2] == ("zpool", "create"):
            self.pool = True
        elif argv[:2] == ("zpool", "destroy"):
            self.pool = False
        elif argv[:2] == ("zpool", "list"):
            out = f"{POOL}\t1000000000\t0\t1000000000\tONLINE\n" if self.pool else ""
        elif argv[:2] == ("zpool", "get"):
            out = f"{POOL}\tguid\t{self.guid}\t-\n"
        elif argv[:2] == ("zfs", "list"):
            out = f"{POOL}\t100000\t900000000\t100000\n"
        elif argv[:2] == ("zfs", "get"):
            out = f"{POOL}\tmountpoint\t/{POOL}\tdefault\n"
        elif argv[0] == "fio":
            out = FIO_JSON
        return Completed(argv, 0, out, "", 0.0)


def files(tmp_path, n: int, content: bytes = b"") -> list[str]:
    """File vdevs: a wipe truncates them, no device is touched."""
    devices = []
    for i in range(n):
        path = tmp_path / f"v{i}"
        path.write_bytes(content)
        os.truncate(path, 1 << 20)
        devices.append(str(path))
    return devices


def start(tmp_path, request: BenchRequest) -> tuple[Results, int]:
    results = Results(connect(str(tmp_path / "r.sqlite")))
    options = request.options
    return results, results.start_run(key=request.key, command="t", suite=options.suite, repeats=options.repeats,
                                      options=options.as_dict(), sandbox=True, facts={}, disks=[])


def changes(runner: ScriptedRunner) -> list[str]:
    """The commands that change something, as the runner received them."""
    return [shlex.join(a) for a in runner.calls if a[0] == "fio" or a[:2] in (("zpool", "create"), ("zpool", "destroy"))]


def test_the_executed_commands_are_the_printed_ones(tmp_path):
    opts = BenchOptions("quick", tuple(SUITES["quick"]), 2, 12, "128K", "off", "64m", 2, 0)
    devices = files(tmp_path, 3)
    request = BenchRequest((parse_layout("mirror:2"), parse_layout("raidz1:3")), tuple(devices), opts, sandbox=True)
    runner = ScriptedRunner()
    plan = plan_bench(request)
    printed = plan.render()  # what --dry-run prints

    results, run_id = start(tmp_path, request)
    execute_bench(plan, Drivers(ZfsCli(runner), Fio(runner), runner), results, run_id=run_id)

    assert changes(runner) == [line for line in printed if not line.startswith("#")]
    # the monitor beside each test is shown as it runs: zpool iostat, one interval of the test's length
    monitors = [shlex.join(a) for a in runner.calls if a[:2] == ("zpool", "iostat")]
    assert monitors == [line.removeprefix("# beside it: ") for line in printed if line.startswith("# beside it: ")]
    assert len(monitors) == 2 * 2 * len(SUITES["quick"]) and monitors[0] == f"zpool iostat -Hpv -y {POOL} 2 1"
    assert len(changes(runner)) == 2 * (1 + 2 * len(SUITES["quick"]) + 1)
    assert sum(line.startswith("# wipe ") for line in printed) == 5  # 2 + 3 disks, after each destroy
    assert results.pool_guids(run_id=run_id) == {"1234567890123"}


def test_a_resumed_plan_leaves_out_what_is_stored(tmp_path):
    opts = BenchOptions("quick", tuple(SUITES["quick"][:2]), 2, 12, "128K", "off", "64m", 2, 0)
    request = BenchRequest((parse_layout("mirror:2"), parse_layout("raidz1:3")), ("/dev/a", "/dev/b", "/dev/c"), opts)
    every = plan_bench(request).steps
    mirror_done = {("mirror:2", t.name, r) for t in SUITES["quick"][:2] for r in (1, 2)}
    resumed = plan_bench(dataclasses.replace(request, done=frozenset(mirror_done | {("raidz1:3", "seqwrite", 1)})))
    rest = resumed.steps
    assert [s.layout for s in rest if s.kind == "create"] == ["raidz1:3"]  # mirror:2 is not even created
    assert [(s.test, s.repeat) for s in rest if s.kind == "test"] == [("seqread", 1), ("seqwrite", 2), ("seqread", 2)]
    assert [s for s in every if s.layout == "raidz1:3"][-4:] == list(rest[-4:])  # destroy and wipes unchanged
    assert resumed.render()[0] == "# resuming: 5 measurements already stored are not run again"


def test_a_resumed_run_destroys_the_pool_it_left_as_its_first_printed_step(tmp_path):
    # issue 37: the leftover pool's destroy (and the engines ended on it) was done by the command
    # outside the plan, and the dry run printed no line for it; it is now the plan's first step
    opts = BenchOptions("quick", tuple(SUITES["quick"][:1]), 1, 12, "128K", "off", "64m", 2, 0)
    devices = files(tmp_path, 2)
    request = BenchRequest((parse_layout("mirror:2"),), tuple(devices), opts, sandbox=True)
    results, run_id = start(tmp_path, request)
    results.record_pool("1234567890123", POOL, "bench", "mirror:2", run_id)
    runner = ScriptedRunner()
    runner.pool = True  # imported at boot from zpool.cache, say
    zfs = ZfsCli(runner)
    leftover = own_leftover(zfs, POOL, results.pool_guids(run_id=run_id), results.intents(run_id=run_id), MARK)
    plan = plan_bench(dataclasses.replace(request, leftover=leftover))
    printed = plan.render()
    assert printed[0] == f"zpool destroy -f {POOL}" and printed[1].startswith(f"# {POOL} (GUID 1234567890123) is ")
    assert [r["kind"] for r in plan.step_records()][:2] == ["leftover", "create"]

    execute_bench(plan, Drivers(zfs, Fio(runner), runner), results, run_id=run_id)
    assert changes(runner) == [line for line in printed if not line.startswith("#")]
    ran = changes(runner)  # the leftover destroyed first, before the first layout's create
    assert ran[0] == f"zpool destroy -f {POOL}" and ran[1].startswith("zpool create ") and ran[-1] == ran[0]


def test_a_leftover_of_another_guid_at_run_time_is_refused_not_destroyed(tmp_path):
    opts = BenchOptions("quick", tuple(SUITES["quick"][:1]), 1, 12, "128K", "off", "64m", 2, 0)
    request = BenchRequest((parse_layout("mirror:2"),), tuple(files(tmp_path, 2)), opts, sandbox=True)
    results, run_id = start(tmp_path, request)
    results.record_pool("1234567890123", POOL, "bench", "mirror:2", run_id)
    runner = ScriptedRunner()
    runner.pool = True
    zfs = ZfsCli(runner)
    plan = plan_bench(dataclasses.replace(request, leftover=own_leftover(zfs, POOL, {"1234567890123"})))
    runner.guid = "42"  # someone else's pool of that name since the plan was made
    with pytest.raises(DisksRefused, match="now has GUID 42, not 1234567890123"):
        execute_bench(plan, Drivers(zfs, Fio(runner), runner), results, run_id=run_id)
    assert changes(runner) == []


def test_disks_that_hold_data_are_wiped_first_as_the_plan_says(tmp_path, monkeypatch):
    # the gate let them through (--wipe with their serials): the dry run shows their wipes, and the
    # run does them before the first pool, not outside the plan as it did
    opts = BenchOptions("quick", tuple(SUITES["quick"]), 1, 12, "128K", "off", "64m", 2, 0)
    devices = files(tmp_path, 2, b"old data")
    request = BenchRequest((parse_layout("mirror:2"),), tuple(devices), opts, dirty=(devices[1],), sandbox=True)
    runner = ScriptedRunner()
    plan = plan_bench(request)
    printed = plan.render()
    first = next(i for i, line in enumerate(printed) if not line.startswith("#") or line.startswith("# wipe"))
    assert printed[first].startswith(f"# wipe {devices[1]}")
    order = []
    import zfslab.system.pool_ops as ops_module
    monkeypatch.setattr(ops_module, "wipe_devices", lambda runner, d, sandbox=False: order.append(("wipe", *d)))
    results, run_id = start(tmp_path, request)
    real_run = runner.run

    def run(argv, **kw):
        if tuple(argv[:2]) == ("zpool", "create"):
            order.append(("create",))
        return real_run(argv, **kw)
    runner.run = run
    execute_bench(plan, Drivers(ZfsCli(runner), Fio(runner), runner), results, run_id=run_id)
    assert order[:2] == [("wipe", devices[1]), ("create",)]
    assert order[2:] == [("wipe", devices[0], devices[1])]  # after the destroy, both at once
