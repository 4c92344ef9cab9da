"""Preflight on every host in parallel: what is installed and which disks the names point at,
read with programs that never write (zfslab --version, zpool version, fio --version, lsblk).
model/preflight.py judges the answers (docs/fleet.md#preflight)."""

from __future__ import annotations

from collections.abc import Sequence

from zfslab.model.inventory import Host
from zfslab.model.preflight import LSBLK_COLUMNS, HostFacts, first_line, parse_lsblk, refusals
from zfslab.system.fanout import DEFAULT_LIMIT, fan_out
from zfslab.system.transport import Transport

COMMAND_TIMEOUT_S = 60


def host_facts(transport: Transport, host: Host, disks: Sequence[str]) -> HostFacts:
    """One host's versions and the facts of the disks named (HostUnreachable if it cannot be reached)."""
    def answer(argv: list[str]) -> str | None:
        done = transport.run(host, argv, timeout_s=COMMAND_TIMEOUT_S, check=False)
        return done.stdout if done.returncode == 0 else None
    zfslab = answer(["zfslab", "--version"])
    zfs = answer(["zpool", "version"])
    fio = answer(["fio", "--version"])
    found, missing = [], []
    for disk in disks:   # one lsblk per disk: a missing one is named, and the order is ours
        text = answer(["lsblk", "-J", "-b", "-o", LSBLK_COLUMNS, "--nodeps", disk])
        if text is None:
            missing.append(disk)
        else:
            found += parse_lsblk(text, host.name)
    version = first_line(zfslab or "")
    return HostFacts(host.name, version.removeprefix("zfslab ").strip() if version else None,
                     first_line(zfs or ""), first_line(fio or ""), tuple(found), tuple(missing))


def preflight(transport: Transport, hosts: Sequence[Host], disks: Sequence[str], *, controller_version: str,
              limit: int = DEFAULT_LIMIT) -> tuple[list[HostFacts], list[str]]:
    """Every host's facts and every refusal, one line each ([] refusals: all may start)."""
    outcomes = fan_out(hosts, lambda h: host_facts(transport, h, disks), limit=limit)
    facts = [o.value for o in outcomes if o.ok]
    lines = [str(o.error) for o in outcomes if not o.ok]
    return facts, lines + refusals(facts, controller_version=controller_version)
