"""Rewrite the README's ```console blocks from the commands' real output, as a pipe shows it
(100 columns): run from the repository's root after a change to what a command prints.
tests/unit/test_terminal_fit.py runs the same examples in a terminal."""
import os
import re
import shlex
import subprocess
import sys

p = "README.md"
s = open(p).read()
def sub(m):
    cmd = m.group(1)
    out = subprocess.run([sys.executable, "-m", "zfslab", *shlex.split(cmd)[1:]], capture_output=True, text=True,
                         env=os.environ | {"PYTHONPATH": os.path.abspath("src")}, check=True).stdout
    out = "\n".join(l.rstrip() for l in out.splitlines()) + "\n"
    return f"```console\n$ {cmd}\n{out}```"
s = re.sub(r"```console\n\$ (zfslab [^\n]+)\n(.*?)```", sub, s, flags=re.S)
open(p, "w").write(s)
