"""`bench --hosts`: the command side of a fleet bench (system/fleet_bench.py does the work):
options read, preflight refusals and the plan printed, one live display of every host."""

from __future__ import annotations

import argparse
import sys
import threading

from zfslab.commands._fleet_detach import add_detach_options
from zfslab.commands._hosts import host_serials, transport_from_args
from zfslab.errors import Interrupted, UsageError, shown
from zfslab.model.fleet_exit import fleet_code


# What a Ctrl-C of bench --hosts keeps. Each host's bench runs with --stop-with-session, so closing
# its session stops it as Ctrl-C there would: its pool destroyed, its finished layouts in its database
INTERRUPTED_RUNNING = ("each host's bench was stopped with its ssh session and, as on Ctrl-C there, destroys its "
                       "pool; the layouts each host finished are in its own database: run the same command with "
                       "--resume to pull them and go on")
INTERRUPTED_BEFORE = "no host had started a bench: run the same command again"


def add_fleet_bench_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("bench --hosts (docs/fleet.md#bench---hosts)")
    which = g.add_mutually_exclusive_group()
    which.add_argument("--reassign", action="store_true",
                       help="a host lost mid-run: give its layouts to the hosts still alive")
    which.add_argument("--resume", action="store_true",
                       help="the same fleet run again: skip what --db or a host's database holds finished; "
                            "each host first takes back its own unfinished layouts")
    g.add_argument("--every-host", action="store_true",
                   help="every host measures every layout (no split), to compare the hosts: report shows each "
                        "host's median and their spread (docs/fleet.md#every-host)")
    g.add_argument("--remote-db", metavar="PATH",
                   help="each host's own results database ({host}, {key} filled in; default "
                        "~/.local/share/zfslab/fleet-{key}.sqlite)")
    add_detach_options(g)


def fleet_request(args, hosts, devices, layouts, options):
    from zfslab.system.fleet_bench import FleetBenchRequest

    if args.sandbox:
        raise UsageError("--sandbox is this machine's files; with --hosts name each host's disks with --disks")
    if options.job_file:
        raise UsageError(f"--suite {shown(args.suite, 100)}: a job file is on this machine; with --hosts use ars, "
                         "seq, quick or bonnie")
    serials = host_serials(args.confirm_serials, [h.name for h in hosts])
    if serials and not args.wipe:
        raise UsageError("--confirm-serials HOST=S,S goes with --wipe: the disks holding data are wiped")
    if args.wipe and not serials:
        raise UsageError("--wipe with --hosts needs each host's serials, as no host can prompt: "
                         "--confirm-serials HOST=S1,S2 (repeat for each host)")
    if args.every_host and args.reassign:
        raise UsageError("--reassign gives a lost host's layouts to another host, but with --every-host each host "
                         "measures them all: leave out --reassign (a lost host's layouts wait for --resume)")
    if args.detach and args.reassign:
        raise UsageError("--reassign needs a controller that follows every host to the end; a detached run's lost "
                         "host keeps its layouts for --resume: leave out --reassign")
    return FleetBenchRequest(tuple(hosts), tuple(devices), tuple(layouts), options, args.db, args.remote_db,
                             serials, args.reassign, args.resume, args.parallel, args.every_host, args.detach)


def run_fleet(args, request) -> int:
    """system/fleet_bench.py's preflight and plan, then the dry run printed, or the run executed and
    its pull reported; the transport closed whatever happens."""
    from zfslab import __version__
    from zfslab.system.fleet_bench import start_fleet

    transport = transport_from_args(args)
    try:
        start = start_fleet(transport, request, controller_version=__version__, dry_run=args.dry_run)
        _pull_failures(start.pull_failures)
        if start.refusals:
            for line in start.refusals:
                print(f"zfslab: {line}", file=sys.stderr)
            print("zfslab: nothing was started; fix these hosts, or leave them out with --skip-host H",
                  file=sys.stderr)
            return 2
        if args.dry_run:
            return _dry_run(transport, start.plan)
        if start.refused:
            for d in start.refused:
                print(f"zfslab: host {d.host}: {d.verdict or 'its dry run failed'}", file=sys.stderr)
            return fleet_code(d.exit_code for d in start.refused)   # a host's refusal: 10, as a local one
        if args.detach:
            from zfslab.commands._fleet_detach import detach
            return detach(transport, start.plan)
        return _execute(transport, start.plan)
    except Interrupted:
        raise
    except KeyboardInterrupt:   # in preflight, a pull or the hosts' dry runs: nothing was started
        raise Interrupted(INTERRUPTED_BEFORE) from None
    finally:
        transport.close()


def _pull_failures(failed) -> None:
    for host, why in failed:
        print(f"zfslab: {host}: its database could not be pulled ({why})", file=sys.stderr)


def _dry_run(transport, plan) -> int:
    from zfslab.system.fleet_bench import host_dry_runs

    print("\n".join(plan.render()))
    code = 0
    for d in host_dry_runs(transport, plan, first_only=False):
        queue = plan.layouts(d.host)
        print(f"\n## host {d.host}: {len(plan.queue(d.host))} layouts, predicted {plan.predicted_s(d.host):,.0f} s"
              + (f": {', '.join(queue)}" if queue else ""))
        for line in d.commands:
            print(f"$ {line}")
        if d.output:
            print(d.output)
        if d.verdict:
            print(f"# {d.host}: " + d.verdict.replace("\n", f"\n# {d.host}: "))
        code = max(code, fleet_code([d.exit_code]))
    return code


def _execute(transport, plan) -> int:
    from zfslab.system.fleet_bench import execute_fleet, pull_after

    try:
        with FleetDisplay(plan) as display:
            execute_fleet(transport, plan, on_start=display.started, on_event=display.event)
    except KeyboardInterrupt:   # fan_out has closed every session: each host's bench stops with it
        raise Interrupted(INTERRUPTED_RUNNING) from None
    return _report(plan, pull_after(transport, plan))


def _report(plan, pulled) -> int:
    ledger, req = plan.ledger, plan.request
    _pull_failures(pulled.failed)
    jobs = "layouts × hosts" if req.every_host else "layouts"
    print(f"{len(ledger.done)} of {len(ledger.jobs)} {jobs} done on {len(req.hosts) - len(ledger.lost)} hosts; "
          f"{pulled.measurements} measurements of {pulled.runs} runs from {len(pulled.origins)} hosts in {req.db}")
    pending = ledger.pending()
    for job, why in sorted(ledger.failed.items()):
        print(f"zfslab: {job} failed on {why}", file=sys.stderr)
    if pending:
        lost = ", ".join(sorted(ledger.lost)) or "no host"
        other = "" if req.every_host else ", or with --reassign"   # --every-host: no other host can stand in
        print(f"zfslab: {len(pending)} layouts left ({', '.join(pending)}), lost with {lost}: run the same command "
              f"with --resume once the host is back (or --skip-host it){other}", file=sys.stderr)
    return 4 if pending or ledger.failed or pulled.failed else 0


class FleetDisplay:
    """Every host on one live display (rich, on stderr); plain lines when stderr is not a terminal."""

    def __init__(self, plan) -> None:
        from rich.console import Console
        self.plan, self.console = plan, Console(stderr=True)
        self.lock, self.tasks, self.progress = threading.Lock(), {}, None
        self.done = {h.name: 0 for h in plan.request.hosts}

    def __enter__(self) -> "FleetDisplay":
        if self.console.is_terminal:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
            self.progress = Progress(TextColumn("{task.fields[host]:<24}"), TextColumn("{task.description}"),
                                     BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=self.console)
            self.progress.__enter__()
            for h in self.plan.request.hosts:
                self.tasks[h.name] = self.progress.add_task("waiting", host=h.name,
                                                            total=len(self.plan.queue(h.name)) or None)
        return self

    def __exit__(self, *exc) -> None:
        if self.progress is not None:
            self.progress.__exit__(*exc)

    def _say(self, host: str, text: str) -> None:
        with self.lock:
            if self.progress is None:
                print(f"zfslab: {host}: {text}", file=sys.stderr, flush=True)
            else:
                total = len([n for n in self.plan.ledger.queues.get(host, [])
                             if self.plan.ledger.assigned.get(n) == host or self.plan.ledger.done.get(n) == host])
                self.progress.update(self.tasks[host], description=text, completed=self.done[host],
                                     total=total or None)

    def started(self, host: str, layout: str) -> None:
        self._say(host, f"{layout} running")

    def event(self, e) -> None:
        if e.what == "done":
            self.done[e.host] += 1
        detail = f" ({e.detail})" if e.detail and e.what != "done" else ""
        self._say(e.host, f"{e.job + ' ' if e.job else ''}{e.what}{detail}")
