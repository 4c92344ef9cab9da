"""The model only computes: no processes, files, clocks or databases (docs/design.md#code-map)."""

import ast
import pathlib

import zfslab.model

FORBIDDEN = {"subprocess", "os", "sqlite3", "time", "shutil", "socket", "random"}


def test_model_imports_no_io_modules():
    root = pathlib.Path(zfslab.model.__file__).parent
    for path in root.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module.split(".")[0]]
                assert not node.module.startswith(("zfslab.system", "zfslab.store", "zfslab.report", "zfslab.cli")), path
            assert not set(names) & FORBIDDEN, f"{path.name} imports {set(names) & FORBIDDEN}"
