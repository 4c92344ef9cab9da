"""`drill --hosts`: each host's answer (its own `zfslab drill ... --json`) read back, for one table
of hosts by scenarios. Pure records: system/fleet_drill.py runs the remote drills and parses their
answers into them (docs/fleet.md#drills)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ScenarioOutcome:
    scenario: str             # degraded | resilver | corrupt
    outcome: str              # as the host's drill words it, e.g. repaired, damaged
    seconds: float


@dataclass(frozen=True, slots=True)
class HostDrill:
    host: str
    layout: str
    verdict: str
    seconds: float
    scenarios: tuple[ScenarioOutcome, ...]
    data: dict                # the host's JSON whole, for --json
