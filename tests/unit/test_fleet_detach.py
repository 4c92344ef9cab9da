"""bench --hosts --detach, then --status, --collect and --stop RUN from other processes: the hosts of
tests/unit/test_fleet_bench.py's `fleet` (this machine, LocalTransport, the fake remote bench), each
host's run started with setsid (systemd-run is checked by its command line only)."""

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from tests.conftest import REPO
from tests.unit.test_fleet_bench import LAYOUTS, _rows, fleet  # noqa: F401 - the fixture
from zfslab.cli import main
from zfslab.model.fleet_detach import HostProgress, check_run_id, eta_s
from zfslab.store.fleet_state import StateExists, write_state
from zfslab.system.fleet_detach import launch_argv, launch_script

# a controller in its own process: the fleet fixture's hosts, setsid in place of systemd-run
CONTROLLER = """
import sys
from tests.unit.test_fleet_bench import FakeFleet
import zfslab.commands._fleet_bench, zfslab.commands._fleet_detach, zfslab.system.fleet_detach
from zfslab.cli import main
fake = FakeFleet(sys.argv[1])
zfslab.system.fleet_detach.SYSTEMD_CHECK = ["false"]
zfslab.commands._fleet_bench.transport_from_args = zfslab.commands._fleet_detach.transport_from_args = lambda a: fake
sys.exit(main(sys.argv[2:]))
"""


def _bench_args(tmp_path, *extra):
    return ["bench", "--hosts", "h1,h2", "--disks", "/dev/sdb,/dev/sdc,/dev/sdd", "--layouts", LAYOUTS,
            "--db", str(tmp_path / "all.sqlite"), "--remote-db", str(tmp_path / "remote" / "{host}.sqlite"),
            "--suite", "quick", "--size", "64m", "--runtime", "2", "--ramp", "0", "--repeats", "1", *extra]


def _controller(fleet, *argv, timeout_s=120):
    """Run one controller command in a process of its own session; SIGKILL that whole session once
    it returned, so nothing a host runs can lean on it."""
    p = subprocess.Popen([sys.executable, "-c", CONTROLLER, fleet.bindir, *argv], cwd=REPO, text=True,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    out, err = p.communicate(timeout=timeout_s)
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return p.returncode, out, err


def _status(fleet, tmp_path, run):
    code, out, err = _controller(fleet, "bench", "--db", str(tmp_path / "all.sqlite"), "--status", run, "--json")
    assert err == "" or code == 4, err
    return code, json.loads(out)


def _wait_until(fleet, tmp_path, run, done, timeout_s=90.0):
    deadline = time.monotonic() + timeout_s
    while True:
        code, status = _status(fleet, tmp_path, run)
        if done(status) or time.monotonic() > deadline:
            return code, status
        time.sleep(0.5)


def _slow(fleet, seconds):
    for h in ("h1", "h2"):
        with open(os.path.join(fleet.bindir, f"slow-{h}"), "w") as f:
            f.write(str(seconds))


def _hold(fleet, on: bool) -> None:
    """Every fake bench waits before each test while its host's hold file exists (fake_zfslab.py):
    what a test must see still running is held, not raced against the machine's load."""
    for h in ("h1", "h2"):
        path = os.path.join(fleet.bindir, f"hold-{h}")
        if on:
            open(path, "w").close()
        elif os.path.exists(path):
            os.unlink(path)


def _ours(fleet):
    """Processes still running a fake host of this test (their environment names its folder)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if f"FAKE_DIR={fleet.bindir}".encode() in f.read().split(b"\0"):
                    found.append(pid)
        except OSError:
            pass
    return found


def test_a_detached_run_outlives_its_controller_and_collect_twice_counts_each_test_once(fleet, tmp_path):
    _slow(fleet, 0.5)
    _hold(fleet, True)
    t0 = time.monotonic()
    code, out, err = _controller(fleet, *_bench_args(tmp_path, "--detach"))
    assert code == 0, err
    run = re.search(r"detached run (\S+):", out)[1]
    print(out, f"(returned in {time.monotonic() - t0:.1f} s)")
    assert "4 layouts on 2 of 2 hosts" in out and f"--status {run}" in out
    code, status = _status(fleet, tmp_path, run)   # a new controller: the runs go on without the first
    print(json.dumps(status))
    assert status["layouts"] == 4 and status["running"] == 2
    _hold(fleet, False)
    code, status = _wait_until(fleet, tmp_path, run, lambda s: s["running"] == 0)
    print(json.dumps(status))
    assert code == 0 and status["done"] == 4
    assert all(h["ended"] and h["exit_code"] == 0 for h in status["hosts"])
    db = str(tmp_path / "all.sqlite")
    code, out, err = _controller(fleet, "bench", "--db", db, "--collect", run)
    print(out)
    assert code == 0 and "8 measurements of 4 runs from 2 hosts" in out, err
    first = _rows(db, "SELECT layout, test, repeat, COUNT(*) FROM measurements GROUP BY layout, test, repeat")
    assert len(first) == 4 * 2 and all(n == 1 for *_, n in first)
    assert _controller(fleet, "bench", "--db", db, "--collect", run)[0] == 0
    assert _rows(db, "SELECT layout, test, repeat, COUNT(*) FROM measurements GROUP BY layout, test, repeat") == first
    assert sorted(o for (o,) in _rows(db, "SELECT origin FROM runs")) == ["h1", "h1", "h2", "h2"]
    assert not _ours(fleet)


def _detach_here(monkeypatch, fleet, tmp_path, capsys, *, systemd: bool) -> str:
    """A detached run started by this process, its benches held before their first test; its id."""
    _slow(fleet, 0.5)
    _hold(fleet, True)   # released by the caller: until then each bench has made its pool and waits
    monkeypatch.setattr("zfslab.system.fleet_detach.SYSTEMD_CHECK", ["true" if systemd else "false"])
    monkeypatch.setattr("zfslab.commands._fleet_bench.transport_from_args", lambda args: fleet)
    monkeypatch.setattr("zfslab.commands._fleet_detach.transport_from_args", lambda args: fleet)
    assert main(_bench_args(tmp_path, "--detach")) == 0
    return re.search(r"detached run (\S+):", capsys.readouterr().out)[1]


def test_stop_ends_every_hosts_run_leaves_no_process_nor_pool_and_resume_finishes(monkeypatch, fleet, tmp_path,
                                                                                     capsys):
    run = _detach_here(monkeypatch, fleet, tmp_path, capsys, systemd=False)
    db = str(tmp_path / "all.sqlite")
    _wait_pools(fleet)
    assert main(["bench", "--db", db, "--stop", run]) == 0
    out = capsys.readouterr().out
    assert f"run {run} stopped on every host" in out and "ended without finishing" in out
    assert not _ours(fleet)
    assert not [f for f in os.listdir(fleet.bindir) if f.startswith("pool-")]
    assert main(["bench", "--db", db, "--status", run]) == 4
    assert "ended without finishing (stopped)" in capsys.readouterr().out
    _hold(fleet, False)
    assert main(_bench_args(tmp_path, "--resume")) == 0
    m = _rows(db, "SELECT layout, test, repeat, COUNT(*) FROM measurements GROUP BY layout, test, repeat")
    assert len(m) == 4 * 2 and all(n == 1 for *_, n in m)


def test_a_detached_dry_run_writes_nothing(monkeypatch, fleet, tmp_path, capsys):
    monkeypatch.setattr("zfslab.commands._fleet_bench.transport_from_args", lambda args: fleet)
    before = sorted(os.listdir(tmp_path))
    assert main(_bench_args(tmp_path, "--detach", "--dry-run")) == 0
    assert sorted(os.listdir(tmp_path)) == before
    assert not [a for _, a in fleet.commands if a[:1] in (["setsid"], ["systemd-run"])]
    out = capsys.readouterr().out
    assert out.count("$ zfslab bench ") == 4 and "--stop-with-session" not in out   # as the detached run will


def test_the_verbs_refuse_a_bad_run_id_or_a_missing_record_in_one_line(tmp_path, capsys):
    assert main(["bench", "--db", str(tmp_path / "x.sqlite"), "--status", "../../etc"]) == 2
    assert capsys.readouterr().err == ("zfslab: error: --status run '../../etc': not a detached run's id; give the id "
                                       "its start printed, e.g. 20261129-031500-a1b2\n")
    assert main(["bench", "--db", str(tmp_path / "x.sqlite"), "--collect", "20261129-031500-a1b2"]) == 2
    assert "no detached run 20261129-031500-a1b2 beside --db" in capsys.readouterr().err
    assert main(["bench", "--hosts", "h1", "--db", str(tmp_path / "x.sqlite"), "--stop", "20261129-031500-a1b2"]) == 2
    assert "leave out --hosts" in capsys.readouterr().err
    assert main(_bench_args(tmp_path, "--detach", "--reassign")) == 2
    assert "a detached run's lost host keeps its layouts for --resume" in capsys.readouterr().err
    assert main(["bench", "--sandbox", str(tmp_path), "--detach", "--dry-run"]) == 2
    assert "--detach goes with --hosts" in capsys.readouterr().err


def test_the_record_is_never_written_over(tmp_path):
    db = str(tmp_path / "all.sqlite")
    path = write_state(db, "20261129-031500-a1b2", {"hosts": []})
    with pytest.raises(StateExists):
        write_state(db, "20261129-031500-a1b2", {"hosts": [1]})
    assert json.load(open(path)) == {"zfslab_detached_run": 1, "hosts": []}
    assert sorted(os.listdir(tmp_path)) == ["all.sqlite.fleet-20261129-031500-a1b2.json"]


def test_systemd_launch_is_a_transient_unit_that_outlives_the_session_and_stops_as_a_whole():
    script = launch_script("/r/db.sqlite.RUN", [["zfslab", "bench", "--layouts", "mirror:2"]])
    argv = launch_argv("20261129-031500-a1b2", script, systemd=True, path_env="/usr/bin:/bin")
    assert argv == ["systemd-run", "--unit=zfslab-bench-20261129-031500-a1b2", "--collect", "--same-dir", "--quiet",
                    "--property=KillMode=control-group", "--setenv=PATH=/usr/bin:/bin", "--", "sh", "-c", script]
    assert launch_argv("x", script, systemd=False) == ["setsid", "-f", "sh", "-c", script]
    assert "--stop-with-session" not in script
    assert script.splitlines() == [
        "exec >/r/db.sqlite.RUN.log 2>&1 </dev/null",
        'echo "$$ $(cat /proc/sys/kernel/random/boot_id)" >/r/db.sqlite.RUN.pid',
        "sync -- /r/db.sqlite.RUN.pid /r || sync", "rc=0", "[ -e /r/db.sqlite.RUN.stop ] && exit 143",
        "zfslab bench --layouts mirror:2 || rc=$?", 'echo "$rc" >/r/db.sqlite.RUN.exit']


def test_run_ids_and_the_eta():
    assert check_run_id("20261129-031500-a1b2") == "20261129-031500-a1b2"
    with pytest.raises(ValueError):
        check_run_id("20261129-031500-a1b2; rm")
    running = HostProgress("h1", ("a", "b"), True, True, None, ("a",))
    ended = HostProgress("h2", ("c",), True, False, 0, ("c",))
    assert eta_s([running, ended], {"a": 10.0, "b": 30.0, "c": 10.0}, elapsed_s=40.0) == 60.0   # 2x slower
    assert eta_s([ended], {"c": 10.0}, elapsed_s=5.0) is None
    assert running.line() == "h1: 1 of 2 layouts done, running" and ended.finished


def test_a_systemd_host_starts_a_transient_unit_and_stop_asks_systemctl_first(monkeypatch, fleet, tmp_path, capsys):
    """systemd-run and systemctl stand-ins that log their argv: systemd-run starts the rest of its
    command line with setsid (as a unit outlives the session), systemctl stops nothing, so stop
    falls back to the process group, and still leaves nothing."""
    from tests.unit.test_fleet_bench import _script
    log = tmp_path / "systemd.log"
    _script(tmp_path / "bin" / "systemd-run", f'#!/bin/sh\necho "systemd-run $*" >>{log}\n'
                                              'while [ "$1" != "--" ]; do shift; done\nshift\nexec setsid -f "$@"\n')
    _script(tmp_path / "bin" / "systemctl", f'#!/bin/sh\necho "systemctl $*" >>{log}\n')
    run = _detach_here(monkeypatch, fleet, tmp_path, capsys, systemd=True)
    # each unit has a session for stop to end: a script that has written its pid but not yet started
    # a bench ends by itself at stop's mark and needs no systemctl (a CI-like run met that on h2)
    _wait_pools(fleet)
    started = [line for line in log.read_text().splitlines() if line.startswith("systemd-run ")]
    assert len(started) == 2 and all(line.startswith(f"systemd-run --unit=zfslab-bench-{run} --collect --same-dir "
                                                     "--quiet --property=KillMode=control-group --setenv=PATH=")
                                     for line in started), started
    assert main(["bench", "--db", str(tmp_path / "all.sqlite"), "--stop", run]) == 0
    assert [line for line in log.read_text().splitlines() if line.startswith("systemctl ")] == [
        f"systemctl stop zfslab-bench-{run}"] * 2
    assert not _ours(fleet)
    assert not [f for f in os.listdir(fleet.bindir) if f.startswith("pool-")]


def _wait_pools(fleet, timeout_s=60.0):
    """Until both hosts' first bench made its pool (and waits, held): both runs are going, so the
    test's stop meets two sessions, not a script still starting (docs/fleet.md: it would end by
    itself at stop's mark, before any bench)."""
    pools = [os.path.join(fleet.bindir, f"pool-{h}") for h in ("h1", "h2")]
    deadline = time.monotonic() + timeout_s
    while not all(map(os.path.exists, pools)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(map(os.path.exists, pools)), pools


def _wait_started(tmp_path, run, timeout_s=60.0):
    """Until both hosts' launches wrote their pid file (a unit runs its script after systemd-run
    returned: under load a CI-like run's --stop came first, and found h2 not started)."""
    pids = [tmp_path / "remote" / f"{h}.sqlite.{run}.pid" for h in ("h1", "h2")]
    deadline = time.monotonic() + timeout_s
    while not all(p.exists() and p.stat().st_size for p in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(p.exists() for p in pids), pids


def test_a_run_stopped_before_its_launch_ran_starts_no_bench_when_it_does(monkeypatch, fleet, tmp_path, capsys):
    """A unit whose script has not run yet when --stop looks (systemd-run's stand-in holds it at a
    gate): stop finds the host not started, and before the fix the script then started the run
    anyway (its benches made their pools). Stop marks the run first; the script, which writes its
    pid and then looks for the mark, ends before any bench (fails before)."""
    from tests.unit.test_fleet_bench import _script
    gate = tmp_path / "gate"
    _script(tmp_path / "bin" / "systemd-run", '#!/bin/sh\nwhile [ "$1" != "--" ]; do shift; done\nshift\n'
            f'exec setsid -f sh -c \'while [ ! -e {gate} ]; do sleep 0.05; done; exec "$@"\' sh "$@" '
            '</dev/null >/dev/null 2>&1\n')
    run = _detach_here(monkeypatch, fleet, tmp_path, capsys, systemd=True)
    _hold(fleet, False)   # nothing holds a bench that starts: only the mark can keep it from running
    db = str(tmp_path / "all.sqlite")
    assert main(["bench", "--db", db, "--stop", run]) == 0
    assert capsys.readouterr().out.count("not started") == 2
    gate.touch()          # the units' scripts run now, after the stop
    _wait_started(tmp_path, run)
    deadline = time.monotonic() + 60
    while _ours(fleet) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _ours(fleet)
    assert not [f for f in os.listdir(fleet.bindir) if f.startswith("pool-")]
    assert not list((tmp_path / "remote").glob("h?.sqlite"))   # no bench ran: none made its database
    assert main(["bench", "--db", db, "--status", run]) == 4
    assert capsys.readouterr().out.count("ended without finishing (stopped)") == 2


def test_attach_follows_a_run_its_starter_left_pulls_as_it_goes_and_ctrl_c_leaves_it_running(fleet, tmp_path):
    """A controller that comes back: --attach from a new process shows each host's progress as it
    changes and fills --db while the hosts still run; Ctrl-C in it stops the following, not the run;
    attached again, it ends with the run, every (layout, test) once."""
    _slow(fleet, 0.5)
    _hold(fleet, True)   # every bench waits before its first test until the follower was interrupted
    code, out, err = _controller(fleet, *_bench_args(tmp_path, "--detach"))
    assert code == 0, err
    run = re.search(r"detached run (\S+):", out)[1]
    db = str(tmp_path / "all.sqlite")
    attach = subprocess.Popen([sys.executable, "-c", CONTROLLER, fleet.bindir, "bench", "--db", db, "--attach", run,
                               "--interval", "1"], cwd=REPO, text=True, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, start_new_session=True)
    first = attach.stdout.readline()
    assert first == f"attached to run {run} on 2 hosts; Ctrl-C leaves it running\n"
    assert attach.stdout.readline().endswith(" 0 of 2 layouts done, running\n")   # looked at, held
    attach.send_signal(signal.SIGINT)
    rest, err = attach.communicate(timeout=60)
    assert attach.returncode == 130, err
    assert err.startswith(f"zfslab: interrupted; run {run} goes on on its hosts") and f"--attach {run}" in err, err
    code, status = _status(fleet, tmp_path, run)
    assert status["running"] == 2 and status["done"] == 0, status   # the run went on without its follower
    _hold(fleet, False)

    code, out, err = _controller(fleet, "bench", "--db", db, "--attach", run, "--interval", "1")
    print(out)
    assert code == 0, err
    lines = out.splitlines()
    assert re.fullmatch(r"  [0-9]:[0-9]{2}:[0-9]{2} h1: [0-2] of 2 layouts done, (running|ended, exit 0)", lines[1]), lines
    assert any(re.fullmatch(r"  [0-9:]+ h[12]: 2 of 2 layouts done, ended, exit 0", x) for x in lines), lines
    assert f"run {run}: 4 of 4 layouts done on 2 hosts, 0 running" in out
    assert f"measurements of 4 runs from 2 hosts in {db}" in out
    m = _rows(db, "SELECT layout, test, repeat, COUNT(*) FROM measurements GROUP BY layout, test, repeat")
    assert len(m) == 4 * 2 and all(n == 1 for *_, n in m)
    assert not _ours(fleet)


def test_follow_pulls_only_when_a_host_finished_something_new_and_always_at_the_end(monkeypatch):
    """follow()'s rounds against scripted looks: a pull after the look that shows a layout done, none
    after a look with nothing new, one at the end; and it waits --interval between looks."""
    from zfslab.system import fleet_detach
    looks = iter([[HostProgress("h1", ("a", "b"), True, True, None, ())],
                  [HostProgress("h1", ("a", "b"), True, True, None, ("a",))],
                  [HostProgress("h1", ("a", "b"), True, True, None, ("a",))],
                  [HostProgress("h1", ("a", "b"), True, False, 0, ("a", "b"))]])
    pulls, waits = [], []
    monkeypatch.setattr(fleet_detach, "status", lambda transport, state, limit: next(looks))
    from zfslab.system.fleet_bench import Pulled
    monkeypatch.setattr(fleet_detach, "collect", lambda transport, state, limit: pulls.append(1) or
                        Pulled(("h1",), (), len(pulls), 0, ("h1",)))
    rounds = list(fleet_detach.follow(None, {}, limit=4, interval_s=7.0, wait=waits.append))
    assert [r.pulled and r.pulled.runs for r in rounds] == [None, 1, None, 2]
    assert waits == [7.0, 7.0, 7.0] and not rounds[-1].running


def test_interval_goes_with_attach(tmp_path, capsys):
    assert main(["bench", "--db", str(tmp_path / "x.sqlite"), "--status", "20261129-031500-a1b2",
                 "--interval", "5"]) == 2
    assert capsys.readouterr().err == "zfslab: error: --interval 5: goes with --attach RUN\n"
    assert main(["bench", "--db", str(tmp_path / "x.sqlite"), "--attach", "20261129-031500-a1b2",
                 "--interval", "0"]) == 2
    assert "--interval" in capsys.readouterr().err


def test_the_probe_tells_a_run_cut_by_a_reboot_from_one_stopped(tmp_path):
    """A pid file of another boot (its boot id is not this one's) is a run the host's reboot ended,
    even when its pid is alive now (pids are reused after a boot); of this boot, a live session is
    running and a gone one stopped."""
    from zfslab.system.detached_probe import BOOT_ID, probe
    boot = open(BOOT_ID).read().strip()
    prefix = str(tmp_path / "db.sqlite.RUN")
    with open(prefix + ".pid", "w") as f:
        f.write(f"{os.getsid(0)} 00000000-dead-beef-0000-000000000000\n")
    answer = probe(prefix, str(tmp_path / "db.sqlite"), "h1")
    assert answer["started"] and answer["rebooted"] and not answer["alive"] and answer["exit_code"] is None
    cut = HostProgress("h1", ("a",), True, False, None, (), rebooted=answer["rebooted"])
    assert cut.line() == "h1: 0 of 1 layouts done, ended without finishing: the host rebooted during the run"
    with open(prefix + ".pid", "w") as f:
        f.write(f"{os.getsid(0)} {boot}\n")   # this test's own session: alive, this boot
    answer = probe(prefix, str(tmp_path / "db.sqlite"), "h1")
    assert answer["alive"] and not answer["rebooted"]


def test_the_probe_reads_a_database_caught_between_two_migrations_as_nothing_done(tmp_path):
    """A bench creates its database one migration a transaction; a probe between them found runs
    without their origin column and failed ('no such column: r.origin'), so --stop called the host
    not reached (seen in this file's systemd test under load)."""
    import sqlite3
    from zfslab.store import schema
    from zfslab.system.detached_probe import finished_layouts
    db = str(tmp_path / "h1.sqlite")
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    conn.execute(f"PRAGMA application_id = {schema.APPLICATION_ID}")
    for number in range(1, 5):   # migration 5 gives runs their origin
        for statement in schema.MIGRATIONS[number - 1]:
            conn.execute(statement)
        conn.execute("INSERT INTO schema_version (version) VALUES (?)", (number,))
    conn.close()
    assert finished_layouts(db, "h1") == []


def test_the_probe_reads_a_database_a_bench_is_creating_as_nothing_done(tmp_path):
    """A CI-like run's --stop called a host not reached: its probe met the bench's database at the
    instant SQLite had made the file (empty, or a WAL header alone) and refused it as 'an empty
    SQLite database'. That is a bench starting: nothing done. Another program's file is still
    refused."""
    import sqlite3
    from zfslab.store.schema import NotOurDatabase
    from zfslab.system.detached_probe import finished_layouts
    open(tmp_path / "zero.sqlite", "wb").close()
    conn = sqlite3.connect(tmp_path / "wal.sqlite", isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.close()
    assert finished_layouts(str(tmp_path / "zero.sqlite"), "h1") == []
    assert finished_layouts(str(tmp_path / "wal.sqlite"), "h1") == []
    conn = sqlite3.connect(tmp_path / "other.sqlite", isolation_level=None)
    conn.execute("CREATE TABLE notes (text)")
    conn.close()
    with pytest.raises(NotOurDatabase):
        finished_layouts(str(tmp_path / "other.sqlite"), "h1")


def test_every_state_a_new_database_commits_reads_as_nothing_done_or_as_results(tmp_path, monkeypatch):
    """A bench makes its database one transaction at a time; a probe may read it between any two.
    The version table once committed alone, before its first version: a CI-like run's probe read
    that as 'its schema_version table does not hold zfslab's version numbers' (another program's
    file), and --stop called the host not reached. The probe reads the file after every commit
    of a real creation here (fails before: the version table's own commit)."""
    from contextlib import contextmanager
    from zfslab.store import schema
    from zfslab.system.detached_probe import finished_layouts
    db = str(tmp_path / "h1.sqlite")
    real, seen = schema.atomic, []

    @contextmanager
    def then_probe(conn):
        with real(conn):
            yield conn
        seen.append(finished_layouts(db, "h1"))   # committed: what a probe now would read
    monkeypatch.setattr(schema, "atomic", then_probe)
    schema.connect(db).close()
    assert seen == [[]] * schema.SCHEMA_VERSION
def test_the_probe_as_fleet_detach_runs_it_skips_benchs_parser_and_answers_as_the_parser_does(tmp_path):
    """Every look of --status and --attach runs the probe on each host; its exact command line is
    answered without building bench's parser (whose imports double the probe's CPU), and any other
    spelling of it, through the parser, answers the same, refusals included."""
    prefix = str(tmp_path / "db.sqlite.RUN")
    with open(prefix + ".pid", "w") as f:
        f.write(f"{os.getsid(0)} 00000000-dead-beef-0000-000000000000\n")
    answers = {}
    for db in (str(tmp_path / "db.sqlite"), str(tmp_path)):   # the second: a folder, refused
        for name, argv in (("fast", ["bench", "--probe-detached", prefix, "--db", db, "--origin", "h1"]),
                           ("parsed", ["bench", "--db", db, "--probe-detached", prefix, "--origin", "h1"])):
            code = f"import sys; from zfslab.cli import main; rc = main({argv!r}); " \
                   "print('bench parsed' if 'zfslab.commands.bench' in sys.modules else 'bench not imported'); sys.exit(rc)"
            done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO,
                                  env={**os.environ, "PYTHONPATH": os.path.join(REPO, "src")})
            answers[name, db] = (done.returncode, done.stdout.splitlines()[:-1], done.stderr)
            assert done.stdout.splitlines()[-1] == ("bench not imported" if name == "fast" else "bench parsed")
        assert answers["fast", db] == answers["parsed", db]
    ok = answers["fast", str(tmp_path / "db.sqlite")]
    assert ok[0] == 0 and json.loads(ok[1][0])["rebooted"] is True
    refused = answers["fast", str(tmp_path)]
    assert refused[0] == 2 and "a directory, not a results file" in refused[2]
