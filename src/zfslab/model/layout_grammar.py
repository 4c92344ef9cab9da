"""The layout grammar users type, read into model/layouts.py values (`parse_layout`).

Grammar: tokens `[COUNTx]KIND[:WIDTH][@SIZES]` joined by `+`, e.g. `2xraidz2:6`, `12xmirror:2`,
`24xdisk`, `draid2:8d:24c:1s`, `raidz2:11+spare:1`. For disks of several sizes, `@SIZES` says
which disks each vdev sits on: `2xraidz2:4@12TB+raidz2:4@8TB`, or per vdev for one that spans
sizes `raidz2:6@4x12TB/2x8TB`; hot spares as `spare:1@12TB` (docs/capacity.md#mixed-disk-sizes).

Allocation classes: `CLASS=TOKEN` with CLASS special, dedup or log and TOKEN a mirror or single
disks, and `cache:N` for L2ARC devices, each with its own disk size when it differs:
`raidz2:6+special=mirror:2@1TB+log=mirror:2@400GB+cache:2@2TB` (docs/capacity.md#allocation-classes).
"""

from __future__ import annotations

import re

from zfslab.errors import LayoutError, ZfslabError, clip, shown
from zfslab.model.layouts import (CLASS_HELP, CLASSES, KINDS_HELP, MAX_CHILDREN, MAX_POOL_DISKS, ClassGroup, Layout,
                                  VdevGroup, VdevKind, merge_classes, merge_groups)
from zfslab.model.units import parse_size


def _parse_sizes(text: str, token: str, width: int | None) -> tuple[tuple[int, int], ...]:
    """(count, bytes) pairs, largest first, from '12TB' (all `width` disks) or '4x12TB/2x8TB'."""
    parts = text.split("/")
    found: dict[int, int] = {}
    for part in parts:
        m = re.fullmatch(r"(?:([0-9]+)x)?(.+)", part.strip(), re.ASCII)
        if not m:
            raise LayoutError(f"{token}: write the disk size after @, e.g. @12TB or @4x12TB/2x8TB")
        if m.group(1) is None and len(parts) > 1:
            raise LayoutError(f"{token}: say how many disks of each size, e.g. @4x12TB/2x8TB")
        try:
            size = parse_size(m.group(2))
        except ZfslabError as e:
            raise LayoutError(f"{token}: {e}") from None
        n = _whole(m.group(1), token, "number of disks", MAX_CHILDREN) if m.group(1) is not None else width
        if n is None or n < 1:
            raise LayoutError(f"{token}: each size needs at least one disk, got {clip(part)}")
        found[size] = found.get(size, 0) + n
    return tuple(sorted(((n, b) for b, n in found.items()), key=lambda nb: -nb[1]))


# ASCII digits only: \d, str.isdigit() and int() also take '²' or '٣', which no zpool accepts.
_TOKEN_RE = re.compile(r"(?:([0-9]+)x)?([a-z]+[0-9]*)(?::(.*))?", re.ASCII | re.DOTALL)
_DRAID_RE = re.compile(r"draid([0-9]*)((?::[0-9]+[dcs])*)", re.ASCII)
_DIGITS_RE = re.compile(r"[0-9]+", re.ASCII)


def _whole(text: str, token: str, what: str, limit: int) -> int:
    """A whole number of ASCII digits, at most `limit` (checked before int(), which refuses 4,300 digits)."""
    if not _DIGITS_RE.fullmatch(text):
        raise LayoutError(f"{token}: the {what} must be a whole number, got {clip(text)}")
    if len(text) > len(str(limit)) or int(text) > limit:
        raise LayoutError(f"{token}: the {what} is at most {limit}, got {shown(text)}")
    return int(text)


_PARSE_LIMIT = 10**9  # beyond it, a number is refused as text; below, the object built says what fits


def _positive(text: str, token: str, what: str, limit: int = _PARSE_LIMIT) -> int:
    return _whole(text, token, what, limit)


def parse_draid(spec: str, count: int = 1, token: str | None = None) -> VdevGroup:
    """A VdevGroup from OpenZFS's dRAID notation `draid[P][:Dd][:Cc][:Ss]` (children required)."""
    token = shown(token or spec)
    m = _DRAID_RE.fullmatch(spec)
    if not m:
        raise LayoutError(f"{token}: write dRAID as draidP:Dd:Cc:Ss, e.g. draid2:8d:24c:1s")
    parity = _whole(m.group(1), token, "dRAID parity", _PARSE_LIMIT) if m.group(1) else 1
    fields: dict[str, int] = {}
    names = {"d": "number of data disks", "c": "number of children", "s": "number of distributed spares"}
    for part in m.group(2).split(":")[1:]:
        letter = part[-1]
        if letter in fields:
            raise LayoutError(f"{token}: '{letter}' is given twice")
        fields[letter] = _whole(part[:-1], token, names[letter], _PARSE_LIMIT)
    if "c" not in fields:
        raise LayoutError(f"{token}: say how many children the dRAID has, e.g. {spec}:24c")
    children, spares = fields["c"], fields.get("s", 0)
    # zpool's default group size: min(children - spares - parity, 8) (zpool_vdev.c)
    data = fields.get("d", min(children - spares - parity, 8))
    return _group(token, VdevKind.DRAID, width=children, parity=parity, count=count, draid_data=data, draid_spares=spares)


def _group(token: str, kind: VdevKind, **fields: int) -> VdevGroup:
    """A VdevGroup whose validation errors name the token as the user wrote it."""
    try:
        return VdevGroup(kind, **fields)
    except LayoutError as e:
        raise LayoutError(f"{token.strip()}: {str(e).split(': ', 1)[1]}") from None


def parse_token(token: str) -> VdevGroup | int:
    """One token: a VdevGroup, or an int for `spare:N` (hot spares); see parse_sized_token for @SIZES."""
    item, _ = parse_sized_token(token)
    return item


def parse_sized_token(token: str) -> tuple[VdevGroup | int, int]:
    """parse_token, with the size of a hot spare (`spare:1@12TB`) as the second item (0 if none)."""
    raw = shown(token)
    if "@" in token:
        token, at = token.rsplit("@", 1)
        item, _ = parse_sized_token(token)
        if isinstance(item, int):
            sizes = _parse_sizes(at, raw, 1)
            if len(sizes) > 1:
                raise LayoutError(f"{raw}: hot spares of one token are of one size; write spare:1@12TB+spare:1@8TB")
            return item, sizes[0][1]
        sizes = _parse_sizes(at, raw, item.width)
        return _group(raw, item.kind, width=item.width, parity=item.parity, count=item.count,
                      draid_data=item.draid_data, draid_spares=item.draid_spares, sizes=sizes), 0
    return _parse_token(token, raw), 0


def _parse_token(token: str, raw: str) -> VdevGroup | int:
    token = token.strip().lower()
    m = _TOKEN_RE.fullmatch(token)
    if not m:
        raise LayoutError(f"cannot read {clip(token)}: write [COUNTx]KIND[:WIDTH] with KIND one of {KINDS_HELP}")
    count = _whole(m.group(1), raw, "count", MAX_POOL_DISKS) if m.group(1) is not None else 1
    kind, arg = m.group(2), m.group(3)
    if kind.startswith("draid"):
        return parse_draid(kind + (":" + arg if arg is not None else ""), count, raw)
    if count < 1:
        raise LayoutError(f"{raw}: the count must be at least 1, got {count}")
    if kind == "spare":
        if m.group(1) is not None:
            raise LayoutError(f"{raw}: write hot spares as spare:N")
        return _positive(arg or "1", raw, "number of spares", MAX_POOL_DISKS)
    if kind in ("disk", "stripe"):
        width = _positive(arg, raw, "width") if arg is not None else 1
        if kind == "stripe":  # stripe:N is N single-disk vdevs
            return _group(raw, VdevKind.DISK, width=1, count=count * width)
        if width != 1:
            raise LayoutError(f"{raw}: a disk vdev has one disk; write {width}xdisk for a stripe of {width}")
        return _group(raw, VdevKind.DISK, width=1, count=count)
    if kind == "mirror":
        width = _positive(arg, raw, "width") if arg is not None else 2
        return _group(raw, VdevKind.MIRROR, width=width, parity=width - 1, count=count)
    rz = re.fullmatch(r"raidz([0-9]*)", kind)
    if rz:
        parity = _whole(rz.group(1), raw, "raidz parity", _PARSE_LIMIT) if rz.group(1) else 1
        if arg is None:
            raise LayoutError(f"{raw}: say how many disks, e.g. {kind}:{parity + 4}")
        width = _positive(arg, raw, "width")
        return _group(raw, VdevKind.RAIDZ, width=width, parity=parity, count=count)
    raise LayoutError(f"unknown vdev kind {clip(kind)} in '{raw}'; use {KINDS_HELP}")


def parse_layout(text: str) -> Layout:
    """A Layout from `2xraidz2:6+spare:1` or `raidz2:6+special=mirror:2+log=mirror:2+cache:2`;
    identical neighbouring groups are merged."""
    if not text or not text.strip():
        raise LayoutError(f"empty layout; write one such as raidz2:6 or 12xmirror:2 ({KINDS_HELP})")
    tokens = text.split("+")
    if len(tokens) > MAX_POOL_DISKS:
        raise LayoutError(f"a layout of {len(tokens)} parts: zfslab models pools of at most {MAX_POOL_DISKS} disks")
    groups: list[VdevGroup] = []
    classes: list[ClassGroup] = []
    spares = caches = 0
    spare_sizes: set[int] = set()
    cache_sizes: set[int] = set()
    for token in tokens:
        name = token.strip().lower()
        if "=" in name:
            classes.append(parse_class_token(token))
            continue
        if name.startswith("cache"):
            n, cache_bytes = _parse_cache(token)
            caches += n
            cache_sizes.add(cache_bytes)
            continue
        item, spare_bytes = parse_sized_token(token)
        if isinstance(item, int):
            spares += item
            spare_sizes.add(spare_bytes)
        else:
            groups.append(item)
    if len(spare_sizes) > 1:
        raise LayoutError(f"{shown(text, 60)}: zfslab models hot spares of one size; give the largest disks as spares")
    if len(cache_sizes) > 1:
        raise LayoutError(f"{shown(text, 60)}: zfslab models cache devices of one size; write cache:2@1TB")
    return Layout(merge_groups(groups), spares, spare_sizes.pop() if spares else 0, merge_classes(classes),
                  caches, cache_sizes.pop() if caches else 0)


def parse_class_token(token: str) -> ClassGroup:
    """`special=mirror:2@1TB`, `dedup=2xmirror:2`, `log=disk`: vdevs of one allocation class."""
    raw = shown(token)
    name, _, rest = token.strip().partition("=")
    name = name.strip().lower()
    if name not in CLASSES:
        hint = "write cache devices as cache:2" if name == "cache" else f"use {CLASS_HELP}"
        raise LayoutError(f"{raw}: {clip(name)} is not an allocation class; {hint}")
    if not rest.strip():
        raise LayoutError(f"{raw}: say which vdev, e.g. {name}=mirror:2")
    item, _ = parse_sized_token(rest)
    if isinstance(item, int):
        raise LayoutError(f"{raw}: hot spares belong to the pool; write spare:1 as a token of its own")
    try:
        return ClassGroup(name, item)
    except LayoutError as e:
        raise LayoutError(f"{raw}: {str(e).split(': ', 1)[1]}") from None


def _parse_cache(token: str) -> tuple[int, int]:
    """(devices, bytes of each as written or 0) from `cache:2` or `cache:2@1TB`."""
    raw = shown(token)
    body, at, size = token.strip().lower().partition("@")
    m = re.fullmatch(r"cache(?::(.*))?", body, re.ASCII | re.DOTALL)
    if not m:
        raise LayoutError(f"cannot read {raw}: write cache devices as cache:N, e.g. cache:2 or cache:2@1TB")
    n = _positive(m.group(1) or "1", raw, "number of cache devices", MAX_POOL_DISKS)
    if n < 1:
        raise LayoutError(f"{raw}: the number of cache devices must be at least 1")
    if not at:
        return n, 0
    sizes = _parse_sizes(size, raw, 1)
    if len(sizes) > 1:
        raise LayoutError(f"{raw}: cache devices of one token are of one size; write cache:2@1TB")
    return n, sizes[0][1]
