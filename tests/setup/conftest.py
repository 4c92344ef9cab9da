"""The fresh-Debian runs report what they cost at the end of the session (docs/install.md quotes them)."""

from __future__ import annotations

TIMINGS: list[str] = []


def pytest_terminal_summary(terminalreporter):
    if TIMINGS:
        terminalreporter.write_sep("-", "README's first line in fresh Debian chroots")
        for line in TIMINGS:
            terminalreporter.write_line(line)
