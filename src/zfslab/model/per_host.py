"""Per-host figures beside the merged ones, for a results database that holds runs of more than
one host (zfslab merge sets each run's origin): for each layout and test, each host's median, the
median of every run, and each host more than a threshold below its peers' median (the rule of
model/outliers.py). Pure: report reads the rows, this groups them (docs/fleet.md#one-answer-per-host-figures-in-the-report)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from zfslab.model.outliers import DEFAULT_THRESHOLD, below_median


@dataclass(frozen=True, slots=True)
class HostFlag:
    host: str
    value: float
    median: float             # of the hosts' medians, this host's included
    below: float              # 0.2 = 20 % below
    peers: int


@dataclass(frozen=True, slots=True)
class PerHostRow:
    layout: str
    test: str
    unit: str                 # MB/s or IOPS
    merged: float             # median of every run's figure, all hosts together
    by_host: tuple[tuple[str, float], ...]   # (host, median of its runs), hosts in name order
    flags: tuple[HostFlag, ...]

    def lines(self) -> list[str]:
        return [f"{f.host}: {self.layout} {self.test} {f.value:,.0f} {self.unit}, {f.below:.0%} below the median "
                f"{f.median:,.0f} {self.unit} of {f.peers} hosts" for f in self.flags]


def run_origin(run: dict) -> str | None:
    """The host that measured a run: its origin (migration 5, set by merge), else its hostname."""
    return run.get("origin") or run.get("hostname") or None


def figure(row: dict) -> tuple[float | None, str]:
    """A bench row's one figure: IOPS for a 4 KiB test, else MB/s; read and write added (a mixed
    test's total), None when it measured neither."""
    iops = "4k" in row["test"].lower()
    parts = [row.get(k) for k in (("read_iops", "write_iops") if iops else ("read_mb_s", "write_mb_s"))]
    known = [v for v in parts if v is not None]
    return (sum(known) if known else None), ("IOPS" if iops else "MB/s")


def per_host(runs: Sequence[dict], bench: Sequence[dict], *,
             threshold: float = DEFAULT_THRESHOLD) -> tuple[list[str], list[PerHostRow]]:
    """The hosts, and a row per (layout, test) in first-seen order; ([], []) unless the runs come
    from two hosts or more (one host's report has nothing to set beside its figures)."""
    origin = {r["id"]: run_origin(r) for r in runs}
    hosts = sorted({h for h in origin.values() if h})
    if len(hosts) < 2:
        return [], []
    groups: dict[tuple[str, str], dict[str, list[float]]] = {}
    units: dict[tuple[str, str], str] = {}
    for b in bench:
        value, unit = figure(b)
        host = origin.get(b["run_id"])
        if value is None or host is None:
            continue
        key = (b["layout"], b["test"])
        units[key] = unit
        groups.setdefault(key, {}).setdefault(host, []).append(value)
    rows = []
    for (layout, test), by_host in groups.items():
        medians = [(h, statistics.median(by_host[h])) for h in hosts if h in by_host]
        flags = tuple(HostFlag(medians[b.index][0], b.value, b.median, b.below, b.peers)
                      for b in below_median([("", v) for _, v in medians], threshold=threshold))
        every = [v for vs in by_host.values() for v in vs]
        rows.append(PerHostRow(layout, test, units[(layout, test)], statistics.median(every), tuple(medians), flags))
    return hosts, rows


def per_host_dict(hosts: list[str], rows: list[PerHostRow], threshold: float) -> dict:
    """For report --json: each host's median beside the merged one, and the hosts flagged."""
    return {"hosts": hosts, "threshold": threshold,
            "rows": [{"layout": r.layout, "test": r.test, "unit": r.unit, "merged": r.merged,
                      "by_host": dict(r.by_host),
                      "flagged": [{"host": f.host, "value": f.value, "median": f.median, "below": f.below,
                                   "peers": f.peers, "line": line} for f, line in zip(r.flags, r.lines())]}
                     for r in rows]}
