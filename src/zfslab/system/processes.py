"""Processes that still use a pool zfslab is about to destroy.

A run killed hard can leave its benchmark engine working on the pool (bonnie++'s seeker
processes, a user's fio job file that forks). Before the next run destroys that pool (its own:
the GUID proves it), the engines zfslab starts are ended, and anything else found using the
pool stops the run: zfslab never kills a process it did not start.
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass

from zfslab.errors import ZfslabError

ENGINES = frozenset({"fio", "bonnie++"})


class PoolInUse(ZfslabError):
    """{} is in use by {}; zfslab ends only the benchmark engines it starts: end these, then run again"""

    exit_code = 10


@dataclass(frozen=True, slots=True)
class User:
    pid: int
    name: str


def _comm(pid: int, proc: str) -> str:
    try:
        with open(f"{proc}/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return "?"


def _paths(pid: int, proc: str) -> list[str]:
    base = f"{proc}/{pid}"
    links = [f"{base}/cwd", f"{base}/root"]
    try:
        links += [f"{base}/fd/{fd}" for fd in os.listdir(f"{base}/fd")]
    except OSError:
        pass
    out = []
    for link in links:
        try:
            out.append(os.readlink(link))
        except OSError:
            continue
    return out


def _alive(pid: int, proc: str) -> bool:
    """Still running: a zombie has closed its files already, so it holds nothing."""
    try:
        with open(f"{proc}/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return False


def users_of(mountpoint: str, *, proc: str = "/proc") -> list[User]:
    """Processes whose working directory or open files lie under mountpoint."""
    prefix = mountpoint.rstrip("/") + "/"
    found = []
    for entry in os.listdir(proc):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        pid = int(entry)
        if any(p == mountpoint or p.startswith(prefix) for p in _paths(pid, proc)):
            found.append(User(pid, _comm(pid, proc)))
    return found


def end_engines_on(mountpoint: str, *, timeout_s: float = 30.0, proc: str = "/proc") -> list[User]:
    """SIGKILL the benchmark engines working under mountpoint and wait until they are gone;
    refuse (PoolInUse) if anything else uses it. Returns the processes ended."""
    users = users_of(mountpoint, proc=proc)
    others = [u for u in users if u.name not in ENGINES]
    if others:
        raise PoolInUse(mountpoint, ", ".join(f"{u.name} (pid {u.pid})" for u in others))
    for u in users:
        try:
            os.kill(u.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + timeout_s
    while any(_alive(u.pid, proc) for u in users):
        if time.monotonic() > deadline:
            raise PoolInUse(mountpoint, "processes that did not end within "
                                        f"{timeout_s:g} s of SIGKILL: " + ", ".join(str(u.pid) for u in users))
        time.sleep(0.05)  # a killed process is reaped by its parent (init, for an orphan): poll its /proc entry
    return users


PR_SET_PDEATHSIG = 1   # linux/prctl.h


def stop_with_parent(sig: int = signal.SIGTERM) -> None:
    """Have the kernel send `sig` to this process when its parent ends (prctl PR_SET_PDEATHSIG).
    A bench that `bench --hosts` started over ssh then stops, cleaning up as on Ctrl-C, when its
    session closes (the controller's Ctrl-C closes every session): sshd sends a command without a
    terminal no hangup, and the shell it runs execs a lone command, so the parent is sshd's session."""
    import ctypes
    parent = os.getppid()
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != parent:   # it ended before the request took effect: no signal would come
        os.kill(os.getpid(), sig)
