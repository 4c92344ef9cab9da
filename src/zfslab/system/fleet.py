"""Running a sharded plan on many hosts: each host works through its queue, at most `limit`
hosts at once; a host that stops answering is marked lost and its unfinished jobs go to the
hosts still alive (with reassign) or wait for --resume (docs/fleet.md#faults). The book is
model/ledger.py; this only moves work and catches the losses."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from zfslab.errors import ZfslabError
from zfslab.model.inventory import Host
from zfslab.model.ledger import Ledger
from zfslab.model.sharding import Job
from zfslab.system.fanout import DEFAULT_LIMIT, fan_out
from zfslab.system.transport import HostUnreachable, RemoteTimeout, Transport


@dataclass(frozen=True, slots=True)
class Event:
    host: str
    job: str
    what: str        # done | lost | failed | reassigned
    detail: str = ""


def execute(ledger: Ledger, hosts: Mapping[str, Host], transport: Transport,
            run_job: Callable[[Transport, Host, Job], None], *, limit: int = DEFAULT_LIMIT, reassign: bool = True,
            on_event: Callable[[Event], None] | None = None) -> list[Event]:
    """Run every assigned job; returns what happened, in order. Jobs of lost hosts stay pending
    in the ledger unless `reassign` hands them to the hosts still alive."""
    lock = threading.Lock()
    events: list[Event] = []

    def note(e: Event) -> None:
        events.append(e)
        if on_event:
            on_event(e)

    def work(host: Host) -> None:
        while True:
            with lock:
                job = ledger.next_job(host.name)
            if job is None:
                return
            try:
                run_job(transport, host, ledger.jobs[job])
            except (HostUnreachable, RemoteTimeout) as e:
                with lock:
                    ledger.lose(host.name)
                    note(Event(host.name, job, "lost", str(e)))
                    if reassign and set(hosts) - ledger.lost:   # none alive: the jobs wait for --resume
                        for to, gained in ledger.reassign(list(hosts)).items():
                            for name in gained:
                                note(Event(to, name, "reassigned", f"from {host.name}"))
                return
            except ZfslabError as e:
                with lock:
                    ledger.fail(host.name, job, str(e))
                    note(Event(host.name, job, "failed", str(e)))
                continue
            with lock:
                if ledger.finish(host.name, job):
                    note(Event(host.name, job, "done"))

    while True:
        with lock:
            busy = [hosts[h] for h in hosts if ledger.next_job(h) is not None]
        if not busy:
            return events
        fan_out(busy, work, limit=limit, on_interrupt=transport.close)   # Ctrl-C: every session closed
