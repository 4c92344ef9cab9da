"""docs/bench.md's examples are what the code prints (SimPy's docs/conftest.py): each dry run
shown after `$ zfslab ...`, and the Python example with what it prints. ZFSLAB_UPDATE_DOCS=1
rewrites the dry runs from the commands' output instead of comparing."""

from __future__ import annotations

import contextlib
import io
import os
import pathlib
import re
import shlex

import pytest

DOC = pathlib.Path(__file__).parents[2] / "docs" / "bench.md"
BLOCK = re.compile(r"```\n(\$ zfslab [^\n]*)\n(.*?)```", re.S)


def _examples() -> list[tuple[str, str]]:
    return BLOCK.findall(DOC.read_text())


def test_the_page_shows_a_dry_run_of_bench_and_of_drill():
    commands = [shlex.split(cmd)[1:3] for cmd, _ in _examples()]
    assert ["zfslab", "bench"] in commands and ["zfslab", "drill"] in commands


@pytest.mark.parametrize("command,shown", _examples(), ids=lambda x: x[:60] if x.startswith("$") else "")
def test_each_dry_run_shown_is_what_the_command_prints(run_cli, tmp_path, monkeypatch, command, shown):
    monkeypatch.chdir(tmp_path)  # no results database: nothing stored is left out of the plan
    argv = shlex.split(command)[2:]
    r = run_cli(*argv)
    assert r.exit_code == 0, r.stderr
    printed = r.stdout.splitlines()
    lines = shown.splitlines()
    if os.environ.get("ZFSLAB_UPDATE_DOCS") == "1":
        keep = lines[:-1] if lines and lines[-1] == "..." and len(lines) < len(printed) else None
        new = "\n".join(printed[:len(keep)] + ["..."] if keep is not None else printed) + "\n"
        DOC.write_text(DOC.read_text().replace(f"{command}\n{shown}", f"{command}\n{new}", 1))
        return
    if lines and lines[-1] == "...":  # an example cut short: what is shown is the start
        assert printed[:len(lines) - 1] == lines[:-1]
    else:
        assert printed == lines


def test_the_python_example_runs_and_prints_what_is_shown(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = DOC.read_text()
    code, shown = re.search(r"```python\n(.*?)```\n\n```\n(.*?)```", text, re.S).groups()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, str(DOC), "exec"), {"__name__": "example"})
    assert out.getvalue() == shown
