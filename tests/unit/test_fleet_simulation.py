"""A fleet of a few hundred fake hosts on the in-process transport: the plan balanced by predicted
time, at most `limit` hosts at once, hosts that die mid-shard (the work done there, the answer
lost), their shards reassigned or resumed, and the merge keeping exactly one result per layout."""

import threading

import numpy as np
import pytest

from tests.fleet_data import RunSpec, content, write_db
from tests.fleet_fakes import SimTransport
from zfslab.errors import FleetError
from zfslab.model.inventory import Host
from zfslab.model.ledger import Ledger, host_job, job_layout
from zfslab.model.sharding import Job, lower_bound_s, makespan_s, shard
from zfslab.store.merge import merge
from zfslab.system.fleet import execute

HOSTS = 300
JOBS = 1200
LIMIT = 24


class Fleet:
    """Each fake host's own results (its database), and how many hosts were busy at once."""

    def __init__(self, seed: int):
        rng = np.random.default_rng(seed)
        self.hosts = {f"st{i:03d}": Host(f"st{i:03d}", f"10.0.{i // 250}.{i % 250 + 1}") for i in range(HOSTS)}
        self.jobs = [Job(f"layout{i:04d}", float(t)) for i, t in enumerate(rng.lognormal(6, 1, JOBS))]
        self.results: dict[str, dict[str, int]] = {h: {} for h in self.hosts}   # host -> layout -> times run
        self.busy, self.peak, self.lock = 0, 0, threading.Lock()
        # six hosts that die mid-shard: after k of their jobs, with at least one more queued behind
        queues = {s.host: len(s.jobs) for s in shard(self.jobs, list(self.hosts))}
        dying = rng.choice(sorted(h for h, n in queues.items() if n >= 2), 6, replace=False)
        self.die_after = {h: int(rng.integers(0, queues[h] - 1)) for h in sorted(dying)}

    def answer(self, host, argv):
        assert argv[:2] == ["zfslab", "bench"], argv
        with self.lock:
            self.busy += 1
            self.peak = max(self.peak, self.busy)
        with self.lock:
            layout = argv[argv.index("--layout") + 1]
            self.results[host][layout] = self.results[host].get(layout, 0) + 1
            self.busy -= 1
        return 0, "", ""


def run_job(transport, host, job):
    transport.run(host, ["zfslab", "bench", "--layout", job.name, "--db", "zfslab-results.sqlite"], timeout_s=3600)


def test_a_few_hundred_hosts_with_deaths_mid_shard_reassigned(tmp_path):
    fleet = Fleet(seed=27)
    ledger = Ledger.plan(fleet.jobs, list(fleet.hosts))
    # the plan: every layout once, balanced within Graham's bound, the same for the same input
    first = shard(fleet.jobs, list(fleet.hosts))
    assert makespan_s(first) <= 4 / 3 * lower_bound_s(fleet.jobs, HOSTS)
    assert shard(list(reversed(fleet.jobs)), list(fleet.hosts)) == first
    transport = SimTransport(fleet.answer, die_after=fleet.die_after.copy())
    events = execute(ledger, fleet.hosts, transport, run_job, limit=LIMIT, reassign=True)

    lost = {e.host for e in events if e.what == "lost"}
    assert lost == set(fleet.die_after)
    # every layout done exactly once, by a host still alive; none pending, none failed
    assert sorted(ledger.done) == sorted(j.name for j in fleet.jobs) and not ledger.pending() and not ledger.failed
    # a lost host keeps the k results it delivered before it died; the one in flight went elsewhere
    assert {h: list(ledger.done.values()).count(h) for h in lost} == fleet.die_after
    assert sum(e.what == "done" for e in events) == JOBS
    # each lost host did one layout nobody heard of: it ran twice in the fleet, counts once
    ran = {}
    for host, layouts in fleet.results.items():
        for layout, n in layouts.items():
            ran[layout] = ran.get(layout, 0) + n
    assert sum(ran.values()) == JOBS + len(lost) and set(ran) == set(ledger.done)
    # the hosts were never more than LIMIT at once, and the load stayed balanced after the losses
    assert fleet.peak <= LIMIT
    live = HOSTS - len(lost)
    load = {}
    for job, host in ledger.done.items():
        load[host] = load.get(host, 0.0) + ledger.jobs[job].predicted_s
    longest = max(j.predicted_s for j in fleet.jobs)
    assert max(load.values()) <= 4 / 3 * sum(j.predicted_s for j in fleet.jobs) / live + longest

    # merge the hosts' own databases (the lost hosts' too, once they are back): one result per layout
    paths = []
    for host, layouts in fleet.results.items():
        if layouts:
            path = str(tmp_path / f"{host}.sqlite")
            write_db(path, [RunSpec(f"run-{host}", host, "2026-11-25T00:00:00+00:00",
                                    tuple((layout, "seqread", 0) for layout in sorted(layouts)))])
            paths.append(path)
    out = str(tmp_path / "all.sqlite")
    summary = merge(paths, out, accept=ledger.accepted)
    merged = content(out)
    assert summary.measurements == JOBS and len({m[1] for m in merged["measurements"]}) == JOBS
    assert all(ledger.done[m[1]] == next(r[1] for r in merged["runs"] if r[0] == m[0]) for m in merged["measurements"])
    assert merge(paths, out, accept=ledger.accepted).runs_added == 0 and content(out) == merged


def test_without_reassign_the_lost_shard_waits_and_resumes_on_its_host():
    fleet = Fleet(seed=5)
    ledger = Ledger.plan(fleet.jobs, list(fleet.hosts))
    transport = SimTransport(fleet.answer, die_after=fleet.die_after.copy())
    execute(ledger, fleet.hosts, transport, run_job, limit=LIMIT, reassign=False)
    waiting = ledger.pending()
    assert waiting and set(ledger.done) | set(waiting) == {j.name for j in fleet.jobs}
    # the hosts come back: --resume gives each its own shard again
    owners = {n: h for h in fleet.die_after for n in ledger.queues[h] if n in waiting}
    assert set(owners) == set(waiting)
    transport.down.clear()
    taken = [n for host in sorted(fleet.die_after) for n in ledger.resume(host)]
    assert sorted(taken) == waiting
    execute(ledger, fleet.hosts, transport, run_job, limit=LIMIT)
    assert sorted(ledger.done) == sorted(j.name for j in fleet.jobs) and not ledger.pending()
    assert all(ledger.done[n] == owners[n] for n in waiting)


def test_when_every_host_is_lost_the_jobs_wait_for_resume():
    fleet = Fleet(seed=1)
    hosts = dict(list(fleet.hosts.items())[:3])
    ledger = Ledger.plan(fleet.jobs[:10], list(hosts))
    transport = SimTransport(fleet.answer, down=list(hosts))
    events = execute(ledger, hosts, transport, run_job, limit=2)
    assert {e.host for e in events if e.what == "lost"} == set(hosts) and "done" not in {e.what for e in events}
    assert len(ledger.pending()) == 10 and not ledger.done and not ledger.assigned


def test_every_host_ledger_gives_each_host_every_job_skips_its_own_done_and_takes_its_unfinished_first():
    jobs = [Job("a", 3.0), Job("b", 2.0), Job("c", 1.0)]
    ledger = Ledger.every_host(jobs, ["h1", "h2"], done={"a": {"h1"}, "b": {"h2"}}, first={"h1": {"c"}},
                               done_by="--db")
    assert ledger.queues == {"h1": ["c on h1", "b on h1"], "h2": ["a on h2", "c on h2"]}
    assert ledger.done == {"a on h1": "--db", "b on h2": "--db"} and len(ledger.jobs) == 6
    assert job_layout(host_job("raidz2:6", "st01")) == "raidz2:6" and job_layout("raidz2:6") == "raidz2:6"
    assert ledger.lose("h1") == ["b on h1", "c on h1"] and ledger.pending() == ["b on h1", "c on h1"]
    with pytest.raises(FleetError, match="host 'h1' is named twice"):
        Ledger.every_host(jobs, ["h1", "h1"])
