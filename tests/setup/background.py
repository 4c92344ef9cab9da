"""The set-up tests' background work (tests/setup/conftest.py starts it, the tests take its results).
Its own module, so that pytest's conftest and the test modules share one state: a test module that
imported the conftest by name would get a second copy of it."""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from typing import Any

TIMINGS: list[str] = []  # one line per README run, printed at the end of the session
POOL: list[concurrent.futures.ThreadPoolExecutor] = []
STARTED: dict[str, concurrent.futures.Future] = {}


def scenario(item) -> Callable[[], Any] | None:
    return getattr(item.module, "SCENARIOS", {}).get(item.name)


def start(item) -> None:
    work = scenario(item)
    if work is None:
        return
    if not POOL:
        POOL.append(concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="setup"))
    STARTED[item.nodeid] = POOL[0].submit(work)


def outcome(request) -> Any:
    """The result of this test's scenario (its exception raised here), started early or run now."""
    future = STARTED.pop(request.node.nodeid, None)
    if future is not None:
        return future.result()
    return scenario(request.node)()


def stop() -> None:
    for pool in POOL:
        pool.shutdown(wait=True, cancel_futures=True)
