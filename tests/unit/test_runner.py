import os
import select
import signal
import subprocess
import sys

import pytest

from tests.conftest import REPO, require_tool
from zfslab.system.runner import CommandFailed, CommandTimeout, Runner, ToolMissing


def test_runs_an_argv_and_captures_output():
    done = Runner().run([sys.executable, "-c", "print('hi')"])
    assert done.returncode == 0 and done.stdout == "hi\n" and done.seconds >= 0


def test_failure_carries_command_code_and_stderr_tail():
    with pytest.raises(CommandFailed) as e:
        Runner().run([sys.executable, "-c", "import sys; sys.stderr.write('one\\ntwo\\nboom\\n'); sys.exit(3)"])
    assert e.value.returncode == 3 and "boom" in e.value.stderr_tail
    assert str(e.value).startswith(f"`{sys.executable} -c") and "failed with exit code 3: one | two | boom" in str(e.value)


def test_no_shell_is_involved(tmp_path):
    marker = tmp_path / "pwned"
    Runner().run(["echo", f"; touch {marker}"])
    assert not marker.exists()


def test_missing_program():
    with pytest.raises(ToolMissing, match=r"zpool is not installed or not on PATH; install it \(Debian/Ubuntu: apt-get install zfsutils-linux\)"):
        Runner(path="/nonexistent").run(["zpool", "list"])


def test_timeout():
    with pytest.raises(CommandTimeout, match="did not finish within 0.2 s"):
        Runner().run([sys.executable, "-c", "import time; time.sleep(5)"], timeout_s=0.2)


def test_check_false_returns_the_failure():
    done = Runner().run(["false"], check=False)
    assert done.returncode == 1


# A stand-in for zfslab: starts a child whose first step after the fork (`hold`) tells the test
# its PID and waits, so the test can SIGKILL this process exactly between the child's fork and
# its request to die with it: the window `setpriv --pdeathsig KILL` left open (issue 38).
HOLDER = """
import os, subprocess, sys
sys.path.insert(0, {src!r})
from zfslab.system.runner import Runner
def hold():
    os.write({ready}, f"{{os.getpid()}}\\n".encode())
    os.read({go}, 1)   # until the test has killed this process
PAUSE = [sys.executable, "-c", "import signal; signal.pause()"]
{launch}
"""
THE_RUNNER = "Runner(after_fork=hold).run(PAUSE, timeout_s=600)"
# as bench starts zpool iostat beside fio: from a worker thread (the kernel ties the death signal
# to the thread that forked; the parent check compares processes)
IN_A_THREAD = f"import concurrent.futures as cf; cf.ThreadPoolExecutor(1).submit(lambda: {THE_RUNNER}).result()"
THE_OLD_RUNNER = "subprocess.run(['setpriv', '--pdeathsig', 'KILL', '--', *PAUSE], preexec_fn=hold)"


def _outlives_a_kill_at_the_fork(launch: str, wait_s: float) -> bool:
    """SIGKILL the parent while its new child is held between fork and exec, let the child go
    on, and say whether it is still alive `wait_s` later (a pidfd turns readable when it ends)."""
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    code = HOLDER.format(src=os.path.join(REPO, "src"), ready=ready_w, go=go_r, launch=launch)
    parent = subprocess.Popen([sys.executable, "-c", code], pass_fds=(ready_w, go_r))
    os.close(ready_w)
    os.close(go_r)
    child = None
    try:
        line = b""
        while not line.endswith(b"\n"):
            assert select.select([ready_r], [], [], 60)[0], "the child never reached the hold"
            line += os.read(ready_r, 100)
        child = os.pidfd_open(int(line))
        parent.kill()
        assert parent.wait(60) == -signal.SIGKILL  # reaped: the child has been handed to the reaper
        os.write(go_w, b"x")
        return not select.select([child], [], [], wait_s)[0]
    finally:
        for fd in (ready_r, go_w):
            os.close(fd)
        if child is not None:
            try:
                signal.pidfd_send_signal(child, signal.SIGKILL)
            except ProcessLookupError:
                pass  # ended and reaped already
            os.close(child)


@pytest.mark.parametrize("launch", [THE_RUNNER, IN_A_THREAD], ids=["main-thread", "worker-thread"])
def test_a_child_dies_with_zfslab_killed_between_its_fork_and_exec(launch):
    assert not _outlives_a_kill_at_the_fork(launch, 60)


def test_under_setpriv_alone_such_a_child_lived_on():
    """The race as it was: setpriv asks for the signal after its parent died; nothing comes."""
    require_tool("setpriv", "apt-get install util-linux")
    assert _outlives_a_kill_at_the_fork(THE_OLD_RUNNER, 3)
