"""Preflight of a fleet, before anything is written: every host reachable, the controller's zfslab,
OpenZFS and fio present, and the named disks identical across hosts (count, size, model,
rotational, logical and physical sector size). Pure: system/preflight.py gathers the facts and
parses lsblk's answer into them; this judges them and words each refusal as one line naming the
host and the difference."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from zfslab.errors import ZfslabError

@dataclass(frozen=True, slots=True)
class DiskFacts:
    path: str
    size_bytes: int
    model: str | None
    serial: str | None
    rotational: bool
    logical_sector_bytes: int
    physical_sector_bytes: int

    @property
    def kind(self) -> tuple:
        """What makes two disks identical for a benchmark: not the path, not the serial."""
        return (self.size_bytes, self.model, self.rotational, self.logical_sector_bytes, self.physical_sector_bytes)

    def describe(self) -> str:
        rot = "rotational" if self.rotational else "solid-state"
        return (f"{self.size_bytes:,} bytes, model {self.model or '(none)'}, {rot}, sectors "
                f"{self.logical_sector_bytes}/{self.physical_sector_bytes}")


@dataclass(frozen=True, slots=True)
class HostFacts:
    host: str
    zfslab_version: str | None      # None: not installed
    zfs_version: str | None         # zpool version's userland line, e.g. zfs-2.1.11-1
    fio_version: str | None
    disks: tuple[DiskFacts, ...]
    missing_disks: tuple[str, ...] = ()   # named, but not on this host
    zfslab_digest: str | None = None       # sha256 of its package's files (`zfslab --installed`); None: not said
    zfslab_path: str | None = None         # where that package is, for the refusal to name


def refusals(facts: Sequence[HostFacts], *, controller_version: str, need_zfs: bool = True,
             controller_digest: str | None = None) -> list[str]:
    """One line per problem, naming the host and the difference; [] when every host may start.
    need_zfs False: profile-disk only reads disks with fio, so a burn-in may come before OpenZFS.
    controller_digest: the controller's package digest; a host of the same version whose digest
    differs (another checkout, a modified copy) or cannot say it (a zfslab without --installed)
    is refused too. None: versions alone are compared."""
    lines = []
    for f in facts:
        if f.zfslab_version is None:
            lines.append(f"{f.host}: zfslab is not installed (not on ssh's PATH there); install zfslab "
                         f"{controller_version} on it (pip install zfslab=={controller_version}, or the controller's "
                         "source tree), or give the fleet command its path there (docs/fleet.md#preflight)")
        elif f.zfslab_version != controller_version:
            lines.append(f"{f.host}: zfslab {f.zfslab_version}, the controller runs {controller_version}; install "
                         f"zfslab {controller_version} on it (pip install zfslab=={controller_version})")
        elif controller_digest is not None and f.zfslab_digest != controller_digest:
            where = f" at {f.zfslab_path}" if f.zfslab_path else ""
            said = (f"files digest {f.zfslab_digest[:12]}, the controller's {controller_digest[:12]}"
                    if f.zfslab_digest else "it cannot say its files' digest: an older build")
            lines.append(f"{f.host}: zfslab {f.zfslab_version}{where} is not the controller's ({said}): another "
                         f"checkout or a modified copy; install the controller's zfslab there, or give the fleet "
                         f"command the path of one that is (docs/fleet.md#preflight)")
        if f.zfs_version is None and need_zfs:
            lines.append(f"{f.host}: OpenZFS is not installed (zpool version failed); "
                         "apt-get install zfsutils-linux zfs-dkms")
        if f.fio_version is None:
            lines.append(f"{f.host}: fio is not installed; apt-get install fio")
        for path in f.missing_disks:
            lines.append(f"{f.host}: no disk {path}")
    lines += _version_differences(facts, "zfs_version", "OpenZFS") if need_zfs else []
    lines += _version_differences(facts, "fio_version", "fio")
    lines += _disk_differences(facts)
    return lines


def _majority(values: Sequence, hosts: Sequence[str]):
    """The value most hosts have (ties: the first host's), and the host that shows it."""
    counts = Counter(values)
    best = max(counts.values())
    i = next(i for i, v in enumerate(values) if counts[v] == best)
    return values[i], hosts[i]


def _version_differences(facts: Sequence[HostFacts], field: str, name: str) -> list[str]:
    known = [f for f in facts if getattr(f, field) is not None]
    if len({getattr(f, field) for f in known}) <= 1:
        return []
    ref, ref_host = _majority([getattr(f, field) for f in known], [f.host for f in known])
    return [f"{f.host}: {name} {getattr(f, field)}, {ref_host} and most hosts have {ref}; results of different "
            f"versions do not merge into one answer" for f in known if getattr(f, field) != ref]


def _disk_differences(facts: Sequence[HostFacts]) -> list[str]:
    hosts = [f for f in facts if f.disks or not f.missing_disks]
    if len(hosts) < 2:
        return []
    shapes = [tuple(sorted(d.kind for d in f.disks)) for f in hosts]
    ref, ref_host = _majority(shapes, [f.host for f in hosts])
    lines = []
    for f, shape in zip(hosts, shapes):
        if shape == ref:
            continue
        if len(shape) != len(ref):
            lines.append(f"{f.host}: {len(shape)} disks named, {ref_host} has {len(ref)}")
            continue
        extra = Counter(shape) - Counter(ref)
        lacking = list((Counter(ref) - Counter(shape)).elements())
        for disk in f.disks:
            if extra[disk.kind] > 0 and lacking:
                extra[disk.kind] -= 1
                want = lacking.pop(0)
                lines.append(f"{f.host}: {disk.path} differs from {ref_host}'s disks: {_difference(disk.kind, want)}")
    return lines


def _difference(have: tuple, want: tuple) -> str:
    names = ("size", "model", "rotational", "logical sector", "physical sector")
    parts = []
    for name, h, w in zip(names, have, want):
        if h != w:
            fmt = (lambda v: f"{v:,} bytes") if name == "size" else (lambda v: str(v))
            parts.append(f"{name} {fmt(h)}, not {fmt(w)}")
    return "; ".join(parts)


class PreflightRefused(ZfslabError):
    """Hosts that differ from each other, refused before anything ran: one line a problem, naming the host."""

    exit_code = 2
    one_line_each = True   # one refusal a line, each naming its host (cli.py prints them so)
