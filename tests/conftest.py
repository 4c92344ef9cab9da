"""Shared fixtures: a CLI runner that captures stdout, stderr and the exit code."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass

import pytest
from hypothesis import settings

from zfslab.cli import main

# CI is a gate, not a search: the same examples every run (derived from each test's name), so a run is
# green or red for the code, not the draw; dev runs and benchmarks/fuzz_cli.py keep exploring
settings.register_profile("ci", max_examples=300, deadline=None, derandomize=True, print_blob=True)
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


def require_tool(program: str, install: str) -> None:
    """Skip the test when `program` is not installed; fail it instead under ZFSLAB_TEST_REQUIRE_TOOLS=1
    (the bench host and CI, where a skip would hide a test that never ran)."""
    if shutil.which(program) is not None:
        return
    if os.environ.get("ZFSLAB_TEST_REQUIRE_TOOLS") == "1":
        pytest.fail(f"ZFSLAB_TEST_REQUIRE_TOOLS=1 but {program} is not installed ({install})")
    pytest.skip(f"{program} is not installed ({install})")


@pytest.fixture
def needs_fio() -> None:
    require_tool("fio", "apt-get install fio")


@pytest.fixture
def needs_bonnie() -> None:
    require_tool("bonnie++", "apt-get install bonnie++")


@pytest.fixture
def needs_sqlite3() -> None:
    require_tool("sqlite3", "apt-get install sqlite3")


@pytest.hookimpl(trylast=True)  # after -k/-m deselection: guests boot only for e2e tests that will run
def pytest_collection_modifyitems(config, items):
    """The e2e guest tests run last, and their guests boot as soon as collection ends: each TCG
    guest keeps about one core busy for many minutes, and the host's own tests run meanwhile.
    Only the guests the selected tests need: the suites for test_guest.py, the fleet for test_fleet.py."""
    e2e = [item for item in items if item.get_closest_marker("e2e")]
    if not e2e or config.option.collectonly:
        return
    from tests.e2e.test_guest import FLEET_FILE, FLEET_INSIDE, guest_can_run, start_guest_suites
    files = {item.path.name for item in e2e}
    fleet_tests: tuple[str, ...] = ()
    if "test_fleet_suite.py" in files and os.environ.get(FLEET_INSIDE) != "1":
        # the fleet's tests in a pytest of their own, in the background (tests/e2e/test_guest.py,
        # FLEET_INSIDE): those selected here, or the whole file when only their report was
        fleet = [item for item in e2e if item.path.name == "test_fleet.py"]
        fleet_tests = tuple(item.nodeid for item in fleet) or (FLEET_FILE,)
        if fleet:
            config.hook.pytest_deselected(items=fleet)
            e2e = [item for item in e2e if item.path.name != "test_fleet.py"]
        files.discard("test_fleet.py")
    items[:] = [item for item in items if not item.get_closest_marker("e2e")] + e2e
    if guest_can_run():
        start_guest_suites(suites="test_guest.py" in files, fleet="test_fleet.py" in files,
                           fleet_tests=fleet_tests, rootdir=config.rootpath)


def pytest_sessionfinish(session):
    """A fleet's pytest still running in the background (an interrupted session) is stopped."""
    import sys
    module = sys.modules.get("tests.e2e.test_guest") or sys.modules.get("e2e.test_guest")
    if module is not None:
        module.stop_fleet_suite()


def pytest_terminal_summary(terminalreporter):
    """The guest image a boot thread built during the session, and how long it took: scripts/test.sh
    no longer builds it first, so its timing line cannot say it (docs/test-guest.md#time-in-ci);
    then what the boot threads noted (a boot once more, a fleet guest's ssh tries)."""
    import sys
    guest = sys.modules.get("tests.e2e.guest.guest") or sys.modules.get("e2e.guest.guest")
    for image, seconds in (getattr(guest, "BUILT_SECONDS", None) or {}).items():
        terminalreporter.write_line(f"guest image {image}: built in {seconds:.0f} s, beside the host's tests")
    for line in getattr(guest, "NOTES", ()):  # the boot threads' own lines (guest.note), kept till now
        terminalreporter.write_line(line)


def imported_modules(tree) -> list[str]:
    """Every module an ast imports (`import a.b` and `from a.b import c` both give 'a.b'): the
    layering tests (test_model_is_pure, test_command_layer) read code, not run it."""
    import ast
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.append(node.module)
    return names


@pytest.fixture
def default_sigint():
    """SIGINT raising KeyboardInterrupt, as in a shell's foreground: a pytest started in the
    background by a non-interactive shell inherits SIGINT ignored (bash ignores it for async
    commands without job control), and Python then keeps it ignored, so a Ctrl-C test saw none."""
    import signal
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
