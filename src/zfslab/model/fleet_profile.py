"""Fleet acceptance (`profile-disk --hosts`): each disk's figures as its host's `zfslab profile-disk
--json` printed them, the peers they are compared with, and the answer as data. Pure: the system
side (system/fleet_profile.py) runs the remote commands and parses their answers
(docs/fleet.md#outliers)."""

from __future__ import annotations

from dataclasses import dataclass

from zfslab.model.outliers import Figures, Outlier, Undecided, host_figures, outliers, undecided
from zfslab.model.units import format_bytes


@dataclass(frozen=True, slots=True)
class DiskResult:
    """One disk of one host, read-only figures (MB/s: 10^6 bytes/s; IOPS of 4 KiB reads)."""

    host: str
    disk: str                 # as the user named it, the same on every host
    model: str | None
    size_bytes: int
    seq_mb_s: float           # 1 MiB reads, outer zone
    inner_mb_s: float         # 1 MiB reads at 90 % of the disk
    rand_iops_qd1: float
    rand_iops_qd8: float

    @property
    def peer_group(self) -> str:
        """What makes disks identical peers: model and size (preflight has checked the rest)."""
        return f"{self.model or 'no model'}, {format_bytes(self.size_bytes)}"

    def figures(self) -> Figures:
        # random: QD1, each read waits for the one before, so a disk that retries reads or seeks
        # slowly shows its own latency, not what its queue and firmware reordering hide
        return Figures(self.host, self.disk, self.peer_group, self.seq_mb_s, self.rand_iops_qd1)


@dataclass(frozen=True, slots=True)
class FleetProfile:
    """Every disk measured, and one line for each host or disk that gave no figures."""

    results: tuple[DiskResult, ...]
    failures: tuple[str, ...]
    exit_codes: tuple[int, ...] = ()   # one a failure: the exit code it counts as (model/fleet_exit.py)

    def disk_outliers(self, threshold: float) -> list[Outlier]:
        return outliers([r.figures() for r in self.results], threshold=threshold)

    def host_outliers(self, threshold: float) -> list[Outlier]:
        """Hosts on the median of their disks: a slow controller or backplane slows all of them a little."""
        return outliers(host_figures([r.figures() for r in self.results]), threshold=threshold)

    def undecided(self) -> list[Undecided]:
        """Groups of hosts, then of disks, too small to tell a slow one (model/outliers.py MIN_PEERS)."""
        disks = [r.figures() for r in self.results]
        return undecided(host_figures(disks)) + undecided(disks)

    def as_dict(self, threshold: float) -> dict:
        """For --json: the figures, the outliers of disks and hosts, and the failures."""
        def outlier(o: Outlier) -> dict:
            return {"host": o.host, "disk": o.disk or None, "metric": o.metric, "value": o.value,
                    "median": o.median, "below": o.below, "peers": o.peers, "line": o.line()}
        return {"threshold": threshold,
                "disks": [{"host": r.host, "disk": r.disk, "model": r.model, "size_bytes": r.size_bytes,
                           "seq_read_mb_s": r.seq_mb_s, "inner_read_mb_s": r.inner_mb_s,
                           "rand_read_iops_qd1": r.rand_iops_qd1, "rand_read_iops_qd8": r.rand_iops_qd8}
                          for r in self.results],
                "hosts": [{"host": f.host, "peer_group": f.peer_group, "seq_read_mb_s": f.seq_mb_s,
                           "rand_read_iops_qd1": f.rand_iops} for f in host_figures([r.figures() for r in self.results])],
                "outliers": [outlier(o) for o in self.host_outliers(threshold) + self.disk_outliers(threshold)],
                "cannot_tell": [{"kind": u.kind, "peer_group": u.peer_group, "members": list(u.members),
                                 "line": u.line()} for u in self.undecided()],
                "failures": list(self.failures)}
