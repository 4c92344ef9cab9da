"""Command line: parse, dispatch to the command's `run`, turn errors into one line and an exit
code. No logic of its own: each command is a module of zfslab.commands."""

from __future__ import annotations

import re
import signal
import sys
from collections.abc import Sequence

# the parser is the command layer's (commands/_parser.py), so that `zfslab completion` and `zfslab man`
# build it without importing cli.py; its names stay importable from here for tests and scripts
from zfslab.commands._parser import EXIT_CODES_POINTER, Parser as _Parser, build_parser, command_of  # noqa: F401
from zfslab.errors import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_OK, Interrupted, UsageError, ZfslabError, one_line


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
        if _is_probe(args_list):
            return _probe(args_list)
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


def _is_probe(args: list[str]) -> bool:
    """`bench --probe-detached PREFIX --db DB --origin HOST` exactly as system/fleet_detach.py runs it
    on each host at every look of --status and --attach: answered without bench's parser, whose
    imports double its CPU (0.17 s against 0.08 s), which a host pays at each look. Any other
    spelling goes through the parser, to the same answer."""
    return (len(args) == 7 and args[:2] == ["bench", "--probe-detached"] and args[3] == "--db"
            and args[5] == "--origin" and not any(a.startswith("-") for a in args[2::2]))


def _probe(args: list[str]) -> int:
    import json

    from zfslab.system.detached_probe import probe
    print(json.dumps(probe(args[2], args[4], args[6])))
    return EXIT_OK


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
