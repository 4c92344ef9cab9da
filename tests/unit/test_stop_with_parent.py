"""A bench started over ssh stops when its session ends: stop_with_parent asks the kernel for a
signal when the parent ends. Here the parent is a process the test kills, as sshd's session
ends when the controller closes its connection (Ctrl-C)."""

import os
import select
import signal
import subprocess
import sys

from tests.conftest import REPO

GRANDCHILD = """
import os, signal, sys
sys.path.insert(0, {src!r})
from zfslab.system.processes import stop_with_parent
{call}
os.write({fd}, f"{{os.getpid()}}\\n".encode())
signal.pause()
"""
CHILD = """
import subprocess, sys
subprocess.Popen([sys.executable, "-c", {code!r}], pass_fds=({fd},))
sys.stdin.read()   # until the test kills it
"""


def _orphan_outlives_parent(call: str, wait_s: float) -> bool:
    r, w = os.pipe()
    code = GRANDCHILD.format(src=os.path.join(REPO, "src"), call=call, fd=w)
    child = subprocess.Popen([sys.executable, "-c", CHILD.format(code=code, fd=w)], pass_fds=(w,),
                             stdin=subprocess.PIPE)
    os.close(w)
    pid = None
    try:
        line = b""
        while not line.endswith(b"\n"):
            assert select.select([r], [], [], 60)[0], "the grandchild never said it was ready"
            line += os.read(r, 100)
        pid = int(line)
        child.kill()
        child.wait()
        # its pipe closes when the grandchild ends: EOF, or nothing within the timeout if it lives on
        ready = select.select([r], [], [], wait_s)[0]
        return not (ready and os.read(r, 100) == b"")
    finally:
        os.close(r)
        if pid is not None:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


def test_a_bench_that_asked_stops_with_its_parent():
    assert not _orphan_outlives_parent("stop_with_parent(signal.SIGTERM)", 60)


def test_without_asking_it_would_live_on():
    assert _orphan_outlives_parent("pass", 3)
