"""Is a disk safe to wipe? Every reason it is not, checked before anything is written.

A device is refused if it (or anything on it) holds a partition table, a filesystem / RAID /
LVM / swap / ZFS signature, is mounted, is swap, is held by md/LVM/dm, cannot be opened
exclusively (the kernel says someone has it), or simply does not read as empty: a header can
be wiped while the data behind it stays, so 64 regions of 1 MiB spread over the whole disk are
read, and any non-zero byte means "holds data of unknown kind". A /dev/disk/by-id name is
resolved to its device first, so an alias of a busy disk is refused too. Every check reads
only: lsblk, blkid -p and wipefs -n never write.

The one writer here, `zero_samples`, is what zfslab's own wipe does after its pools are gone:
it zeroes exactly the regions the emptiness check reads, so a disk zfslab used reads as empty
again, while a disk anyone writes to afterwards does not. The rest of such a disk still holds
zfslab's test data (fio's patterns), which no one needs.
"""

from __future__ import annotations

import errno
import json
import mmap
import os
import stat
from dataclasses import dataclass, field

from zfslab.errors import ZfslabError, one_line
from zfslab.system.runner import Runner

SAMPLE_REGIONS = 64
SAMPLE_BYTES = 1 << 20
_ALIGN = 4096  # O_DIRECT wants offsets and lengths aligned to the logical block size (<= 4 KiB)


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

    kind: partition-table | signature | zfs-label | mounted | swap | held | busy | content;
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


def sample_offsets(size_bytes: int) -> list[int]:
    """Where the emptiness check reads: SAMPLE_REGIONS regions of SAMPLE_BYTES, from the first
    MiB to the last, evenly spread (fewer on a disk too small for them all)."""
    span = size_bytes // _ALIGN * _ALIGN
    if span < SAMPLE_BYTES:
        return [0] if span else []
    count = min(SAMPLE_REGIONS, span // SAMPLE_BYTES)
    if count == 1:
        return [0]
    last = span - SAMPLE_BYTES
    return sorted({(last * i // (count - 1)) // _ALIGN * _ALIGN for i in range(count)})


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


def read_samples(path: str, *, exclusive: bool = True) -> tuple[int, int, int | None]:
    """(regions sampled, how many hold a non-zero byte, the first such offset or None).
    Raises OSError (EBUSY) when exclusive and the kernel has the device claimed."""
    fd, direct = _open(path, os.O_RDONLY | (os.O_EXCL if exclusive else 0))
    buf = mmap.mmap(-1, SAMPLE_BYTES)  # page-aligned, as O_DIRECT needs
    zero = bytes(SAMPLE_BYTES)
    dirty, first = 0, None
    try:
        offsets = sample_offsets(os.lseek(fd, 0, os.SEEK_END))
        if not direct:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        for offset in offsets:
            n = os.preadv(fd, [buf], offset)
            if buf[:n] != zero[:n]:
                dirty += 1
                first = offset if first is None else first
    finally:
        os.close(fd)
        buf.close()
    return len(offsets), dirty, first


def udev_settle(runner: Runner) -> None:
    """Wait until udev has handled every queued device event (no udev: nothing to wait for)."""
    if runner.which("udevadm"):
        runner.run(["udevadm", "settle", "--timeout=60"], timeout_s=90, check=False)


def zero_samples(path: str) -> None:
    """Zero the regions the emptiness check reads (zfslab's wipe, after its own pool is gone).
    Opened exclusively: a device someone holds is never written."""
    fd, _ = _open(path, os.O_WRONLY | os.O_EXCL)
    buf = mmap.mmap(-1, SAMPLE_BYTES)
    try:
        for offset in sample_offsets(os.lseek(fd, 0, os.SEEK_END)):
            os.pwritev(fd, [buf], offset)
        os.fsync(fd)
    finally:
        os.close(fd)
        buf.close()


def _content_findings(device: str) -> list[Finding]:
    try:
        sampled, dirty, first = read_samples(device)
    except OSError as e:
        if e.errno == errno.EBUSY:
            return [Finding("busy", "is in use: the kernel refused an exclusive open (mounted, in an imported "
                                    "pool, or held by md, LVM or device-mapper)")]
        return [Finding("busy", f"cannot be read to check it is empty ({e.strerror})")]
    if not dirty:
        return []
    return [Finding("content", f"holds data of unknown kind: {dirty} of {sampled} "
                               f"sampled 1 MiB regions are not zero (the first at byte {first:,})")]


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
    unique = tuple({f.text: f for f in findings}.values())
    return DiskInfo(given, device, size, (tree.get("serial") or "").strip(), (tree.get("model") or "").strip(),
                    str(tree.get("rota")) in ("1", "True", "true"), unique)


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
    sampled, dirty, first = read_samples(path, exclusive=False)
    if dirty:
        findings.append(Finding("content", f"holds data of unknown kind: {dirty} of {sampled} sampled 1 MiB "
                                           f"regions are not zero (the first at byte {first:,})"))
    return DiskInfo(path, path, size, "", "", False, tuple(findings))


def inspect_disks(given: list[str], runner: Runner | None = None) -> list[DiskInfo]:
    """Inspect each disk; a disk named twice (even by two names) is an error before anything runs."""
    runner = runner or Runner()
    infos = [inspect_disk(g, runner) for g in given]
    seen: dict[str, str] = {}
    for info in infos:
        if info.device in seen:
            raise BadDeviceList(f"{info.given} and {seen[info.device]} are the same disk ({info.device}); name each disk once")
        seen[info.device] = info.given
    return infos


# What a pool zfslab created leaves on a whole disk: its GPT (with the protective MBR), the
# pool's labels, and the pool's data in the sampled regions.
_LEFTOVER_KINDS = {"zfs-label", "content"}
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
