"""Reads a live pool through the one runner, read-only: `zfs version`, `zpool list`, `zpool status`,
`zpool get`, `zfs get`, `lsblk` and `smartctl -j -a`, never a command that changes anything
(docs/pool.md#what-it-reads)."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field

from zfslab.errors import InputError, shown
from zfslab.model.pool_state import DiskFacts, DiskHealth, PoolState, checked_count
from zfslab.system.pool_read import (FILESYSTEM_PROPS, json_filesystems, raidz_attaches, read_json, read_text,
                                     text_filesystems)
from zfslab.system.runner import Runner
from zfslab.system.smart import read_health, whole_disk
from zfslab.system.zfs import NoSuchPool
from zfslab.system.zfs_output import parse_version

TIMEOUT_S = 60.0
# every argv this module runs starts with one of these: nothing here writes (tests/unit/test_pool_cmd.py)
READ_ONLY = (("zfs", "version"), ("zpool", "list"), ("zpool", "status"), ("zpool", "get"), ("zfs", "get"),
             ("zpool", "history"), ("lsblk",), ("smartctl", "-j", "-a"))


@dataclass(frozen=True, slots=True)
class LivePool:
    state: PoolState
    version: str  # the kernel module's, e.g. 2.4.4-1~bpo13+1 (the userland's when the module says none)
    disks: dict[str, DiskFacts]  # lsblk's facts by leaf name (as zpool status -P names it)
    attached: dict[str, int]  # disks zpool attach added to each raidz vdev (read only for an expanded pool)
    ram_bytes: int | None = None  # this host's memory (MemTotal), against which the dedup table is weighed
    health: dict[str, DiskHealth] = field(default_factory=dict)  # smartctl's counters by leaf name


def _series(version: str) -> tuple[int, int]:
    parts = version.split(".")
    try:
        return int(parts[0]), int(parts[1].split("-")[0])
    except (IndexError, ValueError):
        raise InputError(f"zfs version printed {shown(version, 40)}, not a version zfslab reads") from None


def pool_names(runner: Runner) -> list[str]:
    out = runner.run(["zpool", "list", "-H", "-o", "name"], timeout_s=TIMEOUT_S).stdout
    return [line.strip() for line in out.splitlines() if line.strip()]


def disk_facts(text: str) -> dict[str, DiskFacts]:
    """{path: facts} from `lsblk -J -b -d -o PATH,SIZE,PHY-SEC,ROTA PATH...` (numbers as JSON numbers,
    or strings and 0/1 in older util-linux)."""
    try:
        data = json.loads(text)
    except ValueError:
        raise InputError(f"lsblk printed no JSON zfslab can read: {shown(text, 60)}") from None
    devices = data.get("blockdevices") if isinstance(data, dict) else None
    if not isinstance(devices, list):
        raise InputError(f"lsblk -J printed no blockdevices list: {shown(text, 60)}")
    out = {}
    for d in devices:
        if not isinstance(d, dict) or not isinstance(d.get("path"), str):
            raise InputError(f"lsblk -J: a device without a path: {shown(d, 60)}")
        rota = d.get("rota")
        if rota not in (True, False, 0, 1, "0", "1"):
            raise InputError(f"lsblk -J: {shown(d['path'], 60)} rota={shown(rota, 20)} is not 0 or 1")
        out[d["path"]] = DiskFacts(d["path"], checked_count(d.get("size"), f"lsblk size of {d['path']}"),
                                   checked_count(d.get("phy-sec"), f"lsblk phy-sec of {d['path']}", limit=65536),
                                   rota in (True, 1, "1"))
    return out


def read_pool(runner: Runner, pool: str, names: list[str] | None = None) -> LivePool:
    """The pool, its OpenZFS version and its disks; NoSuchPool when `zpool list` does not show it."""
    names = pool_names(runner) if names is None else names
    if pool not in names:
        raise NoSuchPool(pool)
    version = parse_version(runner.run(["zfs", "version"], timeout_s=TIMEOUT_S).stdout)
    running = version.kernel or version.userland
    vdev_text = runner.run(["zpool", "get", "-Hp", "ashift,psize", pool, "all-vdevs"], timeout_s=TIMEOUT_S,
                           check=False).stdout  # 2.2+; 2.1 has no vdev properties and says so on stderr

    def out(*argv: str) -> str:
        return runner.run(argv, timeout_s=TIMEOUT_S).stdout

    # -D adds the dedup table's entries and size (zpool-status(8)); the sizes the kernel reports are
    # each entry's average before 2.3, the whole table's since (system/pool_read.py text_ddt)
    if _series(version.userland) >= (2, 3):
        state = read_json(pool, out("zpool", "status", "-D", "-j", "-P", "--json-int", pool),
                          out("zpool", "get", "-j", "--json-int", "all", pool),
                          out("zfs", "get", "-j", "--json-int", "all", pool), vdev_text)
    else:
        state = read_text(pool, out("zpool", "status", "-D", "-P", "-p", pool), out("zpool", "list", "-vHPp", pool),
                          out("zpool", "get", "-Hp", "all", pool), out("zfs", "get", "-Hp", "all", pool), vdev_text,
                          ddt_per_entry=_series(running) < (2, 3))
    # every filesystem's recordsize and compression: a child dataset may set its own (docs/pool.md#findings)
    props = ",".join(FILESYSTEM_PROPS)
    if state.source == "json":
        filesystems = json_filesystems(out("zfs", "get", "-j", "--json-int", "-r", "-t", "filesystem", props, pool),
                                       pool)
    else:
        filesystems = text_filesystems(out("zfs", "get", "-Hp", "-r", "-t", "filesystem", props, pool), pool)
    state = dataclasses.replace(state, filesystems=filesystems)
    paths = sorted({leaf.name for v in state.vdevs for leaf in v.leaves if leaf.name.startswith("/dev/")})
    disks = {}
    if runner.which("lsblk"):
        for path in paths:  # one at a time: lsblk names a device by its kernel path, not the link asked for
            done = runner.run(["lsblk", "-J", "-b", "-d", "-o", "PATH,SIZE,PHY-SEC,ROTA", path],
                              timeout_s=TIMEOUT_S, check=False)  # a leaf that is gone (a failed disk) is left out
            facts = list(disk_facts(done.stdout).values()) if done.returncode == 0 and done.stdout.strip() else []
            if facts:
                disks[path] = facts[0]
    attached = raidz_attaches(out("zpool", "history", pool), pool) if state.expanded else {}
    health = {}
    for path in paths:   # smartctl -a only reads the disk's logs; it starts no test
        found = read_health(runner, whole_disk(path))
        if found is not None:
            health[path] = found
    return LivePool(state, running, disks, attached, memory_bytes(), health)


def memory_bytes(path: str = "/proc/meminfo") -> int | None:
    """MemTotal of /proc/meminfo in bytes (None where there is none, or it is not a count)."""
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            text = f.read(1 << 16)
    except OSError:
        return None
    for line in text.splitlines():
        words = line.split()
        if len(words) == 3 and words[0] == "MemTotal:" and words[2] == "kB" and words[1].isdigit() \
                and len(words[1]) < 16:
            return int(words[1]) * 1024
    return None
