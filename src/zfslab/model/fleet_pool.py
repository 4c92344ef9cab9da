"""The pools of a fleet, as each host's own `zfslab pool --json` reported them (docs/pool.md#many-hosts):
typed records; system/fleet_pool.py asks the hosts and parses their answers into them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RemoteFinding:
    code: str
    severity: str  # warning or note
    text: str


@dataclass(frozen=True, slots=True)
class RemotePool:
    """One pool as its host's zfslab reported it: what the fleet table shows, and the whole record."""

    host: str
    pool: str
    state: str
    layout: str  # zfslab's grammar, '' when the model has none for it
    agrees: bool | None  # the model against the pool: None when not compared
    findings: tuple[RemoteFinding, ...]
    record: dict  # the host's own --json record, for pool --hosts --json


@dataclass(frozen=True, slots=True)
class FleetPools:
    pools: tuple[RemotePool, ...]
    failures: tuple[str, ...]  # one line per host that gave no report
    exit_codes: tuple[int, ...]  # per host, as fleet_exit counts them (0 for a host that answered)
