"""One table of exit codes (errors.EXIT_CODES): every error class returns a code it lists, and
every command's --help and docs/cli.md show it (issue 26: they were documented nowhere)."""

import importlib
import os
import pkgutil

import zfslab
from tests.conftest import REPO
from zfslab.cli import build_parser
from zfslab.errors import EXIT_CODES, ZfslabError


def _subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _subclasses(sub)


def test_every_error_class_returns_a_listed_code():
    for module in pkgutil.walk_packages(zfslab.__path__, "zfslab."):
        if not module.name.endswith("__main__"):
            importlib.import_module(module.name)
    codes = {code for code, _ in EXIT_CODES}
    classes = list(_subclasses(ZfslabError))
    assert len(classes) > 10
    for cls in classes:
        assert cls.exit_code in codes, (cls.__name__, cls.exit_code)
    # and every listed code but 0, 1 and 130 (cli.py's own) is some error's
    assert {c.exit_code for c in classes} | {0, 1, 130} == codes


def test_zfslab_help_holds_the_table_and_every_command_points_to_it(capsys):
    """The table once, in zfslab --help; each command's help ends with one line pointing to it
    (issue 33: 16 lines repeated in every command's help made plan --help 152 lines)."""
    from zfslab.cli import EXIT_CODES_POINTER
    parser = build_parser()
    top = parser.format_help()
    for code, meaning in EXIT_CODES:
        assert f" {code} {meaning.split()[0]}" in top, code
    action = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    for name, sub in action.choices.items():
        text = sub.format_help()
        assert text.rstrip().endswith(EXIT_CODES_POINTER), name
        assert EXIT_CODES[1][1] not in text, name


def test_the_cli_reference_shows_the_table():
    with open(os.path.join(REPO, "docs", "cli.md"), encoding="utf-8") as f:
        text = f.read()
    assert text.count("exit codes:") == 1 + text.count("\n## zfslab ")   # zfslab --help and each command's pointer
    for code, meaning in EXIT_CODES:
        assert text.count(f" {code} {' '.join(meaning.split()[:2])}") == 1, code
