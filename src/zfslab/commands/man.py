"""`zfslab man`: the manual page zfslab(1) in roff, generated from the parser."""

from __future__ import annotations

import argparse
import sys

from zfslab import __version__
from zfslab.report.manpage import manpage

EXAMPLE = "zfslab man"


def add_parser(sub) -> None:
    p = sub.add_parser("man", epilog=f"example: {EXAMPLE}",
                       description="Print the manual page zfslab(1) in roff, made from every command's --help: "
                                   "`zfslab man > zfslab.1; man -l zfslab.1` reads it (scripts/install.sh installs "
                                   "it; docs/install.md says where).")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from zfslab.commands._parser import build_parser  # every command's parser: the page documents them all
    sys.stdout.write(manpage(build_parser(), __version__))
    return 0
