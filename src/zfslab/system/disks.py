"""Is a disk safe to wipe? Every reason it is not, checked before anything is written.

A device is refused if it (or anything on it) holds a partition table, a filesystem / RAID /
LVM / swap / ZFS signature, is mounted, is swap, is held by md/LVM/dm, cannot be opened
exclusively (the kernel says someone has it), or simply does not read as empty: a header can
be wiped while the data behind it stays, so pages of 4 KiB spread over the whole disk (one a MiB,
up to 16,384) are read, every one of them, and any non-zero byte means "holds data of unknown
kind"; a disk too slow to give them all within SAMPLE_DEADLINE_S is refused as unverified. A disk whose SMART
history says it was used (system/smart.py) is refused too, even when every region reads zero.
A /dev/disk/by-id name is resolved to its device first, so an alias of a busy disk is refused
too. Every check reads only: lsblk, blkid -p, wipefs -n and smartctl -a never write.

The one writer here, `zero_samples`, is what zfslab's own wipe does after its pools are gone:
it zeroes exactly the regions the emptiness check reads, so a disk zfslab used reads as empty
again, while a disk anyone writes to afterwards does not. The rest of such a disk still holds
zfslab's test data (fio's patterns), which no one needs.
"""

from __future__ import annotations

import dataclasses
import errno
import json
import mmap
import os
import stat
import time
from dataclasses import dataclass, field

from zfslab.errors import ZfslabError, one_line
from zfslab.system.runner import Runner

# The emptiness sample (docs/safety.md#how-much-the-sample-sees): many small regions rather than
# a few large ones. On an HDD each region costs a seek and half a rotation (about 6 ms) whatever
# its size up to about 1 MiB, so the count, not the bytes, sets the time; an SSD reads 4 KiB in
# about 0.1 ms, 16,384 regions in under 2 s. Under qemu's software emulation the bytes cost too:
# 2,049 pages of a 2 GiB test disk, not 256 MiB.
SAMPLE_REGION_BYTES = 4 << 10  # one page: the smallest read O_DIRECT allows on any disk
SAMPLE_SPACING_BYTES = 1 << 20  # a page a MiB: on a small disk an island of 1 MiB anywhere is read
SAMPLE_REGIONS_MAX = 16384  # 64 MiB read (and zeroed by the wipe) at most, 1 GB apart on a 16 TB disk
_ALIGN = 4096  # O_DIRECT wants offsets and lengths aligned to the logical block size (<= 4 KiB)
# The largest disk that still gets a page at every MiB: its last page is at most
# (SAMPLE_REGIONS_MAX - 1) MiB in, so 16,383 MiB and 8 KiB less a byte (not 16 GiB: one page more
# than the cap would be needed in the last MiB below 16 GiB, and the step grows past a MiB there).
SAMPLE_DENSE_MAX_BYTES = (SAMPLE_REGIONS_MAX - 1) * SAMPLE_SPACING_BYTES + SAMPLE_REGION_BYTES + _ALIGN - 1
# The planned sample is always read in full: a read cut short leaves islands unseen, and how
# far it got would depend on the machine's load (issue 38: under TCG guests on 2 busy cores a
# 4 s budget read 122-895 of 1,025 pages). The time limit is only for a disk too slow to trust:
# a healthy HDD reads the largest plan (16,384 pages, about 7 ms each in a sorted sweep) in about
# 2 minutes, and waking from standby adds some 10 s; a disk that cannot give them in 10 minutes
# (37 ms a page) is failing or behind a bridge that stalls, and is refused as unverified.
SAMPLE_DEADLINE_S = 600.0


class DisksRefused(ZfslabError):
    """Disks that may hold data, refused before anything was written: one line a disk."""

    exit_code = 10
    one_line_each = True  # the refused disks, one line each, as the user reviews them


class BadDeviceList(ZfslabError):
    """A disk list that is not one: a regular file, a duplicate, a partition, disks of different sizes."""

    exit_code = 2


@dataclass(frozen=True)
class Finding:
    """One reason a disk may not be wiped.

    kind: partition-table | signature | zfs-label | mounted | swap | held | busy | content |
    unverified (the sample could not be read in full) | history;
    detail: the partition table or signature type; pool_guid: the pool a ZFS label names.
    """

    kind: str
    text: str
    detail: str = ""
    pool_guid: str = ""


@dataclass(frozen=True)
class DiskInfo:
    """One whole disk as the kernel sees it."""

    given: str  # as the user wrote it
    device: str  # /dev/sdX after resolving links
    size_bytes: int
    serial: str
    model: str
    rotational: bool
    findings: tuple[Finding, ...] = field(default=())  # why it may not be wiped; empty = safe
    notes: tuple[str, ...] = field(default=())  # where the evidence is weaker than usual (said, never refused)

    @property
    def reasons(self) -> tuple[str, ...]:
        return tuple(f.text for f in self.findings)

    @property
    def safe(self) -> bool:
        return not self.findings

    @property
    def pool_guids(self) -> frozenset[str]:
        return frozenset(f.pool_guid for f in self.findings if f.kind == "zfs-label")


def _lsblk(runner: Runner, device: str) -> dict:
    out = runner.run(["lsblk", "-J", "-b", "-o", "NAME,PATH,SIZE,TYPE,FSTYPE,MOUNTPOINT,SERIAL,MODEL,ROTA,PTTYPE",
                      device]).stdout
    return json.loads(out)["blockdevices"][0]


def _signatures(runner: Runner, path: str) -> list[str]:
    """What wipefs finds (read-only with -n): partition tables, filesystems, RAID, LVM, swap, ZFS."""
    done = runner.run(["wipefs", "--no-act", "--json", path], check=False)
    if done.returncode != 0 or not done.stdout.strip():
        return []
    return sorted({s.get("type", "?") for s in json.loads(done.stdout).get("signatures", [])})


def _zfs_label(runner: Runner, path: str) -> tuple[str, str]:
    """(pool GUID, pool name) of the ZFS label on path, read by libblkid's own probe (blkid -p:
    no cache, read-only); ('', '') when it cannot tell."""
    done = runner.run(["blkid", "-p", "-o", "export", path], check=False)
    fields = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    if fields.get("TYPE") != "zfs_member":
        return "", ""
    return fields.get("UUID", ""), fields.get("LABEL", "")


def _swaps() -> set[str]:
    try:
        with open("/proc/swaps") as f:
            return {os.path.realpath(line.split()[0]) for line in f.read().splitlines()[1:] if line.strip()}
    except OSError:
        return set()


def _holders(name: str) -> list[str]:
    try:
        return os.listdir(f"/sys/class/block/{name}/holders")
    except OSError:
        return []


def sample_plan(size_bytes: int) -> SamplePlan:
    """Where the emptiness check reads on a disk of this size: a page of SAMPLE_REGION_BYTES at
    the start of every MiB (SAMPLE_SPACING_BYTES), so that no unread stretch holds a whole MiB,
    and the disk's last page; on a disk too large for that within SAMPLE_REGIONS_MAX pages, at
    every step of the smallest 4 KiB multiple that keeps to it. A function of the size alone,
    so zfslab's wipe zeroes exactly what every later inspection reads."""
    span = size_bytes // _ALIGN * _ALIGN
    if span <= 0:
        return SamplePlan(())
    last = span - SAMPLE_REGION_BYTES
    wide = -(-last // (SAMPLE_REGIONS_MAX - 1))  # the spacing SAMPLE_REGIONS_MAX pages allow
    step = max(SAMPLE_SPACING_BYTES, -(-wide // _ALIGN) * _ALIGN)
    return SamplePlan((*range(0, last, step), last))


def sample_offsets(size_bytes: int) -> list[int]:
    """Every offset the emptiness check may read, in disk order (what the wipe zeroes)."""
    return list(sample_plan(size_bytes).offsets)


@dataclass(frozen=True)
class SamplePlan:
    """The sampled regions, and the order they are read in: passes, each a sweep in disk order,
    the first pass a coarse grid and each next one halving the gaps. Every region is read, but
    data spread over a disk is met early, and the read stops at the first page that is not zero."""

    offsets: tuple[int, ...]  # in disk order

    def passes(self) -> list[list[int]]:
        n = len(self.offsets)
        seen = {0, n - 1} if n else set()
        out = [[self.offsets[i] for i in sorted(seen)]] if n else []
        stride = 1 << max(n - 1, 1).bit_length() - 1  # the largest power of two below n
        while n > 2 and stride >= 1:
            this = [i for i in range(0, n, stride) if i not in seen]
            seen.update(this)
            out.append([self.offsets[i] for i in this])
            stride //= 2
        return [p for p in out if p]


@dataclass(frozen=True)
class SampleResult:
    """What the emptiness check read: regions read (of how many planned), how many hold a
    non-zero byte (the read stops at the first: one is proof enough), where, the seconds it
    took and the seconds it was allowed."""

    sampled: int
    planned: int
    dirty: int
    first_dirty: int | None
    seconds: float
    deadline_s: float = SAMPLE_DEADLINE_S

    @property
    def complete(self) -> bool:
        """Read in full, or data found: either way the sample has decided."""
        return self.sampled == self.planned or self.dirty > 0


def _open(path: str, flags: int) -> tuple[int, bool]:
    """Open with O_DIRECT where the file allows it (a block device does; tmpfs does not).
    O_DIRECT matters: ZFS writes to a disk beneath the page cache, so a cached read could
    still show zeros where a pool now keeps data."""
    try:
        return os.open(path, flags | os.O_DIRECT), True
    except OSError as e:
        if e.errno != errno.EINVAL:
            raise
        return os.open(path, flags), False


def read_samples(path: str, *, exclusive: bool = True, deadline_s: float = SAMPLE_DEADLINE_S,
                 clock=time.monotonic) -> SampleResult:
    """Read the sampled regions, pass by pass (SamplePlan.passes), until one is not zero or all
    are read. `deadline_s` stops a disk too slow to trust (SAMPLE_DEADLINE_S): the result is then
    incomplete, which sample_findings turns into a refusal, never into a note. A single read that
    never returns is the kernel's to end (its command timeout and retries, then EIO: OSError).
    Raises OSError (EBUSY) when exclusive and the kernel has the device claimed."""
    fd, direct = _open(path, os.O_RDONLY | (os.O_EXCL if exclusive else 0))
    buf = mmap.mmap(-1, SAMPLE_REGION_BYTES)  # page-aligned, as O_DIRECT needs
    zero = bytes(SAMPLE_REGION_BYTES)
    first, read = None, 0
    t0 = clock()
    try:
        plan = sample_plan(os.lseek(fd, 0, os.SEEK_END))
        if not direct:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        for offset in (o for sweep in plan.passes() for o in sweep):
            if read and clock() - t0 > deadline_s:
                break  # too slow to trust: refused as unverified, whatever was read so far
            n = os.preadv(fd, [buf], offset)
            read += 1
            if buf[:n] != zero[:n]:
                first = offset
                break
    finally:
        os.close(fd)
        buf.close()
    return SampleResult(read, len(plan.offsets), int(first is not None), first, clock() - t0, deadline_s)


def partitions(runner: Runner, disk: str) -> list[str]:
    """The partitions the kernel lists for `disk` now (not what its partition table says)."""
    return runner.run(["lsblk", "-nrpo", "PATH", disk]).stdout.split()[1:]


def udev_settle(runner: Runner) -> None:
    """Wait until udev has handled every queued device event (no udev: nothing to wait for)."""
    if runner.which("udevadm"):
        runner.run(["udevadm", "settle", "--timeout=60"], timeout_s=90, check=False)


def zero_samples(path: str) -> None:
    """Zero every region the emptiness check reads (zfslab's wipe, after its own pool is
    gone): 4 KiB pages written through the page cache, then one
    fsync, so the kernel sends them in disk order and many at once (an HDD's queue sorts them)
    rather than one synchronous write per region. Opened exclusively: a device someone holds
    is never written."""
    fd = os.open(path, os.O_WRONLY | os.O_EXCL)
    zero = bytes(SAMPLE_REGION_BYTES)
    try:
        size = os.lseek(fd, 0, os.SEEK_END) // _ALIGN * _ALIGN
        for offset in sample_offsets(size):
            os.pwrite(fd, zero, offset)
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)  # the next check reads the disk, not this cache
    finally:
        os.close(fd)


def sample_findings(sample: SampleResult) -> list[Finding]:
    """The findings a sample makes: data of unknown kind when a region read is not zero; the
    disk unverified when the deadline stopped the read before every planned page was read (an
    island in an unread page would be overwritten: refused like data, never just noted)."""
    if sample.dirty:
        return [Finding("content", f"holds data of unknown kind: the sampled {SAMPLE_REGION_BYTES >> 10} KiB at "
                                   f"byte {sample.first_dirty:,} is not zero ({sample.sampled:,} of "
                                   f"{sample.planned:,} regions read)")]
    if not sample.complete:
        return [Finding("unverified", f"could not verify it holds no data: read {sample.sampled:,} of "
                                      f"{sample.planned:,} planned pages in {sample.seconds:,.0f} s (the limit is "
                                      f"{sample.deadline_s:,.0f} s; a disk this slow may be failing: check it "
                                      f"with smartctl -a)")]
    return []


def _content_findings(device: str) -> list[Finding]:
    try:
        sample = read_samples(device)
    except OSError as e:
        if e.errno == errno.EBUSY:
            return [Finding("busy", "is in use: the kernel refused an exclusive open (mounted, in an imported "
                                    "pool, or held by md, LVM or device-mapper)")]
        return [Finding("busy", f"cannot be read to check it is empty ({e.strerror})")]
    return sample_findings(sample)


@dataclass(frozen=True)
class HistoryEvidence:
    findings: list[Finding]
    note: str
    written_bytes: int | None


def disk_history(runner: Runner, device: str) -> HistoryEvidence:
    """The disk's own history as gate evidence: a finding when SMART says it was used (more
    than a new disk's factory tests); a note, never a refusal, when it cannot tell."""
    from zfslab.system.smart import read_history
    history, note = read_history(runner, device)
    if history is None:
        return HistoryEvidence([], note, None)
    found = []
    if history.used:
        found.append(Finding("history", f"has been used ({history.text()}, SMART) though no sampled region holds "
                                        f"data: its data may lie between them",
                             str(history.written_bytes if history.written_bytes is not None else "")))
    return HistoryEvidence(found, note, history.written_bytes)


def waive_history(infos: list[DiskInfo], recorded: dict[str, int]) -> list[DiskInfo]:
    """Drop the history finding of a disk zfslab itself used last: its serial's writes counter
    as recorded after zfslab's own wipe (`recorded`: serial -> bytes) has not grown by more
    than a trivial amount since. Anything more was written by someone else."""
    from zfslab.system.smart import TRIVIAL_WRITTEN_BYTES
    out = []
    for info in infos:
        base = recorded.get(info.serial) if info.serial else None
        keep = tuple(f for f in info.findings if not (
            f.kind == "history" and base is not None and f.detail.isdigit()
            and int(f.detail) <= base + TRIVIAL_WRITTEN_BYTES))
        out.append(info if keep == info.findings else dataclasses.replace(info, findings=keep))
    return out


def _node_findings(runner: Runner, node: dict, tree: dict, swaps: set[str]) -> list[Finding]:
    path = node.get("path") or f"/dev/{node['name']}"
    where = "" if node is tree else f" on {path}"
    found: list[Finding] = []
    signatures = set(_signatures(runner, path))
    if node.get("fstype"):
        signatures.add(node["fstype"])
    for sig in sorted(signatures):
        if sig == tree.get("pttype"):
            continue  # said once, as the partition table
        if sig == "zfs_member":
            guid, name = _zfs_label(runner, path)
            pool = f" of pool {name!r} (GUID {guid})" if guid else ""
            found.append(Finding("zfs-label", f"holds a zfs_member signature{pool}{where}", sig, guid))
        else:
            found.append(Finding("signature", f"holds a {sig} signature{where}", sig))
    if node.get("mountpoint"):
        found.append(Finding("mounted", f"is mounted at {node['mountpoint']}{where}"))
    if os.path.realpath(path) in swaps:
        found.append(Finding("swap", f"is in use as swap{where}"))
    for holder in _holders(node["name"]):
        found.append(Finding("held", f"is held by {holder}{where} (md, LVM or device-mapper)"))
    return found


def check_block_device(given: str) -> str:
    """The block device `given` names (its real path), or a one-line refusal: checked with stat()
    alone, so a mistyped --disks is refused before any program (zpool, lsblk) is looked for."""
    device = os.path.realpath(given)
    try:
        mode = os.stat(device).st_mode
    except OSError:
        raise BadDeviceList(f"{given}: no such device; list disks with `lsblk -o NAME,SIZE,SERIAL,MODEL`") from None
    if not stat.S_ISBLK(mode):
        what = "a directory" if stat.S_ISDIR(mode) else "a regular file" if stat.S_ISREG(mode) else "not a block device"
        raise BadDeviceList(f"{given} is {what}, not a disk; give whole disks (lsblk -o NAME,SIZE,SERIAL,MODEL "
                            f"lists them), or --sandbox DIR for file vdevs")
    return device


def inspect_disk(given: str, runner: Runner | None = None) -> DiskInfo:
    runner = runner or Runner()
    device = check_block_device(given)
    tree = _lsblk(runner, device)
    if tree.get("type") != "disk":
        raise BadDeviceList(f"{given} is a {tree.get('type')}, not a whole disk; zfslab uses whole disks")
    size = int(tree.get("size") or 0)
    findings: list[Finding] = []
    if tree.get("pttype"):
        findings.append(Finding("partition-table", f"holds a {tree['pttype']} partition table", tree["pttype"]))
    swaps = _swaps()
    for node in [tree, *tree.get("children", [])]:
        findings += _node_findings(runner, node, tree, swaps)
    findings += _content_findings(device)
    history = disk_history(runner, device)
    findings += history.findings
    unique = tuple({f.text: f for f in findings}.values())
    notes = (history.note,) if history.note else ()
    return DiskInfo(given, device, size, (tree.get("serial") or "").strip(), (tree.get("model") or "").strip(),
                    str(tree.get("rota")) in ("1", "True", "true"), unique, notes)


def inspect_file(path: str, runner: Runner | None = None) -> DiskInfo:
    """A sandbox file vdev that already exists, judged like a disk: zfslab may reuse it only
    when it reads as empty or holds nothing but the labels of a pool zfslab recorded."""
    runner = runner or Runner()
    size = os.path.getsize(path)
    findings = []
    for sig in _signatures(runner, path):
        if sig == "zfs_member":
            guid, name = _zfs_label(runner, path)
            findings.append(Finding("zfs-label", f"holds a zfs_member signature of pool {name!r} (GUID {guid})",
                                    sig, guid))
        else:
            findings.append(Finding("signature", f"holds a {sig} signature", sig))
    findings += sample_findings(read_samples(path, exclusive=False))
    return DiskInfo(path, path, size, "", "", False, tuple(findings))


def inspect_disks(given: list[str], runner: Runner | None = None) -> list[DiskInfo]:
    """Inspect each disk; a disk named twice (even by two names) is an error before anything runs."""
    runner = runner or Runner()
    # in parallel: each disk's sample is its own seeks, so the time is the slowest disk's, not the sum
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=max(1, min(16, len(given)))) as pool:
        infos = list(pool.map(lambda g: inspect_disk(g, runner), given))
    seen: dict[str, str] = {}
    for info in infos:
        if info.device in seen:
            raise BadDeviceList(f"{info.given} and {seen[info.device]} are the same disk ({info.device}); name each disk once")
        seen[info.device] = info.given
    return infos


# What a pool zfslab created leaves on a whole disk: its GPT (with the protective MBR), the
# pool's labels, the pool's data in the sampled regions, and the writes it made (SMART history).
_LEFTOVER_KINDS = {"zfs-label", "content", "history"}
_LEFTOVER_TABLES = {"gpt", "PMBR"}


def is_leftover_of(info: DiskInfo, pool_guids: set[str] | frozenset[str]) -> bool:
    """Does the disk hold nothing but what one of these pools (zfslab's, by GUID) left?
    A label is the only proof: a disk whose label names any other pool, or that has no
    label at all, holds someone else's data."""
    guids = info.pool_guids
    if not guids or "" in guids or not guids <= set(pool_guids):
        return False
    return all(f.kind in _LEFTOVER_KINDS or
               (f.kind in ("partition-table", "signature") and f.detail in _LEFTOVER_TABLES) for f in info.findings)


def refusal_lines(infos: list[DiskInfo]) -> list[str]:
    # one_line: a typed name with a newline in it cannot fake a line of the refusal
    return [one_line(f"{i.given} ({i.device}, serial {i.serial or '?'}): {'; '.join(i.reasons)}")
            for i in infos if i.reasons]


def check_wipe_allowed(infos: list[DiskInfo], *, wipe: bool, confirmed_serials: set[str]) -> None:
    """Refuse unless every disk is empty, or --wipe came with the exact serials of the others."""
    dirty = [i for i in infos if i.reasons]
    if not dirty:
        return
    lines = refusal_lines(infos)
    if not wipe:
        raise DisksRefused("refusing disks that hold data (nothing was written):\n  " + "\n  ".join(lines)
                           + "\nto destroy their contents, pass --wipe and confirm their serial numbers")
    missing = [i for i in dirty if not i.serial or i.serial not in confirmed_serials]
    if missing:
        need = ", ".join(f"{i.given}={i.serial or '(no serial: cannot be confirmed)'}" for i in missing)
        raise DisksRefused(f"--wipe needs the exact serial numbers of the disks that hold data; not confirmed: {need}")
