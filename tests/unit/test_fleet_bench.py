"""bench --hosts end to end on this machine: LocalTransport runs each host's commands here, with a
fake remote `zfslab bench` (tests/data/fleet/fake_zfslab.py: no ZFS module here) and fake zpool,
fio and lsblk; the real zfslab does the rest (preflight, split, merge, plan --db). The two-guest
tests in tests/e2e run the same over ssh with real ZFS."""

import json
import os
import sqlite3
import signal
import stat
import sys

import pytest

from tests.conftest import REPO
from zfslab import __version__
from zfslab.cli import main
from zfslab.model.inventory import Host
from zfslab.system.runner import Runner
from zfslab.system.transport import HostUnreachable, LocalTransport

LAYOUTS = "mirror:2,raidz1:3,mirror:3,raidz1:2"
FAKE = os.path.join(REPO, "tests", "data", "fleet", "fake_zfslab.py")


def _script(path, text):
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def fleet(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    src = os.path.join(REPO, "src")
    _script(bindir / "zfslab", f"#!/bin/sh\nPYTHONPATH={src} exec {sys.executable} {FAKE} \"$@\"\n")
    _script(bindir / "zpool", "#!/bin/sh\necho zfs-2.2.2-1\necho zfs-kmod-2.2.2-1\n")
    _script(bindir / "fio", "#!/bin/sh\necho fio-3.36\n")
    # lsblk: the disk's facts; a host may be given other ones (disks-HOST.json)
    _script(bindir / "lsblk", '#!/bin/sh\nf="$FAKE_DIR/disks-$FAKE_HOST.json"\n[ -e "$f" ] || f="$FAKE_DIR/disks.json"\n'
                              'for last; do :; done\nsed "s#DISK#$last#; s#SERIAL#SER-$FAKE_HOST#" "$f"\n')
    (bindir / "disks.json").write_text(json.dumps({"blockdevices": [{
        "name": "x", "path": "DISK", "type": "disk", "size": 4000787030016, "model": "HGST", "serial": "SERIAL",
        "rota": True, "log-sec": 512, "phy-sec": 4096}]}))
    return FakeFleet(str(bindir))


class FakeFleet:
    """Each host is this machine with FAKE_HOST set; a host marked to die mid-layout vanishes there."""

    def __init__(self, bindir: str):
        self.bindir, self.down, self.closed, self.commands = bindir, set(), 0, []

    def _local(self, host: Host) -> LocalTransport:
        env = {"FAKE_HOST": host.name, "FAKE_DIR": self.bindir}
        return LocalTransport(Runner(env=env, path=f"{self.bindir}:{os.environ['PATH']}"), down=self.down)

    def run(self, host, argv, *, timeout_s, check=True):
        self.commands.append((host.name, list(argv)))
        if argv[:2] == ["zfslab", "bench"] and "--dry-run" not in argv and "--layouts" in argv:
            layout = argv[argv.index("--layouts") + 1]
            if any(os.path.exists(os.path.join(self.bindir, f"{die}-{host.name}-{layout}")) for die in ("die", "die0", "dieI")):
                self._local(host).run(host, argv, timeout_s=timeout_s, check=False)
                self.down.add(host.name)   # it wrote part of the layout, then its network went
                raise HostUnreachable(host.name, "the connection closed during the command", host.name)
        return self._local(host).run(host, argv, timeout_s=timeout_s, check=check)

    def fetch(self, host, remote_path, local_path, *, timeout_s):
        return self._local(host).fetch(host, remote_path, local_path, timeout_s=timeout_s)

    def close(self):
        self.closed += 1


def _bench(monkeypatch, fleet, tmp_path, *extra):
    monkeypatch.setattr("zfslab.commands._fleet_bench.transport_from_args", lambda args: fleet)
    return main(["bench", "--hosts", "h1,h2", "--disks", "/dev/sdb,/dev/sdc,/dev/sdd", "--layouts", LAYOUTS,
                 "--db", str(tmp_path / "all.sqlite"), "--remote-db", str(tmp_path / "remote" / "{host}.sqlite"),
                 "--suite", "quick", "--size", "64m", "--runtime", "2", "--ramp", "0", "--repeats", "1", *extra])


def _rows(db, sql):
    conn = sqlite3.connect(db)
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def _listing(root):
    return sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs)


def test_split_over_two_hosts_merges_with_provenance_and_plan_counts_the_hosts(monkeypatch, fleet, tmp_path, capsys):
    assert _bench(monkeypatch, fleet, tmp_path) == 0
    db = str(tmp_path / "all.sqlite")
    runs = _rows(db, "SELECT origin, finished_at IS NOT NULL FROM runs")
    assert sorted({o for o, _ in runs}) == ["h1", "h2"] and all(f for _, f in runs)
    # every layout once, each test once: nothing lost, nothing twice
    m = _rows(db, "SELECT layout, test, repeat, COUNT(*) FROM measurements GROUP BY layout, test, repeat")
    assert len(m) == 4 * 2 and all(n == 1 for *_, n in m)
    # both hosts worked, each on its own database, each bench told its host's name
    benches = [(h, a) for h, a in fleet.commands if a[:2] == ["zfslab", "bench"] and "--dry-run" not in a]
    assert {h for h, _ in benches} == {"h1", "h2"}
    assert all(a[a.index("--origin") + 1] == h and a[a.index("--db") + 1].endswith(f"{h}.sqlite") for h, a in benches)
    assert not [f for f in os.listdir(fleet.bindir) if f.startswith("pool-")]
    assert fleet.closed == 1
    assert "4 of 4 layouts done on 2 hosts; 8 measurements of 4 runs from 2 hosts" in capsys.readouterr().out
    assert main(["plan", "--db", db, "--explain"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "fitted on 4 layouts measured on these disks from 2 hosts (4 runs)" in out
    assert main(["plan", "--db", db]) == 0
    assert "speed fitted on 4 measured layouts from 2 hosts (4 runs)" in " ".join(capsys.readouterr().out.split())


def test_dry_run_prints_each_hosts_plan_and_writes_nothing(monkeypatch, fleet, tmp_path, capsys):
    before = _listing(tmp_path)
    assert _bench(monkeypatch, fleet, tmp_path, "--dry-run") == 0
    assert _listing(tmp_path) == before
    out = capsys.readouterr().out
    assert out.startswith("# fleet: 4 layouts on 2 hosts, predicted ")
    for h in ("h1", "h2"):
        assert f"## host {h}: 2 layouts, predicted" in out
        assert f"--origin {h} --suite quick" in out and f"# fake plan of {h}" in out
    assert sum(line.startswith("$ zfslab bench --disks /dev/sdb,/dev/sdc,/dev/sdd --layouts ")
               for line in out.splitlines()) == 4


def test_preflight_refuses_a_host_with_other_disks_and_starts_nothing(monkeypatch, fleet, tmp_path, capsys):
    other = json.loads((tmp_path / "bin" / "disks.json").read_text())
    other["blockdevices"][0]["size"] = 3000592982016
    (tmp_path / "bin" / "disks-h2.json").write_text(json.dumps(other))
    before = _listing(tmp_path)
    assert _bench(monkeypatch, fleet, tmp_path) == 2
    err = capsys.readouterr().err
    assert ("zfslab: h2: /dev/sdb differs from h1's disks: size 3,000,592,982,016 bytes, not 4,000,787,030,016 bytes"
            in err.splitlines())
    assert "leave them out with --skip-host H" in err
    assert _listing(tmp_path) == before
    assert not [a for _, a in fleet.commands if a[:2] == ["zfslab", "bench"]]
    # leaving it out, the other host runs everything
    assert _bench(monkeypatch, fleet, tmp_path, "--skip-host", "h2") == 0
    assert {o for (o,) in _rows(str(tmp_path / "all.sqlite"), "SELECT origin FROM runs")} == {"h1"}


def test_a_hosts_disks_holding_data_need_its_own_serials(monkeypatch, fleet, tmp_path, capsys):
    (tmp_path / "bin" / "dirty-h2").write_text("")
    assert _bench(monkeypatch, fleet, tmp_path) == 10
    assert "zfslab: host h2: these disks would be refused" in capsys.readouterr().err
    assert not os.path.exists(tmp_path / "all.sqlite")
    assert _bench(monkeypatch, fleet, tmp_path, "--wipe", "--confirm-serials", "h2=SER-h2") == 0
    h2 = [a for h, a in fleet.commands if h == "h2" and a[:2] == ["zfslab", "bench"]][-1]
    h1 = [a for h, a in fleet.commands if h == "h1" and a[:2] == ["zfslab", "bench"]][-1]
    assert h2[h2.index("--confirm-serials") + 1] == "SER-h2" and "--confirm-serials" not in h1


def test_wipe_without_per_host_serials_is_refused(monkeypatch, fleet, tmp_path, capsys):
    assert _bench(monkeypatch, fleet, tmp_path, "--wipe", "--confirm-serials", "S1") == 2
    assert "--confirm-serials S1: with --hosts, name the host: HOST=S1,S2" in capsys.readouterr().err


def test_lost_host_reassigned(monkeypatch, fleet, tmp_path, capsys):
    first = _first_layout(monkeypatch, fleet, tmp_path, "h1")
    (tmp_path / "bin" / f"die-h1-{first}").write_text("")
    assert _bench(monkeypatch, fleet, tmp_path, "--reassign") == 0
    db = str(tmp_path / "all.sqlite")
    m = _rows(db, "SELECT layout, test, COUNT(*) FROM measurements GROUP BY layout, test")
    assert len(m) == 8 and all(n == 1 for *_, n in m)
    assert {o for (o,) in _rows(db, "SELECT origin FROM runs")} == {"h2"}   # h1 lost: its part left out


def test_lost_host_resumes_its_own_layouts_later(monkeypatch, fleet, tmp_path, capsys):
    first = _first_layout(monkeypatch, fleet, tmp_path, "h1")
    (tmp_path / "bin" / f"die-h1-{first}").write_text("")
    assert _bench(monkeypatch, fleet, tmp_path) == 4
    err = capsys.readouterr().err
    assert "2 layouts left" in err and "lost with h1: run the same command with --resume" in err
    assert os.path.exists(tmp_path / "bin" / "pool-h1")   # its pool, as a host that died leaves it
    os.unlink(tmp_path / "bin" / f"die-h1-{first}")
    fleet.down.clear()   # it is back
    fleet.commands.clear()
    assert _bench(monkeypatch, fleet, tmp_path, "--resume") == 0
    db = str(tmp_path / "all.sqlite")
    m = _rows(db, "SELECT layout, test, COUNT(*) FROM measurements GROUP BY layout, test")
    assert len(m) == 8 and all(n == 1 for *_, n in m)
    ran = [a[a.index("--layouts") + 1] for h, a in fleet.commands if a[:2] == ["zfslab", "bench"]
           and "--dry-run" not in a]
    assert sorted(ran) == sorted(_queue(monkeypatch, fleet, tmp_path, "h1"))   # h2's finished part not run again
    assert not os.path.exists(tmp_path / "bin" / "pool-h1")   # adopted and destroyed by its own resume
    assert all(f for (f,) in _rows(db, "SELECT finished_at IS NOT NULL FROM runs"))


def _queue(monkeypatch, fleet, tmp_path, host):
    from zfslab.system.fleet_bench import plan_fleet
    return plan_fleet(_request(tmp_path)).queue(host)


def _first_layout(monkeypatch, fleet, tmp_path, host):
    return _queue(monkeypatch, fleet, tmp_path, host)[0]


def _request(tmp_path):
    from zfslab.model.layout_grammar import parse_layout
    from zfslab.system.bench_plan import BenchOptions
    from zfslab.system.fleet_bench import FleetBenchRequest
    from zfslab.system.suites import SUITES
    opts = BenchOptions("quick", tuple(SUITES["quick"]), 1, 12, "128K", "off", "64m", 2, 0)
    return FleetBenchRequest((Host("h1", "h1"), Host("h2", "h2")), ("/dev/sdb", "/dev/sdc", "/dev/sdd"),
                             tuple(parse_layout(x) for x in LAYOUTS.split(",")), opts, str(tmp_path / "all.sqlite"))


def test_predicted_time_balances_the_split(tmp_path):
    from zfslab.model.bench_time import POOL_OVERHEAD_S, TestShape, predicted_bench_s
    from zfslab.model.layout_grammar import parse_layout
    plan = __import__("zfslab.system.fleet_bench", fromlist=["plan_fleet"]).plan_fleet(_request(tmp_path))
    assert sorted(plan.queue("h1") + plan.queue("h2")) == sorted(LAYOUTS.split(","))
    # a size-based test on more data disks is sooner; a time-based one is its runtime
    seq, timed = [TestShape(False)], [TestShape(True)]
    one = dict(size_bytes=10**9, runtime_s=60, ramp_s=5, repeats=2)
    assert predicted_bench_s(parse_layout("stripe:4"), seq, **one) < predicted_bench_s(parse_layout("mirror:2"), seq, **one)
    assert predicted_bench_s(parse_layout("mirror:2"), timed, **one) == pytest.approx(
        POOL_OVERHEAD_S + 2 * (65 + 10**9 / 150e6))


def test_version_is_checked(monkeypatch, fleet, tmp_path, capsys):
    monkeypatch.setattr("zfslab.__version__", "0.0.1")
    assert _bench(monkeypatch, fleet, tmp_path) == 2
    assert f"zfslab: h1: zfslab {__version__}, the controller runs 0.0.1" in capsys.readouterr().err


def test_lost_host_reassigned_then_back_destroys_its_pool_and_its_result_never_counts(monkeypatch, fleet, tmp_path,
                                                                                    capsys):
    first = _first_layout(monkeypatch, fleet, tmp_path, "h1")
    (tmp_path / "bin" / f"die-h1-{first}").write_text("")
    assert _bench(monkeypatch, fleet, tmp_path, "--reassign") == 0
    assert os.path.exists(tmp_path / "bin" / "pool-h1")
    os.unlink(tmp_path / "bin" / f"die-h1-{first}")
    fleet.down.clear()
    fleet.commands.clear()
    assert _bench(monkeypatch, fleet, tmp_path, "--resume") == 0
    ran = [(h, a[a.index("--layouts") + 1]) for h, a in fleet.commands if a[:2] == ["zfslab", "bench"]
           and "--dry-run" not in a]
    assert ran == [("h1", first)]   # only to adopt and destroy its pool: every layout was done
    assert not os.path.exists(tmp_path / "bin" / "pool-h1")
    db = str(tmp_path / "all.sqlite")
    m = _rows(db, "SELECT layout, test, COUNT(*) FROM measurements GROUP BY layout, test")
    assert len(m) == 8 and all(n == 1 for *_, n in m)
    assert _rows(db, f"SELECT COUNT(*) FROM measurements JOIN runs r ON r.id = run_id WHERE r.origin = 'h1'") == [(0,)]


def test_ctrl_c_closes_every_host(monkeypatch, fleet, tmp_path, capsys):
    real = fleet.run

    def interrupted(host, argv, **kw):
        if argv[:2] == ["zfslab", "bench"] and "--dry-run" not in argv and "--layouts" in argv:
            raise KeyboardInterrupt
        return real(host, argv, **kw)
    monkeypatch.setattr(fleet, "run", interrupted)
    assert _bench(monkeypatch, fleet, tmp_path) == 130
    assert fleet.closed >= 1


def test_another_fleet_bench_on_the_same_disks_is_not_merged_into_this_one(monkeypatch, fleet, tmp_path, capsys):
    # each host's database is named by {key}: an earlier bench into another --db, with the same disks,
    # options and some of the same layouts, must not reach this --db (its layouts would count twice)
    monkeypatch.setattr("zfslab.commands._fleet_bench.transport_from_args", lambda args: fleet)
    common = ["bench", "--hosts", "h1,h2", "--disks", "/dev/sdb,/dev/sdc,/dev/sdd",
              "--remote-db", str(tmp_path / "remote" / "{host}-{key}.sqlite"), "--suite", "quick", "--size", "64m",
              "--runtime", "2", "--ramp", "0", "--repeats", "1"]
    assert main([*common, "--layouts", "mirror:2,raidz1:3", "--db", str(tmp_path / "earlier.sqlite")]) == 0
    assert main([*common, "--layouts", LAYOUTS, "--db", str(tmp_path / "all.sqlite")]) == 0
    m = _rows(str(tmp_path / "all.sqlite"), "SELECT layout, test, COUNT(*) FROM measurements GROUP BY layout, test")
    assert len(m) == 8 and all(n == 1 for *_, n in m), m


def _resume_the_other_way_round(tmp_path) -> list[str]:
    """The same bench with --resume, the hosts named the other way round: sharded afresh, a killed
    host's layout would go to the other host and it would get another."""
    return ["bench", "--hosts", "h2,h1", "--disks", "/dev/sdb,/dev/sdc,/dev/sdd", "--layouts", LAYOUTS,
            "--db", str(tmp_path / "all.sqlite"), "--remote-db", str(tmp_path / "remote" / "{host}.sqlite"),
            "--suite", "quick", "--size", "64m", "--runtime", "2", "--ramp", "0", "--repeats", "1", "--resume"]


def test_a_host_killed_before_its_first_measurement_resumes_that_layout_and_adopts_its_pool(monkeypatch, fleet,
                                                                                          tmp_path, capsys):
    # its run holds no measurement, only its pool's record: the resume must still give it that layout
    # first, whose own run recorded the pool, or its gate refuses the disks (exit 10)
    first = _first_layout(monkeypatch, fleet, tmp_path, "h1")
    (tmp_path / "bin" / f"die0-h1-{first}").write_text("")
    assert _bench(monkeypatch, fleet, tmp_path) == 4
    assert os.path.exists(tmp_path / "bin" / "pool-h1")
    os.unlink(tmp_path / "bin" / f"die0-h1-{first}")
    fleet.down.clear()
    capsys.readouterr()
    # the hosts named the other way round: sharded afresh, its layout would go to h2 and h1 get another
    args = _resume_the_other_way_round(tmp_path)
    code = main(args)
    assert code == 0, capsys.readouterr().err
    db = str(tmp_path / "all.sqlite")
    m = _rows(db, "SELECT layout, test, COUNT(*) FROM measurements GROUP BY layout, test")
    assert len(m) == 8 and all(n == 1 for *_, n in m), m
    assert not os.path.exists(tmp_path / "bin" / "pool-h1")


def test_a_host_killed_before_its_pools_guid_was_recorded_resumes_that_layout_by_the_creates_intent(
        monkeypatch, fleet, tmp_path, capsys):
    # killed as zpool create returned: its run holds neither a measurement nor the pool's GUID, only
    # the intent recorded before the create. The resume must give it that layout first (whose run
    # adopts the pool by its mark), or its gate refuses the disks the pool holds (exit 10)
    first = _first_layout(monkeypatch, fleet, tmp_path, "h1")
    (tmp_path / "bin" / f"dieI-h1-{first}").write_text("")
    assert _bench(monkeypatch, fleet, tmp_path) == 4
    assert os.path.exists(tmp_path / "bin" / "pool-h1")
    assert _rows(str(tmp_path / "remote" / "h1.sqlite"), "SELECT COUNT(*) FROM pools") == [(0,)]   # no GUID recorded
    os.unlink(tmp_path / "bin" / f"dieI-h1-{first}")
    fleet.down.clear()
    capsys.readouterr()
    args = _resume_the_other_way_round(tmp_path)
    before = _listing(tmp_path)
    db_bytes = (tmp_path / "all.sqlite").read_bytes()
    # its dry run pulls the hosts' databases into a private copy: the plan the real resume will make
    assert main([*args, "--dry-run"]) == 0, capsys.readouterr()
    out = capsys.readouterr().out
    assert f"## host h1: 1 layouts" in out and out.split("## host h1:")[1].split("\n")[0].endswith(first), out
    here = [f for f in _listing(tmp_path) if not f.startswith("remote")]   # remote/: each host's own files
    assert here == [f for f in before if not f.startswith("remote")]
    assert (tmp_path / "all.sqlite").read_bytes() == db_bytes   # --db not written
    code = main(args)
    assert code == 0, capsys.readouterr().err
    m = _rows(str(tmp_path / "all.sqlite"), "SELECT layout, test, COUNT(*) FROM measurements GROUP BY layout, test")
    assert len(m) == 8 and all(n == 1 for *_, n in m), m
    assert not os.path.exists(tmp_path / "bin" / "pool-h1")


@pytest.mark.parametrize("marker, said", [("dirty", "these disks would be refused"),
                                          ("nodisk", "no such disk on this host")])
def test_a_hosts_refusal_exits_10_in_a_dry_run_and_a_run(monkeypatch, fleet, tmp_path, capsys, marker, said):
    # one rule (model/fleet_exit.py): the host's own zfslab refusing, by its gate (10 there) or its
    # input (2 there), is 10 here, dry run or not; the trial saw 2 here and 4 in drill --hosts --dry-run
    (tmp_path / "bin" / f"{marker}-h2").write_text("")
    assert _bench(monkeypatch, fleet, tmp_path, "--dry-run") == 10
    assert said in capsys.readouterr().out + ""
    assert _bench(monkeypatch, fleet, tmp_path) == 10
    assert f"zfslab: host h2: " in capsys.readouterr().err
    assert not os.path.exists(tmp_path / "all.sqlite")


def test_ctrl_c_mid_run_closes_every_session_and_says_to_resume(monkeypatch, fleet, tmp_path, capsys, default_sigint):
    # the Ctrl-C comes as the first host starts its first layout; each host's bench was started
    # with --stop-with-session, so closing the sessions stops it as Ctrl-C there would
    run, sent = fleet.run, []

    def run_and_interrupt(host, argv, *, timeout_s, check=True):
        if argv[:2] == ["zfslab", "bench"] and "--dry-run" not in argv and not sent:
            sent.append(host.name)
            os.kill(os.getpid(), signal.SIGINT)
        return run(host, argv, timeout_s=timeout_s, check=check)
    close = fleet.close

    def close_sessions():   # as SshTransport.close: every session ends, no host answers any more
        fleet.down.update({"h1", "h2"})
        close()
    monkeypatch.setattr(fleet, "run", run_and_interrupt)
    monkeypatch.setattr(fleet, "close", close_sessions)
    assert _bench(monkeypatch, fleet, tmp_path) == 130
    import threading
    for t in threading.enumerate():   # a fake host's command already running ends on its own (its
        if t.name.startswith("zfslab-"):   # session's close does not stop a local process): wait for it
            t.join(60)
    err = capsys.readouterr().err
    assert fleet.closed >= 1 and sent
    assert all("--stop-with-session" in a for _, a in fleet.commands if a[:2] == ["zfslab", "bench"]
               and "--dry-run" not in a)
    assert ("zfslab: interrupted; each host's bench was stopped with its ssh session and, as on Ctrl-C "
            "there, destroys its pool; the layouts each host finished are in its own database: run the "
            "same command with --resume to pull them and go on\n") in err, err[-600:]
    assert "every finished measurement is saved" not in err


# --every-host: every host measures every layout, to compare the hosts (docs/fleet.md#every-host)

def _ran(fleet):
    """(host, layout) of every real (not dry-run) remote bench, in order."""
    return [(h, a[a.index("--layouts") + 1]) for h, a in fleet.commands if a[:2] == ["zfslab", "bench"]
            and "--dry-run" not in a]


def _pairs(db):
    return _rows(db, "SELECT r.origin, m.layout, m.test, m.repeat, COUNT(*) FROM measurements m "
                     "JOIN runs r ON r.id = m.run_id GROUP BY r.origin, m.layout, m.test, m.repeat")


def test_every_host_measures_every_layout_once_on_each_host(monkeypatch, fleet, tmp_path, capsys):
    assert _bench(monkeypatch, fleet, tmp_path, "--every-host") == 0
    layouts = LAYOUTS.split(",")
    assert sorted(_ran(fleet)) == sorted((h, x) for h in ("h1", "h2") for x in layouts)
    pairs = _pairs(str(tmp_path / "all.sqlite"))
    # each (host, layout, test) exactly once: 2 hosts x 4 layouts x 2 tests
    assert len(pairs) == 2 * 4 * 2 and all(n == 1 for *_, n in pairs)
    assert {(o, x) for o, x, *_ in pairs} == {(h, x) for h in ("h1", "h2") for x in layouts}
    assert "8 of 8 layouts × hosts done on 2 hosts; 16 measurements of 8 runs from 2 hosts" in capsys.readouterr().out


def test_every_host_dry_run_prints_each_hosts_whole_queue_and_the_longest(monkeypatch, fleet, tmp_path, capsys):
    before = _listing(tmp_path)
    assert _bench(monkeypatch, fleet, tmp_path, "--every-host", "--dry-run") == 0
    assert _listing(tmp_path) == before
    out = capsys.readouterr().out
    plan = __import__("zfslab.system.fleet_bench", fromlist=["plan_fleet"]).plan_fleet(
        __import__("dataclasses").replace(_request(tmp_path), every_host=True))
    each = plan.predicted_s("h1")
    assert each == plan.predicted_s("h2") > 0
    assert out.startswith(f"# fleet: every host measures the same 4 layouts (8 jobs on 2 hosts), predicted "
                          f"{each:,.0f} s until the last host ends (the longest queue; docs/fleet.md#every-host)\n")
    for h in ("h1", "h2"):
        assert f"## host {h}: 4 layouts, predicted {each:,.0f} s: {LAYOUTS.replace(',', ', ')}\n" in out
    assert sum(line.startswith("$ zfslab bench --disks ") for line in out.splitlines()) == 8


def test_every_host_refuses_reassign(monkeypatch, fleet, tmp_path, capsys):
    assert _bench(monkeypatch, fleet, tmp_path, "--every-host", "--reassign") == 2
    assert capsys.readouterr().err == (
        "zfslab: error: --reassign gives a lost host's layouts to another host, but with --every-host each host "
        "measures them all: leave out --reassign (a lost host's layouts wait for --resume)\n")
    assert not fleet.commands


def test_every_host_without_hosts_is_refused(capsys):
    assert main(["bench", "--sandbox", "/tmp/nowhere", "--every-host", "--dry-run"]) == 2
    assert "--every-host go with --hosts or --inventory" in capsys.readouterr().err


def test_every_host_a_lost_host_leaves_the_others_and_resume_runs_only_its_missing_layouts(monkeypatch, fleet,
                                                                                          tmp_path, capsys):
    layouts = LAYOUTS.split(",")
    (tmp_path / "bin" / f"die-h1-{layouts[1]}").write_text("")   # h1 finishes its first layout, dies in its second
    assert _bench(monkeypatch, fleet, tmp_path, "--every-host") == 4
    err = capsys.readouterr().err
    assert f"3 layouts left ({', '.join(sorted(f'{x} on h1' for x in layouts[1:]))}), lost with h1" in err
    assert "--reassign" not in err
    db = str(tmp_path / "all.sqlite")
    assert {(o, x) for o, x, *_ in _pairs(db)} == {("h2", x) for x in layouts}   # h2's results intact
    os.unlink(tmp_path / "bin" / f"die-h1-{layouts[1]}")
    fleet.down.clear()
    fleet.commands.clear()
    assert _bench(monkeypatch, fleet, tmp_path, "--every-host", "--resume", "--dry-run") == 0
    out = capsys.readouterr().out
    assert f"## host h1: 3 layouts, predicted" in out and f"## host h2: 0 layouts, predicted 0 s\n" in out
    assert out.split("## host h1:")[1].split("\n")[0].endswith(", ".join(layouts[1:]))   # its unfinished one first
    fleet.commands.clear()
    assert _bench(monkeypatch, fleet, tmp_path, "--every-host", "--resume") == 0
    assert _ran(fleet) == [("h1", x) for x in layouts[1:]]   # not h1's finished layout, nothing of h2
    pairs = _pairs(db)
    assert len(pairs) == 2 * 4 * 2 and all(n == 1 for *_, n in pairs)
    assert all(f for (f,) in _rows(db, "SELECT finished_at IS NOT NULL FROM runs"))
    assert not os.path.exists(tmp_path / "bin" / "pool-h1")   # its leftover pool adopted and destroyed


def test_every_host_merge_again_changes_nothing(monkeypatch, fleet, tmp_path, capsys):
    from zfslab.store.merge import merge
    assert _bench(monkeypatch, fleet, tmp_path, "--every-host") == 0
    db = str(tmp_path / "all.sqlite")
    before = (_pairs(db), _rows(db, "SELECT uid, origin, finished_at FROM runs ORDER BY uid"))
    merge([str(tmp_path / "remote" / "h1.sqlite"), str(tmp_path / "remote" / "h2.sqlite")], db)
    assert (_pairs(db), _rows(db, "SELECT uid, origin, finished_at FROM runs ORDER BY uid")) == before
    fleet.commands.clear()
    assert _bench(monkeypatch, fleet, tmp_path, "--every-host", "--resume") == 0   # all done: nothing runs
    assert _ran(fleet) == [] and (_pairs(db), _rows(db, "SELECT uid, origin, finished_at FROM runs ORDER BY uid")) \
        == before


def test_plan_on_an_every_host_db_fits_on_every_hosts_runs_and_says_how_far_apart_they_were(monkeypatch, fleet,
                                                                                             tmp_path, capsys):
    assert _bench(monkeypatch, fleet, tmp_path, "--every-host") == 0
    db = str(tmp_path / "all.sqlite")
    conn = sqlite3.connect(db)   # h2 measured 20 % slower than h1 on every layout
    conn.execute("UPDATE measurements SET read_mb_s = read_mb_s * 0.8, write_mb_s = write_mb_s * 0.8 "
                 "WHERE run_id IN (SELECT id FROM runs WHERE origin = 'h2')")
    conn.commit()
    conn.close()
    capsys.readouterr()
    assert main(["plan", "--db", db]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "speed fitted on 4 measured layouts from 2 hosts (8 runs)" in out   # every host's run of each layout
    assert ("Hosts: the fit took every host's run of each layout; 2 hosts measured the same 8 layout × test: 1.25× "
            "apart (fastest/slowest; CV 11.1%) in the median row, at most 1.25× (") in out
    assert "h2 slowest); `zfslab report --db` shows each host." in out
    assert main(["plan", "--db", db, "--json"]) == 0
    fit = json.loads(capsys.readouterr().out)["speed_fit"]
    assert fit["host_spread"]["hosts"] == 2 and fit["host_spread"]["rows"] == 8
    assert fit["host_spread"]["median_max_over_min"] == pytest.approx(1.25)
    assert fit["host_spread"]["worst"]["slowest"] == "h2"


def test_plan_on_a_split_db_has_no_host_spread(monkeypatch, fleet, tmp_path, capsys):
    assert _bench(monkeypatch, fleet, tmp_path) == 0   # each layout on one host: nothing to compare
    capsys.readouterr()
    assert main(["plan", "--db", str(tmp_path / "all.sqlite"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["speed_fit"]["host_spread"] is None
