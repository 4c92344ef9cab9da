"""The command layer only parses, calls the library, renders and returns an exit code (issue 24):
no module of commands/ starts a program, opens a database by hand or holds a function over 60
lines. What still offends is listed below by name, and the list may only shrink: an entry that no
longer offends fails the test until it is removed. (Issue 24 emptied both lists.)"""

from __future__ import annotations

import ast
import pathlib

import zfslab.commands
from tests.conftest import imported_modules

ROOT = pathlib.Path(zfslab.commands.__file__).parent
FORBIDDEN_MODULES = ("subprocess", "sqlite3", "zfslab.store.schema")  # schema: connections and SQL
MAX_FUNCTION_LINES = 60

ALLOWED: set[str] = set()


def offences(path: pathlib.Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found = {f"{path.name}: imports {m}" for n in imported_modules(tree) for m in FORBIDDEN_MODULES
             if n == m or n.startswith(m + ".")}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES:
            found.add(f"{path.name}: {node.name} is over {MAX_FUNCTION_LINES} lines")
    return found


def _all_offences() -> set[str]:
    return {o for path in sorted(ROOT.glob("*.py")) for o in offences(path)}


def test_no_command_starts_programs_opens_databases_or_runs_long():
    assert _all_offences() - ALLOWED == set()


def test_the_allow_list_names_only_what_still_offends():
    assert ALLOWED - _all_offences() == set(), "remove the entries that no longer offend"


def test_the_walk_sees_each_kind_of_offence(tmp_path):
    bad = tmp_path / "bad.py"
    body = "\n".join(f"    x = {i}" for i in range(MAX_FUNCTION_LINES))
    bad.write_text(f"import subprocess\nfrom sqlite3 import connect\nfrom zfslab.store.schema import open_readonly\n"
                   f"def long():\n{body}\n")
    assert offences(bad) == {"bad.py: imports subprocess", "bad.py: imports sqlite3",
                             "bad.py: imports zfslab.store.schema", f"bad.py: long is over {MAX_FUNCTION_LINES} lines"}


SHARED_OPTIONS = ("--ashift",)  # declared once, in _common.py (type, range, default)
ALLOWED_DECLARATIONS: set[str] = set()


def _declarations() -> set[str]:
    found = set()
    for path in sorted(ROOT.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"
                    and node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value in SHARED_OPTIONS):
                found.add(f"{path.name} declares {node.args[0].value}")
    return found


def test_each_shared_option_is_declared_once():
    assert _declarations() - ALLOWED_DECLARATIONS == {f"_common.py declares {o}" for o in SHARED_OPTIONS}
    assert ALLOWED_DECLARATIONS <= _declarations(), "remove the entries that no longer declare it"
