import sys

import pytest

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
