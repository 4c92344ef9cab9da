"""`bench --hosts --detach` and `bench --status|--collect|--stop RUN`: the command side of a detached
fleet bench (system/fleet_detach.py does the work; docs/fleet.md#detached-runs)."""

from __future__ import annotations

import json
import sys
import time

from zfslab.commands._common import float_arg
from zfslab.commands._hosts import transport_from_args
from zfslab.errors import Interrupted, UsageError


def add_detach_options(g) -> None:
    g.add_argument("--detach", action="store_true",
                   help="start each host's part so that it runs on without this command or its ssh sessions "
                        "(systemd-run, else setsid), print the run's id and return; follow it with --status RUN")
    verbs = g.add_mutually_exclusive_group()
    verbs.add_argument("--status", metavar="RUN", help="a detached run's progress on every host, and its ETA")
    verbs.add_argument("--collect", metavar="RUN", help="pull what a detached run's hosts measured into --db "
                                                        "(again as often as wanted: nothing counts twice)")
    verbs.add_argument("--stop", metavar="RUN", help="end a detached run on every host: each bench stops as on "
                                                     "Ctrl-C (its pool destroyed); --resume goes on later")
    verbs.add_argument("--attach", metavar="RUN", help="follow a detached run until it ends: each host's progress "
                                                       "every --interval, what is finished pulled into --db as it "
                                                       "comes; Ctrl-C leaves the run going")
    g.add_argument("--interval", type=float_arg("--interval", 1, 3600), default=None, metavar="SECONDS",
                   help="with --attach: seconds between looks at the hosts (default 30)")
    g.add_argument("--probe-detached", metavar="PREFIX",
                   help="what --status, --collect and --stop run on each host: its detached run (files PREFIX.pid, "
                        ".exit) and the layouts --db holds finished for --origin, as JSON; reads only")


def detached_verb(args) -> int | None:
    """The exit code of a detached run's verb, or None when the command is not one."""
    if args.probe_detached:
        from zfslab.system.detached_probe import probe
        print(json.dumps(probe(args.probe_detached, args.db, args.origin or "")))
        return 0
    if args.interval is not None and not args.attach:
        raise UsageError(f"--interval {args.interval:g}: goes with --attach RUN")
    verb = next(((name, run) for name in ("status", "collect", "stop", "attach") if (run := getattr(args, name))), None)
    if verb is None:
        return None
    if args.hosts or args.inventory or args.detach:
        raise UsageError(f"--{verb[0]} RUN finds the hosts in the run's record beside --db: leave out --hosts, "
                         "--inventory and --detach")
    return _verb(args, *verb)


def _verb(args, name: str, run: str) -> int:
    from zfslab.model.fleet_detach import check_run_id
    from zfslab.store.fleet_state import read_state
    from zfslab.system import fleet_detach

    try:
        check_run_id(run)
    except ValueError as e:
        raise UsageError(f"--{name} {e}") from None
    state = read_state(args.db, run)
    transport = transport_from_args(args)
    try:
        if name == "collect":
            return _collected(fleet_detach.collect(transport, state, limit=args.parallel), state)
        if name == "stop":
            return _stopped(fleet_detach.stop(transport, state, limit=args.parallel), state)
        if name == "attach":
            return _attached(fleet_detach.follow(transport, state, limit=args.parallel, interval_s=args.interval or 30.0),
                             state)
        return _status(fleet_detach.status(transport, state, limit=args.parallel), state, args.json)
    finally:
        transport.close()


def _status(progress, state, as_json: bool) -> int:
    from zfslab.model.fleet_detach import eta_s

    eta = eta_s(progress, state["predicted_s"], time.time() - state["started_s"])
    total = sum(len(p.layouts) for p in progress)
    done = sum(len(set(p.done) & set(p.layouts)) for p in progress)
    running = sum(p.alive for p in progress)
    if as_json:
        print(json.dumps({"run": state["run"], "layouts": total, "done": done, "running": running, "eta_s": eta,
                          "hosts": [{"host": p.host, "layouts": len(p.layouts), "done": len(set(p.done) & set(p.layouts)),
                                     "started": p.started, "running": p.alive, "ended": p.ended,
                                     "exit_code": p.exit_code, "rebooted": p.rebooted,
                                     "error": p.error or None} for p in progress]}))
    else:
        when = f"; ETA {eta:,.0f} s" if eta is not None else ""
        print(f"run {state['run']}: {done} of {total} layouts done on {len(progress)} hosts, {running} running{when}")
        for p in progress:
            print(f"  {p.line()}")
    bad = [p for p in progress if p.error or (p.ended and not p.finished) or (not p.started and not p.alive)]
    if bad and not as_json:
        print(f"zfslab: {len(bad)} hosts ended without finishing or were not reached: `--collect {state['run']}` "
              "pulls what they did; the same bench --hosts command with --resume goes on", file=sys.stderr)
    return 4 if bad else 0


def _collected(pulled, state, *, hint: bool = True) -> int:
    for host, why in pulled.failed:
        print(f"zfslab: {host}: its database could not be pulled ({why})", file=sys.stderr)
    then = f" (run {state['run']}; `--status {state['run']}` says what is still running)" if hint else ""
    print(f"{pulled.measurements} measurements of {pulled.runs} runs from {len(pulled.origins)} hosts in "
          f"{state['db']}{then}")
    return 4 if pulled.failed else 0


def _attached(rounds, state) -> int:
    """Print each host's line when it changes, and each pull; the last round's status decides the
    exit code, as --status's would. Ctrl-C stops following, never the run."""
    run = state["run"]
    print(f"attached to run {run} on {len(state['hosts'])} hosts; Ctrl-C leaves it running")
    shown: dict[str, str] = {}
    last = None
    t0 = time.monotonic()
    try:
        for last in rounds:
            for p in last.progress:
                if shown.get(p.host) != (line := p.line()):
                    print(f"  {_clock(time.monotonic() - t0)} {line}", flush=True)
                    shown[p.host] = line
            if last.pulled is not None and last.pulled.failed:
                for host, why in last.pulled.failed:
                    print(f"zfslab: {host}: its database could not be pulled ({why})", file=sys.stderr)
    except KeyboardInterrupt:
        raise Interrupted(f"run {run} goes on on its hosts, and what was pulled is in {state['db']}: "
                          f"`--attach {run}` follows it again, `--stop {run}` ends it") from None
    assert last is not None   # follow() yields at least once
    code = _status(last.progress, state, as_json=False)
    if last.pulled is not None:
        code = max(code, _collected(last.pulled, state, hint=False))
    return code


def _clock(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def _stopped(progress, state) -> int:
    for p in progress:
        print(f"  {p.line()}")
    left = [p.host for p in progress if p.error or p.alive]
    if left:
        print(f"zfslab: not stopped: {', '.join(left)}", file=sys.stderr)
        return 4
    print(f"run {state['run']} stopped on every host; each bench destroyed its pool. `--collect {state['run']}` "
          "pulls what was done; the same bench --hosts command with --resume goes on")
    return 0


def detach(transport, plan) -> int:
    """Record the run beside --db, then start every host's part detached, in waves of --parallel."""
    from zfslab.store.fleet_state import write_state
    from zfslab.system.fanout import fan_out
    from zfslab.system.fleet_detach import detached_hosts, new_run_id, start_host, state_of

    started_s = time.time()
    run = new_run_id(started_s)
    hosts = detached_hosts(plan, run)
    path = write_state(plan.request.db, run, state_of(plan, run, hosts, started_s))
    zfslab = getattr(transport, "path", "zfslab")   # --remote-zfslab's, inside the launch script too
    by_name = {d.host.name: d for d in hosts}
    outcomes = fan_out([d.host for d in hosts], lambda h: start_host(transport, plan, run, by_name[h.name], zfslab),
                       limit=plan.request.limit)
    for o in outcomes:
        if not o.ok:
            print(f"zfslab: {o.host.name}: not started ({o.error})", file=sys.stderr)
    total = sum(len(d.layouts) for d in hosts)
    print(f"detached run {run}: {total} layouts on {sum(o.ok for o in outcomes)} of {len(hosts)} hosts; each host's "
          f"log and database stay there (record: {path})")
    print(f"follow it: zfslab bench --db {plan.request.db} --status {run}   (then --collect {run}, or --stop {run})")
    return 0 if all(o.ok for o in outcomes) else 4
