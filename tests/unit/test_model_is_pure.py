"""The model only computes: no processes, files, clocks or databases (docs/design.md#code-map)."""

import ast
import pathlib
import re

import pytest

import zfslab.model
from tests.conftest import imported_modules

FORBIDDEN = {"subprocess", "os", "sqlite3", "time", "shutil", "socket", "random"}


OUTER = ("zfslab.system", "zfslab.store", "zfslab.report", "zfslab.cli", "zfslab.commands")


def forbidden_imports(tree: ast.AST) -> set[str]:
    """What a model module may not import: I/O modules, and any package that points outward."""
    return {n for n in imported_modules(tree) if n.split(".")[0] in FORBIDDEN or n.startswith(OUTER)}


@pytest.mark.parametrize("source", ["import subprocess", "from os import path", "import zfslab.cli",
                                    "from zfslab.commands._common import PARAM_FLAGS", "import zfslab.commands.plan",
                                    "from zfslab.store.readback import read_results"])
def test_the_check_refuses_each_kind_of_outward_import(source):
    assert forbidden_imports(ast.parse(source))


def test_model_imports_no_io_modules():
    root = pathlib.Path(zfslab.model.__file__).parent
    for path in root.rglob("*.py"):
        assert not forbidden_imports(ast.parse(path.read_text())), path

def _docstrings(tree: ast.AST) -> set[int]:
    return {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}


def test_model_messages_name_no_command_line_flag():
    """The model says `allow_unused`, the command layer --allow-unused (errors.ZfslabError.worded):
    a library caller has no flags to pass."""
    root = pathlib.Path(zfslab.model.__file__).parent
    flagged = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text())
        docs = _docstrings(tree)
        flagged += [f"{path.name}:{node.lineno}: {node.value.strip()[:60]}" for node in ast.walk(tree)
                    if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
                    and re.search(r"(?<![\w-])--[a-z]", node.value)]
    assert not flagged, flagged
