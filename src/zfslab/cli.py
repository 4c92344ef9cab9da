"""Command line: parse, dispatch to the command's `run`, turn errors into one line and an exit
code. No logic of its own: each command is a module of zfslab.commands."""

from __future__ import annotations

import argparse
import re
import signal
import sys
from collections.abc import Sequence

from zfslab import __version__
from zfslab.errors import (EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK, Interrupted, UsageError, ZfslabError,
                           exit_codes_text, one_line)


class _HelpFormatter(argparse.HelpFormatter):
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


class _Parser(argparse.ArgumentParser):
    """argparse that reports a usage mistake in one line, with the way to help."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
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

    parser = _Parser(prog="zfslab", description="Compare ZFS pool layouts on speed, space and safety.",
                     epilog=exit_codes_text())
    parser.add_argument("--version", action="version", version=f"zfslab {__version__}")
    # for fleet preflight, not for people: the version and a digest of the installed package, as JSON
    parser.add_argument("--installed", action=_Installed, nargs=0, help=argparse.SUPPRESS)
    parser.add_argument("--debug", action="store_true", help="show tracebacks")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
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


_LAYOUT_KIND = re.compile(r"(mirror|raidz[123]?|draid[123]?|stripe|disk)", re.IGNORECASE)


def _joined_hint(command: str, args: Sequence[str]) -> str:
    """What the words after the command most likely meant as one (issue 33): 'plan 24 x 4TB' is
    24x4TB, 'capacity raidz2 6' is raidz2:6; "" when no joining reads as either."""
    words = list(args[args.index(command) + 1:]) if command in args else []
    words = words[:next((i for i, w in enumerate(words) if w.startswith("-")), len(words))]
    if len(words) < 2:
        return ""
    if re.fullmatch(r"[0-9]+[xX×][0-9.]+[A-Za-z]*", "".join(words)):
        return f": write the disks as one word, zfslab {command} {''.join(words)}"
    if len(words) == 2 and _LAYOUT_KIND.fullmatch(words[0]) and words[1].isdigit():
        return f": write the layout as one word, zfslab {command} {words[0]}:{words[1]}"
    return ""


def _sigterm_interrupts():
    """SIGTERM (systemd, kill, a CI timeout) ends a command as Ctrl-C does: its finally blocks
    destroy what it made and every finished measurement is already saved."""
    def interrupt(signum, frame):
        raise KeyboardInterrupt
    try:
        return signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread: the caller keeps its own handling
        return None


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args_list
    if debug:
        args_list = [a for a in args_list if a != "--debug"]
    previous = _sigterm_interrupts()
    try:
        command = command_of(args_list)
        parser = build_parser(command)
        args, extra = parser.parse_known_args(args_list)
        if extra:
            raise UsageError(f"unrecognized arguments: {' '.join(extra)}{_joined_hint(command, args_list)}"
                             f" (see zfslab {command or ''} --help)".replace("  ", " "))
        if args.command is None:
            parser.print_help()
            return EXIT_OK
        return args.func(args)
    except ZfslabError as e:
        if debug:
            raise
        from zfslab.commands._common import PARAM_FLAGS
        text = e.worded(PARAM_FLAGS)  # the model's names for its settings, as the flags that set them
        # a refusal lists one disk a line; every other error is one line whatever its values hold
        lines = text.split("\n") if getattr(e, "one_line_each", False) else [text]
        print(_for_terminal("zfslab: error: " + "\n".join(one_line(line) for line in lines)), file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt as e:
        kept = e.kept if isinstance(e, Interrupted) else ("every finished measurement is saved: run the same "
                                                          "command again to continue")
        print(f"zfslab: interrupted; {one_line(kept)}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader closed the pipe (zfslab plan | head): end quietly
        _stdout_to_devnull()
        return EXIT_OK
    except Exception as e:  # noqa: BLE001 - the last line of defence for a one-line error
        if debug:
            raise
        print(f"zfslab: internal error: {type(e).__name__}: {one_line(str(e), 500)} (run with --debug for the traceback)",
              file=sys.stderr)
        return EXIT_INTERNAL
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _for_terminal(message: str) -> str:
    """An error's lines wrapped between words to a terminal's width (the terminal itself would cut
    them mid-word), continuations indented; in a pipe or a log, each line whole, for grep."""
    if not sys.stderr.isatty():
        return message
    import shutil
    import textwrap
    width = shutil.get_terminal_size().columns
    return "\n".join(part for line in message.split("\n") for part in
                     textwrap.wrap(line, width, subsequent_indent="  ", break_long_words=False,
                                   break_on_hyphens=False) or [""])


def _stdout_to_devnull() -> None:
    """What is left in stdout's buffer goes nowhere: flushing it at exit would raise again
    (the way Python's signal documentation gives for a closed pipe)."""
    import os
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is no file (a test's capture): nothing to flush
        pass


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":  # pragma: no cover
    entry()
