"""model/layouts.py holds the layout values only; the grammar, zpool's vdev list and zpool's syntax
have modules of their own (issue 24); nothing gets the moved names through layouts.py any more."""

from __future__ import annotations

import ast
import pathlib

import zfslab
from zfslab.model import layouts

SRC = pathlib.Path(zfslab.__file__).parent
MOVED = {"parse_layout", "check_pool_name", "replication_mismatch", "zpool_create_argv"}  # to their own modules


def test_nothing_imports_a_moved_name_from_layouts_and_it_has_none_to_give():
    found = set()
    for path in [*SRC.rglob("*.py"), *(SRC.parents[1] / "tests").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "zfslab.model.layouts":
                found |= {f"{path}: {a.name}" for a in node.names if a.name in MOVED}
    assert found == set()
    assert not hasattr(layouts, "__getattr__") and not any(hasattr(layouts, name) for name in MOVED)


def test_layouts_defines_values_not_parsers():
    tree = ast.parse(pathlib.Path(layouts.__file__).read_text())
    functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert not {f for f in functions if f.startswith(("parse", "zpool", "check_"))}
