"""Processes that still use a pool zfslab is about to destroy.

A run killed hard can leave its benchmark engine working on the pool (bonnie++'s seeker
processes, a user's fio job file that forks). Before the next run destroys that pool (its own:
the GUID proves it), the engines zfslab starts are ended, and anything else found using the
pool stops the run: zfslab never kills a process it did not start. And, so that a kill leaves
no such engine in the first place, the death signal every child asks for before its exec
(dies_with_this_process) and a remote bench's own (stop_with_parent).
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
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


def _prctl():
    import ctypes
    return ctypes.CDLL(None, use_errno=True).prctl


def dies_with_this_process(*, hold: Callable[[], None] | None = None) -> Callable[[], None]:
    """A `preexec_fn` for subprocess: in the child, between fork and exec, ask the kernel for
    SIGKILL when the parent ends (prctl PR_SET_PDEATHSIG), then check the parent is still the
    process that forked it, and die at once if it is not.

    The check closes the race `setpriv --pdeathsig KILL` left open (issue 38): the request
    counts only if the parent is alive when it is made. Killed between the fork and the request,
    zfslab's child was already the reaper's, the kernel had nothing left to signal, and fio or
    zpool iostat ran on with parent PID 1. Made in the child and checked after, the request is
    either in place before the parent dies (the kernel kills the child) or finds the parent gone
    (the check does). The kernel ties the signal to the thread that forked, so a child must be
    waited for by the thread that started it (Runner.run does).

    Python warns that preexec_fn may deadlock when other threads exist (zfslab runs the runner
    from several): code run in the child could wait for a lock another thread held at the fork.
    This one takes none: prctl is looked up here, in the parent, and the child only calls it, asks
    getppid() and exits or returns. `hold` runs first in the child: tests hold the window open."""
    parent = os.getpid()
    prctl = _prctl()

    def in_child() -> None:
        if hold is not None:
            hold()
        if prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) != 0:
            os._exit(126)  # never starts a child that would outlive zfslab
        if os.getppid() != parent:  # zfslab died before the request took effect
            os.kill(os.getpid(), signal.SIGKILL)
    return in_child


def stop_with_parent(sig: int = signal.SIGTERM) -> None:
    """Have the kernel send `sig` to this process when its parent ends (prctl PR_SET_PDEATHSIG).
    A bench that `bench --hosts` started over ssh then stops, cleaning up as on Ctrl-C, when its
    session closes (the controller's Ctrl-C closes every session): sshd sends a command without a
    terminal no hangup, and the shell it runs execs a lone command, so the parent is sshd's session."""
    import ctypes
    parent = os.getppid()
    if _prctl()(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != parent:   # it ended before the request took effect: no signal would come
        os.kill(os.getpid(), sig)
