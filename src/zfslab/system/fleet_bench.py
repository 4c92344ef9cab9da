"""`bench --hosts`: one bench split across a fleet of identical hosts (docs/fleet.md#bench---hosts).

The controller never touches a remote disk itself: every host runs its own `zfslab bench` for one
layout at a time, under the same safety gate as a local run (its own serials, typed by the user),
into its own results database. The controller preflights every host, shards the layouts by
predicted time (model/bench_time.py, model/sharding.py), runs the jobs through system/fleet.py
(a lost host's layouts are reassigned or wait for --resume), then pulls each host's database (a
consistent copy taken remotely by `zfslab merge`) and merges them into --db with host provenance.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shlex
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from zfslab.model.bench_time import TestShape, predicted_bench_s
from zfslab.model.inventory import Host
from zfslab.model.layouts import Layout
from zfslab.model.ledger import Ledger, job_layout
from zfslab.model.sharding import Job, Shard, makespan_s
from zfslab.model.units import parse_fio_size
from zfslab.store.fleet import bench_progress, late_results, private_copy
from zfslab.store.merge import merge
from zfslab.system.bench_plan import BenchOptions
from zfslab.system.fanout import DEFAULT_LIMIT, fan_out
from zfslab.system.fleet import Event, execute
from zfslab.system.preflight import preflight
from zfslab.system.remote_argv import zfslab_argv
from zfslab.system.suites import suite_tests
from zfslab.system.transport import Transport

# relative to the remote user's home, where ssh starts the remote command; {key}: disks and options
REMOTE_DB_DEFAULT = ".local/share/zfslab/fleet-{key}.sqlite"
MIN_JOB_TIMEOUT_S = 3600.0   # a job's ssh session may last this long at least ...
JOB_TIMEOUT_FACTOR = 20.0    # ... or this many times its predicted time: a hung host, not a slow one
SHORT_TIMEOUT_S = 600.0      # a dry run, a mkdir, a remote merge, a copy
EARLIER = "--db"             # the ledger's "done by" for a layout --db already held finished


@dataclass(frozen=True)
class FleetBenchRequest:
    """A bench to split across hosts: the same disks (by path), layouts and options on each."""

    hosts: tuple[Host, ...]
    devices: tuple[str, ...]
    layouts: tuple[Layout, ...]
    options: BenchOptions
    db: str
    remote_db: str | None = None          # may hold {host} and {key}; default REMOTE_DB_DEFAULT
    serials: Mapping[str, str] = field(default_factory=dict)   # host -> the serials the user typed for it
    reassign: bool = False
    resume: bool = False
    limit: int = DEFAULT_LIMIT
    every_host: bool = False              # every host measures every layout (no sharding): hosts compared
    detach: bool = False                  # each host's run outlives the controller (system/fleet_detach.py)

    @property
    def key(self) -> str:
        """The disks, options and --db, not the layouts or hosts: a resume with other hosts finds the
        same files, and another fleet bench (another --db) never finds this one's runs in them, which
        its pulls would merge (an older finished run of a layout counted beside this one's)."""
        text = json.dumps({"disks": list(self.devices), "db": os.path.abspath(self.db), **self.options.as_dict()},
                          sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    def remote_db_for(self, host: Host) -> str:
        return (self.remote_db or REMOTE_DB_DEFAULT).replace("{host}", host.name).replace("{key}", self.key)

    def bench_argv(self, host: Host, layouts: Sequence[str], *, dry_run: bool = False) -> list[str]:
        """The remote `zfslab bench` of these layouts on host, with that host's consent only; stopped
        with its ssh session unless detached (system/fleet_detach.py), when it must outlive it."""
        o = self.options
        serials = self.serials.get(host.name)
        return zfslab_argv("bench", [
            ("--disks", ",".join(self.devices)), ("--layouts", ",".join(layouts)), ("--db", self.remote_db_for(host)),
            ("--origin", host.name), ("--suite", o.suite), ("--repeats", o.repeats), ("--ashift", o.ashift),
            ("--recordsize", o.recordsize), ("--compression", o.compression), ("--size", o.size),
            ("--runtime", o.runtime_s), ("--ramp", o.ramp_s), ("--stop-with-session", not self.detach),
            ("--wipe", serials is not None), ("--confirm-serials", serials), ("--dry-run", dry_run)])

    def jobs(self) -> list[Job]:
        shapes = [TestShape(t.time_based, t.numjobs) for t in suite_tests(self.options.suite)] or [TestShape(False)]
        size = parse_fio_size(self.options.size)
        return [Job(str(x), predicted_bench_s(x, shapes, size_bytes=size, runtime_s=self.options.runtime_s,
                                              ramp_s=self.options.ramp_s, repeats=self.options.repeats))
                for x in self.layouts]


@dataclass
class FleetPlan:
    """Who runs which layout; `cleanup`: layouts a host's own unfinished run left (its pool may still
    be there) that another host finished meanwhile: run again there only to adopt and destroy it."""

    request: FleetBenchRequest
    ledger: Ledger
    cleanup: dict[str, list[str]] = field(default_factory=dict)

    def cleanup_hosts(self, layout: str) -> set[str]:
        return {h for h, layouts in self.cleanup.items() if layout in layouts}

    def queue(self, host: str) -> list[str]:
        """The host's jobs still to run, in order (layouts; with --every-host "LAYOUT on HOST")."""
        return [n for n in self.ledger.queues.get(host, []) if self.ledger.assigned.get(n) == host]

    def layouts(self, host: str) -> list[str]:
        """What the host runs, in order: its cleanups, then its queue's layouts."""
        return self.cleanup.get(host, []) + [job_layout(n) for n in self.queue(host)]

    def predicted_s(self, host: str) -> float:
        return sum(self.ledger.jobs[n].predicted_s for n in self.queue(host))

    def render(self) -> list[str]:
        """The plan per host, as --dry-run prints it before each host's own dry run."""
        shards = [Shard(h.name, tuple(self.ledger.jobs[n] for n in self.queue(h.name))) for h in self.request.hosts]
        done = sorted(n for n, who in self.ledger.done.items() if who == EARLIER)
        if self.request.every_host:   # the hosts run at once: the longest queue is the run's time
            lines = [f"# fleet: every host measures the same {len(self.request.layouts)} layouts "
                     f"({len(self.ledger.jobs)} jobs on {len(shards)} hosts), predicted {makespan_s(shards):,.0f} s "
                     "until the last host ends (the longest queue; docs/fleet.md#every-host)"]
        else:
            lines = [f"# fleet: {len(self.ledger.jobs)} layouts on {len(shards)} hosts, predicted "
                     f"{makespan_s(shards):,.0f} s until the last host ends (one host alone: "
                     f"{sum(j.predicted_s for j in self.ledger.jobs.values()):,.0f} s; docs/fleet.md#sharding)"]
        if done:
            lines.append(f"# already in {self.request.db}, not run again: {', '.join(done)}")
        return lines


def finished_before(request: FleetBenchRequest) -> tuple[dict, dict[str, set[str]]]:
    """What --db holds of this bench: layout -> host that finished it (--every-host: every host that
    did), and host -> layouts its runs left unfinished (read-only)."""
    origins = {h.name for h in request.hosts}
    return bench_progress(request.db, request.options.as_dict(), len(request.devices), origins,
                          every_finisher=request.every_host)


def plan_fleet(request: FleetBenchRequest, finished: Mapping[str, str] | None = None,
               unfinished: Mapping[str, set[str]] | None = None) -> FleetPlan:
    """Shard the layouts. With --resume: layouts --db holds finished are left out, and each host
    first takes back its own unfinished ones."""
    jobs = request.jobs()
    names = [h.name for h in request.hosts]
    if request.every_host:   # (host, layout) jobs: each host skips what it finished, takes its unfinished first
        done, first = (finished or {}, unfinished or {}) if request.resume else ({}, {})
        return FleetPlan(request, Ledger.every_host(jobs, names, done=done, first=first, done_by=EARLIER))
    if not request.resume:
        return FleetPlan(request, Ledger.plan(jobs, names))
    finished, unfinished = dict(finished or {}), unfinished or {}
    ledger = Ledger({j.name: j for j in jobs})
    cleanup: dict[str, list[str]] = {}
    for h in names:
        for layout in sorted(unfinished.get(h, ())):
            if layout not in ledger.jobs:
                continue
            if layout in finished and finished[layout] != h:
                cleanup.setdefault(h, []).append(layout)
            elif layout not in finished and layout not in ledger.assigned:
                ledger.assigned[layout] = h
                ledger.queues.setdefault(h, []).append(layout)
    for layout in finished:
        if layout in ledger.jobs:
            ledger.done[layout] = EARLIER
    ledger.reassign(names)
    return FleetPlan(request, ledger, cleanup)


def preflight_refusals(transport: Transport, request: FleetBenchRequest, controller_version: str) -> list[str]:
    """Every host's refusal, one line each ([]: every host may start); reads only."""
    _, lines = preflight(transport, request.hosts, request.devices, controller_version=controller_version,
                         limit=request.limit)
    return lines


@dataclass(frozen=True, slots=True)
class HostDryRun:
    host: str
    commands: tuple[str, ...]    # the remote command lines, one per layout
    output: str                  # the remote dry runs' own plans
    verdict: str                 # their gate's words (stderr)
    exit_code: int               # 0: the run would go ahead; 10: its disks would be refused


def host_dry_runs(transport: Transport, plan: FleetPlan, *, first_only: bool) -> list[HostDryRun]:
    """Each host's own `bench --dry-run` of its queue (or of its first layout), in parallel; writes
    nothing anywhere. The verdict is the first layout's: the gate judges the disks, the same for every
    layout of a host, and only the first sees them as the run will (a resumed first layout adopts and
    destroys the pool its run left, which the later ones' dry runs would find held)."""
    req = plan.request

    def one(host: Host) -> HostDryRun:
        queue = plan.layouts(host.name)
        commands, outputs, verdict, code = [], [], "", 0
        for i, layout in enumerate(queue[:1] if first_only else queue):
            argv = req.bench_argv(host, [layout], dry_run=True)
            done = transport.run(host, argv, timeout_s=SHORT_TIMEOUT_S, check=False)
            commands.append(shlex.join(argv))
            outputs.append(done.stdout.rstrip())
            if i == 0:
                verdict, code = done.stderr.strip(), done.returncode
        return HostDryRun(host.name, tuple(commands), "\n".join(outputs), verdict, code)
    outcomes = fan_out(list(req.hosts), one, limit=req.limit)
    out = []
    for o in outcomes:
        if not o.ok:
            raise o.error
        out.append(o.value)
    return out


def job_timeout_s(job: Job) -> float:
    return max(MIN_JOB_TIMEOUT_S, JOB_TIMEOUT_FACTOR * job.predicted_s)


def execute_fleet(transport: Transport, plan: FleetPlan, *, on_start: Callable[[str, str], None],
                  on_event: Callable) -> list:
    """Make each host's database folder, run every cleanup and job (system/fleet.py), return the events."""
    req = plan.request
    hosts = {h.name: h for h in req.hosts}

    def prepare(host: Host) -> None:
        folder = os.path.dirname(req.remote_db_for(host))
        if folder:
            transport.run(host, ["mkdir", "-p", "--", folder], timeout_s=SHORT_TIMEOUT_S)
        for layout in plan.cleanup.get(host.name, []):   # adopts and destroys its leftover pool; result refused
            on_start(host.name, f"{layout} (cleanup)")
            transport.run(host, req.bench_argv(host, [layout]), timeout_s=MIN_JOB_TIMEOUT_S)
    for o in fan_out(list(req.hosts), prepare, limit=req.limit, on_interrupt=transport.close):
        if not o.ok:
            plan.ledger.lose(o.host.name)
            on_event_lost(on_event, o.host.name, o.error)

    def run_job(t: Transport, host: Host, job: Job) -> None:
        on_start(host.name, job.name)
        t.run(host, req.bench_argv(host, [job_layout(job.name)]), timeout_s=job_timeout_s(job))
    reassign = req.reassign and not req.every_host   # another host's copy of a layout measures another host
    if reassign and plan.ledger.lost and set(hosts) - plan.ledger.lost:
        plan.ledger.reassign(list(hosts))
    live = {n: h for n, h in hosts.items() if n not in plan.ledger.lost}
    return execute(plan.ledger, live, transport, run_job, limit=req.limit, reassign=reassign,
                   on_event=on_event)


def on_event_lost(on_event: Callable, host: str, error: Exception) -> None:
    on_event(Event(host, "", "lost", str(error)))


def late_rule(request: FleetBenchRequest, cleanup: Mapping[str, Sequence[str]] | None = None):
    """What a pull leaves out, given the files pulled: a host's partial result for a layout another
    host finished (it was lost mid-layout, the layout ran again elsewhere), and the result of a
    cleanup run (run again only to destroy its pool). Everything else, older runs included, counts."""
    return late_rule_of(request.db, request.options.as_dict(), len(request.devices),
                        {h.name for h in request.hosts}, cleanup)


def late_rule_of(db: str, options: dict, disk_count: int, origins: set[str],
                 cleanup: Mapping[str, Sequence[str]] | None = None):
    """late_rule from its parts (a detached run's record holds them, not the request)."""

    def make(files: Sequence[str]) -> set[tuple[str, str]]:
        paths = [*files, db] if os.path.exists(db) else list(files)
        late = late_results(paths, options, disk_count, origins)
        return late | {(h, layout) for h, layouts in (cleanup or {}).items() for layout in layouts}
    return make


@dataclass(frozen=True, slots=True)
class Pulled:
    hosts: tuple[str, ...]               # whose databases reached --db
    failed: tuple[tuple[str, str], ...]  # (host, why) whose could not be pulled
    runs: int
    measurements: int
    origins: tuple[str, ...]
    left_out: frozenset[tuple[str, str]] = frozenset()   # (host, layout) whose results did not count


def pull(transport: Transport, request: FleetBenchRequest, hosts: Sequence[Host],
         rule: Callable[[Sequence[str]], set[tuple[str, str]]]) -> Pulled:
    """Each host's database, copied consistently on the host (`zfslab merge DB -o SNAPSHOT`: SQLite's
    own reader, whatever a running bench is writing), fetched, and merged into --db."""

    index = {h.name: i for i, h in enumerate(hosts)}

    def one(host: Host, folder: str) -> str | None:
        remote = request.remote_db_for(host)
        if transport.run(host, ["test", "-e", remote], timeout_s=SHORT_TIMEOUT_S, check=False).returncode != 0:
            return None   # it ran nothing yet
        snapshot = remote + ".pull.sqlite"
        transport.run(host, ["zfslab", "merge", remote, "-o", snapshot], timeout_s=SHORT_TIMEOUT_S)
        local = os.path.join(folder, f"host-{index[host.name]}.sqlite")
        transport.fetch(host, snapshot, local, timeout_s=SHORT_TIMEOUT_S)
        return local
    with tempfile.TemporaryDirectory(prefix="zfslab-pull-") as folder:
        outcomes = fan_out(list(hosts), lambda h: one(h, folder), limit=request.limit)
        files = [o.value for o in outcomes if o.ok and o.value]
        failed = tuple((o.host.name, str(o.error)) for o in outcomes if not o.ok)
        if not files:
            return Pulled((), failed, 0, 0, ())
        late = rule(files)
        summary = merge(files, request.db, accept=lambda origin, layout: (origin, layout) not in late)
    return Pulled(tuple(o.host.name for o in outcomes if o.ok and o.value), failed, summary.runs,
                  summary.measurements, summary.origins, frozenset(late))


@dataclass(frozen=True, slots=True)
class FleetStart:
    """A fleet bench up to its first write: the hosts preflight refused (one line each; then
    nothing else was done), else the plan and, for a real run, the hosts whose own gate refused
    their first layout in a dry run. `pull_failures`: (host, why) whose database --resume could
    not pull first."""

    refusals: tuple[str, ...] = ()
    plan: FleetPlan | None = None
    refused: tuple[HostDryRun, ...] = ()
    pull_failures: tuple[tuple[str, str], ...] = ()


def start_fleet(transport: Transport, request: FleetBenchRequest, *, controller_version: str,
                dry_run: bool) -> FleetStart:
    """Preflight every host, then plan (with --resume, after pulling what each host measured
    since); a real run also has each host's gate judge its disks. Writes nothing on the hosts, and
    with dry_run nothing here either."""
    refusals = preflight_refusals(transport, request, controller_version)
    if refusals:
        return FleetStart(tuple(refusals))
    finished, unfinished, pulled = _progress(transport, request, dry_run=dry_run)
    for host, layout in pulled.left_out:   # its partial run, left out of --db: its pool is still to be destroyed
        unfinished.setdefault(host, set()).add(layout)
    plan = plan_fleet(request, finished, unfinished)
    refused = () if dry_run else tuple(d for d in host_dry_runs(transport, plan, first_only=True) if d.exit_code)
    return FleetStart((), plan, refused, pulled.failed)


def _progress(transport: Transport, request: FleetBenchRequest, *,
              dry_run: bool) -> tuple[dict[str, str], dict[str, set[str]], Pulled]:
    """What the bench has done so far: layout -> the host that finished it, host -> layouts its
    runs left unfinished, and the first pull. --resume first pulls each host's database, so a host
    killed since the last pull (in a layout, or as its pool was created) takes back its own
    layout. A dry run pulls the same way into a private copy of --db, deleted when it ends: it
    plans what the real resume will, and the user's --db is not written."""
    if not request.resume:
        return (*finished_before(request), Pulled((), (), 0, 0, ()))
    if not dry_run:
        pulled = pull(transport, request, request.hosts, late_rule(request))
        return (*finished_before(request), pulled)
    with tempfile.TemporaryDirectory(prefix="zfslab-dry-run-") as folder:
        copy = dataclasses.replace(request, db=os.path.join(folder, "db.sqlite"))
        private_copy(request.db, copy.db)
        pulled = pull(transport, copy, copy.hosts, late_rule(copy))
        return (*finished_before(copy), pulled)


def run_fleet(transport: Transport, plan: FleetPlan, *, on_start: Callable[[str, str], None],
              on_event: Callable) -> Pulled:
    """Run the plan on its hosts (execute_fleet), then pull what they measured into --db."""
    execute_fleet(transport, plan, on_start=on_start, on_event=on_event)
    return pull_after(transport, plan)


def pull_after(transport: Transport, plan: FleetPlan) -> Pulled:
    """After a run: every host still alive pulled into --db, cleanup runs' results left out."""
    live = [h for h in plan.request.hosts if h.name not in plan.ledger.lost]
    return pull(transport, plan.request, live, late_rule(plan.request, plan.cleanup))
