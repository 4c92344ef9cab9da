"""zfslab's argument parser: the top level (`--version`, `--debug`), each command's from its module
(commands/__init__.py's registry), one-line usage errors and the help's formatting. cli.py parses
with it; `zfslab completion` and `zfslab man` generate their text from it."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from zfslab import __version__
from zfslab.errors import UsageError, exit_codes_text


class HelpFormatter(argparse.HelpFormatter):
    """argparse's wrapping, one line of the text at a time: the exit code table keeps a row a line,
    and an example command is continued with ` \\` (report/shell_text.py)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        import textwrap

        from zfslab.report.shell_text import COMMAND_LINE, command_lines
        out = []
        for line in text.split("\n"):
            example = COMMAND_LINE.fullmatch(line)
            if example:  # a command to copy: one line, or continued with " \\", never cut bare
                out += command_lines(example["command"], width, lead=indent + example["lead"], indent=indent + "    ")
                continue
            lead = indent + " " * (len(line) - len(line.lstrip(" ")))
            hang = indent + " " * 7 if line.startswith("  ") else lead   # a table row: under its text
            out.append(textwrap.fill(" ".join(line.split()), width, initial_indent=lead, subsequent_indent=hang))
        return "\n".join(out)

    def _split_lines(self, text: str, width: int) -> list[str]:
        """An option's help, wrapped between words only: argparse's default cuts a word longer than
        the column (a layout such as raidz2:6+special=... came out as `raidz2:6+s` / `pecial=...`),
        and a cut word copied from the terminal is a wrong one."""
        import textwrap
        return textwrap.wrap(" ".join(text.split()), width, break_long_words=False, break_on_hyphens=False)


class Parser(argparse.ArgumentParser):
    """argparse that reports a usage mistake in one line, with the way to help."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{message} (see {self.prog} --help)")


EXIT_CODES_POINTER = "exit codes: the table at the end of zfslab --help"


class _Commands:
    """The `sub` a command module's add_parser(sub) declares its parser on: it adds the line
    `zfslab --help` shows from the registry, so the module need not repeat it."""

    def __init__(self, sub, help: str) -> None:
        self._sub, self._help = sub, help

    def add_parser(self, name: str, **kwargs):
        kwargs.setdefault("help", self._help)
        return self._sub.add_parser(name, **kwargs)


class _Installed(argparse.Action):
    """`zfslab --installed`: print what system/installed.py finds, then exit 0 (as --version does)."""

    def __call__(self, parser, namespace, values, option_string=None):
        from zfslab.system.installed import installed_json  # deliberate lazy loading: only this flag reads files
        print(installed_json())
        parser.exit(0)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command (for docs and tests) or, given the command a command line
    runs, of that one alone: the others are listed from the registry (name and help) without
    importing their modules. "" loads none (zfslab --help, --version, an unknown command)."""
    from zfslab.commands import COMMANDS

    parser = Parser(prog="zfslab", description="Compare ZFS pool layouts on speed, space and safety.",
                     epilog=exit_codes_text())
    parser.add_argument("--version", action="version", version=f"zfslab {__version__}")
    # for fleet preflight, not for people: the version and a digest of the installed package, as JSON
    parser.add_argument("--installed", action=_Installed, nargs=0, help=argparse.SUPPRESS)
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    for entry in COMMANDS:
        if command is None or command == entry.name:
            entry.load().add_parser(_Commands(sub, entry.help))
            command_parser = sub.choices[entry.name]
            # the full table once, in zfslab --help; each command points to it
            command_parser.epilog = "\n".join(filter(None, (command_parser.epilog, EXIT_CODES_POINTER)))
        else:
            sub.add_parser(entry.name, help=entry.help, add_help=False)
    return parser


def command_of(args: Sequence[str]) -> str:
    """The command a command line names (its first word that is no option), or "" for none."""
    from zfslab.commands import BY_NAME
    for arg in args:
        if arg == "--":
            continue
        if not arg.startswith("-"):
            return arg if arg in BY_NAME else ""
    return ""
