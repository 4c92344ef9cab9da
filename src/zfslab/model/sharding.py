"""Split a list of jobs (layouts to bench) across hosts, balanced by predicted time.

Longest-processing-time first (Graham 1969): sort by predicted seconds, longest first, and give
each job to the host whose queue ends soonest. Its makespan is at most (4/3 - 1/(3m)) times the
optimal one on m identical hosts. Ties break on the job's name and the host's order, so the same
input always gives the same plan (docs/fleet.md#sharding).
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from zfslab.errors import FleetError, clip


@dataclass(frozen=True, slots=True)
class Job:
    name: str                 # a layout, e.g. raidz2:6
    predicted_s: float        # the time the bench is expected to take on one host

    def __post_init__(self) -> None:
        if not self.predicted_s >= 0 or self.predicted_s == float("inf"):
            raise FleetError(f"job {clip(self.name)}: predicted_s={clip(self.predicted_s)} must be finite and >= 0")


@dataclass(frozen=True, slots=True)
class Shard:
    host: str
    jobs: tuple[Job, ...]

    @property
    def predicted_s(self) -> float:
        return sum(j.predicted_s for j in self.jobs)


def shard(jobs: Sequence[Job], hosts: Sequence[str], *,
          busy_s: Mapping[str, float] | None = None) -> tuple[Shard, ...]:
    """One shard per host (in the hosts' order), jobs placed longest first on the least loaded host.
    `busy_s`: work a host already has (a reassignment after a loss), counted in its load."""
    if not hosts:
        raise FleetError("no hosts to split the work across")
    if len(set(hosts)) != len(hosts):
        dup = next(h for h in hosts if list(hosts).count(h) > 1)
        raise FleetError(f"host {clip(dup)} is named twice; name each host once")
    names = [j.name for j in jobs]
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise FleetError(f"job {clip(dup)} is listed twice; list each layout once")
    queues: list[list[Job]] = [[] for _ in hosts]
    busy_s = busy_s or {}
    heap = [(float(busy_s.get(h, 0.0)), i) for i, h in enumerate(hosts)]   # (load, host index): the index breaks ties
    heapq.heapify(heap)
    for job in sorted(jobs, key=lambda j: (-j.predicted_s, j.name)):
        load, i = heapq.heappop(heap)
        queues[i].append(job)
        heapq.heappush(heap, (load + job.predicted_s, i))
    return tuple(Shard(h, tuple(q)) for h, q in zip(hosts, queues))


def makespan_s(shards: Sequence[Shard]) -> float:
    """The predicted time until the last host finishes."""
    return max((s.predicted_s for s in shards), default=0.0)


def lower_bound_s(jobs: Sequence[Job], host_count: int) -> float:
    """No plan on host_count identical hosts finishes sooner: the mean load, or the longest job."""
    if host_count < 1:
        raise FleetError(f"host_count={host_count} must be at least 1")
    total = sum(j.predicted_s for j in jobs)
    return max(total / host_count, max((j.predicted_s for j in jobs), default=0.0))
