"""Judging an existing pool from its own `zpool status`: state, error counters, data errors,
and how long ago it was last scrubbed (`drill --pool NAME --read-only`)."""

from __future__ import annotations

import datetime
import re

from zfslab.system.zfs_output import PoolStatus

SCRUB_EVERY_DAYS = 35  # a monthly scrub, as OpenZFS's own timers (zfs-scrub-monthly@.timer) run it, plus slack


def scan_age_days(status: PoolStatus, now: datetime.datetime) -> float | None:
    """Days since the last scan finished, from the date on its status line; None if it has none."""
    m = re.search(r" on (\w{3} \w{3} +\d+ [\d:]+ \d{4})", status.scan.text)
    if not m:
        return None
    when = datetime.datetime.strptime(" ".join(m.group(1).split()), "%a %b %d %H:%M:%S %Y")
    return (now - when).total_seconds() / 86400


def health_report(status: PoolStatus, last_scrub_age_days: float | None) -> dict:
    """--read-only: what a pool's own status says, judged."""
    leaves = [v for v in status.root.walk()]
    errors = {v.name: (v.read_errors, v.write_errors, v.checksum_errors) for v in leaves
              if v.read_errors or v.write_errors or v.checksum_errors}
    problems = []
    if status.state != "ONLINE":
        problems.append(f"pool is {status.state}")
    if errors:
        problems.append("error counters: " + ", ".join(f"{k} R{r}/W{w}/C{c}" for k, (r, w, c) in errors.items()))
    if not status.no_known_errors:
        problems.append(f"data errors: {status.errors}")
    if status.scan.kind is None:
        problems.append("never scrubbed")
    elif last_scrub_age_days is not None and last_scrub_age_days > SCRUB_EVERY_DAYS:
        problems.append(f"last scrub {last_scrub_age_days:.0f} days ago (more than a month)")
    return {"pool": status.name, "state": status.state, "scan": status.scan.text, "error_counters": errors,
            "damaged_files": list(status.damaged_files), "healthy": not problems, "problems": problems}
