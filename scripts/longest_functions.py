"""Print the longest functions in a source tree (lines from `def` to the last line of the body).

    python3 scripts/longest_functions.py [--top N] [PATH ...]   (default: src/zfslab, top 15)

Used to measure issue 24's "no command function over ~40 lines" before and after a change.
"""

from __future__ import annotations

import argparse
import ast
from pathlib import Path


def function_lengths(path: Path) -> list[tuple[int, str]]:
    """(lines, "file:qualified.name") for every function and method in `path`."""
    tree = ast.parse(path.read_text(), filename=str(path))
    out: list[tuple[int, str]] = []

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                out.append((child.end_lineno - child.lineno + 1, f"{path}:{name}"))
                walk(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                walk(child, f"{prefix}{child.name}.")
    walk(tree, "")
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("paths", nargs="*", default=["src/zfslab"])
    p.add_argument("--top", type=int, default=15)
    args = p.parse_args()
    rows = [r for root in args.paths
            for f in sorted(Path(root).rglob("*.py") if Path(root).is_dir() else [Path(root)])
            for r in function_lengths(f)]
    for lines, name in sorted(rows, key=lambda r: (-r[0], r[1]))[:args.top]:
        print(f"{lines:4d}  {name}")


if __name__ == "__main__":
    main()
