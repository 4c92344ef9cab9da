"""profile-disk --hosts: preflight, every disk of every host profiled by the host's own zfslab, the
slow disk and the slow host flagged with their figures. The hosts here are in-process fakes that
answer from canned output (tests/fleet_fakes.py); the real command over real ssh is in
test_fleet_profile_ssh.py."""

import json

import pytest

from tests.fleet_fakes import SimTransport
from zfslab import __version__
from zfslab.cli import main
from zfslab.system.installed import installed_json
from zfslab.errors import UsageError
from zfslab.model.fleet_profile import FleetProfile
from zfslab.system.fleet_profile import BadRemoteProfile, parse_remote_profile
from zfslab.report.fleet_text import profile_lines
from zfslab.model.inventory import Host
from zfslab.commands._common import PARAM_FLAGS
from zfslab.commands.profile_disk import parse_threshold
from zfslab.model.preflight import PreflightRefused
from zfslab.system.fleet_profile import profile_fleet

DISKS = ["/dev/sdb", "/dev/sdc", "/dev/sdd"]


def _lsblk(path, size=4000787030016, model="ST4000NM0035"):
    return json.dumps({"blockdevices": [{"name": path[5:], "path": path, "type": "disk", "size": size, "model": model,
                                         "serial": f"Z{path[-1]}", "rota": True, "log-sec": 512, "phy-sec": 4096}]})


def _profile(seq=200.0, qd1=150.0):
    return json.dumps({"name": "ST4000NM0035", "seq_read_mb_s": seq, "seq_write_mb_s": 180.0, "inner_fraction": 0.5,
                       "rand_read_iops_qd1": qd1, "rand_read_iops_qd8": qd1 * 2, "rand_write_iops": 300.0,
                       "sync_write_ms": 9.0, "source": "fio"})


def fleet(slow=None, *, sizes=None, broken=None):  # broken[(host, disk)] = (exit code, stdout, stderr)
    """A fleet answering preflight and profile-disk; slow[(host, disk)] = (seq, qd1)."""
    slow, sizes, broken = slow or {}, sizes or {}, broken or {}

    def answer(host, argv):
        if argv == ["zfslab", "--installed"]:   # the controller's own zfslab, as preflight wants it
            return 0, installed_json(), ""
        if argv[:2] in (["zpool", "version"], ["fio", "--version"]):
            return 0, "zfs-2.1.11-1\n" if argv[0] == "zpool" else "fio-3.33\n", ""
        if argv[0] == "lsblk":
            return 0, _lsblk(argv[-1], sizes.get((host, argv[-1]), 4000787030016)), ""
        if argv[:2] == ["zfslab", "profile-disk"]:
            assert argv[3:] == ["--json", "--seconds", "2", "--stop-with-session"]   # read-only: never --write-tests
            if (host, argv[2]) in broken:
                return broken[(host, argv[2])]
            return 0, _profile(*slow.get((host, argv[2]), (200.0 + len(host), 150.0))), ""
        return 127, "", f"{argv[0]}: command not found"
    return answer


HOSTS = [Host(f"st0{i}", f"st0{i}.example") for i in range(1, 5)]


def test_a_slowed_disk_is_flagged_with_its_figures_and_every_disk_is_measured():
    t = SimTransport(fleet({("st03", "/dev/sdc"): (120.0, 150.0)}))
    found = profile_fleet(t, HOSTS, DISKS, seconds=2, controller_version=__version__, limit=3)
    assert len(found.results) == 12 and found.failures == ()
    assert {(r.host, r.disk) for r in found.results} == {(h.name, d) for h in HOSTS for d in DISKS}
    lines = [o.line() for o in found.disk_outliers(0.15)]
    assert lines == ["st03 /dev/sdc: sequential 120 MB/s, 41% below the median 204 MB/s of 12 identical peers"]
    assert found.host_outliers(0.15) == []   # one slow disk of three does not make its host slow
    text = profile_lines(found, 0.15, width=80)
    assert all(len(line) <= 80 for line in text), text
    assert any(line.startswith("st03  /dev/sdc") and line.endswith("slow") for line in text)
    assert "  st03 /dev/sdc: sequential 120 MB/s, 41% below the median 204 MB/s of 12" in text
    assert "    identical peers" in text


def test_a_slow_host_is_flagged_on_the_median_of_its_disks():
    t = SimTransport(fleet({("st02", d): (200.0, 100.0) for d in DISKS}))
    found = profile_fleet(t, HOSTS, DISKS, seconds=2, controller_version=__version__)
    assert [o.line() for o in found.host_outliers(0.15)] == [
        "st02: random 100 IOPS, 33% below the median 150 IOPS of 4 identical peers"]
    data = found.as_dict(0.15)
    assert [(o["host"], o["disk"], o["metric"]) for o in data["outliers"]][0] == ("st02", None, "rand_iops")
    assert len(data["disks"]) == 12 and data["failures"] == []


def test_an_unreachable_host_is_one_line_and_the_others_are_reported():
    t = SimTransport(fleet(), down=["st02"])
    found = profile_fleet(t, HOSTS, DISKS, seconds=2, controller_version=__version__)
    assert {r.host for r in found.results} == {"st01", "st03", "st04"}
    assert len(found.failures) == 1 and found.failures[0].startswith("host st02: cannot connect (Connection timed out)")
    assert not any(h == "st02" and argv[:2] == ("zfslab", "profile-disk") for h, argv in t.log)


def test_a_host_lost_mid_profile_is_one_line_not_one_per_disk():
    answer = fleet()
    t = SimTransport(answer, die_after={"st04": 5})   # preflight is 6 commands: it dies on its first profile
    found = profile_fleet(t, HOSTS, DISKS, seconds=2, controller_version=__version__)
    assert [line.split(":")[0] for line in found.failures] == ["host st04"]
    assert {r.host for r in found.results} == {"st01", "st02", "st03"}


def test_a_failed_disk_and_a_bad_answer_are_lines_and_the_other_disks_stay():
    t = SimTransport(fleet(broken={("st01", "/dev/sdb"): (4, "", "fio: io_u error on file /dev/sdb: Input/output error"),
                                   ("st01", "/dev/sdd"): (0, "Traceback (most recent", "")}))
    found = profile_fleet(t, HOSTS, DISKS, seconds=2, controller_version=__version__)
    assert sorted(r.disk for r in found.results if r.host == "st01") == ["/dev/sdc"]
    assert found.failures[0].startswith("host st01: `zfslab profile-disk /dev/sdb --json --seconds 2 --stop-with-session` failed with exit "
                                        "code 4: fio: io_u error")
    assert found.failures[1] == ("host st01: `zfslab profile-disk /dev/sdd` printed 'Traceback (most recent', not a "
                                 "disk profile; is the controller's zfslab installed there?")


def test_hosts_with_different_disks_are_refused_before_anything_runs():
    t = SimTransport(fleet(sizes={("st04", "/dev/sdc"): 3000592982016}))
    with pytest.raises(PreflightRefused) as e:
        profile_fleet(t, HOSTS, DISKS, seconds=2, controller_version=__version__)
    assert str(e.value).splitlines()[0] == ("st04: /dev/sdc differs from st01's disks: size 3,000,592,982,016 bytes, "
                                            "not 4,000,787,030,016 bytes")
    # the library names the setting; the command layer words it as its flag (issue 37)
    assert str(e.value).endswith("leave one out with `skip_host` HOST")
    assert e.value.worded(PARAM_FLAGS).endswith("leave one out with --skip-host HOST")
    assert not any(argv[:2] == ("zfslab", "profile-disk") for _, argv in t.log)


@pytest.mark.parametrize("text", ["{}", "[]", json.dumps({"seq_read_mb_s": "fast", "inner_fraction": 0.5,
                                                           "rand_read_iops_qd1": 1, "rand_read_iops_qd8": 1}),
                                  json.dumps({"seq_read_mb_s": float("inf")})])
def test_a_remote_answer_that_is_not_a_profile_is_refused(text):
    with pytest.raises(BadRemoteProfile, match=r"^host h: `zfslab profile-disk /dev/x` printed "):
        parse_remote_profile(text, host="h", disk="/dev/x", model=None, size_bytes=1)


def test_a_long_disk_name_keeps_its_tail_and_the_table_fits():
    name = "/dev/disk/by-id/ata-ST4000NM0035-1V4107_ZC1234567890ABCDEFGHIJKLMNOP"
    r = parse_remote_profile(_profile(), host="storage-node-0001.example.org", disk=name, model="M", size_bytes=10**12)
    for width in (80, 100, 120):
        lines = profile_lines(FleetProfile((r,), ()), 0.15, width=width)
        assert all(len(line) <= width for line in lines) and "KLMNOP" in lines[2]


@pytest.mark.parametrize("text, share", [("15%", 0.15), ("20", 0.2), ("0.1", 0.1), (" 5 % ", 0.05)])
def test_threshold_forms(text, share):
    assert parse_threshold(text) == pytest.approx(share)


@pytest.mark.parametrize("text", ["0", "100%", "-5%", "fast", "nan", ""])
def test_bad_thresholds_are_one_line(text):
    with pytest.raises(UsageError, match="give a share below the peers' median, e.g. 15% or 0.15"):
        parse_threshold(text)


@pytest.mark.parametrize("argv, message", [
    (["profile-disk"], "zfslab: error: name the disk to profile, e.g. zfslab profile-disk /dev/sdb; or --hosts"),
    (["profile-disk", "/dev/sdb", "--disks", "/dev/sdc"], "zfslab: error: --disks goes with --hosts or --inventory"),
    (["profile-disk", "/dev/sdb", "--threshold", "20%"], "zfslab: error: --threshold goes with --hosts"),
    (["profile-disk", "/dev/sdb", "--hosts", "a,b"], "zfslab: error: /dev/sdb: with --hosts, name the disks with "
                                                     "--disks /dev/sdb,..."),
    (["profile-disk", "--hosts", "a,b"], "zfslab: error: --hosts needs --disks DEV,DEV,..."),
    (["profile-disk", "--hosts", "a", "--disks", "/dev/sdb", "--write-tests"], "zfslab: error: --write-tests is not "
                                                                              "for --hosts"),
    (["profile-disk", "--hosts", "a", "--disks", "/dev/sdb", "--threshold", "150%"], "zfslab: error: --threshold "
                                                                                     "150%: give a share"),
    (["profile-disk", "--hosts", "a", "--disks", "/dev/sdb", "--ssh-config", "/nonexistent"],
     "zfslab: error: --ssh-config /nonexistent: no such file"),
])
def test_bad_combinations_are_one_line_and_exit_2(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1, err


def test_the_command_prints_the_table_writes_json_and_exits_4_for_an_unreachable_host(monkeypatch, tmp_path, capsys):
    import zfslab.commands._hosts as hosts_module
    t = SimTransport(fleet({("st01", "/dev/sdb"): (150.0, 150.0)}), down=["st04"])
    monkeypatch.setattr(hosts_module, "transport_from_args", lambda args: t)
    out_file = tmp_path / "fleet.json"
    code = main(["profile-disk", "--hosts", "st01,st02,st03,st04", "--disks", "/dev/sdb,/dev/sdc", "--seconds", "2",
                 "--output", str(out_file)])
    out = capsys.readouterr().out.splitlines()
    assert code == 4   # a host gave no figures; outliers alone leave it 0 (next test)
    assert out[0] == "ST4000NM0035, 4.00 TB (6 disks)" and len(out) > 8
    assert "  st01 /dev/sdb: sequential 150 MB/s, 26% below the median 204 MB/s of 6 identical peers" in out
    assert out[-1].startswith("not measured: host st04: cannot connect (Connection timed out); check")
    data = json.loads(out_file.read_text())
    assert [o["line"] for o in data["outliers"]] == [
        "st01 /dev/sdb: sequential 150 MB/s, 26% below the median 204 MB/s of 6 identical peers"]
    assert len(data["disks"]) == 6 and len(data["failures"]) == 1


def test_outliers_alone_exit_0_and_json_lists_them(monkeypatch, capsys):
    import zfslab.commands._hosts as hosts_module
    t = SimTransport(fleet({("st02", "/dev/sdc"): (200.0, 90.0)}))
    monkeypatch.setattr(hosts_module, "transport_from_args", lambda args: t)
    code = main(["profile-disk", "--hosts", "st01,st02,st03", "--disks", "/dev/sdb,/dev/sdc", "--seconds", "2",
                 "--json", "--threshold", "20%"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["threshold"] == 0.2
    assert [(o["host"], o["disk"], o["metric"]) for o in data["outliers"]] == [("st02", "/dev/sdc", "rand_iops")]


def test_two_hosts_of_two_disks_say_they_cannot_tell_a_slow_host(monkeypatch, capsys):
    # the trial on 127.0.0.1: one slow disk flagged its whole host against "the median of 2 identical peers"
    import zfslab.commands._hosts as hosts_module
    t = SimTransport(fleet({("st02", "/dev/sdc"): (70.0, 150.0)}))
    monkeypatch.setattr(hosts_module, "transport_from_args", lambda args: t)
    argv = ["profile-disk", "--hosts", "st01,st02", "--disks", "/dev/sdb,/dev/sdc", "--seconds", "2"]
    assert main([*argv, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [(o["host"], o["disk"]) for o in data["outliers"]] == [("st02", "/dev/sdc")]   # of 4 disks: flagged
    assert [(u["kind"], u["members"]) for u in data["cannot_tell"]] == [("host", ["st01", "st02"])]
    assert data["cannot_tell"][0]["line"].startswith("cannot tell: 2 identical hosts of ST4000NM0035, 4.00 TB")
    monkeypatch.setenv("COLUMNS", "100")
    assert main(argv) == 0
    out = capsys.readouterr().out.splitlines()
    assert not any(line.startswith("st02:") for line in out), out   # no host flag
    assert any(line.startswith("cannot tell: 2 identical hosts of ST4000NM0035") for line in out), out


def test_no_outliers_is_not_claimed_for_groups_too_small_to_tell():
    t = SimTransport(fleet())
    found = profile_fleet(t, HOSTS[:2], DISKS[:1], seconds=2, controller_version=__version__)
    text = profile_lines(found, 0.15, width=120)
    assert "no outliers in the groups of 3 or more identical peers" in text
    assert not any(line.startswith("no outliers: every disk") for line in text)
    assert [u.kind for u in found.undecided()] == ["host", "disk"]


def test_a_burn_in_needs_no_openzfs_on_the_hosts():
    base = fleet()
    t = SimTransport(lambda h, argv: (127, "", "zpool: command not found") if argv[0] == "zpool" else base(h, argv))
    found = profile_fleet(t, HOSTS[:2], DISKS[:1], seconds=2, controller_version=__version__)
    assert len(found.results) == 2 and found.failures == ()


@pytest.mark.parametrize("code, expected", [(2, 10), (10, 10), (1, 4)])
def test_a_hosts_refusal_exits_10_and_its_failure_4(monkeypatch, capsys, code, expected):
    import zfslab.commands._hosts as hosts_module
    said = "zfslab: error: /dev/sdc: in use by md0\n"
    t = SimTransport(fleet(broken={("st02", "/dev/sdc"): (code, "", said)}))
    monkeypatch.setattr(hosts_module, "transport_from_args", lambda args: t)
    assert main(["profile-disk", "--hosts", "st01,st02,st03", "--disks", "/dev/sdb,/dev/sdc", "--seconds", "2",
                 "--json"]) == expected
    assert "in use by md0" in capsys.readouterr().err


def test_remote_zfslab_names_the_program_every_remote_zfslab_command_runs(monkeypatch, capsys):
    import zfslab.system.transport as transport_module
    path = "/opt/zfslab/bin/zfslab"
    base = fleet()

    def answer(host, argv):   # the hosts know zfslab only at that path: bare `zfslab` is not found
        if argv[0] == "zfslab":
            return 127, "", "sh: 1: zfslab: not found"
        return base(host, ["zfslab", *argv[1:]] if argv[0] == path else argv)
    t = SimTransport(answer)
    monkeypatch.setattr(transport_module, "SshTransport", lambda **kw: t)
    argv = ["profile-disk", "--hosts", "st01,st02,st03", "--disks", "/dev/sdb", "--seconds", "2", "--json"]
    assert main([*argv, "--remote-zfslab", path]) == 0, capsys.readouterr().err
    ran = [a for _, a in t.log if "zfslab" in a[0]]
    assert {a[0] for a in ran} == {path} and {a[1] for a in ran} == {"--installed", "profile-disk"}
    assert len(json.loads(capsys.readouterr().out)["disks"]) == 3
    t.log.clear()
    assert main(argv) == 2   # without it, preflight says zfslab is not there
    assert "st01: zfslab is not installed" in capsys.readouterr().err


@pytest.mark.parametrize("value, message", [
    ("~/.local/bin/zfslab", "--remote-zfslab ~/.local/bin/zfslab: '~' reaches the host quoted, unexpanded; give "
                            ".local/bin/zfslab (from the remote user's home) or an absolute path"),
    ("", "--remote-zfslab : give the path of zfslab on the hosts"),
    ("-x", "--remote-zfslab -x: give the path of zfslab on the hosts"),
])
def test_a_bad_remote_zfslab_is_one_line_and_exit_2(value, message, capsys):
    assert main(["profile-disk", "--hosts", "st01", "--disks", "/dev/sdb", f"--remote-zfslab={value}"]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1, err


class StoppableFleet(SimTransport):
    """Hosts whose remote command (profile-disk, drill) runs until its session is closed, as a real
    one started with --stop-with-session does; the first one started sends this process SIGINT,
    the user's Ctrl-C, which the main thread meets in fan_out's wait."""

    def __init__(self, answer, command: str) -> None:
        import threading
        super().__init__(answer)
        self.command, self.closed, self.started = command, threading.Event(), []
        self._sent = False

    def run(self, host, argv, *, timeout_s, check=True):
        import os
        import signal
        from zfslab.system.transport import HostUnreachable
        if list(argv[:2]) != ["zfslab", self.command]:
            return super().run(host, argv, timeout_s=timeout_s, check=check)
        with self._lock:
            self.started.append((host.name, tuple(argv)))
            first, self._sent = not self._sent, True
        if first:
            os.kill(os.getpid(), signal.SIGINT)
        assert self.closed.wait(60), "the session was never closed"
        raise HostUnreachable(host.name, "the connection closed during the command", host.destination)

    def close(self):
        self.closed.set()


def test_ctrl_c_stops_every_hosts_profile_and_says_nothing_was_kept(monkeypatch, capsys, default_sigint):
    import zfslab.commands._hosts as hosts_module
    t = StoppableFleet(fleet(), "profile-disk")
    monkeypatch.setattr(hosts_module, "transport_from_args", lambda args: t)
    code = main(["profile-disk", "--hosts", "st01,st02,st03", "--disks", "/dev/sdb", "--seconds", "2"])
    err = capsys.readouterr().err
    assert code == 130 and t.closed.is_set()   # closing the transport ends every host's session
    assert all(a[-1] == "--stop-with-session" for _, a in t.started) and t.started   # each stops with its session
    assert err == ("zfslab: interrupted; each host's profile-disk was stopped with its ssh session (and its fio "
                   "with it); nothing was kept, as a fleet profile is printed and written only once every host "
                   "has answered: run the same command again\n")
    assert "every finished measurement is saved" not in err
