"""special-size against the real kernel module: a raidz1:3 pool with a special mirror:2, a known
mix of small and large incompressible files, and what ZFS allocated on the special vdev.

Tolerances: the small blocks are counted exactly (the same blocks, to the block, as zdb -bbbb
finds at every threshold), and with the metadata zdb measured they must make the special vdev's
ALLOC to 2 % (deferred frees); the metadata a file-size list gives is an estimate (dnode and
indirect blocks compressed as typical, directories by entry, the MOS as a constant), checked to
35 % of what the metadata-only dataset's files added, and the whole answer to 15 % of what the
special_small_blocks=16K dataset's files added. On OpenZFS 2.3.2 (2026-11-24): 933,888 B added
against 1,073,152 B estimated (+15 %); 14,688,256 B against 14,876,672 B (+1.3 %)."""

import json
import os
import random
import re
import subprocess
import sys

import pytest

from zfslab.model.layout_grammar import parse_layout

POOL = "zfslab-e2e-special"
K = 1024


def sh(*argv: str) -> str:
    p = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, f"{argv}: {p.stderr[-2000:]}"
    return p.stdout


def special_alloc(pool: str) -> int:
    """ALLOC of the special class's vdev row in zpool list -v -Hp."""
    lines = sh("zpool", "list", "-v", "-Hp", pool).splitlines()
    at = next(i for i, line in enumerate(lines) if line.split()[0] == "special")
    return int(lines[at + 1].split()[2])  # the vdev row under it: name, SIZE, ALLOC, ...


def file_sizes(seed: int) -> list[int]:
    """A few thousand small files spread evenly on a log scale (64 B to 90 KiB), the sizes each
    side of the thresholds, and some large files."""
    rng = random.Random(seed)
    sizes = [int(2 ** rng.uniform(6, 16.5)) for _ in range(3000)]
    sizes += [0, 1, 4096, 4097, 8192, 8193, 16 * K - 1, 16 * K, 16 * K + 1, 128 * K, 128 * K + 1]
    return sizes + [(1 << 20), 3 << 20, 7 << 20, 20 << 20]


def zfslab(*args: str) -> dict:
    p = subprocess.run([sys.executable, "-m", "zfslab", "special-size", *args, "--json"], capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


@pytest.fixture
def special_pool(zfs, disks):
    zfs.create_pool(POOL, parse_layout("raidz1:3+special=mirror:2"), disks[0:5], ashift=12, force=True,
                    fs_props={"compression": "off", "atime": "off", "mountpoint": f"/mnt/{POOL}"})
    try:
        yield POOL
    finally:
        subprocess.run(["zpool", "destroy", "-f", POOL], capture_output=True)


def write_files(root: str, sizes: list[int]) -> None:
    rng = random.Random(11)  # incompressible and the same on every run
    for i, size in enumerate(sizes):
        folder = os.path.join(root, f"d{i % 4}")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"file-{i:05d}.bin"), "wb") as f:
            f.write(rng.randbytes(size))


def dataset_with_files(small_blocks: str, tmp_path) -> tuple[int, str]:
    """The special vdev's growth from one dataset of the file mix, and its size list."""
    fs = f"{POOL}/ssb-{small_blocks}"
    sh("zfs", "create", "-o", f"special_small_blocks={small_blocks}", fs)
    sh("zpool", "sync", POOL)
    before = special_alloc(POOL)
    write_files(f"/mnt/{fs}", file_sizes(5))
    sh("zpool", "sync", POOL)
    listing = tmp_path / f"sizes-{small_blocks}.txt"
    listing.write_text(sh("find", f"/mnt/{fs}", "-type", "f", "-printf", "%s\\n"))
    return special_alloc(POOL) - before, str(listing)


def zdb_version_args() -> list[str]:
    """zdb -bb prints its Metadata Total row from OpenZFS 2.2 on; before, -bbb -P's levels give it."""
    m = re.search(r"zfs-(?:kmod-)?([0-9]+)\.([0-9]+)", sh("zfs", "version"))
    return ["-bb"] if m and (int(m.group(1)), int(m.group(2))) >= (2, 2) else ["-bbb", "-P"]


def test_special_size_matches_what_zfs_allocated(special_pool, tmp_path):
    grown_meta, meta_list = dataset_with_files("0", tmp_path)       # metadata only
    grown_small, small_list = dataset_with_files("16K", tmp_path)   # metadata and blocks up to 16K
    allocated = special_alloc(POOL)
    both = tmp_path / "sizes-both.txt"
    both.write_text(open(meta_list).read() + open(small_list).read())
    zdb4, zdb2 = tmp_path / "zdb-bbbb.txt", tmp_path / "zdb-bb.txt"
    zdb4.write_text(sh("zdb", "-bbbb", "-P", POOL))
    zdb2.write_text(sh("zdb", *zdb_version_args(), POOL))
    meta = zfslab(meta_list, "--special-small-blocks", "0")
    small = zfslab(small_list, "--special-small-blocks", "16K")
    listed = zfslab(str(both), "--special-small-blocks", "16K")
    measured = zfslab(str(zdb4), "--special-small-blocks", "16K")
    rough = zfslab(str(zdb2), "--special-small-blocks", "16K")
    mos = next(m["bytes"] for m in meta["metadata"] if m["part"] == "MOS")
    small_bytes = small["chosen"]["small_blocks_bytes"]
    zdb_metadata = measured["chosen"]["metadata_bytes"]
    print(f"\nspecial vdev ALLOC {allocated:,}; zdb metadata {zdb_metadata:,}")
    print(f"special_small_blocks=0: grew {grown_meta:,}; predicted metadata {meta['chosen']['metadata_bytes'] - mos:,} "
          f"(+ MOS {mos:,})")
    print(f"special_small_blocks=16K: grew {grown_small:,}; predicted {small['chosen']['needed_bytes'] - mos:,} "
          f"(small blocks {small_bytes:,}, metadata {small['chosen']['metadata_bytes'] - mos:,})")
    for a, b, c in zip(listed["thresholds"], measured["thresholds"], rough["thresholds"]):
        print(f"  threshold {a['special_small_blocks']:>6}: from sizes {a['small_blocks']:,} blocks "
              f"{a['small_blocks_bytes']:,} B; zdb -bbbb {b['small_blocks']:,} blocks {b['small_blocks_bytes']:,} B; "
              f"zdb {' '.join(zdb_version_args())} {c['small_blocks_bytes']:,} B")
        # the same small blocks, counted from the file sizes and found by zdb, at every threshold
        assert (a["small_blocks"], a["small_blocks_bytes"]) == (b["small_blocks"], b["small_blocks_bytes"])
        assert c["small_blocks_bytes"] >= 0.99 * b["small_blocks_bytes"]  # the power-of-two bins: an upper bound
    # what the special vdev holds: zdb's metadata and the 16K dataset's small blocks, to 2 % (blocks
    # freed in the last transaction groups still count as allocated until their frees are final)
    assert abs(zdb_metadata + small_bytes - allocated) <= 0.02 * allocated, (zdb_metadata, small_bytes, allocated)
    assert abs(rough["chosen"]["metadata_bytes"] - zdb_metadata) <= 0.01 * zdb_metadata
    # the metadata estimate against what the files added (the MOS is a separate constant)
    assert abs(meta["chosen"]["metadata_bytes"] - mos - grown_meta) <= 0.35 * grown_meta
    assert meta["chosen"]["recommended_bytes"] == meta["chosen"]["needed_bytes"]  # no reserve for metadata
    # with small blocks, the whole answer
    assert abs(small["chosen"]["needed_bytes"] - mos - grown_small) <= 0.15 * grown_small
