"""drill --hosts: the same drill on every host at once, each by its own zfslab under its own gate,
with each host's typed consent (--confirm-serials HOST=S,S); one table of hosts by scenarios.
The hosts are in-process fakes answering canned output (tests/fleet_fakes.py): the real drill
over ssh runs in the two-guest tests."""

import json

import pytest

import zfslab.commands._hosts as hosts_module
from tests.fleet_fakes import SimTransport
from tests.unit.test_fleet_profile import fleet as profile_fleet_answers
from zfslab.cli import main
from zfslab.commands._hosts import host_serials
from zfslab.errors import UsageError

RESULT = {"layout": "mirror:2", "fill": 0.2, "verdict": "mirror:2 survived every drill", "zfs_version": "2.1.11",
          "sandbox": False, "seconds": 95.0,
          "scenarios": [{"scenario": "degraded", "outcome": "served", "seconds": 5.0},
                        {"scenario": "resilver", "outcome": "repaired", "seconds": 60.0},
                        {"scenario": "corrupt", "outcome": "repaired", "seconds": 30.0}]}


def drill_fleet(refuse=(), slow=None, nodisk=()):
    """Preflight as profile's fakes answer it; `zfslab drill` answers a result, a plan, or (hosts in
    `refuse`) the gate's refusal unless the host's serials were confirmed, or (hosts in `nodisk`)
    a refusal of its input, exit 2."""
    base = profile_fleet_answers()
    slow = slow or {}

    def answer(host, argv):
        if argv[:2] != ["zfslab", "drill"]:
            return base(host, argv)
        if host in nodisk:
            return 2, "", "zfslab: error: --disks /dev/sdb,/dev/sdc: no such disk on this host\n"
        confirmed = "--confirm-serials" in argv and argv[argv.index("--confirm-serials") + 1] == f"{host}-S1,{host}-S2"
        if host in refuse and not (confirmed and "--wipe" in argv):
            return 10, "" if "--dry-run" not in argv else "zpool create ...\n", (
                "zfslab: error: /dev/sdb (/dev/sdb, serial Z1): holds a ext4 signature\n")
        if "--dry-run" in argv:
            return 0, f"1. wipe /dev/sdb\n2. zpool create -o ashift=12 zfslab-drill mirror ({host})\n", ""
        result = json.loads(json.dumps(RESULT))
        result["scenarios"][1]["seconds"] = slow.get(host, 60.0)
        return 0, json.dumps(result), "zfslab: resilver: repaired in 60 s\n"
    return answer


@pytest.fixture
def sim(monkeypatch):
    made = {}

    def use(answer, **kw):
        made["t"] = SimTransport(answer, **kw)
        monkeypatch.setattr(hosts_module, "transport_from_args", lambda args: made["t"])
        return made["t"]
    return use


def test_every_host_drills_its_own_disks_and_one_table_shows_them(sim, capsys):
    t = sim(drill_fleet(slow={"st02": 130.0}))
    code = main(["drill", "--hosts", "st01,st02", "--disks", "/dev/sdb,/dev/sdc", "--layout", "mirror:2",
                 "--fill", "0.2"])
    out = capsys.readouterr().out.splitlines()
    assert code == 0, out
    assert out[0].split() == ["host", "layout", "degraded", "resilver", "corrupt", "total"]
    assert out[1].split() == ["st01", "mirror:2", "served", "5", "s", "repaired", "60", "s", "repaired", "30", "s",
                              "95", "s"]
    assert out[2].split()[6:8] == ["130", "s"]
    assert "st01: mirror:2 survived every drill" in out and all(len(line) <= 100 for line in out)
    drills = [argv for _, argv in t.log if argv[:2] == ("zfslab", "drill")]
    assert len(drills) == 2 and all(a[-1] == "--json" and "--dry-run" not in a for a in drills)
    assert drills[0][2:4] == ("--disks", "/dev/sdb,/dev/sdc") and "--wipe" not in drills[0]


def test_each_host_gets_its_own_serials_and_a_host_that_holds_data_without_them_is_refused(sim, capsys):
    t = sim(drill_fleet(refuse={"st01", "st02"}))
    code = main(["drill", "--hosts", "st01,st02", "--disks", "/dev/sdb,/dev/sdc", "--wipe",
                 "--confirm-serials", "st01=st01-S1,st01-S2", "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 10   # st02's gate refused: 10, as a local drill's (model/fleet_exit.py)
    assert [h["host"] for h in data["hosts"]] == ["st01"]
    assert data["failures"] == ["host st02: drill exited 10: /dev/sdb (/dev/sdb, serial Z1): holds a ext4 signature"]
    argv = {h: a for h, a in t.log if a[:2] == ("zfslab", "drill")}
    assert argv["st01"][argv["st01"].index("--confirm-serials") + 1] == "st01-S1,st01-S2"
    assert "--confirm-serials" not in argv["st02"] and "--wipe" in argv["st02"]


def test_dry_run_prints_each_hosts_plan_and_the_gates_verdict(sim, capsys):
    t = sim(drill_fleet(refuse={"st02"}))
    code = main(["drill", "--hosts", "st01,st02", "--disks", "/dev/sdb,/dev/sdc", "--dry-run"])
    out = capsys.readouterr().out
    assert code == 10   # st02's gate would refuse: as a local dry run says it
    assert "== st01: would go ahead ==\n1. wipe /dev/sdb\n2. zpool create" in out
    assert "== st02: would be refused (exit 10) ==" in out
    assert all("--dry-run" in a for _, a in t.log if a[:2] == ("zfslab", "drill"))


def test_an_unreachable_host_is_one_line_and_the_others_drill(sim, capsys):
    sim(drill_fleet(), down=["st03"])
    code = main(["drill", "--hosts", "st01,st02,st03", "--sandbox", "/var/tmp/zfslab-drill"])
    out = capsys.readouterr().out.splitlines()
    assert code == 4
    assert [line.split()[0] for line in out[1:3]] == ["st01", "st02"]
    assert out[-1].startswith("not drilled: host st03: cannot connect (Connection timed out)")


@pytest.mark.parametrize("values, message", [
    (["S1,S2"], "--confirm-serials S1,S2: with --hosts, name the host: HOST=S1,S2"),
    (["st09=S1"], "--confirm-serials st09=S1: st09 is not one of the hosts (st01, st02)"),
    (["st01="], "--confirm-serials st01=: no serial numbers after st01="),
])
def test_host_serials_mistakes_are_one_line(values, message):
    with pytest.raises(UsageError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        host_serials(values, ["st01", "st02"])


def test_host_serials_join_repeats_per_host():
    assert host_serials(["st01=A,B", "st02=C", "st01= D "], ["st01", "st02"]) == {"st01": "A,B,D", "st02": "C"}


@pytest.mark.parametrize("argv, message", [
    (["drill", "--hosts", "a", "--pool", "tank", "--read-only"], "--pool and --read-only are for this machine's pools"),
    (["drill", "--disks", "/dev/sdb", "--confirm-serials", "a=S1"], "--confirm-serials HOST=S,S goes with --hosts"),
    (["drill", "--hosts", "a", "--sandbox", "/x", "--scenarios", "melt"], "--scenarios melt: use degraded"),
])
def test_bad_combinations_are_one_line_and_exit_2(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("zfslab: error: " + message) and err.count("\n") == 1, err


@pytest.mark.parametrize("dry_run", [True, False])
def test_a_hosts_refusal_of_its_input_exits_10_and_an_unreachable_host_4(sim, capsys, dry_run):
    argv = ["drill", "--hosts", "st01,st02", "--disks", "/dev/sdb,/dev/sdc"] + ["--dry-run"] * dry_run
    sim(drill_fleet(nodisk={"st02"}))
    assert main(argv) == 10
    assert "host st02: drill exited 2: --disks /dev/sdb,/dev/sdc: no such disk on this host" in capsys.readouterr().out
    sim(drill_fleet(), down=["st02"])
    assert main(argv) == 4
    capsys.readouterr()
    # both at once: the refusal, which needs the user's decision, is not hidden by the lost host
    sim(drill_fleet(nodisk={"st01"}), down=["st02"])
    assert main(argv) == 10


def test_ctrl_c_stops_every_hosts_drill_and_says_what_was_kept(monkeypatch, capsys, default_sigint):
    from tests.unit.test_fleet_profile import StoppableFleet
    t = StoppableFleet(drill_fleet(), "drill")
    monkeypatch.setattr(hosts_module, "transport_from_args", lambda args: t)
    code = main(["drill", "--hosts", "st01,st02", "--disks", "/dev/sdb,/dev/sdc", "--layout", "mirror:2"])
    err = capsys.readouterr().err
    assert code == 130 and t.closed.is_set()
    assert t.started and all("--stop-with-session" in a for _, a in t.started)
    assert err == ("zfslab: interrupted; each host's drill was stopped with its ssh session and, as on Ctrl-C "
                   "there, destroys its pool; no result was collected here: run the same command again to drill "
                   "again\n")
