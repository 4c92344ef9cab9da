"""The speed corner: predicted throughput and IOPS of a layout from one disk's profile.

Few parameters, each with a physical meaning (docs/speed.md gives each rule and its sources):
- a disk streams S_r / S_w MB/s and serves I_r random reads per second (QD1 and QD8), with a
  sync-write (write + cache flush) latency;
- streaming scales with the disks that carry data: raidz/dRAID write full stripes, so parity
  and padding cost bandwidth (the exact allocation of capacity.py); mirrors write one copy per
  vdev's worth of bandwidth but read from every child;
- each top-level vdev has its own write pipeline: per record it moves the allocated bytes at
  V MB/s and spends t_child microseconds per child I/O, so a vdev writes at most
  recordsize / (asize / V + children x t_child), whatever its disks could take;
- the host caps the pool: per MB written it spends 1/C_w plus t_parity microseconds per parity
  column (the disks are fed in parallel by the txg sync, so this is a hard limit); reads are a
  closed loop of Q records in flight between the disks (D MB/s) and the host (C_r MB/s): Q = 1
  puts them in series (1/T = 1/D + 1/C_r), many records in flight approach min(D, C_r);
- a rewrite (read a block, then write it back) keeps only a fraction rho of each added data
  disk busy: T = R_1 (1 + (n_data - 1) rho), Gustafson's law with serial fraction 1 - rho,
  and never beats the pool's read and write done in turn (1/T = 1/read + 1/write);
- random reads: a raidz block read occupies min(d, N-p) disks, so a vdev serves
  I_r N / min(d, N-p) at depth, a mirror N I_r, dRAID floor((c-s)/(d+p)) I_r; no more reads
  are served at once than are in flight (1 at QD1; 64 at the "QD8" point, 8 jobs x depth 8);
  the disks and the host's per-read time (H IOPS) form the same closed loop as streaming reads;
- async random writes are copy-on-write: each dirties a whole record, which the txg writes back
  at the pool's streaming rate; a share m of them must first read that record from the disks
  (a partial write of a block not in the ARC), at the random-read rate of the same depth;
- sync writes add a ZIL commit (a log write plus a cache flush, t_sync) to the writer's path;
  at the 8-job point up to min(8, vdevs) commits run at once, each carrying b writers' records;
- raidz/dRAID parity is computed by the CPUs: a core protects G_p MB/s of data at parity p
  (the module's own benchmark, /proc/spl/kstat/zfs/vdev_raidz_bench), and the write issue
  threads run on every core, so streaming writes are also capped at G_p x cores.
No per-layout factors: everything below follows from the layout and these parameters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from zfslab.model.capacity import psize_to_asize
from zfslab.model.layout_grammar import parse_layout
from zfslab.model.layouts import Layout, VdevGroup, VdevKind

KiB = 1024


def _is_rate(value: object, *, unbounded: bool = False) -> bool:
    """A real number > 0, finite (or +inf where `unbounded`: a ceiling that is no limit)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return value > 0 and (math.isfinite(value) or (unbounded and value == math.inf))


@dataclass(frozen=True, slots=True)
class HostLimits:
    """What the machine around the disks allows (inf, or 0 for a time: no limit)."""

    write_mb_s: float = math.inf  # HBA/expander/link or per-process ceiling on streaming writes
    read_mb_s: float = math.inf  # host time per byte read, as a rate
    rewrite_parallel: float = 0.2  # rho: share of each added data disk a rewrite keeps busy
    # data MB/s one core protects with raidz1, raidz2, raidz3 parity (fastest implementation)
    parity_mb_s: tuple[float, float, float] = (math.inf, math.inf, math.inf)
    cpus: int = 1  # cores the write issue threads (z_wr_iss) spread parity work over
    vdev_pipeline_mb_s: float = math.inf  # allocated (raw) MB/s one top-level vdev's write pipeline moves
    child_io_us: float = 0.0  # microseconds a vdev's pipeline spends per child I/O of a written record
    parity_us_per_mb: float = 0.0  # host microseconds per MB of data written, per parity column
    reads_in_flight: float = 1.0  # Q: records a streaming read keeps between the disks and the host
    read_iops: float = math.inf  # H: random reads per second the host's read path (zio, checksum, copy) serves
    read_modify_write: float = 0.0  # m: share of 4K random writes that first read their record from the disks
    sync_batch: float = 1.0  # b: fsyncs one ZIL commit carries when 8 writers sync at once

    def __post_init__(self) -> None:
        if len(self.parity_mb_s) != 3 or not all(_is_rate(v, unbounded=True) for v in self.parity_mb_s):
            raise ValueError(f"parity_mb_s(={list(self.parity_mb_s)}) must be three rates > 0 (raidz1, raidz2, raidz3)")
        if not isinstance(self.cpus, int) or isinstance(self.cpus, bool):
            raise ValueError(f"cpus(={self.cpus!r}) must be a whole number")
        if not 1 <= self.cpus <= 65536:
            raise ValueError(f"cpus(={self.cpus}) must be at least 1" if self.cpus < 1 else
                             f"cpus(={self.cpus}) must be at most 65536")
        for name in ("write_mb_s", "read_mb_s", "vdev_pipeline_mb_s", "read_iops"):
            if not _is_rate(getattr(self, name), unbounded=True):
                raise ValueError(f"{name}(={getattr(self, name)!r}) must be > 0")
        for name in ("child_io_us", "parity_us_per_mb"):
            value = getattr(self, name)
            if not (value == 0 or _is_rate(value)):
                raise ValueError(f"{name}(={value!r}) must be a finite number >= 0")
        if not (_is_rate(self.reads_in_flight, unbounded=True) and self.reads_in_flight >= 1):
            raise ValueError(f"reads_in_flight(={self.reads_in_flight!r}) must be at least 1")
        if not (self.read_modify_write == 0 or (_is_rate(self.read_modify_write) and self.read_modify_write <= 1)):
            raise ValueError(f"read_modify_write(={self.read_modify_write!r}) must be from 0 to 1")
        if not (_is_rate(self.sync_batch) and 1 <= self.sync_batch <= 64):
            raise ValueError(f"sync_batch(={self.sync_batch!r}) must be from 1 to 64")
        if not (_is_rate(self.rewrite_parallel) and self.rewrite_parallel <= 1):
            raise ValueError(f"rewrite_parallel(={self.rewrite_parallel!r}) must be above 0 and at most 1")

    def parity_ceiling_mb_s(self, parity: int) -> float:
        """Data MB/s all cores together protect at this parity (inf without parity)."""
        return math.inf if parity == 0 else self.parity_mb_s[parity - 1] * self.cpus


@dataclass(frozen=True, slots=True)
class DiskProfile:
    """One disk's speed. MB/s are 10^6 bytes per second; latencies in milliseconds."""

    name: str
    seq_read_mb_s: float
    seq_write_mb_s: float
    rand_read_iops_qd1: float  # 4 KiB, over the whole disk
    rand_read_iops_qd8: float
    rand_write_iops: float  # 4 KiB with the drive's write cache on
    sync_write_ms: float  # a small write plus a cache flush
    inner_fraction: float = 0.55  # inner-zone speed / outer-zone speed (zoned recording)
    rewrite_mb_s: float | None = None  # measured single-disk rewrite, if known
    source: str = ""
    host: HostLimits = HostLimits()  # the machine the profile was measured on (default: no limits)

    def __post_init__(self) -> None:
        for name in ("seq_read_mb_s", "seq_write_mb_s", "rand_read_iops_qd1", "rand_read_iops_qd8",
                     "rand_write_iops", "sync_write_ms"):
            if not _is_rate(getattr(self, name)):
                raise ValueError(f"{name}(={getattr(self, name)!r}) must be a finite number > 0")
        if not (_is_rate(self.inner_fraction) and self.inner_fraction <= 1):
            raise ValueError(f"inner_fraction(={self.inner_fraction!r}) must be above 0 and at most 1")
        if self.rewrite_mb_s is not None and not _is_rate(self.rewrite_mb_s):
            raise ValueError(f"rewrite_mb_s(={self.rewrite_mb_s!r}) must be a finite number > 0")
        if not isinstance(self.name, str) or not isinstance(self.source, str):
            raise ValueError("name and source must be text")

    @property
    def single_rewrite_mb_s(self) -> float:
        """A disk reading then writing back the same bytes: the two transfers in series."""
        if self.rewrite_mb_s is not None:
            return self.rewrite_mb_s
        return 1.0 / (1.0 / self.seq_read_mb_s + 1.0 / self.seq_write_mb_s)



# Presets: physical figures from docs/speed.md#presets (seek + rotation for HDD IOPS; zoned
# recording for the inner zone; SATA 600 MB/s) and vendors' data sheets.
PRESETS = {
    p.name: p for p in (
        DiskProfile("hdd7200", 220, 220, 80, 140, 200, 12.0, 0.55, None,
                    "7200 rpm 3.5\" NAS/enterprise (IronWolf 12 TB 210 MB/s, Exos X18 270 MB/s); QD1 IOPS = "
                    "1/(8.2 ms seek + 4.17 ms rotation); NCQ lifts QD8; write + flush ~ 1.5 revolutions"),
        DiskProfile("hdd5400", 180, 180, 60, 100, 150, 16.0, 0.55, None,
                    "5400-5900 rpm 3.5\" (WD Red class): 5.56 ms rotation + 9 ms seek"),
        DiskProfile("ssd", 530, 500, 10_000, 60_000, 40_000, 0.5, 1.0, None,
                    "SATA SSD: 600 MB/s link less protocol; ~100 us QD1 reads; flush ~0.5 ms without power-loss protection"),
        DiskProfile("nvme", 3000, 2500, 12_000, 90_000, 80_000, 0.1, 1.0, None,
                    "PCIe 3.0 x4 NVMe: ~80 us QD1 reads"),
    )
}


def _data_share(g: VdevGroup, recordsize: int, ashift: int) -> float:
    """Disks' worth of bandwidth that carry data when writing full records on one vdev."""
    if g.kind is VdevKind.DISK:
        return 1.0
    if g.kind is VdevKind.MIRROR:
        return 1.0
    sectors = -(-recordsize // (1 << ashift))
    efficiency = sectors / (psize_to_asize(g, recordsize, ashift) >> ashift)
    disks = g.width - (g.draid_spares if g.kind is VdevKind.DRAID else 0)
    return disks * efficiency


def _read_share(g: VdevGroup) -> float:
    """Disks a sequential reader draws on: every mirror child, the data columns of a raidz."""
    if g.kind is VdevKind.DISK:
        return 1.0
    if g.kind is VdevKind.MIRROR:
        return float(g.width)
    if g.kind is VdevKind.RAIDZ:
        return float(g.width - g.parity)
    return (g.width - g.draid_spares) * g.draid_data / (g.draid_data + g.parity)


def _read_children(g: VdevGroup) -> float:
    """Children a long sequential read keeps busy: all of them, as raidz parity rotates with the
    block's offset (vdev_raidz_map_alloc) and each child skips the parity it holds."""
    if g.kind is VdevKind.DISK:
        return 1.0
    if g.kind is VdevKind.DRAID:
        return float(g.width - g.draid_spares)
    return float(g.width)


def _write_children(g: VdevGroup, recordsize: int, ashift: int) -> int:
    """Child I/Os one record costs a vdev: one per copy, one per raidz column the record reaches."""
    if g.kind is VdevKind.DISK:
        return 1
    if g.kind is VdevKind.MIRROR:
        return g.width
    sectors = -(-recordsize // (1 << ashift))
    if g.kind is VdevKind.RAIDZ:
        return min(g.width, sectors + g.parity)
    return g.draid_data + g.parity  # a dRAID block fills rows of one redundancy group


def _asize(g: VdevGroup, recordsize: int, ashift: int) -> int:
    """Raw bytes one record takes on a vdev, every mirror copy included."""
    copies = g.width if g.kind is VdevKind.MIRROR else 1
    return copies * psize_to_asize(g, recordsize, ashift)


def data_disks(layout: Layout, recordsize: int = 128 * KiB, ashift: int = 12) -> float:
    return sum(g.count * _data_share(g, recordsize, ashift) for g in layout.groups)


def read_disks(layout: Layout) -> float:
    return sum(g.count * _read_share(g) for g in layout.groups)


@dataclass(frozen=True, slots=True)
class GroupShape:
    """What the streaming model needs of one vdev group, for one recordsize and ashift."""

    count: int  # top-level vdevs like this one
    data_share: float  # disks' worth of write bandwidth that carries data
    asize_bytes: int  # raw bytes a record takes, copies, parity and padding included
    write_children: int  # child I/Os per record
    parity: int  # parity columns per row (0: none)
    read_children: float  # children a streaming read keeps busy


@dataclass(frozen=True, slots=True)
class LayoutShape:
    """A layout reduced to the numbers streaming speed depends on (computed once, used often)."""

    groups: tuple[GroupShape, ...]
    recordsize: int

    @property
    def data_disks(self) -> float:
        return sum(g.count * g.data_share for g in self.groups)

    @property
    def read_children(self) -> float:
        return sum(g.count * g.read_children for g in self.groups)

    @property
    def mean_parity(self) -> float:
        """Parity columns per record, averaged over the data (which spreads by data share)."""
        total = self.data_disks
        return sum(g.count * g.data_share * g.parity for g in self.groups) / total


def layout_shape(layout: Layout, recordsize: int = 128 * KiB, ashift: int = 12) -> LayoutShape:
    """The layout's streaming shape for records of `recordsize` bytes at this ashift."""
    groups = []
    for g in layout.groups:
        parity = g.parity if g.kind in (VdevKind.RAIDZ, VdevKind.DRAID) else 0
        groups.append(GroupShape(g.count, _data_share(g, recordsize, ashift), _asize(g, recordsize, ashift),
                                 _write_children(g, recordsize, ashift), parity, _read_children(g)))
    return LayoutShape(tuple(groups), recordsize)


def closed_loop_mb_s(disks_mb_s: float, host_mb_s: float, in_flight: float) -> float:
    """Throughput of Q records circulating between two stations (the disks, then the host).

    The exact product-form result for a closed network of two exponential servers:
    X = m (1 - u^Q) / (1 - u^(Q+1)), m the slower rate, u = slower / faster. Q = 1 gives the
    two in series; Q -> inf gives min(disks, host).
    """
    slow, fast = min(disks_mb_s, host_mb_s), max(disks_mb_s, host_mb_s)
    if math.isinf(fast) or math.isinf(in_flight):
        return slow
    u = slow / fast
    if u >= 1.0 - 1e-12:
        return slow * in_flight / (in_flight + 1.0)
    log_u = math.log(u)
    return slow * math.expm1(in_flight * log_u) / math.expm1((in_flight + 1.0) * log_u)


@dataclass(frozen=True, slots=True)
class Streaming:
    """Streaming MB/s of one layout."""

    write_mb_s: float
    rewrite_mb_s: float
    read_mb_s: float


def streaming_mb_s(shape: LayoutShape, *, disk_write_mb_s: float, disk_read_mb_s: float,
                   disk_rewrite_mb_s: float, host_write_mb_s: float, host_read_mb_s: float,
                   reads_in_flight: float, rewrite_parallel: float, vdev_pipeline_mb_s: float,
                   child_io_us: float, parity_us_per_mb: float, parity_ceiling_mb_s: float = math.inf) -> Streaming:
    """Streaming write, rewrite and read MB/s of a layout (docs/speed.md gives each rule)."""
    write_disks = 0.0
    for g in shape.groups:
        # MB/s = bytes per microsecond: one record through the vdev's own pipeline
        pipeline_us = g.asize_bytes / vdev_pipeline_mb_s + g.write_children * child_io_us
        vdev = g.data_share * disk_write_mb_s
        if pipeline_us > 0:
            vdev = min(vdev, shape.recordsize / pipeline_us)
        write_disks += g.count * vdev
    host_s_per_mb = 1.0 / host_write_mb_s + shape.mean_parity * parity_us_per_mb * 1e-6
    host = math.inf if host_s_per_mb == 0 else 1.0 / host_s_per_mb
    write = min(write_disks, host, parity_ceiling_mb_s)
    read = closed_loop_mb_s(shape.read_children * disk_read_mb_s, host_read_mb_s, reads_in_flight)
    rewrite = disk_rewrite_mb_s * (1.0 + (shape.data_disks - 1.0) * rewrite_parallel)
    rewrite = min(rewrite, 1.0 / (1.0 / read + 1.0 / write))
    return Streaming(write, rewrite, read)


def _random_read_servers(g: VdevGroup, recordsize: int, ashift: int) -> float:
    """How many random block reads one vdev serves at once (in single-disk units)."""
    if g.kind is VdevKind.DISK:
        return 1.0
    if g.kind is VdevKind.MIRROR:
        return float(g.width)
    d = -(-recordsize // (1 << ashift))
    if g.kind is VdevKind.RAIDZ:
        return g.width / min(d, g.width - g.parity)
    return float(max((g.width - g.draid_spares) // (g.draid_data + g.parity), 1))


def random_read_servers(layout: Layout, recordsize: int = 128 * KiB, ashift: int = 12) -> float:
    """Single disks' worth of random reads the pool serves at once."""
    return sum(g.count * _random_read_servers(g, recordsize, ashift) for g in layout.groups)


READS_IN_FLIGHT_QD8 = 64  # "QD8" is the Ars Technica heavy point: 8 jobs at queue depth 8
WRITERS_QD8 = 8  # its jobs: each waits for its own fsync


@dataclass(frozen=True, slots=True)
class RandomIops:
    """4 KiB random IOPS of one layout at the two Ars Technica points (1 job QD1, 8 jobs QD8)."""

    read_qd1: float
    read_qd8: float
    write_qd1: float
    write_qd8: float
    sync_qd1: float
    sync_qd8: float


def random_iops(*, servers: float, vdevs: int, write_mb_s: float, recordsize: int, block_size: int,
                disk_read_iops_qd1: float, disk_read_iops_qd8: float, host_read_iops: float,
                read_modify_write: float, sync_write_ms: float, sync_batch: float) -> RandomIops:
    """The random path (docs/speed.md#random-io): what predict() and the IOPS fit both use."""
    # reads: the disks (one record per read, `servers` at once) and the host's per-read time in a
    # closed loop of the reads in flight: in series at QD1, the slower of the two at depth
    read_qd1 = closed_loop_mb_s(disk_read_iops_qd1, host_read_iops, 1.0)
    disks_qd8 = min(READS_IN_FLIGHT_QD8 * disk_read_iops_qd1, servers * disk_read_iops_qd8)
    read_qd8 = closed_loop_mb_s(disks_qd8, host_read_iops, READS_IN_FLIGHT_QD8)
    # writes: copy-on-write rewrites the whole record a 4K write dirties (at the streaming rate),
    # after reading it first for the share m whose record is not cached
    writeback_s = max(recordsize, block_size) / (write_mb_s * 1e6)
    write_qd1 = 1.0 / (read_modify_write / read_qd1 + writeback_s)
    write_qd8 = 1.0 / (read_modify_write / read_qd8 + writeback_s)
    # sync: the writer also waits for a ZIL commit; at depth, commits on up to min(8, vdevs)
    # vdevs at once, each carrying b writers, never more writers than there are
    t_sync = sync_write_ms / 1000.0
    sync_qd1 = min(1.0 / (read_modify_write / read_qd1 + t_sync), write_qd1)
    commits = min(WRITERS_QD8, min(WRITERS_QD8, vdevs) * sync_batch)
    sync_qd8 = min(commits / t_sync, WRITERS_QD8 / (read_modify_write / read_qd8 + t_sync), write_qd8)
    return RandomIops(read_qd1, read_qd8, write_qd1, write_qd8, sync_qd1, sync_qd8)


@dataclass(frozen=True, slots=True)
class SpeedPrediction:
    """MB/s for streaming, IOPS for random (4 KiB unless said), for one layout."""

    layout: str
    write_mb_s: float
    rewrite_mb_s: float
    read_mb_s: float
    rand_read_iops_qd1: float
    rand_read_iops_qd8: float
    rand_write_iops_qd1: float
    rand_write_iops_qd8: float
    sync_write_iops_qd1: float
    sync_write_iops_qd8: float

    def relative_to(self, single: "SpeedPrediction") -> dict[str, float]:
        """Each figure as a multiple of one disk's (the Ars Technica view)."""
        return {k: getattr(self, k) / getattr(single, k) for k in self.metrics()}

    @staticmethod
    def metrics() -> tuple[str, ...]:
        return ("write_mb_s", "rewrite_mb_s", "read_mb_s", "rand_read_iops_qd1", "rand_read_iops_qd8",
                "rand_write_iops_qd1", "rand_write_iops_qd8", "sync_write_iops_qd1", "sync_write_iops_qd8")


def parity_ceiling_mb_s(layout: Layout, host: HostLimits, recordsize: int = 128 * KiB, ashift: int = 12) -> float:
    """Streaming-write MB/s the CPUs can protect with parity for the whole pool.

    Data spreads over the vdevs in proportion to their data bandwidth, so the CPU time per byte
    is the weighted sum of each group's time per byte (harmonic combination of the rates).
    """
    shares = [(g.count * _data_share(g, recordsize, ashift), g.parity if g.kind in (VdevKind.RAIDZ, VdevKind.DRAID) else 0)
              for g in layout.groups]
    total = sum(w for w, _ in shares)
    seconds_per_mb = sum(w / total / host.parity_ceiling_mb_s(p) for w, p in shares if p)
    return math.inf if seconds_per_mb == 0 else 1.0 / seconds_per_mb


def predict(layout: Layout, disk: DiskProfile, host: HostLimits | None = None, *, recordsize: int = 128 * KiB,
            ashift: int = 12, block_size: int = 4 * KiB) -> SpeedPrediction:
    """Predicted speed of `layout` built from disks like `disk` in `host` (default: the profile's host)."""
    host = disk.host if host is None else host
    s = streaming_mb_s(layout_shape(layout, recordsize, ashift), disk_write_mb_s=disk.seq_write_mb_s,
                       disk_read_mb_s=disk.seq_read_mb_s, disk_rewrite_mb_s=disk.single_rewrite_mb_s,
                       host_write_mb_s=host.write_mb_s, host_read_mb_s=host.read_mb_s,
                       reads_in_flight=host.reads_in_flight, rewrite_parallel=host.rewrite_parallel,
                       vdev_pipeline_mb_s=host.vdev_pipeline_mb_s, child_io_us=host.child_io_us,
                       parity_us_per_mb=host.parity_us_per_mb,
                       parity_ceiling_mb_s=parity_ceiling_mb_s(layout, host, recordsize, ashift))
    r = random_iops(servers=random_read_servers(layout, recordsize, ashift), vdevs=layout.top_level_vdevs,
                    write_mb_s=s.write_mb_s, recordsize=recordsize, block_size=block_size,
                    disk_read_iops_qd1=disk.rand_read_iops_qd1, disk_read_iops_qd8=disk.rand_read_iops_qd8,
                    host_read_iops=host.read_iops, read_modify_write=host.read_modify_write,
                    sync_write_ms=disk.sync_write_ms, sync_batch=host.sync_batch)
    return SpeedPrediction(str(layout), s.write_mb_s, s.rewrite_mb_s, s.read_mb_s, r.read_qd1, r.read_qd8,
                           r.write_qd1, r.write_qd8, r.sync_qd1, r.sync_qd8)


def single_disk(disk: DiskProfile, host: HostLimits | None = None, **kw) -> SpeedPrediction:
    return predict(parse_layout("disk"), disk, host, **kw)


def with_zone(disk: DiskProfile, zone: str) -> DiskProfile:
    """The profile at the outer (default) or inner zone of the platters."""
    if zone == "outer":
        return disk
    f = disk.inner_fraction
    return replace(disk, seq_read_mb_s=disk.seq_read_mb_s * f, seq_write_mb_s=disk.seq_write_mb_s * f)
