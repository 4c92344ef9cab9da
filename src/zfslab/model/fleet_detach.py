"""A detached fleet bench (docs/fleet.md#detached-runs), as numbers: its run id, each host's
progress as its own probe reported it, the words status prints and the ETA. Pure: the clock and
the hosts' answers are arguments."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

RUN_ID = re.compile(r"[0-9]{8}-[0-9]{6}-[0-9a-f]{4}")


def check_run_id(text: str) -> str:
    """The run id as `--detach` printed it (YYYYMMDD-HHMMSS-xxxx), else ValueError naming it."""
    if not RUN_ID.fullmatch(text or ""):
        raise ValueError(f"run {text[:40]!r}: not a detached run's id; give the id its start printed, "
                         "e.g. 20261129-031500-a1b2")
    return text


def unit_name(run_id: str) -> str:
    """The transient systemd unit a host runs the bench in."""
    return f"zfslab-bench-{run_id}"


@dataclass(frozen=True, slots=True)
class HostProgress:
    """What one host's probe said: started (its pid file is there), alive (a process of its session
    runs, in this boot), its exit code once it ended by itself, the layouts finished in its database."""

    host: str
    layouts: tuple[str, ...]
    started: bool
    alive: bool
    exit_code: int | None
    done: tuple[str, ...]
    error: str = ""               # the host could not be asked
    pid: int | None = None        # the launch's session leader (stop kills its process group)
    rebooted: bool = False        # the host booted since the run started (which ended it)

    @property
    def ended(self) -> bool:
        return not self.error and self.started and not self.alive

    @property
    def finished(self) -> bool:
        """Ended by itself with every layout done: nothing left to run there."""
        return self.ended and self.exit_code == 0 and set(self.layouts) <= set(self.done)

    def line(self) -> str:
        count = f"{len(set(self.done) & set(self.layouts))} of {len(self.layouts)} layouts done"
        if self.error:
            return f"{self.host}: not reached ({self.error})"
        if not self.started:
            return f"{self.host}: {count}, not started"
        if self.alive:
            return f"{self.host}: {count}, running"
        if self.exit_code is None and self.rebooted:
            return f"{self.host}: {count}, ended without finishing: the host rebooted during the run"
        if self.exit_code is None:
            return f"{self.host}: {count}, ended without finishing (stopped)"
        return f"{self.host}: {count}, ended, exit {self.exit_code}"


def eta_s(progress: Sequence[HostProgress], predicted_s: Mapping[str, float], elapsed_s: float) -> float | None:
    """Seconds until the last running host ends: each running host's predicted time left, scaled
    by the pace measured so far (elapsed over the predicted time of what is done) once a layout is
    done; None when nothing runs."""
    running = [p for p in progress if p.alive]
    if not running:
        return None
    done_s = sum(predicted_s.get(x, 0.0) for p in progress for x in set(p.done) & set(p.layouts))
    pace = max(1.0, elapsed_s / done_s) if done_s > 0 and elapsed_s > 0 else 1.0
    left = [sum(predicted_s.get(x, 0.0) for x in p.layouts if x not in p.done) for p in running]
    return max(left) * pace
