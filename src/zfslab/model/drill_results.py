"""What a drill found, scenario by scenario, as records with explicit fields (Ciw's data_record.py).

system/drill.py fills them, report/verdict.py words them, store/results.py keeps them: as JSON
in drills.data_json with the keys `as_dict()` gives (the same keys the free dict had), and each
timed resilver as a row of its own (`timed_resilvers`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True, slots=True)
class DegradedLevel:
    """k disks of the first vdev offline: the pool's state, the read-back and a short write."""

    failed: int
    pool_state: str
    verified: bool
    read_mb_s: float
    error: str
    write_mb_s: float


@dataclass(frozen=True, slots=True)
class BeyondParity:
    """One disk more than the parity: ZFS's refusal in its words (None if it took the disk)."""

    failed: int
    zfs_refused: str | None
    pool_state: str


@dataclass(frozen=True, slots=True)
class AcrossVdevs:
    """One failed disk in each of the first two vdevs (named as zpool status names them)."""

    failed: tuple[str, ...]
    verified: bool
    read_mb_s: float


@dataclass(frozen=True, slots=True)
class Degraded:
    steps: tuple[DegradedLevel, ...]
    across_vdevs: AcrossVdevs | None
    beyond_parity: BeyondParity | None
    parity: int

    def as_dict(self) -> dict:
        return {"steps": [asdict(s) for s in self.steps],
                "across_vdevs": {**asdict(self.across_vdevs), "failed": list(self.across_vdevs.failed)}
                if self.across_vdevs else None,
                "beyond_parity": asdict(self.beyond_parity) if self.beyond_parity else None, "parity": self.parity}


@dataclass(frozen=True, slots=True)
class SequentialRebuild:
    """`zpool replace -s` timed; written_bytes from /proc/diskstats (ZFS's scrub may hide its line)."""

    seconds: float
    written_bytes: int
    resilvered_bytes: int
    mb_s: float


@dataclass(frozen=True, slots=True)
class TimedResilver:
    """One resilver as plan's risk model uses it: bytes the new disk received over seconds."""

    vdev_kind: str
    how: str
    fill: float
    fill_bytes: int
    resilvered_bytes: int
    seconds: float


@dataclass(frozen=True, slots=True)
class Resilver:
    replaced: str
    replaced_with: str
    how: str  # fresh disk | hot spare | dRAID distributed spare (sequential rebuild)
    seconds: float
    resilvered_bytes: int
    mb_s: float
    verified: bool
    vdev_kind: str
    fill: float
    fill_bytes: int
    sequential: SequentialRebuild | None = None
    sequential_skipped: str | None = None  # a mirror's rebuild, not asked for: why
    mirror_fresh_disk: bool = False  # only then is a sequential rebuild a question at all

    def as_dict(self) -> dict:
        out = {"replaced": self.replaced, "with": self.replaced_with, "how": self.how, "seconds": self.seconds,
               "resilvered_bytes": self.resilvered_bytes, "mb_s": self.mb_s, "verified": self.verified,
               "vdev_kind": self.vdev_kind, "fill": self.fill, "fill_bytes": self.fill_bytes}
        if self.mirror_fresh_disk:
            out["sequential"] = asdict(self.sequential) if self.sequential else {"skipped": self.sequential_skipped}
        return out

    def timed(self) -> list[TimedResilver]:
        """The healing resilver, and the sequential rebuild if it ran; none without bytes or time."""
        out = []
        if self.resilvered_bytes > 0 and self.seconds > 0:
            out.append(TimedResilver(self.vdev_kind, self.how, self.fill, self.fill_bytes, self.resilvered_bytes,
                                     self.seconds))
        seq = self.sequential
        if seq and seq.written_bytes > 0 and seq.seconds > 0:
            out.append(TimedResilver(self.vdev_kind, "sequential", self.fill, self.fill_bytes, seq.written_bytes,
                                     seq.seconds))
        return out


@dataclass(frozen=True, slots=True)
class Corruption:
    """Members overwritten behind ZFS's back, then a scrub and a read-back."""

    members: int
    bytes_overwritten: int
    cksum: dict[str, int]  # leaf (as zpool status names it) -> CKSUM errors
    repaired_bytes: int
    errors: str  # zpool status's errors: line
    verified: bool
    damaged_files: tuple[str, ...]
    fio_error: str
    pool_state: str | None = None  # beyond the parity: the pool's state after the read-back

    def as_dict(self) -> dict:
        out = {"members": self.members, "bytes_overwritten": self.bytes_overwritten, "cksum": dict(self.cksum),
               "repaired_bytes": self.repaired_bytes, "errors": self.errors, "verified": self.verified,
               "damaged_files": list(self.damaged_files), "fio_error": self.fio_error}
        if self.pool_state is not None:
            out = {**{k: v for k, v in out.items() if k != "fio_error"}, "pool_state": self.pool_state,
                   "fio_error": self.fio_error}
        return out


@dataclass(frozen=True, slots=True)
class Skipped:
    why: str

    def as_dict(self) -> dict:
        return {"why": self.why}


Detail = Degraded | Resilver | Corruption | Skipped


@dataclass(frozen=True)
class ScenarioResult:
    scenario: str  # degraded | resilver | corrupt | corrupt-beyond-parity
    outcome: str  # survived | lost | repaired | damaged | skipped
    seconds: float
    detail: Detail

    def detail_dict(self) -> dict:
        """The detail as stored (drills.data_json) and printed by drill --json."""
        return self.detail.as_dict()

    def timed_resilvers(self) -> list[TimedResilver]:
        return self.detail.timed() if isinstance(self.detail, Resilver) else []
