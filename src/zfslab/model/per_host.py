"""Per-host figures beside the merged ones, for a results database that holds runs of more than
one host (zfslab merge sets each run's origin): for each layout and test, each host's median, the
median of every run, and each host more than a threshold below its peers' median (the rule of
model/outliers.py). Pure: the store hands over each measurement with its host, this groups them
(docs/fleet.md#one-answer-per-host-figures-in-the-report)."""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass

from zfslab.model.outliers import DEFAULT_THRESHOLD, below_median


@dataclass(frozen=True, slots=True)
class HostFlag:
    host: str
    value: float
    median: float             # of the hosts' medians, this host's included
    below: float              # 0.2 = 20 % below
    peers: int


@dataclass(frozen=True, slots=True)
class HostSpread:
    """How far apart the hosts' medians of one layout and test are: with two hosts no median rule
    can tell which is the odd one (HostFlag needs three), but their ratio is a fact."""

    hosts: int
    max_over_min: float       # the fastest host's median over the slowest's; 1.0: alike
    cv: float                 # coefficient of variation of the hosts' medians (population sd / mean)
    slowest: str
    fastest: str


def host_spread(medians: Sequence[tuple[str, float]]) -> HostSpread | None:
    """The spread of (host, median) pairs; None for fewer than two hosts, or a median of 0 or less
    (no ratio)."""
    if len(medians) < 2 or min(v for _, v in medians) <= 0:
        return None
    values = [v for _, v in medians]
    slowest = min(medians, key=lambda hv: hv[1])
    fastest = max(medians, key=lambda hv: hv[1])
    return HostSpread(len(medians), fastest[1] / slowest[1], statistics.pstdev(values) / statistics.fmean(values),
                      slowest[0], fastest[0])


@dataclass(frozen=True, slots=True)
class PerHostRow:
    layout: str
    test: str
    unit: str                 # MB/s or IOPS
    merged: float             # median of every run's figure, all hosts together
    by_host: tuple[tuple[str, float], ...]   # (host, median of its runs), hosts in name order
    flags: tuple[HostFlag, ...]
    spread: HostSpread | None = None   # None: measured on one host only

    def lines(self) -> list[str]:
        return [f"{f.host}: {self.layout} {self.test} {f.value:,.0f} {self.unit}, {f.below:.0%} below the median "
                f"{f.median:,.0f} {self.unit} of {f.peers} hosts" for f in self.flags]


@dataclass(frozen=True, slots=True)
class HostMeasurement:
    """One stored test's medians and the host whose run measured them. The store fills these
    (store/readback.py BenchHistory.host_measurements): the type lives here because the model
    never imports the store, and per_host then reads fields, not the database's column names."""

    host: str | None           # None: a run that names no host (from before migration 5, no hostname)
    layout: str
    test: str
    read_mb_s: float | None
    write_mb_s: float | None
    read_iops: float | None
    write_iops: float | None


def figure(m: HostMeasurement) -> tuple[float | None, str]:
    """A measurement's one figure: IOPS for a 4 KiB test, else MB/s; read and write added (a mixed
    test's total), None when it measured neither."""
    iops = "4k" in m.test.lower()
    parts = (m.read_iops, m.write_iops) if iops else (m.read_mb_s, m.write_mb_s)
    known = [v for v in parts if v is not None]
    return (sum(known) if known else None), ("IOPS" if iops else "MB/s")


def per_host(run_hosts: Iterable[str | None], measurements: Iterable[HostMeasurement], *,
             threshold: float = DEFAULT_THRESHOLD) -> tuple[list[str], list[PerHostRow]]:
    """The hosts (of every run, `run_hosts`, those that measured nothing too), and a row per
    (layout, test) in first-seen order; ([], []) unless the runs come from two hosts or more (one
    host's report has nothing to set beside its figures)."""
    hosts = sorted({h for h in run_hosts if h})
    if len(hosts) < 2:
        return [], []
    groups: dict[tuple[str, str], dict[str, list[float]]] = {}
    units: dict[tuple[str, str], str] = {}
    for m in measurements:
        value, unit = figure(m)
        if value is None or not m.host:
            continue
        key = (m.layout, m.test)
        units[key] = unit
        groups.setdefault(key, {}).setdefault(m.host, []).append(value)
    rows = []
    for (layout, test), by_host in groups.items():
        medians = [(h, statistics.median(by_host[h])) for h in hosts if h in by_host]
        flags = tuple(HostFlag(medians[b.index][0], b.value, b.median, b.below, b.peers)
                      for b in below_median([("", v) for _, v in medians], threshold=threshold))
        every = [v for vs in by_host.values() for v in vs]
        rows.append(PerHostRow(layout, test, units[(layout, test)], statistics.median(every), tuple(medians), flags,
                               host_spread(medians)))
    return hosts, rows


@dataclass(frozen=True, slots=True)
class FleetSpread:
    """The hosts' spread over every layout and test two hosts or more measured (--every-host):
    report's line above the per-host table, plan --db's note on its fit."""

    hosts: int
    rows: int                       # layout x test measured on two hosts or more
    median_max_over_min: float      # the median row's fastest/slowest host
    median_cv: float
    worst: PerHostRow               # the row whose hosts are furthest apart

    def as_dict(self) -> dict:
        """For report --json's per_host and plan --json's speed_fit."""
        return {"hosts": self.hosts, "rows": self.rows, "median_max_over_min": self.median_max_over_min,
                "median_cv": self.median_cv, "worst": {"layout": self.worst.layout, "test": self.worst.test,
                                                       **asdict(self.worst.spread)}, "line": self.line()}

    def line(self) -> str:
        w, s = self.worst, self.worst.spread
        return (f"{self.hosts} hosts measured the same {self.rows} layout × test: {self.median_max_over_min:.2f}× "
                f"apart (fastest/slowest; CV {self.median_cv:.1%}) in the median row, at most {s.max_over_min:.2f}× "
                f"({w.layout} {w.test}, {s.slowest} slowest)")


def fleet_spread(hosts: Sequence[str], rows: Iterable[PerHostRow]) -> FleetSpread | None:
    """The spread of the rows measured on two hosts or more; None when there is none."""
    spread = [r for r in rows if r.spread is not None]
    if not spread:
        return None
    worst = max(spread, key=lambda r: (r.spread.max_over_min, r.layout, r.test))
    return FleetSpread(len(hosts), len(spread), statistics.median(r.spread.max_over_min for r in spread),
                       statistics.median(r.spread.cv for r in spread), worst)


def per_host_dict(hosts: list[str], rows: list[PerHostRow], threshold: float) -> dict:
    """For report --json: each host's median beside the merged one, and the hosts flagged."""
    spread = fleet_spread(hosts, rows)
    return {"hosts": hosts, "threshold": threshold,
            "spread": None if spread is None else spread.as_dict(),
            "rows": [{"layout": r.layout, "test": r.test, "unit": r.unit, "merged": r.merged,
                      "by_host": dict(r.by_host), "spread": None if r.spread is None else asdict(r.spread),
                      "flagged": [{"host": f.host, "value": f.value, "median": f.median, "below": f.below,
                                   "peers": f.peers, "line": line} for f, line in zip(r.flags, r.lines())]}
                     for r in rows]}
