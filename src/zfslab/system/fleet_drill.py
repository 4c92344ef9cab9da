"""`drill --hosts`: preflight, then the same drill on every host at once, each on its own disks,
by the host's own `zfslab drill` under its own safety gate (docs/fleet.md#drills). A host that
cannot be reached, refuses or fails is one line; the others still report."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from zfslab.errors import ZfslabError, clip, one_line
from zfslab.model.fleet_drill import HostDrill, ScenarioOutcome
from zfslab.model.fleet_exit import HOST_FAILED
from zfslab.model.inventory import Host
from zfslab.system.fanout import DEFAULT_LIMIT, fan_out
from zfslab.system.fleet_profile import checked_hosts
from zfslab.system.remote_argv import zfslab_argv
from zfslab.system.transport import Transport

# A drill fills a pool and resilvers it: hours on large disks. The remote command's own steps
# have their timeouts; this one only ends a host that stopped answering altogether
DRILL_TIMEOUT_S = 24 * 3600
DRY_RUN_TIMEOUT_S = 600      # reads the disks and prints the plan


@dataclass(frozen=True, slots=True)
class RemoteDrill:
    """The drill each host's own zfslab runs: on `devices` (and `spare_disk`), or in a sandbox
    folder of files `sandbox_size` each (text the host's zfslab reads, e.g. 1GiB)."""

    devices: tuple[str, ...] = ()
    sandbox: str | None = None
    sandbox_size: str = "1GiB"
    layout: str | None = None            # None: the host's default for its disks
    spare_disk: str | None = None
    db: str | None = None                # the host's own results database
    fill: float = 0.5
    scenarios: tuple[str, ...] = ("degraded", "resilver", "corrupt")
    corrupt_mb: int = 4
    ashift: int = 12
    sequential_rebuild: bool = False
    wipe: bool = False
    dry_run: bool = False
    json: bool = False                   # a dry run's plan as JSON (a drill's answer is JSON always)

    def argv(self, serials: str | None = None) -> list[str]:
        """The host's `zfslab drill`, with that host's consent: `serials` the user typed for it."""
        where = [("--disks", ",".join(self.devices))] if self.devices else [
            ("--sandbox", self.sandbox), ("--sandbox-size", self.sandbox_size)]
        return zfslab_argv("drill", [
            *where, ("--layout", self.layout), ("--spare-disk", self.spare_disk), ("--db", self.db),
            ("--fill", self.fill), ("--scenarios", ",".join(self.scenarios)), ("--corrupt-mb", self.corrupt_mb),
            ("--ashift", self.ashift), ("--sequential-rebuild", self.sequential_rebuild), ("--wipe", self.wipe),
            ("--confirm-serials", serials or None),
            ("--stop-with-session", not self.dry_run),   # the controller's Ctrl-C stops the host's drill
            # the answer as data, except a dry run's plan, which is shown as the host printed it
            ("--dry-run", self.dry_run), ("--json", self.json or not self.dry_run)])


@dataclass(frozen=True, slots=True)
class HostPlan:
    """A host's --dry-run: its plan as it printed it, and whether its gate would let it go (0) or refuse (10)."""

    host: str
    exit_code: int
    text: str                 # the remote's stdout: the steps (or their JSON)
    notes: tuple[str, ...]    # the remote's stderr lines: the gate's verdict, notes on the disks


@dataclass(frozen=True, slots=True)
class FleetDrill:
    drills: tuple[HostDrill, ...]
    plans: tuple[HostPlan, ...]
    failures: tuple[str, ...]
    exit_codes: tuple[int, ...] = ()   # one a failure: its host's exit code (4: not reached)


def fleet_drill(transport: Transport, hosts: Sequence[Host], drill: RemoteDrill, *, controller_version: str,
                serials: Mapping[str, str] | None = None, limit: int = DEFAULT_LIMIT) -> FleetDrill:
    """The drill on every host preflight passes (its disks: the drill's devices and spare), each
    with its own consent (`serials`: host -> the serials the user typed for it). A dry run: each
    host's plan, nothing written anywhere (the remote dry run reads only)."""
    disks = [*drill.devices, *([drill.spare_disk] if drill.spare_disk and drill.devices else [])]
    dry_run = drill.dry_run
    facts, failures = checked_hosts(transport, hosts, disks, controller_version=controller_version, limit=limit)
    passed = {f.host for f in facts}
    ready = [h for h in hosts if h.name in passed]

    def one(host: Host):
        argv = drill.argv((serials or {}).get(host.name))
        done = transport.run(host, argv, timeout_s=DRY_RUN_TIMEOUT_S if dry_run else DRILL_TIMEOUT_S, check=False)
        notes = tuple(one_line(x) for x in done.stderr.splitlines() if x.strip())
        if dry_run and done.returncode in (0, 10):
            return HostPlan(host.name, done.returncode, done.stdout, notes)
        if done.returncode != 0:
            said = " | ".join(n.removeprefix("zfslab: error: ") for n in notes if not n.startswith("zfslab: ") or
                              n.startswith("zfslab: error: ")) or "(no message)"
            return done.returncode, f"host {host.name}: drill exited {done.returncode}: {said}"
        return parse_remote_drill(done.stdout, host.name)
    outcomes = fan_out(ready, one, limit=limit, on_interrupt=transport.close)
    codes = [HOST_FAILED] * len(failures)   # preflight's: hosts not reached
    for o in outcomes:
        if not o.ok:
            failures.append(str(o.error))
            codes.append(HOST_FAILED)   # not reached, timed out, or an answer that is no drill
        elif isinstance(o.value, tuple):
            codes.append(o.value[0])
            failures.append(o.value[1])
    return FleetDrill(tuple(o.value for o in outcomes if o.ok and isinstance(o.value, HostDrill)),
                      tuple(o.value for o in outcomes if o.ok and isinstance(o.value, HostPlan)), tuple(failures),
                      tuple(codes))


class BadRemoteDrill(ZfslabError):
    """host {}: `zfslab drill` printed {}, not a drill result; is the controller's zfslab installed there?"""

    exit_code = 4


def _seconds(value) -> float | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0
    return float(value) if ok else None


def parse_remote_drill(text: str, host: str) -> HostDrill:
    """`zfslab drill ... --json` -> the host's drill; BadRemoteDrill if it is not one."""
    try:
        data = json.loads(text)
    except ValueError:
        raise BadRemoteDrill(host, clip(text.strip(), 60)) from None
    if not isinstance(data, dict) or not isinstance(data.get("scenarios"), list):
        raise BadRemoteDrill(host, clip(text.strip(), 60))
    found = []
    for s in data["scenarios"]:
        seconds = _seconds(s.get("seconds")) if isinstance(s, dict) else None
        if seconds is None or not isinstance(s.get("scenario"), str) or not isinstance(s.get("outcome"), str):
            raise BadRemoteDrill(host, f"a scenario {clip(s, 60)}")
        found.append(ScenarioOutcome(s["scenario"], s["outcome"], seconds))
    layout, verdict = data.get("layout"), data.get("verdict")
    if not isinstance(layout, str) or not isinstance(verdict, str):
        raise BadRemoteDrill(host, f"layout {clip(layout)}, verdict {clip(verdict)}")
    return HostDrill(host, layout, verdict, _seconds(data.get("seconds")) or sum(s.seconds for s in found),
                     tuple(found), data)
