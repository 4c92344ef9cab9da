"""docs/cli.md is what `--help` prints now: scripts/cli_reference.py writes it, this test regenerates it."""

import importlib.util
import os

from tests.conftest import REPO
from zfslab.cli import build_parser

STALE = "docs/cli.md is stale: run python3 scripts/cli_reference.py"


def _script():
    path = os.path.join(REPO, "scripts", "cli_reference.py")
    spec = importlib.util.spec_from_file_location("cli_reference", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_docs_cli_md_is_fresh():
    with open(os.path.join(REPO, "docs", "cli.md"), encoding="utf-8") as f:
        written = f.read()
    assert written == _script().render(), STALE


def test_every_command_has_its_section_and_usage():
    text = _script().render()
    names = [name for name, _ in _script().subcommands(build_parser())]
    assert "plan" in names and "bench" in names  # the parser walk finds the commands
    for name in names:
        assert f"\n## zfslab {name}\n" in text, name
        assert f"\nusage: zfslab {name} " in text, name
