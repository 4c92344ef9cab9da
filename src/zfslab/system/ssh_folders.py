"""The private folder of a fleet run's ssh control sockets (system/transport.py), and the ones
runs killed with SIGKILL left behind (docs/fleet.md#transport).

Each folder is named `zfslab-ssh-<PID>-<random>`, mode 0700, in $XDG_RUNTIME_DIR (else the
temporary folder). A run's `close()` removes its own; a run killed outright cannot, so the next
run removes a folder only when every one of these holds: the name is exactly that pattern; the
process of that PID is gone; the entry is a folder itself, not a symlink (opened with
O_NOFOLLOW, and everything after relative to that descriptor); it is owned by this user and
open to no one else (as zfslab made it); and it holds nothing but this user's sockets. A folder
failing any test is left as it is. A PID reused by another process only delays the cleanup.
"""

from __future__ import annotations

import os
import re
import stat
import tempfile

PREFIX = "zfslab-ssh-"
_NAME = re.compile(rf"{PREFIX}([0-9]{{1,10}})-[A-Za-z0-9_]{{1,64}}", re.ASCII)


def base_folder() -> str | None:
    """Where the folders go: $XDG_RUNTIME_DIR (per user, 0700, cleared at logout) when set, else None (tempfile's)."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    return base if base and os.path.isdir(base) else None


def make_control_folder() -> str:
    """A new private folder for this process's control sockets, stale ones of killed runs removed first."""
    base = base_folder()
    remove_stale(base or tempfile.gettempdir())
    folder = tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-", dir=base)
    os.chmod(folder, 0o700)
    return folder


def remove_stale(base: str) -> list[str]:
    """Remove the folders in `base` that runs now gone left (the tests in the module's doc); their names."""
    try:
        base_fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return []
    removed = []
    try:
        for name in os.listdir(base_fd):
            m = _NAME.fullmatch(name)
            if m and not _alive(int(m.group(1))) and _remove(base_fd, name):
                removed.append(name)
    finally:
        os.close(base_fd)
    return removed


def _alive(pid: int) -> bool:
    if pid <= 1:
        return True   # never a zfslab run's: left alone
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:   # EPERM: alive, another user's
        return True
    return True


def _remove(base_fd: int, name: str) -> bool:
    try:   # O_NOFOLLOW: a symlink of that name fails here (ELOOP) and is never followed
        fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=base_fd)
    except OSError:
        return False
    try:
        st = os.fstat(fd)
        if st.st_uid != os.getuid() or stat.S_IMODE(st.st_mode) & 0o077:
            return False
        entries = os.listdir(fd)
        for entry in entries:
            est = os.stat(entry, dir_fd=fd, follow_symlinks=False)
            if not stat.S_ISSOCK(est.st_mode) or est.st_uid != os.getuid():
                return False
        for entry in entries:
            os.unlink(entry, dir_fd=fd)
    except OSError:
        return False
    finally:
        os.close(fd)
    try:
        os.rmdir(name, dir_fd=base_fd)   # a folder again by that name, and empty; else it stays
    except OSError:
        return False
    return True
