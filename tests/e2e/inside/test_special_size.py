"""special-size against the real kernel module: a raidz1:3 pool with a special mirror:2, a known
mix of small and large incompressible files, and what ZFS allocated on the special vdev.

Tolerances: the small blocks are counted exactly (the same blocks zdb finds, to the block), so
their bytes must match the special vdev's allocation less the metadata zdb measured to 1 %;
the metadata a file-size list gives is an estimate (dnode and indirect blocks compressed as
typical, directories by entry, the MOS as a constant), checked to 35 % of what the dataset's
files added, and the whole answer to 15 % of the special vdev's ALLOC when small blocks dominate."""

import json
import os
import random
import subprocess
import sys

import pytest

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
    return int(lines[at + 1].split("\t")[2])


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
    made = []

    def make(small_blocks: str) -> str:
        sh("zpool", "create", "-f", "-o", "ashift=12", "-O", "compression=off", "-O", "atime=off",
           "-m", f"/mnt/{POOL}", POOL, "raidz1", *disks[0:3], "special", "mirror", *disks[3:5])
        made.append(POOL)
        sh("zfs", "create", "-o", f"special_small_blocks={small_blocks}", f"{POOL}/fs")
        sh("zpool", "sync", POOL)
        return f"/mnt/{POOL}/fs"
    yield make
    for p in made:
        subprocess.run(["zpool", "destroy", "-f", p], capture_output=True)


def write_files(root: str, sizes: list[int]) -> None:
    rng = random.Random(11)  # incompressible and the same on every run
    for i, size in enumerate(sizes):
        folder = os.path.join(root, f"d{i % 4}")
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, f"file-{i:05d}.bin"), "wb") as f:
            f.write(rng.randbytes(size))


@pytest.mark.parametrize("small_blocks", ["16K", "0"])
def test_special_size_matches_what_zfs_allocated(special_pool, tmp_path, small_blocks):
    root = special_pool(small_blocks)
    before = special_alloc(POOL)
    write_files(root, file_sizes(5))
    sh("zpool", "sync", POOL)
    allocated = special_alloc(POOL)
    sizes = tmp_path / "sizes.txt"
    sizes.write_text(sh("find", root, "-type", "f", "-printf", "%s\\n"))
    zdb4 = tmp_path / "zdb-bbbb.txt"
    zdb4.write_text(sh("zdb", "-bbbb", "-P", POOL))
    zdb2 = tmp_path / "zdb-bb.txt"
    zdb2.write_text(sh("zdb", "-bb", POOL))
    t = "16K" if small_blocks == "16K" else "0"
    files, measured, rough = (zfslab(str(p), "--special-small-blocks", t) for p in (sizes, zdb4, zdb2))
    mos = next(m["bytes"] for m in files["metadata"] if m["part"] == "MOS")
    zdb_metadata = measured["chosen"]["metadata_bytes"]
    print(f"special_small_blocks={t}: allocated {allocated:,} (before the files {before:,}); "
          f"zdb metadata {zdb_metadata:,}; predicted from sizes: small {files['chosen']['small_blocks_bytes']:,} "
          f"metadata {files['chosen']['metadata_bytes']:,} needed {files['chosen']['needed_bytes']:,}; "
          f"from zdb -bbbb needed {measured['chosen']['needed_bytes']:,}; from zdb -bb {rough['chosen']['needed_bytes']:,}")
    for row in files["thresholds"]:
        print(f"  threshold {row['special_small_blocks']:>6}: predicted small blocks {row['small_blocks']:,} = "
              f"{row['small_blocks_bytes']:,} B; zdb -bbbb "
              f"{next(r for r in measured['thresholds'] if r['special_small_blocks'] == row['special_small_blocks'])['small_blocks_bytes']:,} B")
    # the same small blocks, counted from the file sizes and found by zdb, at every threshold
    for a, b in zip(files["thresholds"], measured["thresholds"]):
        assert (a["small_blocks"], a["small_blocks_bytes"]) == (b["small_blocks"], b["small_blocks_bytes"])
    # zdb's metadata and the small blocks are what the special vdev holds
    small = files["chosen"]["small_blocks_bytes"]
    assert abs(zdb_metadata + small - allocated) <= 0.01 * allocated, (zdb_metadata, small, allocated)
    assert abs(measured["chosen"]["needed_bytes"] - allocated) <= 0.01 * allocated
    # the metadata estimate, against what the files added (the MOS is a separate constant)
    estimate = files["chosen"]["metadata_bytes"] - mos
    added = allocated - before - small
    assert abs(estimate - added) <= 0.35 * added, (estimate, added)
    if small_blocks == "16K":
        assert abs(files["chosen"]["needed_bytes"] - allocated) <= 0.15 * allocated
        # without per-type histograms, zdb -bb counts the 16K bin whole: an upper bound
        assert rough["chosen"]["needed_bytes"] >= allocated * 0.99 and not rough["chosen"]["exact"]
    else:
        assert small == 0 and files["chosen"]["recommended_bytes"] == files["chosen"]["needed_bytes"]
