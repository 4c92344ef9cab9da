"""The set-up's tests spend their time waiting for apt and PyPI downloads, so their work starts in the
background once collection ends, while no guest is booting (two at a time, at nice 10; background.py),
and the tests themselves run after the host's other tests, by when it is mostly done; as the e2e
guests do (tests/conftest.py). A test module lists
its work in SCENARIOS, {test name as collected: function}; the test takes its result with
`background.outcome(request)`, which runs the function there and then when nothing started it. The
runs' times are printed at the end of the session (docs/install.md quotes them)."""

from __future__ import annotations

import pytest

from tests.setup import background


@pytest.hookimpl(tryfirst=True)  # before tests/conftest.py moves the e2e tests after these
def pytest_collection_modifyitems(config, items):
    setup = [item for item in items if item.get_closest_marker("setup")]
    if not setup or config.option.collectonly:
        return
    items[:] = [item for item in items if not item.get_closest_marker("setup")] + setup


def pytest_collection_finish(session):
    """The background work starts once every collection hook has run, so after tests/conftest.py
    has started the guests' boots, which it waits for (background.py)."""
    if session.config.option.collectonly:
        return
    for item in session.items:
        if item.get_closest_marker("setup"):
            background.start(item)


def pytest_sessionfinish(session):
    background.stop()


def pytest_terminal_summary(terminalreporter):
    if background.TIMINGS:
        terminalreporter.write_sep("-", "README's first line in fresh Debian chroots")
        for line in background.TIMINGS:
            terminalreporter.write_line(line)
