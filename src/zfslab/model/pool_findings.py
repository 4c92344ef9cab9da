"""What an expert would flag on a live pool, each rule with its source in docs/pool.md#findings.
Pure: the pool's records in, findings out; the time is an argument."""

from __future__ import annotations

from dataclasses import dataclass

from zfslab.model.pool_model import failures_survived
from zfslab.model.units import format_bytes
from zfslab.model.pool_state import DiskFacts, DiskHealth, PoolState

FULL_PERCENT = 80  # docs/pool.md#findings: the allocator's first-fit path and fragmentation
BEST_FIT_PERCENT = 96  # metaslab_df_free_pct = 4: a metaslab under 4 % free is searched best-fit
SCRUB_MAX_DAYS = 35  # docs/pool.md#findings: a monthly scrub, with a few days' slack
RAIDZ1_LARGE_BYTES = 4 * 10**12  # docs/pool.md#findings: a 4 TB disk's resilver reads for hours
DAY_S = 86400
UNEQUAL_SIZE_FRACTION = 0.10  # docs/pool.md#findings: vdev sizes further apart than this are "unequal"
# docs/pool.md#findings: a dedup table past a quarter of RAM (half the ARC's default maximum on Linux
# before 2.3) competes with everything else the ARC caches; a ratio under 1.2 saves under a sixth
DDT_RAM_FRACTION = 0.25
DEDUP_LITTLE_GAIN = 1.2


def sizes_unequal(sizes) -> bool:
    """Sizes further apart than UNEQUAL_SIZE_FRACTION of the largest (the findings' rule, and pool --add's)."""
    sizes = list(sizes)
    return len(sizes) > 1 and min(sizes) < (1 - UNEQUAL_SIZE_FRACTION) * max(sizes)


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing to look at: `code` is stable (for --json and tests), `text` says it with its figures."""

    code: str
    severity: str  # warning or note
    text: str
    vdev: str = ""  # the vdev it is about, if one


def _data_vdevs(state: PoolState):
    return state.of_class("normal")


def redundancy_findings(state: PoolState) -> list[Finding]:
    found = []
    data = _data_vdevs(state)
    if not data:
        return found
    most = max(failures_survived(v) for v in data)
    least = min(failures_survived(v) for v in data)
    for v in data:
        if failures_survived(v) < most:
            lacking = most - failures_survived(v)
            # zpool-attach(8): a disk attached to a plain disk makes a mirror, to a mirror one more side
            fix = (f"; `zpool attach {state.name} {(v.children or (v,))[0].short_name} NEW` {lacking} time"
                   f"{'s' * (lacking > 1)} makes it a mirror that survives as many" if v.kind in ("disk", "file", "mirror") else "")
            found.append(Finding(
                "vdev-less-redundant", "warning",
                f"{v.short_name} survives {failures_survived(v)} disk failure(s), the pool's other data vdevs "
                f"{most}: losing it loses the pool (a `zpool add` of the wrong shape cannot be undone on raidz)"
                f"{fix}", v.name))
    for cls in ("special", "dedup"):
        for v in state.of_class(cls):
            if failures_survived(v) < least:
                found.append(Finding(
                    f"{cls}-less-redundant", "warning",
                    f"{cls} vdev {v.short_name} survives {failures_survived(v)} disk failure(s), the data vdevs "
                    f"{least}: it holds the pool's metadata, and losing it loses the pool", v.name))
    return found


def ashift_findings(state: PoolState, disks: dict[str, DiskFacts]) -> list[Finding]:
    found = []
    for v in state.vdevs:
        if v.ashift is None or v.alloc_class in ("spare", "cache"):
            continue
        # lsblk's physical sector, and ZFS's own where zpool status shows it (a file vdev, or no lsblk)
        sectors = [disks[leaf.name].physical_sector_bytes for leaf in v.leaves if leaf.name in disks]
        sectors += [leaf.native_sector_bytes for leaf in v.leaves if leaf.native_sector_bytes is not None]
        if sectors and (1 << v.ashift) < max(sectors):
            found.append(Finding(
                "ashift-below-sector", "warning",
                f"{v.short_name} has ashift {v.ashift} ({1 << v.ashift} B) on disks with {max(sectors)}-byte physical "
                "sectors: every small write is a read-modify-write in the disk; ashift is fixed per vdev "
                "(rebuild the vdev to change it)", v.name))
    return found


def raidz1_findings(state: PoolState) -> list[Finding]:
    found = []
    for v in _data_vdevs(state):
        sizes = [leaf.device_bytes for leaf in v.leaves if leaf.device_bytes is not None]
        if v.kind == "raidz" and v.parity == 1 and sizes and max(sizes) >= RAIDZ1_LARGE_BYTES:
            found.append(Finding(
                "raidz1-large-disks", "warning",
                f"{v.short_name} is raidz1 on disks of {max(sizes) / 1e12:.1f} TB: while one disk resilvers, any "
                "second failure or unreadable sector on the others loses data; raidz2 is the usual choice "
                f"from {RAIDZ1_LARGE_BYTES // 10**12} TB", v.name))
    return found


def fullness_findings(state: PoolState) -> list[Finding]:
    if state.size_bytes <= 0:
        return []
    percent = 100 * state.alloc_bytes / state.size_bytes
    if percent <= FULL_PERCENT:
        return []
    near = (f"; from about {BEST_FIT_PERCENT} % the allocator searches every metaslab best-fit and writes "
            "slow down sharply") if percent < BEST_FIT_PERCENT else "; it is past the best-fit point: writes are slow"
    return [Finding("pool-full", "warning",
                    f"the pool is {percent:.0f} % full (over {FULL_PERCENT} %): free space fragments and "
                    f"allocation slows{near}")]


def scrub_findings(state: PoolState, now_epoch_s: int) -> list[Finding]:
    scan = state.scan
    if scan.function == "scrub" and scan.state == "scanning":
        return []
    if scan.function == "scrub" and scan.end_epoch_s is not None:
        age_days = (now_epoch_s - scan.end_epoch_s) / DAY_S
        if age_days > SCRUB_MAX_DAYS:
            return [Finding("scrub-old", "warning",
                            f"the last scrub ended {age_days:.0f} days ago (more than {SCRUB_MAX_DAYS}): "
                            "run `zpool scrub " + state.name + "` and schedule it monthly")]
        return []
    created = state.dataset_prop("creation")
    if created is not None and created.isdigit() and (now_epoch_s - int(created)) / DAY_S <= SCRUB_MAX_DAYS:
        return []  # a young pool: no scrub yet is not a fault
    last = f" (the last scan was a {scan.function})" if scan.function else ""
    return [Finding("scrub-never", "warning",
                    f"no scrub on record{last}: run `zpool scrub {state.name}` and schedule it monthly")]


def compression_findings(state: PoolState) -> list[Finding]:
    if state.dataset_prop("compression") == "off":
        return [Finding("compression-off", "note",
                        f"compression is off on {state.name}: lz4 costs little CPU and skips incompressible "
                        f"data; `zfs set compression=lz4 {state.name}` (new writes only)")]
    return []


def autotrim_findings(state: PoolState, disks: dict[str, DiskFacts]) -> list[Finding]:
    ssds = [leaf.name for v in state.vdevs for leaf in v.leaves
            if leaf.name in disks and not disks[leaf.name].rotational]
    if ssds and state.pool_prop("autotrim") == "off":
        return [Finding("autotrim-off", "note",
                        f"autotrim is off and {len(ssds)} disk(s) are SSDs: freed blocks are not trimmed until "
                        f"`zpool trim`; `zpool set autotrim=on {state.name}`, or a periodic `zpool trim`")]
    return []


def health_findings(state: PoolState) -> list[Finding]:
    found = []
    if state.state != "ONLINE":
        found.append(Finding("pool-not-online", "warning", f"the pool is {state.state}"))
    for v in state.vdevs:
        for node in v.walk():
            if node.errors:
                found.append(Finding("vdev-errors", "warning",
                                     f"{node.short_name}: {node.read_errors} read, {node.write_errors} write, "
                                     f"{node.checksum_errors} checksum errors", node.name))
    return found


def _width(vdev) -> int:
    return len(vdev.children) if vdev.children else 1


def unequal_findings(state: PoolState) -> list[Finding]:
    """Data vdevs of one redundancy but unequal width or size (a less redundant one is
    vdev-less-redundant's, not this rule's)."""
    data = _data_vdevs(state)
    if len(data) < 2:
        return []
    most = max(failures_survived(v) for v in data)
    peers = [v for v in data if failures_survived(v) == most]
    shapes = sorted({(v.kind, _width(v)) for v in peers})
    sizes = [v.size_bytes for v in peers if v.size_bytes]
    parts = []
    if len(shapes) > 1:
        parts.append("of unequal width (" + ", ".join(f"{kind} of {width}" for kind, width in shapes)
                     + "; `zpool add` refuses that without -f, \"mismatched replication level\")")
    if sizes_unequal(sizes):
        parts.append(f"of unequal size ({min(sizes) / 1e9:,.0f} to {max(sizes) / 1e9:,.0f} GB)")
    if not parts:
        return []
    return [Finding("unequal-vdevs", "note",
                    "data vdevs " + " and ".join(parts) + ": ZFS spreads new writes by each vdev's free space, so "
                    "they fill and wear unevenly and a full vdev's share falls to the others; for new "
                    "vdevs, match the ones there")]


def feature_findings(state: PoolState) -> list[Finding]:
    """Features this OpenZFS has that the pool has not enabled, unless a compatibility set keeps them off."""
    compatibility = state.pool_prop("compatibility")
    if compatibility not in (None, "off", "-"):
        return []  # zpool-features(7): the set names the features meant to stay disabled
    disabled = sorted(name.removeprefix("feature@") for name, value in state.pool_props
                      if name.startswith("feature@") and value == "disabled")
    if not disabled:
        return []
    shown_names = ", ".join(disabled[:4]) + (f" and {len(disabled) - 4} more" if len(disabled) > 4 else "")
    return [Finding("features-disabled", "note",
                    f"{len(disabled)} feature(s) this OpenZFS supports are disabled on the pool ({shown_names}): "
                    f"it was made or last upgraded by an older one; `zpool upgrade {state.name}` enables "
                    "them, one way (an OpenZFS without them can no longer import the pool)")]


def dedup_findings(state: PoolState, ram_bytes: int | None) -> list[Finding]:
    """A dedup table too large for this host's memory, or one that saves little."""
    if not state.ddt_entries:
        return []
    found = []
    core = state.ddt_core_bytes or 0
    if ram_bytes and core > DDT_RAM_FRACTION * ram_bytes:
        found.append(Finding(
            "dedup-table-large", "warning",
            f"the dedup table holds {state.ddt_entries:,} entries, {format_bytes(core)} in core, "
            f"{100 * core / ram_bytes:.0f} % of this host's {format_bytes(ram_bytes)} of memory: every write "
            "looks its blocks up in it, and the parts the ARC cannot keep are read from disk"))
    ratio = state.pool_prop("dedupratio")
    try:
        gain = float(ratio.rstrip("x")) if ratio else None
    except ValueError:
        gain = None
    if gain is not None and gain == gain and gain < DEDUP_LITTLE_GAIN:
        found.append(Finding(
            "dedup-little-gain", "note",
            f"dedup saves little here (ratio {gain:.2f}x, {state.ddt_entries:,} table entries): every write still "
            "pays a table lookup; `zfs set dedup=off` stops new entries (blocks written stay deduplicated)"))
    return found


def record_text(size: int) -> str:
    """A recordsize as zfs writes it: 4K, 128K, 1M."""
    return f"{size >> 20}M" if size >= 1 << 20 and not size % (1 << 20) else f"{size >> 10}K" if not size % 1024 \
        else f"{size}B"


NAMED_AT_MOST = 3  # datasets a finding or an advice names one by one; the rest are counted


def recordsize_findings(state: PoolState) -> list[Finding]:
    """Records no larger than the pool's smallest allocation cannot be stored compressed, but for those
    that compress into a block pointer (112 bytes) or are zeros (docs/pool.md#findings): judged for every
    filesystem zfs get -r showed (each may set its own recordsize and compression), in one finding."""
    ashifts = [v.ashift for v in _data_vdevs(state) if v.ashift is not None]
    if not ashifts:
        return []
    sector = 1 << min(ashifts)  # zio_roundup_alloc_size() rounds to the pool's smallest allocation
    small = [fs for fs in state.filesystem_props() if fs.recordsize.isdigit() and len(fs.recordsize) < 12
             and fs.compression not in ("", "off") and int(fs.recordsize) <= sector]
    if not small:
        return []
    named = ", ".join(f"{record_text(int(fs.recordsize))} on {fs.name}" for fs in small[:NAMED_AT_MOST])
    if len(small) > NAMED_AT_MOST:
        named += f" and {len(small) - NAMED_AT_MOST} more (`zfs get -r recordsize {state.name}`)"
    compression = small[0].compression if len({fs.compression for fs in small}) == 1 else "compression"
    command = f"`zfs set recordsize=128K {small[0].name}`" if len(small) == 1 else \
        "`zfs set recordsize=128K DATASET` on each"
    return [Finding("recordsize-uncompressible", "warning",
                    f"recordsize is {named}, no more than its {sector}-byte allocation unit (ashift "
                    f"{min(ashifts)}): ZFS keeps a record compressed only when it then takes fewer sectors, so "
                    f"{compression} saves nothing on full records; {command} for files (new writes only)")]


WORN_PERCENT = 80  # docs/pool.md#findings: an NVMe's endurance estimate this far used is a note, 100 a warning


def disk_findings(state: PoolState, health: dict[str, DiskHealth]) -> list[Finding]:
    """A disk of the pool whose own counters say it is failing or worn (docs/pool.md#findings)."""
    found = []
    for v in state.vdevs:
        for leaf in v.leaves:
            h = health.get(leaf.name)
            if h is None:
                continue
            bad = [f"{n:,} {what}" for n, what in ((h.reallocated, "reallocated sectors"),
                                                  (h.pending, "pending (unreadable) sectors"),
                                                  (h.offline_uncorrectable, "offline uncorrectable sectors"),
                                                  (h.reported_uncorrect, "reported uncorrectable errors"),
                                                  (h.media_errors, "NVMe media errors")) if n]
            if h.passed is False:
                bad.insert(0, "its own SMART assessment FAILED")
            if h.critical_warning:
                bad.append(f"NVMe critical warning 0x{h.critical_warning:02x}")
            if h.spare_below_threshold:
                bad.append("NVMe spare below its threshold")
            if h.failing:   # DiskHealth.failing: the one rule, which `bad` words
                found.append(Finding(
                    "disk-failing", "warning",
                    f"disk {leaf.short_name} in {v.short_name}: {', '.join(bad)}: disks with such counters fail "
                    "far more often in the next months; have a replacement ready (`zpool replace`) and scrub "
                    "to find what it can no longer read", leaf.name))
            if h.percentage_used is not None and h.percentage_used >= WORN_PERCENT:
                worn = h.percentage_used >= 100
                found.append(Finding(
                    "disk-worn", "warning" if worn else "note",
                    f"disk {leaf.short_name} in {v.short_name} has used {h.percentage_used} % of its rated "
                    f"endurance{': past it, writes may begin to fail' if worn else ''}; plan its replacement",
                    leaf.name))
    return found


def findings(state: PoolState, disks: dict[str, DiskFacts], now_epoch_s: int,
             ram_bytes: int | None = None, health: dict[str, DiskHealth] | None = None) -> tuple[Finding, ...]:
    """Every finding on the pool, in docs/pool.md's order. `disks`: lsblk's facts by leaf name;
    `ram_bytes`: the host's memory, for the dedup table (None: not weighed); `health`: smartctl's
    counters by leaf name."""
    return tuple(health_findings(state) + disk_findings(state, health or {}) + redundancy_findings(state)
                 + ashift_findings(state, disks)
                 + raidz1_findings(state) + unequal_findings(state) + fullness_findings(state)
                 + scrub_findings(state, now_epoch_s) + compression_findings(state) + recordsize_findings(state)
                 + autotrim_findings(state, disks)
                 + feature_findings(state) + dedup_findings(state, ram_bytes))
