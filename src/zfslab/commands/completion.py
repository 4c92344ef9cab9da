"""`zfslab completion SHELL`: the bash, zsh or fish completion script, generated from the parser."""

from __future__ import annotations

import argparse
import sys

from zfslab.report.completion import SHELLS, completion_script

EXAMPLE = "zfslab completion bash"


def add_parser(sub) -> None:
    p = sub.add_parser("completion", epilog=f"example: {EXAMPLE}",
                       description="Print the shell completion script for bash, zsh or fish (scripts/install.sh "
                                   "installs all three; docs/install.md says where each goes).")
    p.add_argument("shell", choices=SHELLS, help="the shell: bash, zsh or fish")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from zfslab.commands._parser import build_parser  # every command's parser, for every option to complete
    sys.stdout.write(completion_script(build_parser(), args.shell))
    return 0
