"""`bench --hosts --detach` and the verbs that find the run again (docs/fleet.md#detached-runs).

Each host's share runs on the host itself, not in the controller's ssh session: a transient
systemd unit (`systemd-run --unit zfslab-bench-RUN`) where systemd runs and we are root, else a
`setsid -f` session. Either way the launch script, one `sh -c`, records its pid (and the boot),
runs the host's `zfslab bench` of each layout in turn (one layout a run, as an attached fleet
bench does, so `--resume` reads it alike), and records the exit code; its log and database stay
on the host. Status, collect and stop each hold at most `--parallel` ssh sessions at once, each
a short one: `zfslab bench --probe-detached`, the usual pull, `systemctl stop` or `kill`; attach is
status and collect in turn, every `--interval` seconds, until nothing runs."""

from __future__ import annotations

import json
import os
import secrets
import shlex
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from zfslab.model.fleet_detach import HostProgress, unit_name
from zfslab.model.inventory import Host
from zfslab.system.fanout import fan_out
from zfslab.system.fleet_bench import SHORT_TIMEOUT_S, FleetPlan, Pulled, late_rule_of, pull
from zfslab.system.transport import Transport

# systemd runs (its runtime folder) and we may start system units (only root can write there);
# tests point it at a program that fails, as their hosts are this machine
SYSTEMD_CHECK = ["test", "-d", "/run/systemd/system", "-a", "-w", "/run/systemd/system"]
STOP_WAIT_S = 180.0   # a stopped bench destroys its pool before it ends: wait this long for it
POLL_S = 0.5


def new_run_id(now_s: float) -> str:
    """YYYYMMDD-HHMMSS-xxxx (UTC): sorts by start, and two starts in one second still differ."""
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime(now_s)) + "-" + secrets.token_hex(2)


def launch_script(prefix: str, benches: Sequence[Sequence[str]]) -> str:
    """The host's run: its output to PREFIX.log, PREFIX.pid ("PID BOOT_ID") first, every bench in
    turn (a failed one does not stop the next, as an attached run goes on), PREFIX.exit last (the
    last failure's code, else 0): a run stopped or cut by a reboot has no exit file. No bench starts
    once PREFIX.stop exists (`stop` makes it before it looks for the pid: see there)."""
    q = shlex.quote
    # the pid file is synced (with its folder's entry) before any bench starts: a power cut seconds
    # later must not lose it, or status would call a run the cut ended "not started" (seen on a guest)
    folder = os.path.dirname(prefix) or "."
    lines = [f"exec >{q(prefix + '.log')} 2>&1 </dev/null",
             f"echo \"$$ $(cat /proc/sys/kernel/random/boot_id)\" >{q(prefix + '.pid')}",
             f"sync -- {q(prefix + '.pid')} {q(folder)} || sync", "rc=0"]
    stopped = f"[ -e {q(prefix + '.stop')} ] && exit 143"
    lines += [f"{stopped}\n{shlex.join(argv)} || rc=$?" for argv in benches]
    lines.append(f"echo \"$rc\" >{q(prefix + '.exit')}")
    return "\n".join(lines)


def launch_argv(run_id: str, script: str, *, systemd: bool, path_env: str = "") -> list[str]:
    """The one remote command that starts the script detached. systemd: a transient unit whose stop
    ends every process of its cgroup (KillMode=control-group), removed once it ends (--collect),
    started in the ssh session's folder (--same-dir: the databases' paths are from the home) with
    its PATH (a unit's own PATH would miss a zfslab in ~/.local/bin). No --stop-with-session."""
    if not systemd:
        return ["setsid", "-f", "sh", "-c", script]
    env = [f"--setenv=PATH={path_env}"] if path_env else []
    return ["systemd-run", f"--unit={unit_name(run_id)}", "--collect", "--same-dir", "--quiet",
            "--property=KillMode=control-group", *env, "--", "sh", "-c", script]


@dataclass(frozen=True, slots=True)
class DetachedHost:
    """One host of a detached run, as its record keeps it."""

    host: Host
    remote_db: str
    prefix: str                # PREFIX.log, .pid, .exit on the host
    layouts: tuple[str, ...]   # its queue, cleanups first
    cleanup: tuple[str, ...]


def detached_hosts(plan: FleetPlan, run_id: str) -> list[DetachedHost]:
    req = plan.request
    return [DetachedHost(h, req.remote_db_for(h), f"{req.remote_db_for(h)}.{run_id}", tuple(plan.layouts(h.name)),
                         tuple(plan.cleanup.get(h.name, []))) for h in req.hosts]


def start_host(transport: Transport, plan: FleetPlan, run_id: str, d: DetachedHost, zfslab: str = "zfslab") -> bool:
    """Make its database's folder and start its run detached; True when systemd runs it."""
    req = plan.request
    folder = os.path.dirname(d.remote_db)
    if folder:
        transport.run(d.host, ["mkdir", "-p", "--", folder], timeout_s=SHORT_TIMEOUT_S)
    benches = [[zfslab, *req.bench_argv(d.host, [x])[1:]] for x in d.layouts]
    systemd = transport.run(d.host, SYSTEMD_CHECK, timeout_s=SHORT_TIMEOUT_S, check=False).returncode == 0
    path = transport.run(d.host, ["printenv", "PATH"], timeout_s=SHORT_TIMEOUT_S).stdout.strip() if systemd else ""
    script = launch_script(d.prefix, benches)
    transport.run(d.host, launch_argv(run_id, script, systemd=systemd, path_env=path), timeout_s=SHORT_TIMEOUT_S)
    return systemd


def state_of(plan: FleetPlan, run_id: str, hosts: Sequence[DetachedHost], started_s: float) -> dict:
    """The controller's record: what status, collect and stop need, without the original command."""
    req = plan.request
    predicted = {j.name.split(" on ")[0]: j.predicted_s for j in plan.ledger.jobs.values()}
    return {"run": run_id, "db": os.path.abspath(req.db), "started_s": started_s, "options": req.options.as_dict(),
            "disk_count": len(req.devices), "predicted_s": predicted,
            "hosts": [{"name": d.host.name, "destination": d.host.destination, "port": d.host.port,
                       "user": d.host.user, "remote_db": d.remote_db, "prefix": d.prefix, "layouts": list(d.layouts),
                       "cleanup": list(d.cleanup)}
                      for d in hosts]}


def hosts_of(state: dict) -> list[tuple[Host, dict]]:
    return [(Host(h["name"], h["destination"], h["port"], h["user"]), h) for h in state["hosts"]]


def probe_host(transport: Transport, host: Host, h: dict, zfslab: str = "zfslab") -> HostProgress:
    argv = [zfslab, "bench", "--probe-detached", h["prefix"], "--db", h["remote_db"], "--origin", host.name]
    answer = json.loads(transport.run(host, argv, timeout_s=SHORT_TIMEOUT_S).stdout)
    return HostProgress(host.name, tuple(h["layouts"]), answer["started"], answer["alive"], answer["exit_code"],
                        tuple(answer["done"]), pid=answer["pid"], rebooted=bool(answer.get("rebooted")))


def status(transport: Transport, state: dict, *, limit: int) -> list[HostProgress]:
    """Every host's progress, asked in waves of `limit` short sessions."""
    pairs = hosts_of(state)
    by_name = dict((host.name, h) for host, h in pairs)
    outcomes = fan_out([host for host, _ in pairs], lambda host: probe_host(transport, host, by_name[host.name]),
                       limit=limit)
    return [o.value if o.ok else HostProgress(o.host.name, tuple(by_name[o.host.name]["layouts"]), False, False,
                                              None, (), str(o.error)) for o in outcomes]


@dataclass(frozen=True, slots=True)
class _Pulling:
    """What `pull` needs of a request, from the record: each host's database, --db, the wave size."""

    db: str
    limit: int
    remote_dbs: dict

    def remote_db_for(self, host: Host) -> str:
        return self.remote_dbs[host.name]


def collect(transport: Transport, state: dict, *, limit: int) -> Pulled:
    """Pull every host's database (a consistent copy taken there) and merge it into --db: the same
    pull as an attached run's end, so collecting again adds only what is new."""
    pairs = hosts_of(state)
    cleanup = {h["name"]: h["cleanup"] for _, h in pairs if h["cleanup"]}
    rule = late_rule_of(state["db"], state["options"], state["disk_count"], {host.name for host, _ in pairs}, cleanup)
    request = _Pulling(state["db"], limit, {h["name"]: h["remote_db"] for _, h in pairs})
    return pull(transport, request, [host for host, _ in pairs], rule)   # type: ignore[arg-type]


def stop(transport: Transport, state: dict, *, limit: int) -> list[HostProgress]:
    """End every host's run as SIGTERM ends a bench (its pool destroyed, its finished layouts kept),
    and wait until no process of it is left; returns each host's progress after."""
    pairs = hosts_of(state)

    def one(pair: tuple[Host, dict]) -> HostProgress:
        host, h = pair
        # The mark first, the look for the pid after; the launch writes its pid first and looks for
        # the mark after, before each bench. So a launch this look finds not started yet starts no
        # bench when it does start (a CI-like run's --stop met a host whose unit had not yet run its
        # script, called it "not started" and left it to start its run afterwards). mkdir: it
        # creates the name or fails, never following or writing through what is there.
        transport.run(host, ["mkdir", "--", h["prefix"] + ".stop"], timeout_s=SHORT_TIMEOUT_S, check=False)
        p = probe_host(transport, host, h)
        if p.alive and transport.run(host, SYSTEMD_CHECK, timeout_s=SHORT_TIMEOUT_S, check=False).returncode == 0:
            # its unit, as start_host chose it by the same check: SIGTERM to every process of its cgroup
            transport.run(host, ["systemctl", "stop", unit_name(state["run"])], timeout_s=STOP_WAIT_S, check=False)
            p = probe_host(transport, host, h)
        if p.alive:   # the launch's session: its shell, each bench and the fio they run
            transport.run(host, ["kill", "-TERM", "--", f"-{p.pid}"], timeout_s=SHORT_TIMEOUT_S, check=False)
        deadline = time.monotonic() + STOP_WAIT_S
        while p.alive and time.monotonic() < deadline:
            time.sleep(POLL_S)
            p = probe_host(transport, host, h)
        return p
    by_name = {host.name: (host, h) for host, h in pairs}
    outcomes = fan_out([host for host, _ in pairs], lambda host: one(by_name[host.name]), limit=limit)
    return [o.value if o.ok else HostProgress(o.host.name, (), False, False, None, (), str(o.error))
            for o in outcomes]


@dataclass(frozen=True, slots=True)
class Round:
    """One look of `--attach`: every host's progress, and the pull made after it (None: nothing new)."""

    progress: list[HostProgress]
    pulled: Pulled | None

    @property
    def running(self) -> bool:
        return any(p.alive for p in self.progress)


def follow(transport: Transport, state: dict, *, limit: int, interval_s: float,
           wait: Callable[[float], None] = time.sleep) -> Iterator[Round]:
    """`--attach`: each host's progress every `interval_s`, with a pull whenever a host has finished
    layouts not yet pulled, so --db fills as the run goes; the last round is the one where nothing
    runs, and it always pulls (a host that ended since the look before may have finished one more).
    Each round holds at most `limit` sessions, each a short one; none is held between rounds."""
    pulled_done: dict[str, frozenset[str]] = {}
    while True:
        progress = status(transport, state, limit=limit)
        running = any(p.alive for p in progress)
        new = any(set(p.done) - pulled_done.get(p.host, frozenset()) for p in progress if not p.error)
        pulled = collect(transport, state, limit=limit) if new or not running else None
        if pulled is not None:
            failed = {host for host, _ in pulled.failed}
            pulled_done.update({p.host: frozenset(p.done) for p in progress if p.host not in failed and not p.error})
        yield Round(progress, pulled)
        if not running:
            return
        wait(interval_s)
