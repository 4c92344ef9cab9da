"""Every example a person is shown (README's `$ zfslab ...` lines and each command's --help
example), run in a real pseudo-terminal of 80, 100 and 120 columns: no line is wider than the
terminal and no number is cut to an ellipsis or split across two lines."""

import os
import re
import shlex
import sys

import pytest
from rich.cells import cell_len

from tests.conftest import REPO
from tests.unit.test_plan_terminal import in_terminal
from tests.unit.test_report_cmd import zfslab_db

# these need root and real disks (or a ZFS sandbox): their examples are not run here
NEEDS_DISKS = {"bench", "drill", "profile-disk"}


def readme_examples() -> list[str]:
    text = open(os.path.join(REPO, "README.md"), encoding="utf-8").read()
    return [line[2:].strip() for line in text.splitlines() if line.startswith("$ zfslab ")]


def help_examples() -> list[str]:
    from zfslab.cli import build_parser
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    out = []
    for name, command in sub.choices.items():
        assert command.epilog and command.epilog.startswith("example: zfslab "), name
        if name not in NEEDS_DISKS:
            out.append(command.epilog.splitlines()[0].removeprefix("example: "))  # then the exit codes
    return out


EXAMPLES = sorted(set(readme_examples()) | set(help_examples()))
NUMBER_CUT = re.compile(r"[\d,.]…|…\d")
# a line that is only a number (and its unit), or starts with a unit: the tail of a row or sentence
# that the terminal pushed down, unless the command prints it so at any width
LONE_NUMBER = re.compile(r"^\s*[\d,./]+\s*(?:[KMGTPE]i?B|B|%|[KMGT])?\s*\*?$")
UNIT_FIRST = re.compile(r"^\s*(?:[KMGTPE]i?B|%)(?:\W|$)")
NUMBER = re.compile(r"\d(?:[\d,.]*\d)?")
WIDE = 400  # wide enough that nothing wraps: the numbers as the command means them
# a reader's timing line (footprint's "read 131.48 MB in 2.7 s (50 MB/s)") differs from run to run
TIMING = re.compile(r"^read [^\n]* in [\d.]+ s \(\d+ MB/s\)$", re.MULTILINE)


def steady(text: str) -> str:
    """The output without the lines that change between two runs of the same command."""
    return TIMING.sub("", text)


def test_the_examples_cover_every_command_a_person_runs_without_disks():
    commands = {shlex.split(e)[1] for e in EXAMPLES}
    assert commands == {"plan", "capacity", "special-size", "expand", "risk", "validate", "report", "layout",
                        "footprint", "merge"}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """A folder where the examples' relative paths work: tests/ and the report's database."""
    d = tmp_path_factory.mktemp("examples")
    os.symlink(os.path.join(REPO, "tests"), d / "tests")
    zfslab_db(str(d / "zfslab-results.sqlite"))
    for host in ("st01", "st02"):  # merge's example: two hosts' files
        zfslab_db(str(d / f"{host}.sqlite"))
    return d


@pytest.fixture(scope="module")
def wide_output(workdir):
    cache: dict[str, str] = {}

    def output(example: str) -> str:
        if example not in cache:
            cache[example] = in_terminal(shlex.split(example)[1:], WIDE, cwd=str(workdir))
        return cache[example]
    return output


@pytest.mark.parametrize("columns", [80, 100, 120])
@pytest.mark.parametrize("example", EXAMPLES)
def test_example_fits_the_terminal_and_cuts_no_number(example, columns, workdir, wide_output):
    screen = in_terminal(shlex.split(example)[1:], columns, cwd=str(workdir))
    lines = screen.splitlines()
    wide = [line for line in lines if cell_len(line) > columns]
    assert not wide, f"{len(wide)} lines wider than {columns}: {wide[0]!r}"
    cut = [line for line in lines if NUMBER_CUT.search(line)]
    assert not cut, f"a number cut: {cut[0]!r}"
    # a number split across two lines leaves pieces that the unwrapped output never prints
    wide = wide_output(example)
    pieces = sorted(set(NUMBER.findall(steady(screen))) - set(NUMBER.findall(steady(wide))))
    assert not pieces, f"numbers split or changed by the width: {pieces[:5]}"
    wide_lines = {line.strip() for line in wide.splitlines()}
    tails = [line for i, line in enumerate(lines)
             if line.strip() not in wide_lines and (LONE_NUMBER.match(line) and line.strip() or
                                                    UNIT_FIRST.match(line) and lines[i - 1].rstrip()[-1:].isdigit())]
    assert not tails, f"a number or unit pushed onto a line of its own: {tails[:3]}"
    # a line that starts with a number at the margin begins a line of the unwrapped output too
    starts = [line for line in lines if line[:1].isdigit()
              and not any(w.startswith(line.rstrip()) for w in wide.splitlines())]
    assert not starts, f"the tail of a line, starting with a number, at the margin: {starts[:3]}"
