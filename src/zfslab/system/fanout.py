"""The same work on many hosts at once, at most `limit` at a time (docs/fleet.md#parallelism).

Each host's outcome is kept, an error included, so one dead host never hides the others'
answers. A thread pool: the work is waiting on ssh, not computing."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Generic, TypeVar

from zfslab.errors import ParamError
from zfslab.model.inventory import Host

T = TypeVar("T")
WAKE_S = 0.2         # how soon the main thread notices Ctrl-C while hosts work
# hosts worked on at once: a fleet of 20 runs all at once (issue 36); what sshd's MaxStartups limits,
# new logins, the transport keeps to 10 on its own (transport.py HANDSHAKES, docs/fleet.md#parallelism)
DEFAULT_LIMIT = 32


@dataclass(frozen=True, slots=True)
class Outcome(Generic[T]):
    host: Host
    value: T | None
    error: Exception | None

    @property
    def ok(self) -> bool:
        return self.error is None


def fan_out(hosts: Sequence[Host], work: Callable[[Host], T], *, limit: int = DEFAULT_LIMIT,
            on_interrupt: Callable[[], None] | None = None) -> list[Outcome[T]]:
    """work(host) for every host, at most `limit` at once; outcomes in the hosts' order.
    Ctrl-C (or SIGTERM, which cli.py turns into it): no host not yet started is started, and
    `on_interrupt` ends the running work (SshTransport.close stops every master, which closes
    every session on it), before the interrupt goes on."""
    if not 1 <= limit <= 1024:
        raise ParamError("parallel", str(limit), "give 1 to 1024 hosts at once")
    if not hosts:
        return []

    def one(host: Host) -> Outcome[T]:
        try:
            return Outcome(host, work(host), None)
        except Exception as e:  # noqa: BLE001 - every host's error is reported, none stops the others
            return Outcome(host, None, e)
    pool = ThreadPoolExecutor(max_workers=min(limit, len(hosts)), thread_name_prefix="zfslab-host")
    try:
        futures = [pool.submit(one, h) for h in hosts]
        pending = set(futures)
        while pending:
            # a bounded wait: Ctrl-C is process-wide and the kernel may hand it to a worker thread;
            # Python runs its handler only when the main thread wakes, so wake it every WAKE_S
            _, pending = wait(pending, timeout=WAKE_S)
        return [f.result() for f in futures]
    except KeyboardInterrupt:
        pool.shutdown(wait=False, cancel_futures=True)
        if on_interrupt is not None:
            on_interrupt()
        raise
    finally:
        pool.shutdown(wait=True)
