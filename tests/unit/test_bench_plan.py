"""What --dry-run prints is what runs: the plan's commands against the argv the process runner
receives when the real ZfsCli and Fio drivers execute that plan (restic's PlanPrune/Execute)."""

import os
import shlex

from tests.conftest import DATA
from zfslab.model.layout_grammar import parse_layout
from zfslab.store.results import Results
from zfslab.store.schema import connect
from zfslab.system.bench import POOL, Bench, BenchOptions, format_steps, plan_steps, run_key
from zfslab.system.fio import Fio
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
            out = f"{POOL}\tguid\t1234567890123\t-\n"
        elif argv[:2] == ("zfs", "list"):
            out = f"{POOL}\t100000\t900000000\t100000\n"
        elif argv[:2] == ("zfs", "get"):
            out = f"{POOL}\tmountpoint\t/{POOL}\tdefault\n"
        elif argv[0] == "fio":
            out = FIO_JSON
        return Completed(argv, 0, out, "", 0.0)


def test_the_executed_commands_are_the_printed_ones(tmp_path):
    opts = BenchOptions("quick", tuple(SUITES["quick"]), 2, 12, "128K", "off", "64m", 2, 0)
    devices = []
    for i in range(3):  # file vdevs: the wipe truncates them, no device is touched
        path = tmp_path / f"v{i}"
        path.write_bytes(b"")
        os.truncate(path, 1 << 20)
        devices.append(str(path))
    layouts = [parse_layout("mirror:2"), parse_layout("raidz1:3")]
    key = run_key(layouts, devices, opts)
    runner = ScriptedRunner()
    fio = Fio(runner)
    printed = format_steps(plan_steps(layouts, devices, opts, key, fio))  # what --dry-run prints

    results = Results(connect(str(tmp_path / "r.sqlite")))
    run_id = results.start_run(key=key, command="t", suite="quick", repeats=2, options=opts.as_dict(), sandbox=True,
                               facts={}, disks=[])
    Bench(ZfsCli(runner), fio, results, runner, opts, layouts, devices, key, run_id, sandbox=True).run()

    changes = [shlex.join(a) for a in runner.calls if a[0] == "fio" or a[:2] in (("zpool", "create"),
                                                                                ("zpool", "destroy"))]
    assert changes == [line for line in printed if not line.startswith("#")]
    # the monitor beside each test is shown as it runs: zpool iostat, one interval of the test's length
    monitors = [shlex.join(a) for a in runner.calls if a[:2] == ("zpool", "iostat")]
    assert monitors == [line.removeprefix("# beside it: ") for line in printed if line.startswith("# beside it: ")]
    assert len(monitors) == 2 * 2 * len(SUITES["quick"]) and monitors[0] == f"zpool iostat -Hpv -y {POOL} 2 1"
    assert len(changes) == 2 * (1 + 2 * len(SUITES["quick"]) + 1)
    assert sum(line.startswith("# wipe ") for line in printed) == 5  # 2 + 3 disks, after each destroy
    assert results.pool_guids(run_id=run_id) == {"1234567890123"}


def test_a_resumed_plan_leaves_out_what_is_stored(tmp_path):
    opts = BenchOptions("quick", tuple(SUITES["quick"][:2]), 2, 12, "128K", "off", "64m", 2, 0)
    layouts = [parse_layout("mirror:2"), parse_layout("raidz1:3")]
    devices = ["/dev/a", "/dev/b", "/dev/c"]
    every = plan_steps(layouts, devices, opts, "k", Fio())
    mirror_done = {("mirror:2", t.name, r) for t in SUITES["quick"][:2] for r in (1, 2)}
    rest = plan_steps(layouts, devices, opts, "k", Fio(), mirror_done | {("raidz1:3", "seqwrite", 1)})
    assert [s.layout for s in rest if s.kind == "create"] == ["raidz1:3"]  # mirror:2 is not even created
    assert [(s.test, s.repeat) for s in rest if s.kind == "test"] == [("seqread", 1), ("seqwrite", 2), ("seqread", 2)]
    assert [s for s in every if s.layout == "raidz1:3"][-4:] == rest[-4:]  # destroy and wipes unchanged
    assert format_steps(rest, 5)[0] == "# resuming: 5 measurements already stored are not run again"


def test_disks_that_hold_data_are_wiped_first_as_the_plan_says(tmp_path, monkeypatch):
    # the gate let them through (--wipe with their serials): the dry run shows their wipes, and the
    # run does them before the first pool, not outside the plan as it did
    opts = BenchOptions("quick", tuple(SUITES["quick"]), 1, 12, "128K", "off", "64m", 2, 0)
    devices = []
    for i in range(2):
        path = tmp_path / f"v{i}"
        path.write_bytes(b"old data")
        os.truncate(path, 1 << 20)
        devices.append(str(path))
    layouts = [parse_layout("mirror:2")]
    key = run_key(layouts, devices, opts)
    runner = ScriptedRunner()
    steps = plan_steps(layouts, devices, opts, key, Fio(runner), dirty=(devices[1],), sandbox=True)
    printed = format_steps(steps)
    first = next(i for i, line in enumerate(printed) if not line.startswith("#") or line.startswith("# wipe"))
    assert printed[first].startswith(f"# wipe {devices[1]}")
    order = []
    import zfslab.system.pool_ops as ops_module
    monkeypatch.setattr(ops_module, "wipe_devices", lambda runner, d, sandbox=False: order.append(("wipe", *d)))
    results = Results(connect(str(tmp_path / "r.sqlite")))
    run_id = results.start_run(key=key, command="t", suite="quick", repeats=1, options=opts.as_dict(), sandbox=True,
                               facts={}, disks=[])
    real_run = runner.run

    def run(argv, **kw):
        if tuple(argv[:2]) == ("zpool", "create"):
            order.append(("create",))
        return real_run(argv, **kw)
    runner.run = run
    Bench(ZfsCli(runner), Fio(runner), results, runner, opts, layouts, devices, key, run_id, sandbox=True).run(steps)
    assert order[:2] == [("wipe", devices[1]), ("create",)]
    assert order[2:] == [("wipe", devices[0], devices[1])]  # after the destroy, both at once
