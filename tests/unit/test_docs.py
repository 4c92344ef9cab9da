"""The README's examples are real: each `$ zfslab ...` block prints exactly what is shown."""

import os
import re
import shlex

import pytest

from tests.conftest import REPO

README = open(os.path.join(REPO, "README.md")).read()
BLOCKS = re.findall(r"```console\n\$ (zfslab [^\n]+)\n(.*?)```", README, re.S)


def test_readme_has_examples():
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize("command,expected", BLOCKS, ids=[b[0] for b in BLOCKS])
def test_readme_example_output(run_cli, command, expected):
    r = run_cli(*shlex.split(command)[1:])
    assert r.exit_code == 0
    got = [line.rstrip() for line in r.stdout.splitlines()]
    assert got == [line.rstrip() for line in expected.splitlines()]


def test_readme_has_exactly_the_two_setup_commands():
    setup = README.split("## Set-up: two commands", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [line.split("#")[0].strip() for line in setup.splitlines() if line.strip()]
    assert commands == ["sh scripts/install.sh plan 24x4TB", "bash scripts/test.sh"]
    ci = open(os.path.join(REPO, ".ci", "run")).read()
    assert "bash scripts/test.sh" in ci
