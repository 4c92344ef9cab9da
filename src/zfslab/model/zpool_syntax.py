"""zpool's syntax for a Layout: pool and device names it accepts, the replication checks that
make `zpool create` ask for -f, and the argv that creates the pool."""

from __future__ import annotations

import re

from zfslab.errors import LayoutError, clip, shown
from zfslab.model.layouts import ZPOOL_FUZZ, Layout, VdevGroup, VdevKind


_POOL_NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9_\-:.]*", re.ASCII)
_RESERVED_PREFIXES = ("mirror", "raidz", "draid", "spare")
_RESERVED_NAMES = ("log", "cache", "special", "dedup")
MAX_POOL_NAME = 239  # strlen < ZFS_MAX_DATASET_NAME_LEN - 2 - 2 * strlen("$ORIGIN")


def check_pool_name(name: str) -> str:
    """The name, if `zpool create` accepts it as a new pool's; else a LayoutError saying why."""
    what = f"pool name {clip(name)}"
    if not name:
        raise LayoutError("the pool name is empty; give one such as tank")
    if len(name) > MAX_POOL_NAME:
        raise LayoutError(f"{what}: at most {MAX_POOL_NAME} characters, got {len(name)}")
    if not ("a" <= name[0].lower() <= "z"):
        raise LayoutError(f"{what}: a pool name begins with a letter, e.g. tank")
    if not _POOL_NAME_RE.fullmatch(name):
        bad = next(c for c in name if not _POOL_NAME_RE.fullmatch("a" + c))
        raise LayoutError(f"{what}: {clip(bad)} is not allowed; use letters, digits and _ - : . only")
    if name.startswith(_RESERVED_PREFIXES) or name in _RESERVED_NAMES:
        raise LayoutError(f"{what}: reserved by zpool (mirror*, raidz*, draid*, spare*, log, cache, special, "
                          f"dedup); choose another, e.g. tank")
    if name[0] == "c" and name[1:2].isdigit():
        raise LayoutError(f"{what}: zpool reserves names like c0 (they look like Solaris disks); choose another")
    return name


def check_device_name(device: str) -> str:
    """A device argument that zpool reads as a device, and a shell line shows on one line."""
    if device.startswith("-"):  # zpool's getopt would take '-f' anywhere on the line as an option
        raise LayoutError(f"device {clip(device)}: a device name cannot begin with '-'; give its path, e.g. /dev/sdb")
    if any(ord(c) < 32 or ord(c) == 127 for c in device):
        raise LayoutError(f"device {clip(device)}: control characters are not allowed in a device name")
    return device


def replication_mismatch(layout: Layout) -> str | None:
    """Why `zpool create` refuses this layout without -f ("mismatched replication level"), or None.

    get_replication() in cmd/zpool/zpool_vdev.c compares each top-level vdev with the one before:
    raidz and dRAID go together at equal parity, raidz or dRAID with a mirror only when the mirror
    survives as many failures, otherwise kind, parity and width must all match. (Releases before
    2.2 refuse every mirror with raidz, and before 2.1 raidz vdevs of different widths.)
    Special and dedup vdevs take part (only log vdevs are skipped, by ZPOOL_CONFIG_IS_LOG), so a
    special mirror with less redundancy than raidz2 data vdevs needs -f: class_redundancy_risk says why it matters."""
    def rep(g: VdevGroup) -> tuple[str, int, int]:
        name = {VdevKind.DISK: "disk", VdevKind.MIRROR: "mirror", VdevKind.RAIDZ: "raidz", VdevKind.DRAID: "draid"}
        parity = g.parity if g.kind in (VdevKind.RAIDZ, VdevKind.DRAID) else 0
        return name[g.kind], g.width, parity

    tops = [("", g) for g in layout.groups] + [(f"{c.alloc_class} ", c.group) for c in layout.classes
                                               if c.holds_pool_data]
    for cls, g in tops:
        # the same function refuses a mirror, raidz or dRAID whose children differ by over
        # ZPOOL_FUZZ (16 MiB): "raidz contains devices of different sizes"
        if g.spans_sizes and g.sizes[0][1] - g.sizes[-1][1] > ZPOOL_FUZZ:
            return f"a {cls}{rep(g)[0]} vdev contains devices of different sizes"
    for (ca, a), (cb, b) in zip(tops, tops[1:]):
        (ka, wa, pa), (kb, wb, pb) = rep(a), rep(b)
        parity_kinds = ("raidz", "draid")
        if {ka, kb} & {"mirror"} and {ka, kb} & set(parity_kinds):
            (craidz, raidz), (cmirror, mirror) = ((ca, a), (cb, b)) if ka in parity_kinds else ((cb, b), (ca, a))
            if raidz.parity != mirror.width - 1:
                why = (f"each {cmirror}{mirror.spec} vdev survives {mirror.width - 1} failed disk{'s' * (mirror.width != 2)}, each "
                       f"{craidz}{raidz.spec.split(':')[0]} vdev {raidz.parity}")
                return why + _class_note(layout)
        elif ka in parity_kinds and kb in parity_kinds:
            if pa != pb:
                return f"both parity {pa} and parity {pb} vdevs are present"
        elif ka != kb:
            return f"both {ca}{ka} and {cb}{kb} vdevs are present" + _class_note(layout)
        elif wa != wb:
            return f"both {wa}-way {ca}{ka} and {wb}-way {cb}{kb} vdevs are present" + _class_note(layout)
    return None


def class_redundancy_risk(layout: Layout) -> str | None:
    """Why a special or dedup vdev is the pool's weak point: it survives fewer failed disks than the
    data vdevs, and its loss loses the pool (its blocks exist nowhere else); None when it does not."""
    data = min(g.parity for g in layout.groups)
    weak = [c for c in layout.classes if c.holds_pool_data and c.failures_survived < data]
    if not weak:
        return None
    c = min(weak, key=lambda c: c.failures_survived)
    n = c.failures_survived
    return (f"the {c.alloc_class} vdev ({c.group.token}) survives {n} failed disk{'s' * (n != 1)}, the data vdevs "
            f"{data}: losing it loses the pool; give it {data + 1} disks ({c.alloc_class}=mirror:{data + 1})")


def _class_note(layout: Layout) -> str:
    why = class_redundancy_risk(layout)
    return f" ({why})" if why else ""


def zpool_vdev_args(layout: Layout, devices: list[str]) -> list[str]:
    """The vdev part of `zpool create` for these devices, in layout order."""
    if len(devices) != layout.all_disks:
        raise LayoutError(f"{layout} needs {layout.all_disks} devices, got {len(devices)}")
    seen: set[str] = set()
    for d in devices:
        check_device_name(d)
        if d in seen:
            raise LayoutError(f"device {shown(d)} is given twice; each disk can be used once")
        seen.add(d)
    it = iter(devices)
    words = [_vdev_words(g, it) for g in layout.groups]  # devices are taken in layout order...
    # ...but plain disks are written first: after 'mirror a b', a bare 'c' would join that mirror.
    args = [w for g, ws in zip(layout.groups, words) if not g.spec for w in ws]
    args += [w for g, ws in zip(layout.groups, words) if g.spec for w in ws]
    last = None
    for c in layout.classes:  # sorted by class: zpool create takes 'log' once
        if c.alloc_class != last:
            args.append(c.alloc_class)
        last = c.alloc_class
        args += _vdev_words(c.group, it)
    if layout.hot_spares:
        args.append("spare")
        args.extend(next(it) for _ in range(layout.hot_spares))
    if layout.cache_devices:
        args.append("cache")
        args.extend(it)
    return args


def _vdev_words(g: VdevGroup, it) -> list[str]:
    words: list[str] = []
    for _ in range(g.count):
        if g.spec:
            words.append(g.spec)
        words.extend(next(it) for _ in range(g.width))
    return words


def zpool_create_argv(
    pool: str, layout: Layout, devices: list[str], *, ashift: int | None = None,
    pool_props: dict[str, str] | None = None, fs_props: dict[str, str] | None = None, force: bool = False,
) -> list[str]:
    """The whole `zpool create` command line as an argv list (-f only when `force`: it also
    overrides zpool's in-use checks; see replication_mismatch for when zpool demands it)."""
    check_pool_name(pool)
    argv = ["zpool", "create"]
    if force:
        argv.append("-f")
    if ashift is not None:
        argv += ["-o", f"ashift={ashift}"]
    for k, v in (pool_props or {}).items():
        argv += ["-o", f"{k}={v}"]
    for k, v in (fs_props or {}).items():
        argv += ["-O", f"{k}={v}"]
    return argv + [pool] + zpool_vdev_args(layout, devices)
