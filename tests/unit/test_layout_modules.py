"""model/layouts.py holds the layout values only; the grammar, zpool's vdev list and zpool's syntax
have modules of their own (issue 24). The names that moved are re-exported from layouts.py only
for files the disk-gate work is changing; the list shrinks as they are pointed at the new modules."""

from __future__ import annotations

import ast
import pathlib

import zfslab
from zfslab.model import layouts

SRC = pathlib.Path(zfslab.__file__).parent
STILL_FROM_LAYOUTS = {  # issue 24 part 2 updates these imports
    "commands/bench.py": {"parse_layout"},
    "commands/drill.py": {"check_pool_name", "parse_layout"},
    "system/bench.py": {"replication_mismatch", "zpool_create_argv"},
    "system/drill.py": {"zpool_create_argv"},
}


def _moved_names_imported_from_layouts() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "zfslab.model.layouts":
                names = {a.name for a in node.names} & set(layouts._MOVED)
                if names:
                    found.setdefault(str(path.relative_to(SRC)), set()).update(names)
    return found


def test_only_the_listed_files_import_moved_names_from_layouts_and_the_list_is_current():
    assert _moved_names_imported_from_layouts() == STILL_FROM_LAYOUTS


def test_the_re_exports_are_the_moved_functions_themselves():
    from zfslab.model.layout_grammar import parse_layout
    from zfslab.model.zpool_syntax import zpool_create_argv

    assert layouts.parse_layout is parse_layout and layouts.zpool_create_argv is zpool_create_argv
    assert set(layouts._MOVED) == set().union(*STILL_FROM_LAYOUTS.values())


def test_layouts_defines_values_not_parsers():
    tree = ast.parse(pathlib.Path(layouts.__file__).read_text())
    functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert not {f for f in functions if f.startswith(("parse", "zpool", "check_"))}
