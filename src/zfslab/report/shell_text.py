"""A shell command as a terminal shows it: on one line, or cut between words with each line but
the last ending in ` \\`, so that what a user copies (the first line, or all of them) is a whole
command or one the shell waits to see finished (issue 33: bench's --help example, cut at 100
columns without a `\\`, ran bench without its --dry-run). Standard library only: cli.py's
--help formatter uses it before any command is imported."""

from __future__ import annotations

import re
import shlex

CONTINUATION = " \\"
# a line of help text that is a command to copy: "example: zfslab plan 24x4TB"
COMMAND_LINE = re.compile(r"(?P<lead>(?:example|then|or|fleet|run): )(?P<command>zfslab .*)")


def _units(words: list[str]) -> list[str]:
    """The command's words, an option glued to its value ('--layouts mirror:2'): a line is never
    cut between the two."""
    units: list[str] = []
    for word in words:
        if units and units[-1].startswith("-") and " " not in units[-1] and not word.startswith("-") \
                and "=" not in units[-1]:
            units[-1] += " " + word
        else:
            units.append(word)
    return units


def command_lines(command: str, width: int | None, *, lead: str = "", indent: str = "    ") -> list[str]:
    """`lead` + the command in lines of at most `width` columns (None: one line), continued with
    ` \\`; the continuations indented by `indent`. A word longer than a line stays whole."""
    words = [shlex.quote(w) for w in shlex.split(command)]
    one = lead + " ".join(words)
    if width is None or len(one) <= width:
        return [one]
    lines: list[str] = []
    line = lead
    for unit in _units(words):
        start = line == lead or line == indent
        candidate = line + ("" if start else " ") + unit
        if start or len(candidate) + len(CONTINUATION) <= width:
            line = candidate
            continue
        lines.append(line + CONTINUATION)
        line = indent + unit
    lines.append(line)
    return lines


def terminal_columns() -> int | None:
    """The width to wrap a script's lines to: the terminal's, or $COLUMNS in a pipe; None (no
    wrapping, a line a step for a program to read) in a pipe without $COLUMNS."""
    import os
    import shutil
    import sys
    if sys.stdout.isatty() or os.environ.get("COLUMNS", "").isdigit():
        return shutil.get_terminal_size().columns
    return None


def script_lines(lines: list[str], width: int | None) -> list[str]:
    """A dry run's steps for `width` columns: a comment (`# ...`) wrapped between words, its
    continuations `#   `; a command continued with ` \\`. None: the lines as they are."""
    import textwrap
    if width is None:
        return list(lines)
    out: list[str] = []
    for line in lines:
        if len(line) <= width or not line.strip():
            out.append(line)
        elif line.lstrip().startswith("#"):
            lead = line[: len(line) - len(line.lstrip())]
            out += textwrap.wrap(line.strip(), width, initial_indent=lead, subsequent_indent=lead + "#   ",
                                 break_long_words=False, break_on_hyphens=False)
        else:
            lead = line[: len(line) - len(line.lstrip())]
            try:
                out += command_lines(line.strip(), width, lead=lead, indent=lead + "    ")
            except ValueError:  # no shell words (an unclosed quote): wrapped as prose
                out += textwrap.wrap(line, width, subsequent_indent=lead + "    ", break_long_words=False)
    return out
