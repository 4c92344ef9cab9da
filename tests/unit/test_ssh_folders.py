"""The ssh control folders of fleet runs (system/ssh_folders.py): a run killed with SIGKILL leaves
its folder; the next run removes it, and nothing else (issue 36)."""

import os
import signal
import socket
import stat
import subprocess
import sys

import pytest

from zfslab.model.inventory import Host
from zfslab.system.ssh_folders import remove_stale
from zfslab.system.transport import SshTransport, _login


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def _folder(base, name, mode=0o700, socket_inside=True):
    path = base / name
    path.mkdir()
    os.chmod(path, mode)
    if socket_inside:   # a ControlMaster's socket, as ssh leaves it
        s = socket.socket(socket.AF_UNIX)
        s.bind(str(path / "0123abcd"))
        s.close()
    return path


def test_only_folders_of_gone_runs_owned_by_us_holding_sockets_are_removed(tmp_path):
    base = tmp_path / "run"
    base.mkdir()
    dead, alive = _dead_pid(), os.getpid()
    gone = _folder(base, f"zfslab-ssh-{dead}-abc123")
    empty = _folder(base, f"zfslab-ssh-{dead}-empty1", socket_inside=False)
    running = _folder(base, f"zfslab-ssh-{alive}-xyz789")
    opened = _folder(base, f"zfslab-ssh-{dead}-open01", mode=0o755)
    with_file = _folder(base, f"zfslab-ssh-{dead}-file01")
    (with_file / "notes.txt").write_text("not ssh's")
    old_name = _folder(base, "zfslab-ssh-k2j3h4")           # no PID in the name: whose it is is unknown
    target = tmp_path / "elsewhere"
    target.mkdir()
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(target / "sock"))
    s.close()
    link = base / f"zfslab-ssh-{dead}-link01"
    link.symlink_to(target)                                  # never followed, never removed

    removed = remove_stale(str(base))

    assert sorted(removed) == sorted([gone.name, empty.name])
    assert not gone.exists() and not empty.exists()
    for kept in (running, opened, with_file, old_name):
        assert kept.is_dir(), kept
    assert link.is_symlink() and stat.S_ISSOCK(os.lstat(target / "sock").st_mode)


def test_a_run_killed_outright_leaves_its_folder_and_the_next_run_removes_it(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    child = subprocess.Popen(
        [sys.executable, "-c", "import sys; from zfslab.system.transport import SshTransport; "
                               "t = SshTransport(); print(t.control_dir, flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=dict(os.environ, XDG_RUNTIME_DIR=str(tmp_path)))
    left = child.stdout.readline().strip()
    assert os.path.basename(left).startswith(f"zfslab-ssh-{child.pid}-") and os.path.isdir(left)
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert os.path.isdir(left)                                # SIGKILL: its close() never ran
    t = SshTransport()
    try:
        assert not os.path.exists(left)
        assert os.path.dirname(t.control_dir) == str(tmp_path)
        assert stat.S_IMODE(os.stat(t.control_dir).st_mode) == 0o700
    finally:
        t.close()
    assert not os.path.exists(t.control_dir)


def _unchecked_host(**fields):
    """A Host past its own checks: _login must quote even what the grammar would refuse."""
    h = object.__new__(Host)
    for k, v in {"name": "h", "destination": "h", "port": None, "user": None, **fields}.items():
        object.__setattr__(h, k, v)
    return h


@pytest.mark.parametrize("host, shown", [
    (Host("st01", "st01.example"), "st01.example"),
    (Host("root@st01:2222", "st01", 2222, "root"), "root@st01 -p 2222"),
    (Host("v6", "fe80::1%eth0"), "fe80::1%eth0"),
    (_unchecked_host(destination="a$(touch${IFS}/tmp/x)"), "'a$(touch${IFS}/tmp/x)'"),
    (_unchecked_host(destination="a;reboot", user="x y"), "'x y@a;reboot'"),
])
def test_the_ssh_hint_is_quoted_for_a_shell(host, shown):
    assert _login(host) == shown
