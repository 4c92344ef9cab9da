"""Who runs which job in a fleet run, and who finished it: the controller's book, so that a host
lost mid-shard loses nothing and nothing is counted twice (docs/fleet.md#faults).

A job is pending, assigned to one host, or done by one host. A host that is lost gives its
assigned jobs back as pending (the one it was running included: its result never reached the
controller); `reassign` shards them over the hosts still alive. A late answer (a lost host come
back) for a job done elsewhere is refused, so the merge keeps exactly one result per job.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from zfslab.errors import FleetError, clip
from zfslab.model.sharding import Job, shard

# --every-host: a job is one layout on one host, named "LAYOUT on HOST" (neither holds a space)
ON_HOST = " on "


def host_job(layout: str, host: str) -> str:
    """The job of measuring `layout` on `host` (--every-host)."""
    return f"{layout}{ON_HOST}{host}"


def job_layout(name: str) -> str:
    """The layout a job measures: its name, or the layout of a host_job."""
    return name.split(ON_HOST, 1)[0]


@dataclass
class Ledger:
    jobs: dict[str, Job]
    assigned: dict[str, str] = field(default_factory=dict)      # job -> host running it
    done: dict[str, str] = field(default_factory=dict)          # job -> host whose result counts
    lost: set[str] = field(default_factory=set)
    failed: dict[str, str] = field(default_factory=dict)        # job -> why it failed (not retried)
    queues: dict[str, list[str]] = field(default_factory=dict)  # host -> its jobs, in order

    @classmethod
    def plan(cls, jobs: Sequence[Job], hosts: Sequence[str]) -> "Ledger":
        ledger = cls({j.name: j for j in jobs})
        ledger._give(jobs, hosts)
        return ledger

    @classmethod
    def every_host(cls, jobs: Sequence[Job], hosts: Sequence[str], *,
                   done: Mapping[str, Collection[str]] | None = None,
                   first: Mapping[str, Collection[str]] | None = None, done_by: str = "") -> "Ledger":
        """Every job on every host, as host_job pairs; no sharding. `done`: layout -> hosts that
        finished it before (their pairs done by `done_by`); `first`: host -> layouts it takes first
        (its own unfinished ones, whose run adopts the pool it left)."""
        done, first = done or {}, first or {}
        if len(set(hosts)) != len(hosts):
            dup = next(h for h in hosts if list(hosts).count(h) > 1)
            raise FleetError(f"host {clip(dup)} is named twice; name each host once")
        ledger = cls({host_job(j.name, h): Job(host_job(j.name, h), j.predicted_s) for h in hosts for j in jobs})
        for h in hosts:
            ordered = sorted(jobs, key=lambda j: j.name not in first.get(h, ()))   # stable: the list's order
            for j in ordered:
                name = host_job(j.name, h)
                if h in done.get(j.name, ()):
                    ledger.done[name] = done_by
                else:
                    ledger.assigned[name] = h
                    ledger.queues.setdefault(h, []).append(name)
        return ledger

    def _give(self, jobs: Sequence[Job], hosts: Sequence[str]) -> None:
        busy = {h: 0.0 for h in hosts}
        for n, h in self.assigned.items():   # work already queued counts: the loads stay even
            if h in busy:
                busy[h] += self.jobs[n].predicted_s
        for s in shard(jobs, hosts, busy_s=busy):
            self.queues.setdefault(s.host, [])
            for j in s.jobs:
                self.assigned[j.name] = s.host
                self.queues[s.host].append(j.name)

    def pending(self) -> list[str]:
        return sorted(n for n in self.jobs if n not in self.assigned and n not in self.done and n not in self.failed)

    def next_job(self, host: str) -> str | None:
        """The host's next job still assigned to it, or None when its queue is through."""
        if host in self.lost:
            return None
        return next((n for n in self.queues.get(host, []) if self.assigned.get(n) == host), None)

    def finish(self, host: str, job: str) -> bool:
        """The host's result for job arrived; False (and ignored) if it is not the one that counts."""
        if job not in self.jobs:
            raise FleetError(f"no job {clip(job)} in this run")
        if self.assigned.get(job) != host or host in self.lost:
            return False
        del self.assigned[job]
        self.done[job] = host
        return True

    def fail(self, host: str, job: str, reason: str) -> None:
        """The job itself failed on a live host (a bench error): reported, not run again elsewhere."""
        if self.assigned.get(job) == host:
            del self.assigned[job]
            self.failed[job] = f"{host}: {reason}"

    def lose(self, host: str) -> list[str]:
        """The host stopped answering: its unfinished jobs go back to pending; returns them."""
        self.lost.add(host)
        back = [n for n, h in self.assigned.items() if h == host]
        for n in back:
            del self.assigned[n]
        return sorted(back)

    def resume(self, host: str) -> list[str]:
        """A lost host answers again (--resume): it takes back its own jobs still pending; returns them."""
        self.lost.discard(host)
        mine = [n for n in self.queues.get(host, []) if n in self.pending()]
        for n in mine:
            self.assigned[n] = host
        return mine

    def reassign(self, hosts: Sequence[str]) -> dict[str, list[str]]:
        """Pending jobs sharded over the given live hosts by predicted time; what each host gained."""
        live = [h for h in hosts if h not in self.lost]
        pending = [self.jobs[n] for n in self.pending()]
        if pending and not live:
            raise FleetError(f"{len(pending)} jobs left and no host alive to run them; "
                             "they wait for a host to come back")
        before = {h: list(self.queues.get(h, [])) for h in live}
        if pending:
            self._give(pending, live)
        return {h: self.queues[h][len(before[h]):] for h in live if len(self.queues.get(h, [])) > len(before[h])}

    def accepted(self, host: str, job: str) -> bool:
        """Whether a result of `job` found in `host`'s database is the one to merge."""
        return self.done.get(job) == host
