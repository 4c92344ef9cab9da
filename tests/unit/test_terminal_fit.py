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
NEEDS_DISKS = {"bench", "drill", "profile-disk", "pool"}  # pool: a real pool
# these print a script for another program, not for a person to read in a terminal
PRINTS_SCRIPTS = {"completion", "man"}


def readme_examples() -> list[str]:
    text = open(os.path.join(REPO, "README.md"), encoding="utf-8").read()
    return [line[2:].strip() for line in text.splitlines() if line.startswith("$ zfslab ")]


def help_examples() -> list[str]:
    """Every command line each command's --help shows (example:, then:, or: ...)."""
    from zfslab.cli import build_parser
    from zfslab.report.shell_text import COMMAND_LINE
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    out = []
    for name, command in sub.choices.items():
        assert command.epilog and command.epilog.startswith("example: zfslab "), name
        if name not in NEEDS_DISKS | PRINTS_SCRIPTS:
            out += [m["command"] for line in command.epilog.splitlines() if (m := COMMAND_LINE.fullmatch(line))]
    return out


EXAMPLES = sorted(set(readme_examples()) | set(help_examples()))
NUMBER_CUT = re.compile(r"[\d,.]…|…\d")
# a line that is only a number (and its unit), or starts with a unit: the tail of a row or sentence
# that the terminal pushed down, unless the command prints it so at any width
LONE_NUMBER = re.compile(r"^\s*[\d,./]+\s*(?:[KMGTPE]i?B|B|%|[KMGT])?\s*\*?$")
UNIT_FIRST = re.compile(r"^\s*(?:[KMGTPE]i?B|%)(?:\W|$)")
NUMBER = re.compile(r"\d(?:[\d,.]*\d)?")
WORD = re.compile(r"[A-Za-z]+")
WIDE = 400  # wide enough that nothing wraps: the numbers as the command means them
# a reader's timing line (footprint's "read 131.48 MB in 2.7 s (50 MB/s)") differs from run to run
TIMING = re.compile(r"^read [^\n]* in [\d.]+ s \(\d+ MB/s\)$", re.MULTILINE)


def split_words(screen: str, wide: str) -> list[str]:
    """Words cut in two at a line's end: the end of one line and the start of the next make a word
    of the unwrapped output that one of the pieces is not."""
    words = set(WORD.findall(wide))
    lines = screen.splitlines()
    found = []
    for line, following in zip(lines, lines[1:]):
        end, start = re.search(r"([A-Za-z]+)$", line.rstrip(" \\")), re.match(r"\s*([A-Za-z]+)", following)
        if end and start and end[1] + start[1] in words and not {end[1], start[1]} <= words:
            found.append(f"{end[1]}|{start[1]}")
    return found


def steady(text: str) -> str:
    """The output without the lines that change between two runs of the same command."""
    return TIMING.sub("", text)


def test_the_examples_cover_every_command_a_person_runs_without_disks():
    from zfslab.commands import COMMANDS
    commands = {shlex.split(e)[1] for e in EXAMPLES}
    assert commands == {c.name for c in COMMANDS} - NEEDS_DISKS - PRINTS_SCRIPTS


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
    cut = [line for line in lines if NUMBER_CUT.search(line) or "…" in line]
    assert not cut, f"a value cut: {cut[0]!r}"
    # a number split across two lines leaves pieces that the unwrapped output never prints
    wide = wide_output(example)
    pieces = sorted(set(NUMBER.findall(steady(screen))) - set(NUMBER.findall(steady(wide))))
    assert not pieces, f"numbers split or changed by the width: {pieces[:5]}"
    split = split_words(screen, wide)
    assert not split, f"words split by the width: {split[:5]}"
    wide_lines = {line.strip() for line in wide.splitlines()}
    tails = [line for i, line in enumerate(lines)
             if line.strip() not in wide_lines and (LONE_NUMBER.match(line) and line.strip() or
                                                    UNIT_FIRST.match(line) and lines[i - 1].rstrip()[-1:].isdigit())]
    assert not tails, f"a number or unit pushed onto a line of its own: {tails[:3]}"
    # a line that starts with a number at the margin begins a line of the unwrapped output too
    starts = [line for line in lines if line[:1].isdigit()
              and not any(w.startswith(line.rstrip()) for w in wide.splitlines())]
    assert not starts, f"the tail of a line, starting with a number, at the margin: {starts[:3]}"


def every_command() -> list[str]:
    from zfslab.cli import build_parser
    parser = build_parser()
    return sorted(next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction").choices)


@pytest.mark.parametrize("columns", [80, 100, 120])
@pytest.mark.parametrize("command", every_command())
def test_help_fits_the_terminal_and_continues_each_example_with_a_backslash(command, columns):
    """issue 33 5.1: --help's examples wrapped without a '\\' (8 at 80 columns); copying the first line of
    bench's ran bench without --dry-run. And no word is cut: argparse's own wrapping of an option's
    help cut a layout longer than the column (`raidz2:6+s` / `pecial=...` in capacity's at 80)."""
    from zfslab.report.shell_text import COMMAND_LINE
    screen = in_terminal([command, "--help"], columns)
    lines = screen.splitlines()
    wide = [line for line in lines if cell_len(line) > columns]
    assert not wide, wide[0]
    split = split_words(screen, in_terminal([command, "--help"], WIDE))
    assert not split, f"words split by the width: {split[:5]}"
    for i, line in enumerate(lines):
        if COMMAND_LINE.match(line):
            block = [line]
            while block[-1].endswith(" \\"):
                block.append(lines[i + len(block)])
            assert block[-1].strip() and not block[-1].endswith("\\"), block
            words = shlex.split(" ".join(b.removesuffix(" \\") for b in block).split(": ", 1)[1])
            assert words[0] == "zfslab" and words[1] == command or command == "merge", block


DRY_RUNS = ["zfslab drill --sandbox {tmp}/drill --layout raidz2:6 --fill 0.2 --dry-run",
            "zfslab bench --sandbox {tmp}/bench --layouts mirror:2,raidz2:6 --dry-run"]


@pytest.mark.parametrize("columns", [80, 100, 120])
@pytest.mark.parametrize("dry_run", DRY_RUNS)
def test_a_dry_run_fits_the_terminal_and_its_commands_read_whole(dry_run, columns, tmp_path):
    """issue 33 5.2: drill --dry-run printed 29 over-wide lines at 80 columns. Comments wrap between
    words; a command continues with ' \\', and joined it is the command of the unwrapped run."""
    argv = shlex.split(dry_run.format(tmp=tmp_path))[1:]
    screen = in_terminal(argv, columns, expect_code=None)
    wide_screen = in_terminal(argv, WIDE, expect_code=None)
    lines = screen.splitlines()
    assert not [line for line in lines if cell_len(line) > columns]
    commands, wide_commands = _commands_of(screen), _commands_of(wide_screen)
    run_id = re.compile(r"=[0-9a-f]{16}\b")  # each run's own pool tag
    assert commands and [run_id.sub("=", c) for c in commands] == [run_id.sub("=", c) for c in wide_commands]
    assert not split_words(screen, wide_screen)


def _commands_of(screen: str) -> list[str]:
    """The zpool, zfs and fio commands a dry run prints, each joined from its ' \\' continuations."""
    joined, block = [], []
    for line in screen.splitlines():
        block.append(line.removesuffix(" \\").strip() if line.endswith(" \\") else line.strip())
        if not line.endswith(" \\"):
            joined.append(" ".join(block))
            block = []
    return [line for line in joined if line.startswith(("zpool ", "zfs ", "fio "))]


def test_an_error_in_a_terminal_wraps_between_words():
    """issue 33 5.2: a one-line error was left to the terminal, which cut it mid-word."""
    argv = ["plan", "8x12TB", "--columns", "layout,nosuch"]  # the error lists every column: 400 characters
    screen = in_terminal(argv, 80, expect_code=2)
    wide = in_terminal(argv, WIDE, expect_code=2)
    assert screen.startswith("zfslab: error: ") and len(screen.splitlines()) > 1
    assert max(cell_len(line) for line in screen.splitlines()) <= 80
    assert screen.split() == wide.split() and not split_words(screen, wide)  # the same words, none cut
