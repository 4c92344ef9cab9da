"""The set-up tests' background work (tests/setup/conftest.py starts it, the tests take its results).
Its own module, so that pytest's conftest and the test modules share one state: a test module that
imported the conftest by name would get a second copy of it."""

from __future__ import annotations

import concurrent.futures
import os
import threading
import time
from collections.abc import Callable
from typing import Any

TIMINGS: list[str] = []  # one line per README run, printed at the end of the session
POOL: list[concurrent.futures.ThreadPoolExecutor] = []
STARTED: dict[str, concurrent.futures.Future] = {}


def scenario(item) -> Callable[[], Any] | None:
    return getattr(item.module, "SCENARIOS", {}).get(item.name)


# Waiting for the guests' boots: at most this long, polled this often (a poll of files the guests
# write, not a guess at how long a boot takes)
BOOTS_WAIT_S = 900
BOOTS_POLL_S = 5
NICE = 10  # the set-up's apt, dpkg and pip yield the cores to the guests, CI's critical path


def _boots_settled() -> bool:
    import sys
    module = sys.modules.get("tests.e2e.test_guest") or sys.modules.get("e2e.test_guest")
    return module is None or module.boots_settled()


def _in_background(work: Callable[[], Any]) -> Callable[[], Any]:
    """The work, run when no e2e guest is booting (before the image is built, or once the boots
    have reached their payloads; test_guest.boots_settled) and at a lower priority: on Linux a thread's
    nice value is its own and the processes it starts inherit it. Two boots, the host's tests and
    two chroots installing numpy at once were the load under which a guest's boot stalled
    here (docs/test-guest.md#kernel-crashes)."""
    def run() -> Any:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICE)
        deadline = time.monotonic() + BOOTS_WAIT_S
        while not _boots_settled() and time.monotonic() < deadline:
            time.sleep(BOOTS_POLL_S)
        return work()
    return run


def start(item) -> None:
    work = scenario(item)
    if work is None:
        return
    if not POOL:
        POOL.append(concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="setup"))
    STARTED[item.nodeid] = POOL[0].submit(_in_background(work))


def outcome(request) -> Any:
    """The result of this test's scenario (its exception raised here), started early or run now."""
    future = STARTED.pop(request.node.nodeid, None)
    if future is not None:
        return future.result()
    return scenario(request.node)()


def stop() -> None:
    for pool in POOL:
        pool.shutdown(wait=True, cancel_futures=True)
