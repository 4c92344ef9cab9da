"""Shared fixtures: a CLI runner that captures stdout, stderr and the exit code."""

from __future__ import annotations

import os
from dataclasses import dataclass

import pytest
from hypothesis import settings

from zfslab.cli import main

settings.register_profile("ci", max_examples=300, deadline=None)
settings.register_profile("dev", max_examples=60, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(REPO, "tests", "data")


@dataclass
class Result:
    exit_code: int
    stdout: str
    stderr: str


@pytest.fixture
def run_cli(capsys):
    def run(*args: str) -> Result:
        code = main(list(args))
        out, err = capsys.readouterr()
        return Result(code, out, err)
    return run
