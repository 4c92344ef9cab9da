"""Running a program on another host: the system's OpenSSH client, with the user's own
configuration, keys and agent. zfslab stores no credentials and asks for none: BatchMode makes
ssh fail rather than prompt. One ControlMaster per host (in a private 0700 folder) carries every
command after the first over one TCP connection. The remote command is one argv, quoted with
shlex.join for the remote shell; nothing is interpolated (docs/fleet.md#transport).

`LocalTransport` runs the same argv on this machine, for tests and the simulation; hosts can be
marked down. Both honour one contract (tests/transport_contract.py).
"""

from __future__ import annotations

import shlex
import shutil
import threading
from collections.abc import Sequence
from typing import Protocol

from zfslab.errors import ZfslabError, one_line, shown
from zfslab.model.inventory import Host
from zfslab.system.fanout import fan_out
from zfslab.system.runner import CommandTimeout, Completed, Runner, ToolMissing
from zfslab.system.ssh_folders import make_control_folder

# ssh's own exit status when the connection, not the remote command, failed (ssh(1): EXIT STATUS)
SSH_ERROR = 255
CONNECT_TIMEOUT_S = 10
ALIVE_INTERVAL_S = 15      # a dead link is noticed after ALIVE_INTERVAL_S * ALIVE_COUNT_MAX seconds
ALIVE_COUNT_MAX = 3
PERSIST_S = 60             # a master left behind (zfslab killed by SIGKILL) exits on its own after this
REASON_CHARS = 200         # ssh's last line, as a failure's reason, at most this long
# new connections (key exchange and login) at once, however many hosts run: sshd's MaxStartups
# (default 10:30:100) drops unauthenticated connections past 10, which matters when all of them pass
# one bastion; a host's later commands ride its master and count against no sshd (docs/fleet.md#parallelism)
HANDSHAKES = 10


class HostUnreachable(ZfslabError):
    """host {}: cannot connect ({}); check `ssh {}` works without a password prompt (a key in ssh-agent)"""

    exit_code = 4


class RemoteFailed(ZfslabError):
    """host {}: `{}` failed with exit code {}: {}"""

    exit_code = 4


class RemoteTimeout(ZfslabError):
    """host {}: `{}` did not finish within {:g} s; its connection was closed"""

    exit_code = 4


class Transport(Protocol):
    def run(self, host: Host, argv: Sequence[str], *, timeout_s: float, check: bool = True) -> Completed:
        """Run argv on host; RemoteFailed (check=True), RemoteTimeout or HostUnreachable."""

    def fetch(self, host: Host, remote_path: str, local_path: str, *, timeout_s: float) -> None:
        """Copy one file of host, as bytes, to local_path; RemoteFailed (no such file), RemoteTimeout
        or HostUnreachable."""

    def close(self) -> None:
        """Let go of every connection opened."""


def _target(host: Host) -> str:
    return host.destination


def ssh_argv(host: Host, argv: Sequence[str], *, control_dir: str, config_file: str | None = None,
             options: Sequence[str] = ()) -> list[str]:
    """The ssh command line that runs argv on host: the user's ssh configuration, plus ours."""
    if not argv:
        raise ValueError("argv is empty")
    out = ["ssh"]
    if config_file:
        out += ["-F", config_file]
    # ssh takes an option's first value: `options` come first, so a caller's ConnectTimeout=2 wins
    for opt in (*options, "BatchMode=yes", "ControlMaster=auto", f"ControlPath={control_dir}/%C",
                f"ControlPersist={PERSIST_S}", f"ConnectTimeout={CONNECT_TIMEOUT_S}",
                f"ServerAliveInterval={ALIVE_INTERVAL_S}", f"ServerAliveCountMax={ALIVE_COUNT_MAX}"):
        out += ["-o", opt]
    if host.port is not None:
        out += ["-p", str(host.port)]
    if host.user is not None:
        out += ["-l", host.user]
    # `--` ends ssh's options: a destination can never be read as one (Host refuses a leading '-' too)
    return out + ["--", _target(host), shlex.join(str(a) for a in argv)]


class SshTransport:
    """Programs on other hosts over the system's ssh, one ControlMaster per host."""

    def __init__(self, runner: Runner | None = None, *, config_file: str | None = None,
                 options: Sequence[str] = ()) -> None:
        self.runner = runner or Runner()
        self.config_file, self.options = config_file, tuple(options)
        # private: the control sockets are the open connections, usable by whoever can reach them;
        # folders of runs killed outright are removed first (system/ssh_folders.py)
        self.control_dir = make_control_folder()
        self._used: dict[str, Host] = {}
        self._lock = threading.Lock()
        self._handshakes = threading.BoundedSemaphore(HANDSHAKES)
        self._connected: set[str] = set()

    def argv(self, host: Host, argv: Sequence[str]) -> list[str]:
        return ssh_argv(host, argv, control_dir=self.control_dir, config_file=self.config_file, options=self.options)

    def _connect(self, host: Host) -> None:
        """The host's master, made by a `true` under the handshake limit: at most HANDSHAKES logins at
        once, while the hosts' long commands (a bench of hours) run on as many as --parallel allows."""
        with self._lock:
            self._used[host.name] = host
            if host.name in self._connected:
                return
        with self._handshakes:
            try:
                done = self.runner.run(self.argv(host, ["true"]), timeout_s=3 * CONNECT_TIMEOUT_S, check=False)
            except CommandTimeout:
                raise HostUnreachable(host.name, f"no login within {3 * CONNECT_TIMEOUT_S} s", _login(host)) from None
        if done.returncode == SSH_ERROR:
            raise HostUnreachable(host.name, _ssh_reason(done.stderr), _login(host))
        with self._lock:
            self._connected.add(host.name)

    def run(self, host: Host, argv: Sequence[str], *, timeout_s: float, check: bool = True) -> Completed:
        self._connect(host)
        command = shlex.join(str(a) for a in argv)
        try:
            done = self.runner.run(self.argv(host, argv), timeout_s=timeout_s, check=False)
        except CommandTimeout:
            raise RemoteTimeout(host.name, shown(command, 200), timeout_s) from None
        if done.returncode == SSH_ERROR:
            if _is_ssh_error(done.stderr):
                raise HostUnreachable(host.name, _ssh_reason(done.stderr), _login(host))
            # a session whose master went away (the link died, or was stopped) ends with 255; a
            # program's own 255 leaves the master running. ssh's words are not all in _SSH_MESSAGES
            # ("Connection timed out during banner exchange", "hostname contains invalid
            # characters"): its own last line is the reason, the generic one only when it said nothing
            if not self._master_running(host):
                raise HostUnreachable(host.name, _ssh_reason(done.stderr, "the connection closed during the command"),
                                      _login(host))
        if check and done.returncode != 0:
            raise RemoteFailed(host.name, shown(command, 200), done.returncode, _tail(done.stderr or done.stdout))
        return Completed(tuple(str(a) for a in argv), done.returncode, done.stdout, done.stderr, done.seconds)

    def scp_argv(self, host: Host, remote_path: str, local_path: str) -> list[str]:
        """scp over the host's master (the same ControlPath): one connection, no second login.
        OpenSSH 9 scp speaks SFTP, so the remote path reaches no shell and is taken as it is."""
        ssh = self.argv(host, ["true"])
        options = ssh[1:ssh.index("--")]
        options = [("-P" if o == "-p" else o) for o in options]   # scp's port option is -P
        at = options.index("-l") if "-l" in options else None
        if at is not None:   # scp has no -l for the user (its -l limits bandwidth): -o User= instead
            options[at:at + 2] = ["-o", f"User={options[at + 1]}"]
        target = f"[{host.destination}]" if ":" in host.destination else host.destination
        return ["scp", "-q", *options, "--", f"{target}:{remote_path}", local_path]

    def fetch(self, host: Host, remote_path: str, local_path: str, *, timeout_s: float) -> None:
        self._connect(host)
        what = f"scp {shown(remote_path, 200)}"
        try:
            done = self.runner.run(self.scp_argv(host, remote_path, local_path), timeout_s=timeout_s, check=False)
        except CommandTimeout:
            raise RemoteTimeout(host.name, what, timeout_s) from None
        if done.returncode == 0:
            return
        # scp's own words for a missing file start "scp: "; ssh's for a dead link as in run()
        if _is_ssh_error(done.stderr) or not self._master_running(host):
            raise HostUnreachable(host.name, _ssh_reason(done.stderr), _login(host))
        raise RemoteFailed(host.name, what, done.returncode, _tail(done.stderr or done.stdout))

    def _control(self, host: Host, command: str) -> int:
        """`ssh -O command` to the host's master: its exit status (0: done, or running for check)."""
        argv = self.argv(host, ["true"])
        at = argv.index("--")
        return self.runner.run([*argv[:at], "-O", command, *argv[at:-1]], timeout_s=CONNECT_TIMEOUT_S,
                               check=False).returncode

    def _master_running(self, host: Host) -> bool:
        return self._control(host, "check") == 0

    def close(self) -> None:
        """Ask each master to exit, then remove the private folder."""
        with self._lock:
            used, self._used = list(self._used.values()), {}

        # local sockets only, no sshd sees these; an error is a master already gone
        fan_out(used, lambda host: self._control(host, "exit"), limit=32)
        shutil.rmtree(self.control_dir, ignore_errors=True)


class RemoteZfslab:
    """A transport whose hosts run zfslab from `path` (--remote-zfslab): every remote command whose
    program is `zfslab` (preflight's, bench's, drill's, profile-disk's) gets that path instead, so
    no rc file and no PATH decides which zfslab runs there; the rest passes through unchanged."""

    def __init__(self, inner, path: str) -> None:
        self.inner, self.path = inner, path

    def run(self, host: Host, argv: Sequence[str], *, timeout_s: float, check: bool = True) -> Completed:
        if argv and argv[0] == "zfslab":
            argv = [self.path, *argv[1:]]
        return self.inner.run(host, argv, timeout_s=timeout_s, check=check)

    def fetch(self, host: Host, remote_path: str, local_path: str, *, timeout_s: float) -> None:
        self.inner.fetch(host, remote_path, local_path, timeout_s=timeout_s)

    def close(self) -> None:
        self.inner.close()

    def __getattr__(self, name: str):   # what else the inner transport offers (a stop, its folder)
        return getattr(self.inner, name)


def _login(host: Host) -> str:
    """What to type after `ssh` to try the host by hand: quoted for a shell, whatever the names hold."""
    user = f"{host.user}@" if host.user else ""
    return shlex.join([f"{user}{host.destination}", *(["-p", str(host.port)] if host.port is not None else [])])


# How ssh itself words a failed connection (OpenSSH 9): a remote program that exits 255 says
# something else, so its exit status is not taken for a dead host
_SSH_MESSAGES = ("ssh: ", "Permission denied (", "Connection closed by", "Connection reset by", "Connection to ",
                 "Host key verification failed", "kex_exchange_identification", "Bad owner or permissions",
                 "client_loop: send disconnect", "Timeout, server ", "Control socket connect", "mux_client_")


def _is_ssh_error(stderr: str) -> bool:
    # "user@host: Permission denied (publickey)." names the methods tried, in parentheses
    return any(line.startswith(_SSH_MESSAGES) or ": Permission denied (" in line for line in stderr.splitlines())


def _ssh_reason(stderr: str, silent: str = "ssh exit status 255") -> str:
    """ssh's own last line, one line of at most REASON_CHARS with control characters shown, not
    obeyed; `silent` when it said nothing."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip() and not ln.startswith("Warning: Permanently")]
    return one_line(lines[-1], REASON_CHARS) if lines else silent


def _tail(text: str) -> str:
    kept = [ln for ln in text.strip().splitlines() if ln.strip()][-3:]
    return one_line(" | ".join(kept), 500) or "(no message)"


class LocalTransport:
    """Every host is this machine: the argv runs here through the runner. Hosts in `down` are
    unreachable, as a host that is off or cut from the network is."""

    def __init__(self, runner: Runner | None = None, *, down: Sequence[str] = ()) -> None:
        self.runner = runner or Runner()
        self.down = set(down)

    def run(self, host: Host, argv: Sequence[str], *, timeout_s: float, check: bool = True) -> Completed:
        if host.name in self.down:
            raise HostUnreachable(host.name, "marked down", _login(host))
        command = shlex.join(str(a) for a in argv)
        try:
            done = self.runner.run(argv, timeout_s=timeout_s, check=False)
        except CommandTimeout:
            raise RemoteTimeout(host.name, shown(command, 200), timeout_s) from None
        except ToolMissing:   # as a remote shell answers for a program it cannot find
            done = Completed(tuple(argv), 127, "", f"{argv[0]}: command not found", 0.0)
        if check and done.returncode != 0:
            raise RemoteFailed(host.name, shown(command, 200), done.returncode, _tail(done.stderr or done.stdout))
        return done

    def fetch(self, host: Host, remote_path: str, local_path: str, *, timeout_s: float) -> None:
        if host.name in self.down:
            raise HostUnreachable(host.name, "marked down", _login(host))
        try:
            shutil.copyfile(remote_path, local_path)
        except OSError as e:
            raise RemoteFailed(host.name, f"scp {shown(remote_path, 200)}", 1,
                               f"scp: {remote_path}: {e.strerror}") from None

    def close(self) -> None:
        pass
