"""A drill's outcome in one line a person reads at a glance."""

from __future__ import annotations

from zfslab.model.drill_results import Corruption, Degraded, Resilver, ScenarioResult, Skipped


def verdict(layout: str, fill: float, results: list[ScenarioResult]) -> str:
    """One line a person reads at a glance."""
    parts = []
    by = {r.scenario: r for r in results}
    d = by.get("degraded")
    if d and isinstance(d.detail, Degraded):
        levels = d.detail.steps
        most = max((s.failed for s in levels if s.verified), default=0)
        parts.append(f"survived {most} failed disk{'s' if most != 1 else ''}, data verified" if d.outcome == "survived"
                     else _lost(levels[-1].failed))
        beyond = d.detail.beyond_parity
        if beyond and beyond.zfs_refused:
            parts.append(f"ZFS refuses to take disk {beyond.failed} of a vdev away (no valid replicas)")
    elif d and isinstance(d.detail, Skipped):
        parts.append(d.detail.why)
    r = by.get("resilver")
    if r and isinstance(r.detail, Resilver):
        parts.append(f"resilvered 1 disk ({r.detail.how}) in {_duration(r.seconds)} at "
                     f"{r.detail.mb_s:.0f} MB/s" + ("" if r.detail.verified else ", data NOT verified"))
    c = by.get("corrupt")
    if c and isinstance(c.detail, Corruption):
        members = c.detail.members
        if c.outcome == "repaired":
            parts.append(f"scrub repaired {c.detail.repaired_bytes / 1e6:.0f} MB after corruption of {members} "
                         f"disk{'s' if members != 1 else ''}")
        else:
            parts.append(f"corruption of {members} disk{'s' if members != 1 else ''} was NOT repaired")
    b = by.get("corrupt-beyond-parity")
    if b and isinstance(b.detail, Corruption):
        files = b.detail.damaged_files
        parts.append(f"with {b.detail.members} corrupted disks ZFS reports {len(files)} damaged file"
                     f"{'s' if len(files) != 1 else ''}" if b.outcome == "damaged"
                     else f"with {b.detail.members} corrupted disks no damage was found")
    return f"{layout} at {round(fill * 100)} % full: " + "; ".join(parts)


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


def _lost(failed: int) -> str:
    return f"LOST data with {failed} failed disk{'s' * (failed != 1)}"
