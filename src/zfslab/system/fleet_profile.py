"""`profile-disk --hosts`: preflight, then every disk of every host profiled read-only by the host's
own `zfslab profile-disk DISK --json` (docs/fleet.md#fleet-acceptance). A host that cannot be
reached, or a disk whose profile fails, is one line; the others are still measured."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from zfslab.errors import ZfslabError, clip
from zfslab.model.fleet_exit import HOST_FAILED, REFUSED_THERE
from zfslab.model.fleet_profile import DiskResult, FleetProfile
from zfslab.model.inventory import Host
from zfslab.model.preflight import HostFacts, PreflightRefused, refusals
from zfslab.system.fanout import DEFAULT_LIMIT, fan_out
from zfslab.system.preflight import controller_digest, host_facts
from zfslab.system.transport import HostUnreachable, RemoteFailed, Transport

# The disks of one host are profiled at once, as the issue asks: 24 disks take one disk's time,
# not 24 times it, and every disk of every host runs under the same load, so peers stay
# comparable; a controller or backplane that cannot carry all its disks at once shows as a slow
# host. At most 8 sessions at a time ride the host's one ssh connection: sshd's MaxSessions
# defaults to 10 a connection (sshd_config(5)).
DISKS_AT_ONCE = 8


def profile_timeout_s(seconds: int) -> float:
    """How long one remote profile may take: its four fio jobs, each with profile.py's own timeout."""
    return 4 * (seconds * 4 + 120) + 60


def checked_hosts(transport: Transport, hosts: Sequence[Host], disks: Sequence[str], *, controller_version: str,
                  limit: int = DEFAULT_LIMIT, need_zfs: bool = True) -> tuple[list[HostFacts], list[str]]:
    """Preflight: the facts of the hosts that answered, and one line for each host that did not.
    PreflightRefused (nothing is measured) when the hosts that answered differ."""
    outcomes = fan_out(hosts, lambda h: host_facts(transport, h, disks), limit=limit, on_interrupt=transport.close)
    facts = [o.value for o in outcomes if o.ok]
    refused = refusals(facts, controller_version=controller_version, need_zfs=need_zfs,
                       controller_digest=controller_digest())
    if refused:
        raise PreflightRefused("\n".join([*refused, "nothing was run; make the hosts alike, or leave one out "
                                                       "with `skip_host` HOST"]))
    return facts, [str(o.error) for o in outcomes if not o.ok]


def profile_fleet(transport: Transport, hosts: Sequence[Host], disks: Sequence[str], *, seconds: int,
                  controller_version: str, limit: int = DEFAULT_LIMIT) -> FleetProfile:
    """Every disk of every host that passes preflight, profiled read-only."""
    facts, failures = checked_hosts(transport, hosts, disks, controller_version=controller_version, limit=limit,
                                    need_zfs=False)
    by_name = {f.host: f for f in facts}
    ready = [h for h in hosts if h.name in by_name]
    outcomes = fan_out(ready, lambda h: _profile_host(transport, h, disks, by_name[h.name], seconds), limit=limit,
                       on_interrupt=transport.close)
    results: list[DiskResult] = []
    codes = [HOST_FAILED] * len(failures)   # preflight's: hosts not reached
    for o in outcomes:
        if not o.ok:
            failures.append(str(o.error))
            codes.append(HOST_FAILED)
            continue
        found, lines, host_codes = o.value
        results += found
        failures += lines
        codes += host_codes
    return FleetProfile(tuple(results), tuple(failures), tuple(codes))


def _profile_host(transport: Transport, host: Host, disks: Sequence[str], facts: HostFacts,
                  seconds: int) -> tuple[list[DiskResult], list[str], list[int]]:
    """One host's disks, at most DISKS_AT_ONCE at a time; a failed disk is a line (with the exit
    code it counts as: the remote's own when its zfslab refused, else HOST_FAILED), a lost host one line."""
    # preflight ran one lsblk per disk, in the order given, and every disk was there
    known = dict(zip(disks, facts.disks))

    def one(disk: str) -> DiskResult:
        # --stop-with-session: the controller's Ctrl-C closes the session, and so stops this and its fio
        done = transport.run(host, ["zfslab", "profile-disk", disk, "--json", "--seconds", str(seconds),
                                    "--stop-with-session"], timeout_s=profile_timeout_s(seconds))
        return parse_remote_profile(done.stdout, host=host.name, disk=disk, model=known[disk].model,
                                    size_bytes=known[disk].size_bytes)

    def caught(disk: str):
        try:
            return one(disk)
        except Exception as e:  # noqa: BLE001 - one disk's failure is its line, the others go on
            return e
    with ThreadPoolExecutor(max_workers=max(1, min(DISKS_AT_ONCE, len(disks))), thread_name_prefix="zfslab-disk") as pool:
        answers = list(pool.map(caught, disks))
    lost = next((a for a in answers if isinstance(a, HostUnreachable)), None)
    if lost is not None and all(isinstance(a, Exception) for a in answers):
        raise lost   # the host went away: one line, not one per disk
    failed = {str(a): _counted_exit(a) for a in answers if isinstance(a, Exception)}   # one line a kind of failure
    return [a for a in answers if isinstance(a, DiskResult)], list(failed), list(failed.values())


def _counted_exit(error: Exception) -> int:
    """A disk's failure as the fleet's exit code counts it: the remote zfslab's refusal (2, 10) as it
    said it, anything else (a failure, a timeout, an answer that is no profile) as HOST_FAILED."""
    if isinstance(error, RemoteFailed) and error.args[2] in REFUSED_THERE:
        return error.args[2]
    return HOST_FAILED


class BadRemoteProfile(ZfslabError):
    """host {}: `zfslab profile-disk {}` printed {}, not a disk profile; is the controller's zfslab installed there?"""

    exit_code = 4


def _rate(data: dict, key: str) -> float | None:
    value = data.get(key)
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value >= 0
    return float(value) if ok else None


def parse_remote_profile(text: str, *, host: str, disk: str, model: str | None, size_bytes: int) -> DiskResult:
    """`zfslab profile-disk DISK --json` output -> the disk's figures; BadRemoteProfile if it is not one."""
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    rates = {k: _rate(data, k) for k in ("seq_read_mb_s", "inner_fraction", "rand_read_iops_qd1",
                                        "rand_read_iops_qd8")} if isinstance(data, dict) else {}
    missing = [k for k in ("seq_read_mb_s", "inner_fraction", "rand_read_iops_qd1", "rand_read_iops_qd8")
               if rates.get(k) is None]
    if missing:
        shown_text = clip(text.strip(), 60) if not isinstance(data, dict) else f"no {missing[0]}"
        raise BadRemoteProfile(host, disk, shown_text)
    return DiskResult(host, disk, model, size_bytes, rates["seq_read_mb_s"],
                      rates["seq_read_mb_s"] * rates["inner_fraction"], rates["rand_read_iops_qd1"],
                      rates["rand_read_iops_qd8"])
