"""The footprint reader's throughput on this machine: MB/s of file data read and priced per
compressor (off reads nothing: it walks only), on a tree given or on a generated one.

The generated tree (in a temp dir, warm in the page cache after the first pass) mixes random,
text-like and all-zero data in files from 1 KiB to 8 MiB, so the figure is the compressors' and
the reader's cost, not the disk's. On a real cold tree the disk may be the limit.

Run: python3 benchmarks/footprint_reader.py [TREE] [--mib N]     (default: a generated 256 MiB tree)
"""

from __future__ import annotations

import argparse
import os
import random
import tempfile
import time

from zfslab.system.footprint_reader import compressor, read_sample, walk
from zfslab.system.zfs_lz4 import zfs_lz4

RECORDSIZE = 128 * 1024


def make_tree(root: str, mib: int, rng: random.Random) -> None:
    words = [bytes(rng.choice(b"abcdefghijklmnop") for _ in range(rng.randint(2, 9))) for _ in range(500)]
    text = b" ".join(rng.choice(words) for _ in range(400_000))
    left, i = mib << 20, 0
    while left > 0:
        size = min(left, int(2 ** rng.uniform(10, 23)))
        kind = i % 3
        data = rng.randbytes(size) if kind == 0 else (text * (size // len(text) + 1))[:size] if kind == 1 \
            else bytes(size)
        with open(os.path.join(root, f"f{i:05d}"), "wb") as f:
            f.write(data)
        left -= size
        i += 1


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("tree", nargs="?")
    ap.add_argument("--mib", type=int, default=256)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        root = args.tree or tmp
        if not args.tree:
            make_tree(root, args.mib, random.Random(1))
        w = walk([root])
        total = sum(f[3] for f in w.files)
        print(f"{len(w.files):,} files, {total / 1e6:.0f} MB, recordsize 128K, {os.cpu_count()} CPUs")
        read_sample(w, RECORDSIZE, lambda b: len(b), max_bytes=None, max_seconds=None, rng=random.Random(0))  # warm
        lz4_package = compressor("lz4") if zfs_lz4() is None else None
        if lz4_package is None:   # libzpool's own lz4 is what footprint uses here; the package beside it
            os.environ["ZFSLAB_LZ4"] = "package"
            lz4_package = compressor("lz4")
            del os.environ["ZFSLAB_LZ4"]
        runs = [("lz4", compressor("lz4"), "OpenZFS's, libzpool" if zfs_lz4() else "the lz4 package"),
                ("lz4", lz4_package, "the lz4 package"), ("zstd", compressor("zstd"), "level 3"),
                ("zstd-1", compressor("zstd-1"), ""), ("gzip", compressor("gzip"), "level 6, zlib")]
        seen = set()
        for name, compress, what in runs:
            if (name, what) in seen:
                continue
            seen.add((name, what))
            start = time.perf_counter()
            s = read_sample(w, RECORDSIZE, compress, max_bytes=None, max_seconds=None, rng=random.Random(0))
            seconds = time.perf_counter() - start
            print(f"{name:7} {s.counts.read_bytes / seconds / 1e6:8.0f} MB/s  ({seconds:.2f} s, one core) {what}")


if __name__ == "__main__":
    main()
