"""RAID-Z expansion on the real kernel module (OpenZFS 2.3+): `zpool attach -w` one disk at a time,
then `zpool list -Hp` and `zfs list -Hp` against `zfslab expand --json` (docs/capacity.md#raidz-expansion).

Empty pools on the guest's whole disks; half-full pools on 192 MiB sparse files under
ZFSLAB_TEST_FILEDIR, because writing and reflowing gigabytes under TCG takes minutes. SIZE and
USED+AVAIL are compared to the byte at every step; ALLOC and USED of written data within
ALLOC_TOLERANCE (zfslab counts the data blocks, not the metadata). After the last attach,
`zfs rewrite -r` where the zfs binary has it (2.3.4+). About 6 minutes of TCG guest time on 2.3.2
(each attach of even an empty pool takes about 20 s there; the half-full cases most of the rest).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from zfslab.model.layout_grammar import parse_layout
from zfslab.system.udev_lock import held_against_rescan, whole_disk
from zfslab.system.zfs import ZfsCli

MIB = 1 << 20
FILE_BYTES = 192 * MIB
# Metadata ZFS writes beside the data (indirect blocks twice, dnodes, the MOS, space maps):
# 0.04-0.65 % of the data on libzpool (docs/capacity.md#allocation), plus a few MiB of a fresh pool.
ALLOC_TOLERANCE_FRACTION = 0.01
ALLOC_TOLERANCE_BYTES = 8 * MIB


def sh(*argv: str, timeout_s: float = 600) -> str:
    p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s)
    if p.returncode != 0:
        raise AssertionError(f"{' '.join(argv)} exited {p.returncode}: {p.stderr[-2000:]}")
    return p.stdout


def zfs_version() -> tuple[int, ...]:
    with open("/sys/module/zfs/version") as f:
        return tuple(int(x) for x in f.read().strip().split("-")[0].split(".")[:3])


def has_rewrite() -> bool:
    """`zfs rewrite` exists from 2.3.4; an older zfs answers with its list of commands."""
    p = subprocess.run(["zfs", "rewrite"], capture_output=True, text=True, timeout=60)
    return "unrecognized command" not in p.stderr and "rewrite" in p.stderr + p.stdout


def measure(pool: str) -> dict[str, int]:
    # txg_wait_synced(dp, 0) waits for the open txg + TXG_DEFER_SIZE: frees are no longer deferred
    sh("zpool", "sync", pool)
    size, alloc, free = (int(x) for x in sh("zpool", "list", "-Hp", "-o", "size,alloc,free", pool).split())
    used, avail = (int(x) for x in sh("zfs", "list", "-Hp", "-o", "used,avail", pool).split())
    return {"size": size, "alloc": alloc, "free": free, "used": used, "avail": avail}


def zfslab_expand(*args: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "zfslab", "expand", *args, "--json"], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    return json.loads(out)


def attach(pool: str, vdev: str, device: str, before_size: int) -> None:
    # zpool labels the new disk as create does: no stale partition of an earlier case for its wait
    # to trust, and no re-read by udev meanwhile (docs/safety.md#a-create-right-after-a-destroy)
    zfs = ZfsCli()
    zfs.forget_partitions([d for d in [whole_disk(device)] if d])
    with held_against_rescan([device]):
        zfs.settle()
        sh("zpool", "attach", "-w", pool, vdev, device, timeout_s=900)
    # `zpool attach -w` returns when the reflow is marked complete (raidz_reflow_complete_sync);
    # the new metaslabs come just after, from vdev_online(ZFS_ONLINE_EXPAND) in the same thread.
    deadline = time.monotonic() + 120
    while int(sh("zpool", "list", "-Hp", "-o", "size", pool)) == before_size:
        assert time.monotonic() < deadline, f"{pool}: SIZE still {before_size} two minutes after the expansion ended"
        sh("zpool", "sync", pool)


def write_data(path: str, nbytes: int) -> None:
    """Incompressible data (compression is off as well): random MiB, each one different."""
    block = os.urandom(MIB)
    with open(path, "wb") as f:
        written = 0
        while written < nbytes:
            n = min(MIB, nbytes - written)
            f.write(written.to_bytes(8, "little") + block[8:n] if n >= 8 else block[:n])
            written += n
        f.flush()
        os.fsync(f.fileno())


def check_step(real: dict[str, int], model: dict, label: str, *, data: bool) -> None:
    assert real["size"] == model["size_bytes"], f"{label}: SIZE {real['size']} != zfslab {model['size_bytes']}"
    assert real["used"] + real["avail"] == model["usable_bytes"], \
        f"{label}: USED+AVAIL {real['used'] + real['avail']} != zfslab {model['usable_bytes']}"
    for key in ("alloc", "used"):
        want = model[f"{key}_bytes"]
        slack = ALLOC_TOLERANCE_FRACTION * want + ALLOC_TOLERANCE_BYTES
        assert want <= real[key] <= want + slack, f"{label}: {key.upper()} {real[key]} outside zfslab {want} + {slack:.0f}"
    if not data:
        assert real["avail"] <= model["avail_bytes"] <= real["avail"] + ALLOC_TOLERANCE_BYTES


def print_table(title: str, rows: list[tuple[str, dict[str, int], dict]]) -> None:
    print(f"\n{title}")
    print(f"{'step':<18}{'what':<8}{'SIZE':>14}{'ALLOC':>14}{'FREE':>14}{'USED':>14}{'AVAIL':>14}")
    for label, real, model in rows:
        print(f"{label:<18}{'real':<8}" + "".join(f"{real[k]:>14}" for k in ("size", "alloc", "free", "used", "avail")))
        print(f"{'':<18}{'zfslab':<8}" + "".join(f"{model[k + '_bytes']:>14}" for k in ("size", "alloc", "free", "used", "avail")))


CASES = [  # layout, added, fill before, where
    ("raidz1:3", 1, 0.0, "disks"),
    ("raidz2:6", 2, 0.0, "disks"),
    ("raidz1:3", 2, 0.5, "files"),
    ("raidz2:6", 2, 0.5, "files"),
]


@pytest.mark.parametrize("layout,added,fill,where", CASES, ids=[f"{c[0]}+{c[1]}-{c[3]}-fill{c[2]}" for c in CASES])
def test_expansion_matches_zfslab(zfs, disks, filedir, pool_name, layout, added, fill, where):
    version = zfs_version()
    if version < (2, 3):
        pytest.skip(f"RAID-Z expansion came in OpenZFS 2.3; this module is {'.'.join(map(str, version))}")
    width, parity = int(layout.split(":")[1]), int(layout[5])
    if where == "disks":
        devices = disks[: width + added]
        with open(devices[0], "rb") as f:
            size_args = ["--disk-size", str(f.seek(0, os.SEEK_END))]
    else:
        devices = []
        for i in range(width + added):
            path = os.path.join(filedir, f"{pool_name}-{i}")
            with open(path, "wb") as f:
                f.truncate(FILE_BYTES)
            devices.append(path)
        size_args = ["--vdev-bytes", str(FILE_BYTES)]
    rewrite = fill > 0 and has_rewrite()
    release = ".".join(map(str, version))
    model = zfslab_expand(layout, "--add", str(added), "--fill-before", str(fill), "--zfs-version", release,
                          *size_args, *(["--rewrite"] if rewrite else []))
    steps = model["steps"]
    try:
        zfs.create_pool(pool_name, parse_layout(layout), devices[:width], ashift=12, force=True,
                        fs_props={"compression": "off", "atime": "off"})
        mountpoint = sh("zfs", "get", "-Hp", "-o", "value", "mountpoint", pool_name).strip()
        if model["data_bytes"]:
            write_data(os.path.join(mountpoint, "old-data"), model["data_bytes"])
        rows = [("created", measure(pool_name), steps[0])]
        check_step(rows[-1][1], steps[0], "created", data=bool(model["data_bytes"]))
        for i in range(added):
            attach(pool_name, f"raidz{parity}-0", devices[width + i], rows[-1][1]["size"])
            rows.append((steps[i + 1]["step"], measure(pool_name), steps[i + 1]))
            check_step(rows[-1][1], steps[i + 1], steps[i + 1]["step"], data=bool(model["data_bytes"]))
        if rewrite:
            # 2.4's -P (physical rewrite) keeps the logical birth txg; the new blocks still take
            # the new width (allocated in the current txg), so the raidz1 case uses it there
            physical = ["-P"] if parity == 1 and version >= (2, 4) else []
            sh("zfs", "rewrite", "-r", *physical, mountpoint, timeout_s=900)
            rows.append(("rewritten", measure(pool_name), steps[-1]))
            check_step(rows[-1][1], steps[-1], "rewritten", data=True)
            if steps[-1]["alloc_bytes"] < steps[-2]["alloc_bytes"]:  # narrower old blocks re-laid at the new width
                assert rows[-1][1]["alloc"] < rows[-2][1]["alloc"]
        print_table(f"{layout} --add {added} --fill-before {fill} ({where}, OpenZFS {release})", rows)
    finally:
        if zfs.pool_exists(pool_name):
            zfs.destroy_pool(pool_name, force=True)
        if where == "files":
            for path in devices:
                os.unlink(path)
