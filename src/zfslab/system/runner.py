"""The one place that starts programs: argv lists only (never a shell), timeouts, and errors
that carry the command, its exit code and the tail of its stderr.

Every child dies with zfslab: between fork and exec the child asks the kernel for SIGKILL when
its parent ends and checks that the parent is still there (processes.dies_with_this_process),
so it dies with zfslab even when zfslab is killed by SIGKILL at the instant it forks. Otherwise
an fio left running on a pool keeps that pool busy, and the next run cannot destroy it.
"""

from __future__ import annotations

import logging
import os
import shlex
import shutil
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from zfslab.errors import ZfslabError
from zfslab.system.processes import dies_with_this_process

log = logging.getLogger("zfslab.run")

# Which Debian package ships each program we call, for the "not installed" message.
PACKAGES = {"zpool": "zfsutils-linux", "zfs": "zfsutils-linux", "fio": "fio", "zdb": "zfsutils-linux",
            "blkid": "util-linux", "lsblk": "util-linux", "partx": "util-linux", "wipefs": "util-linux",
            "blockdev": "util-linux",
            "bonnie++": "bonnie++", "ssh": "openssh-client", "scp": "openssh-client"}


class ToolMissing(ZfslabError):
    """{} is not installed or not on PATH; install it (Debian/Ubuntu: apt-get install {})"""

    exit_code = 3


class CommandFailed(ZfslabError):
    """`{}` failed with exit code {}: {}"""

    exit_code = 4

    @property
    def argv_text(self) -> str:
        return self.args[0]

    @property
    def returncode(self) -> int:
        return self.args[1]

    @property
    def stderr_tail(self) -> str:
        return self.args[2]


class CommandTimeout(ZfslabError):
    """`{}` did not finish within {:g} s; it was stopped"""

    exit_code = 4


@dataclass(frozen=True, slots=True)
class Completed:
    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    seconds: float


def _tail(text: str, lines: int = 5) -> str:
    kept = [line for line in text.strip().splitlines() if line.strip()][-lines:]
    return " | ".join(kept) or "(no message)"


class Runner:
    """Runs programs. `env` is added to the environment; `path` overrides where programs are found.
    `after_fork` runs in each child before it asks to die with zfslab: tests hold that window
    open with it, to kill zfslab there."""

    def __init__(self, *, env: Mapping[str, str] | None = None, path: str | None = None,
                 after_fork: Callable[[], None] | None = None) -> None:
        self.env = dict(env or {})
        self.path = path
        self.after_fork = after_fork

    def which(self, program: str) -> str | None:
        return shutil.which(program, path=self.path)

    def run(self, argv: Sequence[str], *, timeout_s: float = 600.0, check: bool = True,
            input_text: str | None = None, cwd: str | None = None) -> Completed:
        """Run one program; raise CommandFailed (check=True) with argv, exit code and stderr tail."""
        argv = tuple(str(a) for a in argv)
        if not argv:
            raise ValueError("argv is empty")
        if self.which(argv[0]) is None:
            raise ToolMissing(argv[0], PACKAGES.get(argv[0], argv[0]))
        text = shlex.join(argv)
        log.debug("run: %s", text)
        env = None
        if self.env or self.path:
            env = {**os.environ, **self.env}
            if self.path:
                env["PATH"] = self.path
        program = self.which(argv[0]) or argv[0]
        t0 = time.monotonic()
        try:
            p = subprocess.run((program, *argv[1:]), capture_output=True, text=True, timeout=timeout_s,
                               input=input_text, cwd=cwd, env=env,
                               stdin=None if input_text is not None else subprocess.DEVNULL,
                               preexec_fn=dies_with_this_process(hold=self.after_fork))
        except subprocess.TimeoutExpired:
            raise CommandTimeout(text, timeout_s) from None
        done = Completed(argv, p.returncode, p.stdout, p.stderr, time.monotonic() - t0)
        if check and p.returncode != 0:
            raise CommandFailed(text, p.returncode, _tail(p.stderr or p.stdout))
        return done
