"""Is a disk safe to wipe? Every reason it is not, checked before anything is written.

A device is refused if it (or anything on it) holds a partition table, a filesystem / RAID /
LVM / swap / ZFS signature, is mounted, is swap, or is held by md/LVM/dm; a /dev/disk/by-id
name is resolved to its device first, so an alias of a busy disk is refused too. Each check
reads only: lsblk, blkid -p and wipefs -n never write.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from zfslab.errors import ZfslabError
from zfslab.system.runner import Runner


class DisksRefused(ZfslabError):
    """{}"""

    exit_code = 10


class BadDeviceList(ZfslabError):
    """{}"""

    exit_code = 2


@dataclass(frozen=True)
class DiskInfo:
    """One whole disk as the kernel sees it."""

    given: str  # as the user wrote it
    device: str  # /dev/sdX after resolving links
    size_bytes: int
    serial: str
    model: str
    rotational: bool
    reasons: tuple[str, ...] = field(default=())  # why it may not be wiped; empty = safe

    @property
    def safe(self) -> bool:
        return not self.reasons


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


def inspect_disk(given: str, runner: Runner | None = None) -> DiskInfo:
    runner = runner or Runner()
    device = os.path.realpath(given)
    if not os.path.exists(device):
        raise BadDeviceList(f"{given}: no such device; list disks with `lsblk -o NAME,SIZE,SERIAL,MODEL`")
    tree = _lsblk(runner, device)
    if tree.get("type") != "disk":
        raise BadDeviceList(f"{given} is a {tree.get('type')}, not a whole disk; zfslab uses whole disks")
    reasons: list[str] = []
    if tree.get("pttype"):
        reasons.append(f"holds a {tree['pttype']} partition table")
    swaps = _swaps()
    for node in [tree, *tree.get("children", [])]:
        path = node.get("path") or f"/dev/{node['name']}"
        where = "" if node is tree else f" on {path}"
        if node.get("fstype"):
            reasons.append(f"holds a {node['fstype']} signature{where}")
        if node.get("mountpoint"):
            reasons.append(f"is mounted at {node['mountpoint']}{where}")
        if os.path.realpath(path) in swaps:
            reasons.append(f"is in use as swap{where}")
        for holder in _holders(node["name"]):
            reasons.append(f"is held by {holder}{where} (md, LVM or device-mapper)")
        for sig in _signatures(runner, path):
            text = f"holds a {sig} signature{where}"
            if sig != tree.get("pttype") and text not in reasons and f"holds a {sig} partition table" not in reasons:
                reasons.append(text)
    return DiskInfo(given, device, int(tree.get("size") or 0), (tree.get("serial") or "").strip(),
                    (tree.get("model") or "").strip(), str(tree.get("rota")) in ("1", "True", "true"),
                    tuple(dict.fromkeys(reasons)))


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


def refusal_lines(infos: list[DiskInfo]) -> list[str]:
    return [f"{i.given} ({i.device}, serial {i.serial or '?'}): {'; '.join(i.reasons)}" for i in infos if i.reasons]


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
