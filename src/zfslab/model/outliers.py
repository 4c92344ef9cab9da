"""Fleet acceptance: a disk or host whose figures fall well below its identical peers'.

Each figure (sequential MB/s, random IOPS) is compared with the median of the group of identical
peers it belongs to (same model and size, given by the caller as `peer_group`); the median, not
the mean, so one slow disk does not drag the bar down with it (docs/fleet.md#outliers). A group
needs MIN_PEERS members to flag one: of two, the median is their mean and the slower always sits
below it by half their gap, so which one is slow cannot be told; such groups are returned by
undecided() for the report to say so.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from zfslab.errors import FleetError, clip

DEFAULT_THRESHOLD = 0.15
MIN_PEERS = 3             # the figure itself and at least two others
METRICS = ("seq_mb_s", "rand_iops")


@dataclass(frozen=True, slots=True)
class Figures:
    host: str
    disk: str                 # a device path or serial; "" for a figure of the whole host
    peer_group: str           # e.g. "ST4000NM0035 4000787030016": identical disks share it
    seq_mb_s: float
    rand_iops: float

    def __post_init__(self) -> None:
        for name in METRICS:
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and value >= 0 and value != float("inf")):
                raise FleetError(f"{self.host} {self.disk}: {name}={clip(value)} must be a finite figure >= 0")


@dataclass(frozen=True, slots=True)
class Outlier:
    host: str
    disk: str
    metric: str               # seq_mb_s | rand_iops
    value: float
    median: float             # of the peers, itself included
    below: float              # share below the median, 0.2 = 20 % slower
    peers: int

    def line(self) -> str:
        what = f"{self.host} {self.disk}".strip()
        unit = "MB/s" if self.metric == "seq_mb_s" else "IOPS"
        kind = "sequential" if self.metric == "seq_mb_s" else "random"
        return (f"{what}: {kind} {self.value:,.0f} {unit}, {self.below:.0%} below the median {self.median:,.0f} "
                f"{unit} of {self.peers} identical peers")


def outliers(figures: Iterable[Figures], *, threshold: float = DEFAULT_THRESHOLD) -> list[Outlier]:
    """Every figure more than `threshold` below its peer group's median, in input order. A group
    of fewer than MIN_PEERS flags nothing (undecided() names it)."""
    figures = list(figures)
    found = {m: {b.index: b for b in below_median([(f.peer_group, getattr(f, m)) for f in figures],
                                                  threshold=threshold)} for m in METRICS}
    return [Outlier(f.host, f.disk, m, b.value, b.median, b.below, b.peers)
            for i, f in enumerate(figures) for m in METRICS if (b := found[m].get(i)) is not None]


@dataclass(frozen=True, slots=True)
class Below:
    index: int                # into the values given
    value: float
    median: float             # of the group, the value itself included
    below: float              # share below the median, 0.2 = 20 % slower
    peers: int


def below_median(values: Sequence[tuple[str, float]], *, threshold: float = DEFAULT_THRESHOLD) -> list[Below]:
    """(group, value) pairs: each value more than `threshold` below its group's median, in input
    order; a group of fewer than MIN_PEERS flags nothing. The rule outliers() applies to disks and
    hosts, for any figure (the report's per host)."""
    if not 0 < threshold < 1:
        raise FleetError(f"outlier threshold {clip(threshold)}: give a share between 0 and 1, e.g. 0.15")
    groups: dict[str, list[float]] = {}
    for group, value in values:
        groups.setdefault(group, []).append(value)
    medians = {g: statistics.median(vs) for g, vs in groups.items()}
    return [Below(i, value, medians[g], 1 - value / medians[g], len(groups[g])) for i, (g, value) in enumerate(values)
            if len(groups[g]) >= MIN_PEERS and medians[g] > 0 and value < medians[g] * (1 - threshold)]


@dataclass(frozen=True, slots=True)
class Undecided:
    """A peer group too small to tell a slow member from a fast one."""

    kind: str                 # disk | host
    peer_group: str
    members: tuple[str, ...]  # "host disk", or "host" for a figure of the whole host

    def line(self) -> str:
        count = f"{len(self.members)} identical {self.kind}{'s' if len(self.members) > 1 else ''}"
        return (f"cannot tell: {count} of {self.peer_group} ({', '.join(self.members)}); "
                f"an outlier needs at least {MIN_PEERS} identical peers")


def undecided(figures: Iterable[Figures]) -> list[Undecided]:
    """Each peer group of fewer than MIN_PEERS figures, in first-seen order: outliers() flags
    nothing there, and the report says it cannot tell rather than that all is well."""
    groups: dict[str, list[Figures]] = {}
    for f in figures:
        groups.setdefault(f.peer_group, []).append(f)
    return [Undecided("host" if all(f.disk == "" for f in fs) else "disk", g,
                      tuple(f"{f.host} {f.disk}".strip() for f in fs))
            for g, fs in groups.items() if len(fs) < MIN_PEERS]


def host_figures(disks: Sequence[Figures]) -> list[Figures]:
    """One figure per (host, peer group): the median of its disks, so a host with slow disks, a
    slow controller or a slow link stands out from the other hosts as a whole."""
    by_host: dict[tuple[str, str], list[Figures]] = {}
    for f in disks:
        by_host.setdefault((f.host, f.peer_group), []).append(f)
    return [Figures(h, "", g, statistics.median(f.seq_mb_s for f in fs), statistics.median(f.rand_iops for f in fs))
            for (h, g), fs in by_host.items()]
