"""`drill --hosts`: each host's answer (its own `zfslab drill ... --json`) read back, for one table
of hosts by scenarios. Pure: system/fleet_drill.py runs the remote drills (docs/fleet.md#drills)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

from zfslab.errors import ZfslabError, clip


class BadRemoteDrill(ZfslabError):
    """host {}: `zfslab drill` printed {}, not a drill result; is the controller's zfslab installed there?"""

    exit_code = 4


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
