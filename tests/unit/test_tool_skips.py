"""A test that needs a program skips without it, except under ZFSLAB_TEST_REQUIRE_TOOLS=1, where the
skip would hide a test that never ran: every such test goes through tests/conftest.py require_tool."""

import ast
import pathlib

import pytest

from tests.conftest import require_tool

TESTS = pathlib.Path(__file__).resolve().parents[1]


def test_a_missing_tool_skips_by_default(monkeypatch):
    monkeypatch.delenv("ZFSLAB_TEST_REQUIRE_TOOLS", raising=False)
    with pytest.raises(pytest.skip.Exception, match="zfslab-no-such-tool is not installed"):
        require_tool("zfslab-no-such-tool", "apt-get install it")


def test_a_missing_tool_fails_when_tools_are_required(monkeypatch):
    monkeypatch.setenv("ZFSLAB_TEST_REQUIRE_TOOLS", "1")
    with pytest.raises(pytest.fail.Exception, match="ZFSLAB_TEST_REQUIRE_TOOLS=1 but zfslab-no-such-tool"):
        require_tool("zfslab-no-such-tool", "apt-get install it")


def _skips_on_which(tree: ast.AST) -> list[int]:
    """Lines of a skip (pytest.skip, skipif) decided by shutil.which or a runner's which()."""
    lines = []
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and any(isinstance(n, ast.Attribute) and n.attr == "which" for n in ast.walk(node.test)):
            lines += [n.lineno for n in ast.walk(node) if isinstance(n, ast.Attribute) and n.attr == "skip"]
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "skipif":
            if any(isinstance(n, ast.Attribute) and n.attr == "which" for n in ast.walk(node)):
                lines.append(node.lineno)
    return lines


def test_no_host_test_skips_on_a_missing_tool_by_itself():
    found = [f"{path.relative_to(TESTS)}:{line}" for folder in ("unit", "property")
             for path in sorted((TESTS / folder).rglob("*.py")) for line in _skips_on_which(ast.parse(path.read_text()))]
    assert not found, f"skip through tests/conftest.py require_tool (needs_fio, needs_bonnie ...): {found}"
