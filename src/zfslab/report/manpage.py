"""zfslab(1), the manual page, generated from the parser (roff, man(7) macros): the description,
every command with its usage, options and example, and the exit codes. The text is the --help
text; nothing is written twice. `zfslab man > zfslab.1`; docs/install.md says where it goes."""

from __future__ import annotations

import argparse

from zfslab.report.completion import _subcommands


def _roff(text: str) -> str:
    """Plain text as roff: backslashes and hyphens escaped, no line starting with a control character."""
    out = []
    for line in text.replace("\\", "\\e").replace("-", "\\-").split("\n"):
        out.append("\\&" + line if line.startswith((".", "'")) else line)
    return "\n".join(out)


def _usage(parser: argparse.ArgumentParser) -> str:
    formatter = argparse.HelpFormatter(parser.prog, width=72)  # man indents it 7 columns: 80 in all
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups, prefix="")
    return formatter.format_help().strip()


def _options(parser: argparse.ArgumentParser) -> list[str]:
    formatter = parser._get_formatter()
    lines = []
    for action in parser._actions:
        if action.help == argparse.SUPPRESS or isinstance(action, argparse._SubParsersAction):
            continue
        if action.option_strings:
            metavar = "" if action.nargs == 0 else " " + formatter._format_args(action, action.dest.upper())
            label = ", ".join(f"\\fB{_roff(o)}\\fR" for o in action.option_strings) + (
                f"\\fI{_roff(metavar)}\\fR" if metavar else "")
        else:
            label = f"\\fI{_roff(formatter._metavar_formatter(action, action.dest)(1)[0])}\\fR"
        help_text = formatter._expand_help(action) if action.help else ""
        lines += [".TP", label, _roff(" ".join(help_text.split()))]
    return lines


def _paragraphs(text: str | None) -> list[str]:
    """An epilog or description: one line of it a line, as --help shows it."""
    lines = []
    for line in (text or "").strip().split("\n"):
        lines += [".br", _roff(line.strip())] if line.strip() else [".PP"]
    return lines[1:] if lines[:1] == [".br"] else lines


def manpage(parser: argparse.ArgumentParser, version: str) -> str:
    prog = parser.prog
    out = [f'.\\" {prog}(1), generated from its parser by `{prog} man`',
           f'.TH {prog.upper()} 1 "" "{prog} {version}" "User Commands"',
           ".SH NAME", f"{prog} \\- {_roff(parser.description or '')}",
           ".SH SYNOPSIS", ".nf", _roff(_usage(parser)), ".fi",
           ".SH OPTIONS", *_options(parser), ".SH COMMANDS"]
    subs = _subcommands(parser)
    for name, help_text, _ in subs:
        out += [".TP", f"\\fB{_roff(name)}\\fR", _roff(help_text)]
    for name, help_text, sub in subs:
        out += [f".SH {prog.upper()} {_roff(name.upper())}", ".nf", _roff(_usage(sub)), ".fi", ".PP",
                _roff(" ".join((sub.description or help_text).split())), *_options(sub)]
        if sub.epilog:
            out += [".PP", *_paragraphs(sub.epilog)]
    if parser.epilog:
        out += [".SH NOTES", *_paragraphs(parser.epilog)]
    return "\n".join(out) + "\n"
