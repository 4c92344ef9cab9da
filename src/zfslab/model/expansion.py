"""RAID-Z expansion (OpenZFS 2.3+): `zpool list` and `zfs list` after each `zpool attach`, and the space
old blocks keep from you (docs/capacity.md#raidz-expansion).

What the source fixes (module/zfs/vdev_raidz.c, vdev.c): each attach adds one child; when the reflow
ends the vdev's asize becomes width x the smallest child and `vdev_expand()` adds metaslabs of the
ORIGINAL size (the metaslab shift is never recomputed); the deflate ratio is always taken at txg 0,
that is at the original width (`vdev_set_deflate_ratio()`), so `zfs list` keeps counting raw space
as if every 128 KiB block still had the old data-to-parity ratio. A block keeps the width of the
txg it was born in (`vdev_raidz_get_logical_width()`) until it is written again (`zfs rewrite`).

Exact: SIZE, metaslab counts, dspace, slop and USED+AVAIL of the empty pool. Estimates (named so):
ALLOC, USED and what follows from them once data is written, because metadata is left out.
"""

from __future__ import annotations

from dataclasses import dataclass

from zfslab.errors import LayoutError, ParamError, VersionError
from zfslab.model.capacity import (
    EMBEDDED_SLOG_MIN_MS, SPA_MINBLOCKSHIFT, Rules, leaf_asize, metaslab_shift, psize_to_asize, rules_for, slop_bytes,
)
from zfslab.model.layouts import Layout, MAX_CHILDREN, VdevGroup, VdevKind

VDEV_BOOT_SIZE = 7 << 19  # 3.5 MiB: the reflow's scratch space; vdev_raidz_attach_check() needs width << ashift <= it
EXPANSION_SINCE = (2, 3)  # RAID-Z expansion: commit 5caeef02fa, OpenZFS 2.3.0
REWRITE_SINCE = (2, 3, 4)  # `zfs rewrite`: OpenZFS 2.3.4 (`-P`, a physical rewrite, 2.4.0)


@dataclass(frozen=True, slots=True)
class ZfsRelease:
    """An OpenZFS version that has RAID-Z expansion; patch None means the newest of its line."""

    major: int
    minor: int
    patch: int | None

    @property
    def rules(self) -> Rules:
        return rules_for(str(self))

    @property
    def has_rewrite(self) -> bool:
        return (self.major, self.minor, self.patch if self.patch is not None else 999) >= REWRITE_SINCE

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}" + (f".{self.patch}" if self.patch is not None else "")


def parse_release(text: str) -> ZfsRelease:
    """'2.3', '2.3.9', 'zfs-2.4.4' -> ZfsRelease; older versions and rule-set names are refused."""
    raw = str(text).strip().lower().removeprefix("zfs-").removeprefix("v")
    parts = raw.split(".")
    try:
        if not 2 <= len(parts) <= 3 or not all(p.split("-")[0].isdigit() for p in parts):
            raise ValueError
        nums = [int(p.split("-")[0]) for p in parts]
    except ValueError:
        raise VersionError(text, "2.3, 2.3.9, 2.4, 2.4.4 (RAID-Z expansion came in 2.3)") from None
    release = ZfsRelease(nums[0], nums[1], nums[2] if len(nums) == 3 else None)
    if (release.major, release.minor) < EXPANSION_SINCE:
        raise ParamError("release", text, "RAID-Z expansion came in OpenZFS 2.3; give 2.3 or later")
    try:
        release.rules  # noqa: B018 -- a version no rule set knows (2.5 and later)
    except VersionError:
        raise VersionError(text, "2.3, 2.3.9, 2.4, 2.4.4 (zfslab knows no later OpenZFS)") from None
    return release


@dataclass(frozen=True, slots=True)
class ExpansionStep:
    """What the pool shows at one point: after creation, after each attach, after a rewrite."""

    label: str  # "created", "+1 disk", ..., "rewritten"
    width: int  # children of the raidz vdev now
    asize_bytes: int  # the vdev's asize: width x the child's asize
    metaslabs: int
    size_bytes: int  # zpool list SIZE (exact)
    dspace_bytes: int  # normal class, deflated at the original width, embedded log excluded (exact)
    embedded_log_bytes: int
    slop_bytes: int
    usable_bytes: int  # zfs list USED+AVAIL (exact)
    alloc_bytes: int  # zpool list ALLOC of the data blocks (estimate: metadata left out)
    used_bytes: int  # zfs list USED of the data (estimate)
    true_free_bytes: int  # new data that still fits in records of the current width (estimate)
    old_ratio_loss_bytes: int  # of new data, what a rewrite of the old blocks would make room for (estimate)
    widths_of_data: tuple[int, ...]  # the widths the written blocks have (empty when nothing is written)

    @property
    def free_bytes(self) -> int:
        """zpool list FREE: SIZE - ALLOC (estimate once data is written)."""
        return self.size_bytes - self.alloc_bytes

    @property
    def avail_bytes(self) -> int:
        """zfs list AVAIL: USED+AVAIL - USED (exact when empty)."""
        return max(self.usable_bytes - self.used_bytes, 0)


@dataclass(frozen=True, slots=True)
class Expansion:
    layout: Layout
    release: ZfsRelease
    ashift: int
    vdev_bytes: int  # what ZFS sees of each disk (osize), the new ones alike
    added: int
    recordsize_bytes: int
    data_bytes: int  # logical bytes written before the first attach (whole records)
    ms_shift: int  # fixed when the vdev was created
    deflate_ratio: int  # of the original width, for good
    steps: tuple[ExpansionStep, ...]


def _raidz(width: int, parity: int) -> VdevGroup:
    return VdevGroup(VdevKind.RAIDZ, width, parity)


def check_expandable(layout: Layout, added: int, ashift: int) -> VdevGroup:
    """The one raidz vdev to expand; LayoutError/ParamError when `zpool attach` cannot do it."""
    groups = layout.groups
    if len(groups) != 1 or groups[0].count != 1 or groups[0].kind is not VdevKind.RAIDZ:
        raise LayoutError(f"{layout}: zfslab expand models one raidz vdev (e.g. raidz2:6); zpool attach "
                          "expands raidz vdevs only, one disk at a time")
    if layout.sized:
        raise LayoutError(f"{layout}: leave out the @SIZES and give `vdev_bytes`")
    group = groups[0]
    limit = min(MAX_CHILDREN, VDEV_BOOT_SIZE >> ashift) - group.width
    if not 1 <= added <= limit:
        why = (f"a raidz vdev has at most {MAX_CHILDREN} disks" if VDEV_BOOT_SIZE >> ashift >= MAX_CHILDREN else
               f"at ashift {ashift} the reflow's 3.5 MiB scratch space allows {VDEV_BOOT_SIZE >> ashift} disks")
        raise ParamError("added", str(added), f"give 1 to {max(limit, 0)} ({why}; {layout} has {group.width})")
    return group


def expand(
    layout: Layout, vdev_bytes: int, added: int, *, release: ZfsRelease | str = "2.4", ashift: int = 12,
    fill: float = 0.0, recordsize: int = 128 * 1024, rewrite: bool = False, written_bytes: int | None = None,
) -> Expansion:
    """The pool after creation and after each of `added` attaches of a disk of the same size, with
    `fill` of the usable space (or `written_bytes`, in whole records) written before the first."""
    release = release if isinstance(release, ZfsRelease) else parse_release(release)
    if not 9 <= ashift <= 16:
        raise LayoutError(f"ashift {ashift}: OpenZFS accepts 9 to 16 (9 = 512 B, 12 = 4 KiB sectors)")
    group = check_expandable(layout, added, ashift)
    if not 0.0 <= fill <= 1.0:
        raise ParamError("fill_before", str(fill), "give a fraction from 0 to 1 of the usable space")
    if recordsize & (recordsize - 1) or not 512 <= recordsize <= 16 << 20:
        raise ParamError("recordsize", str(recordsize), "give a power of two from 512 to 16M")
    if rewrite and not release.has_rewrite:
        raise ParamError("rewrite", f"with OpenZFS {release}", "zfs rewrite came in OpenZFS 2.3.4; that release has none")
    rules = release.rules
    leaf = leaf_asize(vdev_bytes)
    w0, parity = group.width, group.parity
    shift = metaslab_shift(w0 * leaf, rules)
    ratio = (1 << 17) // (psize_to_asize(group, 1 << 17, ashift) >> SPA_MINBLOCKSHIFT)

    def charge(width: int) -> int:
        """USED of one record born at `width`: its asize deflated at the original ratio (dva_get_dsize_sync)."""
        return (psize_to_asize(_raidz(width, parity), recordsize, ashift) >> SPA_MINBLOCKSHIFT) * ratio

    def space(width: int) -> tuple[int, int, int, int, int, int]:
        asize = width * leaf  # vdev_raidz_open once the reflow is done
        count = asize >> shift  # vdev_metaslab_init: new metaslabs of the original size
        per_ms = ((1 << shift) >> SPA_MINBLOCKSHIFT) * ratio
        log = per_ms if rules.embedded_log and count > EMBEDDED_SLOG_MIN_MS else 0
        dspace = count * per_ms - log
        slop = slop_bytes(dspace, log, rules)
        return asize, count, count << shift, dspace, log, slop

    empty = space(w0)
    usable0 = max(empty[3] - empty[5], 0)
    records = int(fill * usable0) // recordsize if written_bytes is None else written_bytes // recordsize
    # the records must fit as ZFS charges them; a fill of 1 stops at a full pool
    if written_bytes is not None and records > usable0 // charge(w0):
        raise ParamError("written_bytes", str(written_bytes), f"{layout} holds at most "
                         f"{usable0 // charge(w0) * recordsize} B of {recordsize} B records before the expansion")
    records = min(records, usable0 // charge(w0))

    def step(label: str, width: int, born: int) -> ExpansionStep:
        asize, count, size, dspace, log, slop = space(width)
        usable = max(dspace - slop, 0)
        used = records * charge(born)
        free_charged = max(usable - used, 0)
        true_free = free_charged // charge(width) * recordsize
        after_rewrite = max(usable - records * charge(width), 0) // charge(width) * recordsize
        alloc = records * psize_to_asize(_raidz(born, parity), recordsize, ashift)
        return ExpansionStep(label, width, asize, count, size, dspace, log, slop, usable, alloc, used,
                             true_free, max(after_rewrite - true_free, 0), (born,) if records else ())

    steps = [step("created", w0, w0)]
    for i in range(1, added + 1):
        steps.append(step(f"+{i} disk{'s' * (i > 1)}", w0 + i, w0))
    if rewrite:
        steps.append(step("rewritten", w0 + added, w0 + added))
    return Expansion(layout, release, ashift, vdev_bytes, added, recordsize, records * recordsize, shift, ratio,
                     tuple(steps))
