"""Pure parsers of what `zfslab pool` reads (docs/pool.md#what-it-reads): the JSON forms of
OpenZFS 2.3+ (`zpool status -D -j -P --json-int`, `zpool get -j --json-int`, `zfs get -j --json-int`)
and the text forms otherwise (`zpool status -D -P -p`, `zpool list -vHPp`, `zpool get -Hp`,
`zfs get -Hp`), each into model/pool_state.py's records. Every number from outside is checked:
bad output raises InputError, one line, never a traceback."""

from __future__ import annotations

import dataclasses
import json
import re
from datetime import datetime, timezone

from zfslab.errors import InputError, shown
from zfslab.model.pool_state import Filesystem, PoolScan, PoolState, PoolVdev, checked_count
from zfslab.system.zfs_output import VdevStatus, parse_status

# zpool status's section headings and zpool list -v's, as the class of the vdevs under them
_TEXT_CLASSES = {"special": "special", "dedup": "dedup", "logs": "log", "cache": "cache", "spares": "spare",
                 "spare": "spare"}
_JSON_KINDS = {"disk": "disk", "file": "file", "mirror": "mirror", "raidz": "raidz", "draid": "draid",
               "replacing": "replacing", "spare": "spare", "dspare": "dspare"}
_JSON_CLASSES = {"normal": "normal", "special": "special", "dedup": "dedup", "log": "log", "logs": "log",
                 "cache": "cache", "l2cache": "cache", "spare": "spare", "spares": "spare"}


def _bad(what: str, value: object) -> InputError:
    return InputError(f"{what}: {shown(value, 60)} is not what zfslab reads from zpool/zfs (run the command by "
                      "hand to see its output)")


def _load(text: str, what: str) -> dict:
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        raise InputError(f"{what} printed no JSON zfslab can read: {shown(text, 60)}") from None
    if not isinstance(data, dict):
        raise _bad(what, text)
    return data


def _pool_entry(data: dict, key: str, pool: str, what: str) -> dict:
    entry = data.get(key, {})
    if not isinstance(entry, dict) or not isinstance(entry.get(pool), dict):
        raise InputError(f"{what} shows no pool or dataset {shown(pool, 60)}; `zpool list` shows the pools there are")
    return entry[pool]


def _properties(entry: dict, what: str) -> tuple[tuple[str, str], ...]:
    props = entry.get("properties")
    if not isinstance(props, dict):
        raise _bad(f"{what}: properties", props)
    out = []
    for name, p in props.items():
        if not isinstance(p, dict) or "value" not in p or isinstance(p["value"], (dict, list)):
            raise _bad(f"{what}: {name}", p)
        out.append((str(name), str(p["value"])))
    return tuple(out)


def json_properties(text: str, pool: str, *, datasets: bool = False) -> tuple[tuple[str, str], ...]:
    """(property, value) pairs of `zpool get -j --json-int all POOL` or `zfs get -j --json-int all POOL`."""
    what = "zfs get -j" if datasets else "zpool get -j"
    entry = _pool_entry(_load(text, what), "datasets" if datasets else "pools", pool, what)
    return _properties(entry, what)


def text_properties(text: str, pool: str) -> tuple[tuple[str, str], ...]:
    """(property, value) pairs of `zpool get -Hp all POOL` or `zfs get -Hp all POOL`."""
    out = []
    for line in text.splitlines():
        if not line.strip():
            continue
        words = line.split("\t")
        if len(words) != 4 or words[0] != pool:
            raise _bad("zpool/zfs get -Hp line", line)
        out.append((words[1], words[2]))
    return tuple(out)


# what zfslab asks of every filesystem (live_pool.py runs `zfs get ... -r -t filesystem FILESYSTEM_PROPS POOL`)
FILESYSTEM_PROPS = ("recordsize", "compression", "mountpoint")


def _filesystems(values: dict[str, dict[str, str]], pool: str, what: str) -> tuple[Filesystem, ...]:
    out = []
    for name, props in values.items():
        if name != pool and not name.startswith(pool + "/"):
            raise _bad(f"{what}: a dataset of another pool", name)
        missing = [p for p in FILESYSTEM_PROPS if p not in props]
        if missing:
            raise _bad(f"{what}: {name}'s {missing[0]}", "(not shown)")
        out.append(Filesystem(name, *(props[p] for p in FILESYSTEM_PROPS)))
    return tuple(out)


def text_filesystems(text: str, pool: str) -> tuple[Filesystem, ...]:
    """Each filesystem's recordsize, compression and mountpoint from `zfs get -Hp -r -t filesystem
    recordsize,compression,mountpoint POOL` (name, property, value, source; in zfs's order, the root first)."""
    values: dict[str, dict[str, str]] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        words = line.split("\t")
        if len(words) != 4:
            raise _bad("zfs get -Hp -r line", line)
        if words[1] in FILESYSTEM_PROPS:
            values.setdefault(words[0], {})[words[1]] = words[2]
    return _filesystems(values, pool, "zfs get -r")


def json_filesystems(text: str, pool: str) -> tuple[Filesystem, ...]:
    """The same from `zfs get -j --json-int -r -t filesystem recordsize,compression,mountpoint POOL` (2.3+)."""
    data = _load(text, "zfs get -j -r")
    datasets = data.get("datasets")
    if not isinstance(datasets, dict):
        raise _bad("zfs get -j -r: datasets", datasets)
    values = {}
    for name, entry in datasets.items():
        if not isinstance(entry, dict):
            raise _bad(f"zfs get -j -r: {name}", entry)
        values[str(name)] = dict(_properties(entry, "zfs get -j -r"))
    return _filesystems(values, pool, "zfs get -j -r")


def vdev_props(text: str, prop: str) -> dict[str, int]:
    """{vdev name: value} of one numeric property (ashift, psize) from `zpool get -Hp PROPS POOL all-vdevs`
    (2.2+; its 'cannot get' lines, for spares, go to stderr and are not read); 0 is left out."""
    out = {}
    for line in text.splitlines():
        words = line.split("\t")
        if len(words) == 4 and words[1] == prop:
            value = checked_count(words[2], f"{prop} of {words[0]}", limit=16 if prop == "ashift" else 2**64 - 1)
            if value:
                out[words[0]] = value
    return out


def vdev_ashifts(text: str) -> dict[str, int]:
    return vdev_props(text, "ashift")


def _short(name: str) -> str:
    """The name zpool prints without -P: the last path component, a whole disk's '-part1' taken off."""
    return re.sub(r"-part[0-9]+$", "", name.rsplit("/", 1)[-1])


def _by_name(name: str, values: dict[str, int]) -> int | None:
    """The value for a vdev named with -P in a table keyed by short names (all-vdevs prints them)."""
    return values.get(name, values.get(_short(name)))


# ---- the JSON forms (2.3+) ---------------------------------------------------------------

def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _json_vdev(node: dict, alloc_class: str | None, ashifts: dict[str, int], top: bool) -> PoolVdev:
    if not isinstance(node, dict):
        raise _bad("zpool status -j: a vdev", node)
    name = node.get("name")
    if not isinstance(name, str) or not name:
        raise _bad("zpool status -j: a vdev's name", name)
    # a type or class that is no string (a list, an object) is no key of ours: .get() of it would raise
    kind = _JSON_KINDS.get(_text(node.get("vdev_type")))
    if kind is None:
        raise _bad(f"zpool status -j: vdev {name}'s type", node.get("vdev_type"))
    cls = alloc_class or _JSON_CLASSES.get(_text(node.get("class", "normal")))
    if cls is None:
        raise _bad(f"zpool status -j: vdev {name}'s class", node.get("class"))
    children = node.get("vdevs", {})
    if not isinstance(children, dict):
        raise _bad(f"zpool status -j: vdev {name}'s children", children)
    parity = 0
    if kind in ("raidz", "draid"):
        m = re.match(r"(?:raidz|draid)([1-3])", name)
        if not m:
            raise _bad("zpool status -j: the parity in vdev name", name)
        parity = int(m.group(1))

    def count(key: str) -> int | None:
        return checked_count(node[key], f"{name}: {key}") if key in node else None

    # spares and cache devices hold no pool space: their sizes are left out, as the text form has none
    pooled = top and cls not in ("spare", "cache")

    return PoolVdev(
        name=name, kind=kind, alloc_class=cls, state=str(node.get("state", "")),
        read_errors=count("read_errors") or 0, write_errors=count("write_errors") or 0,
        checksum_errors=count("checksum_errors") or 0, parity=parity,
        size_bytes=count("total_space") if pooled else None, alloc_bytes=count("alloc_space") if pooled else None,
        device_bytes=count("phys_space") if kind in ("disk", "file") and cls not in ("spare", "cache") else None,
        ashift=_by_name(name, ashifts) if top else None,
        native_sector_bytes=_native_sector(name, node.get("physical_ashift")) if kind in ("disk", "file") else None,
        children=tuple(_json_vdev(c, cls, ashifts, False) for c in children.values()))


def _native_sector(name: str, physical_ashift) -> int | None:
    """A leaf's physical sector from zpool status -j's physical_ashift (there only when it exceeds the
    vdev's ashift: vdev_stat's vs_physical_ashift)."""
    if physical_ashift is None:
        return None
    shift = checked_count(physical_ashift, f"{name}: physical_ashift", limit=16)
    if shift < 9:
        raise _bad(f"zpool status -j: vdev {name}'s physical_ashift", physical_ashift)
    return 1 << shift


def _json_scan(pool: dict) -> PoolScan:
    s = pool.get("scan_stats")
    if s is None:
        return PoolScan(None, "none")
    if not isinstance(s, dict):
        raise _bad("zpool status -j: scan_stats", s)
    function = str(s.get("function", "NONE")).lower()
    state = str(s.get("state", "NONE")).lower()
    if function not in ("scrub", "resilver", "none") or state not in ("none", "scanning", "finished", "canceled"):
        raise _bad("zpool status -j: the scan", f"{function} {state}")
    if function == "none":
        return PoolScan(None, "none")
    to_examine = checked_count(s.get("to_examine", 0), "scan: to_examine")
    issued = checked_count(s.get("issued", 0), "scan: issued")
    pct = min(100.0, 100.0 * issued / to_examine) if state == "scanning" and to_examine else None
    # a finished scan without its end is no output of zpool: a one-line error (checked_count of None)
    end = checked_count(s.get("end_time"), "scan: end_time") if state in ("finished", "canceled") else None
    return PoolScan(function, state, end_epoch_s=end, errors=checked_count(s.get("errors", 0), "scan: errors"),
                    percent_done=pct)


def read_json(pool: str, status_json: str, pool_get_json: str, dataset_get_json: str,
              vdev_get_text: str = "") -> PoolState:
    """The pool from the 2.3+ JSON forms (and the vdevs' ashift from `zpool get -Hp ashift POOL all-vdevs`)."""
    entry = _pool_entry(_load(status_json, "zpool status -j"), "pools", pool, "zpool status -j")
    ashifts = vdev_ashifts(vdev_get_text)
    root = entry.get("vdevs", {}).get(pool) if isinstance(entry.get("vdevs"), dict) else None
    if not isinstance(root, dict):
        raise _bad("zpool status -j: the root vdev", root)
    children = root.get("vdevs") or {}
    if not isinstance(children, dict):   # as each class's group below: an object of vdevs, or none
        raise _bad("zpool status -j: the root vdev's children", children)
    tops = [_json_vdev(v, None, ashifts, True) for v in children.values()]
    for key, cls in (("dedup", "dedup"), ("special", "special"), ("logs", "log"), ("l2cache", "cache"),
                     ("spares", "spare")):
        group = entry.get(key) or {}
        if not isinstance(group, dict):
            raise _bad(f"zpool status -j: {key}", group)
        tops += [_json_vdev(v, cls, ashifts, True) for v in group.values()]
    pool_props = json_properties(pool_get_json, pool)
    ds_props = json_properties(dataset_get_json, pool, datasets=True)
    state = _state(pool, str(entry.get("state", "")), tuple(tops), _json_scan(entry), pool_props, ds_props,
                   "No known data errors" if entry.get("error_count") in (0, "0") else
                   f"{entry.get('error_count')} data errors", "json")
    entries, core = _json_ddt(entry.get("dedup_stats"))
    return dataclasses.replace(state, expanded="raidz_expand_stats" in entry, ddt_entries=entries,
                               ddt_core_bytes=core)


def _json_ddt(stats) -> tuple[int | None, int | None]:
    """(entries, bytes in core) of `zpool status -D -j`'s dedup_stats: mspace is the whole table's
    (ddt_get_dedup_object_stats() sums every DDT object's); no mspace when there are no entries."""
    if stats is None:
        return None, None
    if not isinstance(stats, dict):
        raise _bad("zpool status -j: dedup_stats", stats)
    entries = checked_count(stats.get("obj_count", 0), "dedup_stats: obj_count")
    return entries, checked_count(stats.get("mspace", 0), "dedup_stats: mspace")


# " dedup: DDT entries 384, size 304K on disk, 147K in core"; " dedup: no DDT entries"
_DDT_LINE = re.compile(r"^ dedup: (?:no DDT entries|DDT entries ([0-9]+), size (\S+) on disk, (\S+) in core)", re.M)
_NICE_UNITS = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40, "P": 1 << 50}


def _nicenum(text: str, what: str) -> int:
    """zfs_nicenum's '147K' or '390' (1024-based, as zpool prints sizes) as bytes."""
    m = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)([KMGTP]?)B?", text)
    if not m:
        raise _bad(what, text)
    return int(float(m.group(1)) * _NICE_UNITS[m.group(2)])


def text_ddt(status_text: str, *, per_entry: bool) -> tuple[int | None, int | None]:
    """(entries, bytes in core) from `zpool status -D`'s dedup line. Before 2.3 the sizes printed are
    each entry's average (ddt_get_dedup_object_stats() divided them by the count); from 2.3 on the
    whole table's ("This returns raw counts (not averages)")."""
    m = _DDT_LINE.search(status_text)
    if m is None:
        return None, None
    if m.group(1) is None:
        return 0, 0
    entries = checked_count(m.group(1), "zpool status -D: DDT entries")
    core = _nicenum(m.group(3), "zpool status -D: the table's size in core")
    return entries, core * entries if per_entry else core


def _state(pool, state, vdevs, scan, pool_props, ds_props, errors_text, source) -> PoolState:
    p, d = dict(pool_props), dict(ds_props)
    for key, props, what in (("size", p, "zpool get size"), ("allocated", p, "zpool get allocated"),
                             ("free", p, "zpool get free"), ("used", d, "zfs get used"),
                             ("available", d, "zfs get available")):
        if key not in props:
            raise InputError(f"{what} of {shown(pool, 60)} was not shown; the output of zpool/zfs was not "
                             "what zfslab reads")
    return PoolState(pool, state, vdevs, scan, checked_count(p["size"], "SIZE"),
                     checked_count(p["allocated"], "ALLOC"), checked_count(p["free"], "FREE"),
                     checked_count(d["used"], "USED"), checked_count(d["available"], "AVAIL"),
                     pool_props, ds_props, errors_text, source)


# ---- the text forms (2.1 and later) ------------------------------------------------------

def list_sizes(text: str) -> dict[str, tuple[int | None, ...]]:
    """{vdev name: (SIZE, ALLOC, EXPANDSZ)} from `zpool list -vHPp POOL` ('-' as None). A leaf's SIZE is
    its device's; a top-level single disk shows that too, with its metaslabs' ALLOC and FREE: its
    SIZE here is ALLOC + FREE, as the JSON's total_space."""
    out = {}
    for line in text.splitlines():
        words = line.strip().split("\t")
        if len(words) < 6:
            continue  # a class heading ("spare   -  -  ..."), spaced, not tab-separated

        def num(w: str, what: str) -> int | None:
            return None if w == "-" else checked_count(w, f"zpool list -v: {words[0]} {what}")

        size, alloc, free = num(words[1], "SIZE"), num(words[2], "ALLOC"), num(words[3], "FREE")
        out[words[0]] = (size, alloc, num(words[5], "EXPANDSZ"), free)
    return out


def _text_kind(name: str) -> tuple[str, int]:
    if re.fullmatch(r"draid[1-3]-[0-9]+-[0-9]+", name):
        return "dspare", 0  # a dRAID's distributed spare (vdev_draid_spare_...: draidP-N-S)
    m = re.fullmatch(r"(mirror|raidz([1-3])?|draid([1-3])[^-]*|replacing|spare)-[0-9]+", name)
    if not m:
        return ("disk" if name.startswith("/dev/") or not name.startswith("/") else "file"), 0
    kind = m.group(1)
    if kind.startswith("raidz"):
        return "raidz", int(m.group(2) or 1)
    if kind.startswith("draid"):
        return "draid", int(m.group(3))
    return kind, 0


def _text_vdev(v: VdevStatus, cls: str, sizes: dict, props: tuple[dict, dict], top: bool) -> PoolVdev:
    kind, parity = _text_kind(v.name)
    size, alloc, expand, free = sizes.get(v.name, (None, None, None, None))
    ashifts, psizes = props
    device = None
    if kind in ("disk", "file"):
        # a leaf's line in zpool list -v shows its device's size; a top-level disk's line too, with
        # its metaslabs' ALLOC and FREE
        device = _by_name(v.name, psizes) or size
        if cls in ("spare", "cache"):
            device = None  # the JSON form shows no size for them: both forms leave it out
        size = alloc + free if alloc is not None and free is not None else None
    return PoolVdev(v.name, kind, cls, v.state, v.read_errors, v.write_errors, v.checksum_errors, parity,
                    size_bytes=size if top and cls not in ("spare", "cache") else None,
                    alloc_bytes=alloc if top and cls not in ("spare", "cache") else None, device_bytes=device,
                    expand_bytes=expand if top else None, ashift=_by_name(v.name, ashifts) if top else None,
                    note=v.note, native_sector_bytes=_text_native_sector(v.note) if kind in ("disk", "file") else None,
                    children=tuple(_text_vdev(c, cls, sizes, props, False) for c in v.children))


def _text_native_sector(note: str) -> int | None:
    """The physical sector of zpool status's note on a leaf whose vdev's ashift is below it
    ("block size: 512B configured, 4096B native", print_status_config() in zpool_main.c)."""
    m = re.search(r"block size: [0-9]+B configured, ([0-9]+)B native", note)
    return checked_count(m.group(1), "zpool status: a native block size", limit=65536) if m else None


def _text_scan(status_text: str, scan) -> PoolScan:
    if scan.kind is None:
        return PoolScan(None, "none")
    if scan.in_progress:
        return PoolScan(scan.kind, "scanning", percent_done=scan.percent_done, rate_bytes_s=scan.rate_bytes_s,
                        repaired_bytes=scan.repaired_bytes)
    # "... with 0 errors on Fri Nov 27 22:55:00 2026": zpool prints the host's local time; read as UTC
    m = re.search(r" on (\w{3} \w{3} +\d{1,2} \d\d:\d\d:\d\d \d{4})", scan.text)
    end = None
    if m:
        try:
            end = int(datetime.strptime(m.group(1), "%a %b %d %H:%M:%S %Y").replace(tzinfo=timezone.utc).timestamp())
        except ValueError:
            raise _bad("zpool status: the scan's date", m.group(1)) from None
    return PoolScan(scan.kind, "canceled" if scan.canceled else "finished", end_epoch_s=end, errors=scan.errors,
                    repaired_bytes=scan.repaired_bytes)


def read_text(pool: str, status_text: str, list_text: str, pool_get_text: str, dataset_get_text: str,
              vdev_get_text: str = "", *, ddt_per_entry: bool = False) -> PoolState:
    """The pool from the text forms: 2.1, or any version without -j. ddt_per_entry: the OpenZFS that
    printed it is older than 2.3 (text_ddt)."""
    try:
        status = parse_status(status_text)
    except (ValueError, IndexError):
        raise InputError(f"zpool status printed no report zfslab can read: {shown(status_text, 60)}") from None
    if status.name != pool:
        raise InputError(f"zpool status shows pool {shown(status.name, 60)}, not {shown(pool, 60)}")
    sizes = list_sizes(list_text)
    ashifts = vdev_ashifts(vdev_get_text)
    pool_props = text_properties(pool_get_text, pool)
    default_ashift = dict(pool_props).get("ashift", "0")
    if not ashifts and default_ashift not in ("0", ""):
        # before 2.2 no vdev properties: the pool's ashift property, when it was set at create time
        a = checked_count(default_ashift, "ashift", limit=16)
        ashifts = {v.name: a for v in status.top_level}
    props = (ashifts, vdev_props(vdev_get_text, "psize"))
    tops = [_text_vdev(v, "normal", sizes, props, True) for v in status.top_level]
    for section, vdevs in status.sections.items():
        tops += [_text_vdev(v, _TEXT_CLASSES[section], sizes, props, True) for v in vdevs]
    state = _state(pool, status.state, tuple(tops), _text_scan(status_text, status.scan), pool_props,
                   text_properties(dataset_get_text, pool), status.errors, "text")
    entries, core = text_ddt(status_text, per_entry=ddt_per_entry)
    return dataclasses.replace(state, expanded=re.search(r"^\s*expand: ", status_text, re.M) is not None,
                               ddt_entries=entries, ddt_core_bytes=core)


def raidz_attaches(history_text: str, pool: str) -> dict[str, int]:
    """{raidz vdev name: disks attached to it} from `zpool history POOL` ('zpool attach [-fsw] POOL raidz1-0 DEV')."""
    out: dict[str, int] = {}
    for m in re.finditer(rf"^\S+ zpool attach (?:-\S+ )*{re.escape(pool)} (raidz[1-3]-[0-9]+) \S+", history_text, re.M):
        out[m.group(1)] = out.get(m.group(1), 0) + 1
    return out
