"""The fleet's tests (test_fleet.py), run by a pytest of their own in the background from the
moment the guest image is built, and reported here: in a full session they no longer wait for every
host and set-up test to end (tests/e2e/test_guest.py, FLEET_INSIDE; docs/test-guest.md#time-in-ci).
`pytest tests/e2e/test_fleet.py` alone still runs them in this process."""

from __future__ import annotations

import re

import pytest

from tests.e2e.test_guest import FLEET_FILE, _need_guest, junit_problems, start_guest_suites

pytestmark = pytest.mark.e2e

MIN_TESTS = 8  # the file's own count when it runs whole: a collection that lost tests fails


def test_the_fleet_tests_in_their_own_pytest(record_property):
    _need_guest()
    suite = start_guest_suites(suites=False, fleet_tests=(FLEET_FILE,))["fleet-tests"].result()
    record_property("fleet_seconds", round(suite.seconds))
    assert suite.junit is not None, f"the fleet's pytest wrote no report (exit {suite.returncode}):\n{suite.log[-4000:]}"
    cases = list(suite.junit.iter("testcase"))
    failed, skipped = junit_problems(suite.junit)
    assert not failed, "\n".join(failed) + "\n" + suite.log[-4000:]
    assert not skipped, skipped
    whole = suite.tests == (FLEET_FILE,)
    assert len(cases) >= MIN_TESTS if whole else len(cases) == len(suite.tests), (len(cases), suite.tests)
    assert suite.returncode == 0, suite.log[-4000:]
    # what the fleet's tests print of their timings (pytest -rA keeps it), said in this session's output
    print("\n".join(line for line in suite.log.splitlines()
                    if re.match(r"(fleet ready|split run|detached run|killed fleet-b|fleet-[ab]: stopped|pool --hosts)", line)))
