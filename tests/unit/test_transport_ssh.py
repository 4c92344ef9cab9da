"""SshTransport against a real OpenSSH server: a private sshd on 127.0.0.1 and a free port, its own
host key, a throw-away client key, known_hosts and config in a temp folder; never any other address."""

import os
import signal
import shutil
import socket
import stat
import subprocess

import pytest

from tests.transport_contract import *  # noqa: F401,F403
from zfslab.model.inventory import Host
from zfslab.system.transport import SshTransport, ssh_argv

SSHD = shutil.which("sshd") or ("/usr/sbin/sshd" if os.path.exists("/usr/sbin/sshd") else None)


def _need(tool):
    if os.environ.get("ZFSLAB_TEST_REQUIRE_TOOLS") == "1":
        pytest.fail(f"ZFSLAB_TEST_REQUIRE_TOOLS=1 but {tool} is not installed (apt-get install openssh-server)")
    pytest.skip(f"{tool} is not installed (apt-get install openssh-server openssh-client)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def sshd(tmp_path_factory):
    if not SSHD:
        _need("sshd")
    if not shutil.which("ssh") or not shutil.which("ssh-keygen"):
        _need("ssh")
    d = tmp_path_factory.mktemp("sshd")
    for name in ("host_key", "client_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / name)], check=True)
    (d / "authorized_keys").write_text((d / "client_key.pub").read_text())
    port = _free_port()
    (d / "sshd_config").write_text(
        f"ListenAddress 127.0.0.1:{port}\nHostKey {d / 'host_key'}\nAuthorizedKeysFile {d / 'authorized_keys'}\n"
        f"PidFile {d / 'sshd.pid'}\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
        "StrictModes no\nMaxStartups 100:30:200\nMaxSessions 64\n"
        "Subsystem sftp internal-sftp\n")   # scp (OpenSSH 9 speaks SFTP) fetches the hosts' databases
    if os.geteuid() == 0 and not os.path.isdir("/run/sshd"):
        os.makedirs("/run/sshd", mode=0o755)   # sshd's privilege separation folder (Debian's service makes it)
    proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(d / "sshd_config")], stderr=subprocess.PIPE, text=True)
    try:
        for line in proc.stderr:   # ready once it says so: no sleeping in the hope that it is
            if f"Server listening on 127.0.0.1 port {port}" in line:
                break
        else:
            pytest.fail(f"sshd did not start (exit {proc.wait()})")
        host_pub = (d / "host_key.pub").read_text().split()
        (d / "known_hosts").write_text(f"[127.0.0.1]:{port} {host_pub[0]} {host_pub[1]}\n")
        (d / "ssh_config").write_text(
            f"Host zfslab-test-node\n  HostName 127.0.0.1\n  Port {port}\n"
            f"Host *\n  User {os.environ.get('USER') or 'root'}\n  IdentityFile {d / 'client_key'}\n"
            f"  IdentitiesOnly yes\n  IdentityAgent none\n  UserKnownHostsFile {d / 'known_hosts'}\n"
            "  GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n  LogLevel ERROR\n")
        yield d, port
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture
def transport(sshd):
    d, _ = sshd
    t = SshTransport(config_file=str(d / "ssh_config"))
    yield t
    t.close()


@pytest.fixture
def host():
    return Host("node1", "zfslab-test-node")   # the name the user's ssh config knows it by


@pytest.fixture
def dead_host():
    return Host("gone", "127.0.0.1", port=_free_port())   # nothing listens there


def test_the_control_folder_is_private_and_removed_on_close(sshd, host):
    t = SshTransport(config_file=str(sshd[0] / "ssh_config"))
    assert stat.S_IMODE(os.stat(t.control_dir).st_mode) == 0o700
    t.run(host, ["true"], timeout_s=30)
    sockets = os.listdir(t.control_dir)
    assert len(sockets) == 1 and stat.S_ISSOCK(os.stat(os.path.join(t.control_dir, sockets[0])).st_mode)
    t.close()
    assert not os.path.exists(t.control_dir)


def test_commands_after_the_first_ride_the_master(transport, host):
    transport.run(host, ["true"], timeout_s=30)
    check = transport.argv(host, ["true"])
    at = check.index("--")
    done = transport.runner.run([*check[:at], "-O", "check", *check[at:-1]], timeout_s=30, check=False)
    assert done.returncode == 0 and "Master running" in done.stderr


def test_a_connection_lost_mid_command_is_unreachable_not_a_failed_program(transport, host, tmp_path):
    import threading
    import time

    from zfslab.system.transport import HostUnreachable
    started = tmp_path / "started"
    caught = []

    def long_command():
        try:
            transport.run(host, ["sh", "-c", f"touch {started}; sleep 30"], timeout_s=60)
        except HostUnreachable as e:
            caught.append(e)
    worker = threading.Thread(target=long_command)
    worker.start()
    deadline = time.monotonic() + 30
    while not started.exists() and time.monotonic() < deadline:   # the remote command is running
        time.sleep(0.05)
    assert started.exists()
    assert transport._control(host, "exit") == 0   # the link goes: the master and its sessions end
    worker.join(timeout=60)
    assert [str(e) for e in caught] == ["host node1: cannot connect (the connection closed during the command); "
                                        "check `ssh zfslab-test-node` works without a password prompt (a key in "
                                        "ssh-agent)"]


def test_argv_has_batch_mode_and_ends_options_before_the_host():
    argv = ssh_argv(Host("a", "a.example", 2222, "ops"), ["zpool", "list", "-Hp"], control_dir="/run/x")
    assert argv[:3] == ["ssh", "-o", "BatchMode=yes"] and "ControlPath=/run/x/%C" in argv
    assert argv[-5:] == ["-l", "ops", "--", "a.example", "zpool list -Hp"] and argv[argv.index("-p") + 1] == "2222"


def test_a_refused_key_is_unreachable_not_a_prompt(sshd, tmp_path):
    from zfslab.system.transport import HostUnreachable
    d, port = sshd
    config = tmp_path / "config"
    config.write_text((d / "ssh_config").read_text().replace(str(d / "client_key"), str(tmp_path / "nokey")))
    t = SshTransport(config_file=str(config))
    try:
        with pytest.raises(HostUnreachable, match=r"^host node1: cannot connect \(.*Permission denied"):
            t.run(Host("node1", "zfslab-test-node"), ["true"], timeout_s=30)
    finally:
        t.close()


def test_scp_goes_over_the_hosts_master_with_its_port_and_user():
    t = SshTransport(config_file="/cfg")
    try:
        argv = t.scp_argv(Host("st01", "st01.example", port=2222, user="ops"), "db dir/x.sqlite", "/tmp/out")
    finally:
        t.close()
    assert argv[:4] == ["scp", "-q", "-F", "/cfg"] and f"ControlPath={t.control_dir}/%C" in argv
    assert argv[argv.index("-P") + 1] == "2222" and "User=ops" in argv and "-l" not in argv and "-p" not in argv
    assert argv[-3:] == ["--", "st01.example:db dir/x.sqlite", "/tmp/out"]


def test_closing_the_transport_stops_a_remote_command_that_asked(sshd, tmp_path):
    """Ctrl-C of a fleet bench: transport.close() ends the session; the remote command, started
    with --stop-with-session (stop_with_parent), ends with it, though sshd sends it no hangup."""
    import sys
    import threading

    from zfslab.system.transport import HostUnreachable, RemoteFailed
    d, _ = sshd
    fifo = tmp_path / "alive"
    os.mkfifo(fifo)
    src = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "src")
    code = (f"import os, signal, sys; sys.path.insert(0, {src!r}); from zfslab.system.processes import stop_with_parent; "
            f"stop_with_parent(); f = open({str(fifo)!r}, 'w'); f.write(str(os.getpid())); f.flush(); signal.pause()")
    t = SshTransport(config_file=str(d / "ssh_config"))
    outcome = []

    def run():
        try:
            t.run(Host("node1", "zfslab-test-node"), [sys.executable, "-c", code], timeout_s=120)
        except (HostUnreachable, RemoteFailed) as e:
            outcome.append(e)
        finally:   # a command that failed before it opened the FIFO: the reader below is not left waiting
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass
    worker = threading.Thread(target=run)
    worker.start()
    import select
    alive = os.open(fifo, os.O_RDONLY)   # returns once the remote command has asked and is running
    pid = 0
    try:
        pid = int(os.read(alive, 20) or 0)
        assert pid > 0
        t.close()
        # EOF once the remote process ended (its write end closed); nothing within 60 s if it lives on
        assert select.select([alive], [], [], 60)[0] and os.read(alive, 20) == b""
    finally:
        os.close(alive)
        if pid:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        t.close()
    worker.join(timeout=60)
    assert not worker.is_alive() and outcome


def _mute_listener():
    """A 127.0.0.1 port that accepts a connection and never says a word: a hung sshd, a wrong
    service behind the port. The accepted socket is held open until the listener is closed."""
    import threading
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    held = []
    threading.Thread(target=lambda: held.append(listener.accept()), daemon=True).start()
    return listener, held


def test_a_host_that_never_speaks_is_named_in_ssh_own_words():
    """Issue 36: a port that accepts and never speaks read as "the connection closed during the
    command"; the reason is ssh's own last line (ConnectTimeout=1 given first, so it wins)."""
    from zfslab.system.transport import HostUnreachable
    if not shutil.which("ssh"):
        _need("ssh")
    listener, held = _mute_listener()
    port = listener.getsockname()[1]
    t = SshTransport(options=["ConnectTimeout=1"])
    try:
        with pytest.raises(HostUnreachable) as caught:
            t.run(Host("mute", "127.0.0.1", port=port), ["true"], timeout_s=30)
    finally:
        t.close()
        listener.close()
    assert held, "ssh never connected to the listener"
    assert str(caught.value).startswith(f"host mute: cannot connect (Connection to 127.0.0.1 port {port} timed out); "
                                        f"check `ssh 127.0.0.1 -p {port}` works")


def test_ssh_words_zfslab_does_not_know_are_quoted_not_replaced(sshd):
    """ssh refuses a destination with shell characters ("hostname contains invalid characters",
    a line no pattern of _SSH_MESSAGES knows); the reason quotes it. zfslab's Host grammar refuses
    such a name first (next test), so the Host is built past its check to reach the real ssh."""
    from zfslab.system.transport import HostUnreachable
    bad = object.__new__(Host)
    for field, value in (("name", "a;id"), ("destination", "a;id"), ("port", None), ("user", None)):
        object.__setattr__(bad, field, value)
    t = SshTransport(config_file=str(sshd[0] / "ssh_config"))
    try:
        with pytest.raises(HostUnreachable, match=r"^host a;id: cannot connect \(hostname contains invalid characters\)"):
            t.run(bad, ["true"], timeout_s=30)
    finally:
        t.close()


def test_a_host_name_with_shell_characters_is_refused_before_ssh(capsys):
    from zfslab.cli import main
    assert main(["profile-disk", "--hosts", "a;id", "--disks", "/dev/sdb"]) == 2
    err = capsys.readouterr().err
    assert "host 'a;id': not a host name ssh can take; use letters, digits" in err and err.count("\n") == 1


def test_ssh_reason_is_one_bounded_line():
    from zfslab.system.transport import REASON_CHARS, _ssh_reason
    assert _ssh_reason("") == "ssh exit status 255" and _ssh_reason("\n", "closed") == "closed"
    reason = _ssh_reason("first\n\x1b[31mred " + "x" * 500 + "\n")
    assert "\x1b" not in reason and "\n" not in reason and len(reason) == REASON_CHARS
    assert reason.startswith("\\x1b[31mred x")


def test_twenty_hosts_run_at_once_while_at_most_ten_log_in_at_once():
    """Issue 36: the default --parallel runs a fleet of 20 all at once, and what sshd's MaxStartups
    limits, new logins, stays at HANDSHAKES (10) at once. A stand-in for ssh: a login (`true`) waits
    until as many logins as the limit allows are in at once; each host's command waits until all 20
    hosts' commands are running (a barrier, released only if they truly run together)."""
    import threading

    from zfslab.system.fanout import DEFAULT_LIMIT, fan_out
    from zfslab.system.runner import Completed
    from zfslab.system.transport import HANDSHAKES

    hosts = [Host(f"st{i:02d}", f"st{i:02d}") for i in range(20)]
    together = threading.Barrier(len(hosts), timeout=60)
    lock = threading.Condition()
    state = {"in": 0, "most": 0, "left": len(hosts)}

    class StandIn:
        def run(self, argv, *, timeout_s, check=True):
            if argv[-1] == "true":   # a login: wait until the limit's worth (or all that are left) are in
                with lock:
                    state["in"] += 1
                    state["most"] = max(state["most"], state["in"])
                    lock.notify_all()
                    assert lock.wait_for(lambda: state["in"] >= min(HANDSHAKES, state["left"]), timeout=60)
                with lock:
                    state["in"] -= 1
                    state["left"] -= 1
                    lock.notify_all()
            elif argv[-1] == "bench":
                together.wait()   # BrokenBarrierError if the 20 never run at once
            return Completed(tuple(argv), 0, "", "", 0.0)

    t = SshTransport(StandIn())
    try:
        assert DEFAULT_LIMIT >= 20
        outcomes = fan_out(hosts, lambda h: t.run(h, ["bench"], timeout_s=60))
        assert all(o.ok for o in outcomes), [o.error for o in outcomes if not o.ok]
        assert state["most"] == HANDSHAKES == 10
        # a host's later commands ride its master: no second login
        before = state["left"]
        t.run(hosts[0], ["echo"], timeout_s=60)
        assert state["left"] == before == 0
    finally:
        shutil.rmtree(t.control_dir, ignore_errors=True)
