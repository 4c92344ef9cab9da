"""footprint against real ZFS, small enough for CI's guest: one raidz1:3 pool at ashift 12, a 3.4 MB
corpus written with compression off, gzip-6 (zlib) and lz4 (OpenZFS's own lz4 code from the guest's
libzpool, through its 2.3+ ABD interface: docs/footprint.md#lz4-from-libzpool), compared with zfs
get used (to 1 % plus 16 KiB of metadata) and the pool's ALLOC growth (to 3 %).

test_footprint.py is the full comparison (four layouts, lz4 and zstd, 1M records, ashift 9), run
by hand (docs/footprint.md#judged-on-real-zfs). With off and gzip the data blocks were exact to the
byte on 2.4.4; what is left is the metadata estimate.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import pytest

from tests.e2e.inside.test_footprint import _version, copy_tree, sh, text_like
from zfslab.model.layout_grammar import parse_layout

K = 1024
POOL = "zfslab-e2e-footprint-ci"
CORPUS = "/var/tmp/zfslab-footprint-ci-corpus"
LAYOUT = "raidz1:3"


def make_small_corpus(root: str) -> None:
    """120 small files (random, text-like, zeros with data), a 1.5 MiB text, 1 MiB of random data and
    a 256 KiB zero run: 3.4 MB, so the metadata estimate is a few per cent of USED."""
    rng = random.Random(2525)
    text = text_like(rng, b"etaoinshrdlu", vocabulary=500, longest=9, per_line=10)
    kinds = (lambda n: rng.randbytes(n), text, lambda n: bytes(n // 2) + rng.randbytes(n - n // 2))
    os.makedirs(f"{root}/small", exist_ok=True)
    for i in range(120):
        with open(f"{root}/small/f{i:03d}", "wb") as f:
            f.write(kinds[i % 3](int(2 ** rng.uniform(6, 14))))
    with open(f"{root}/text.txt", "wb") as f:
        f.write(text(1536 * K))
    with open(f"{root}/random.bin", "wb") as f:
        f.write(rng.randbytes(1024 * K))
    with open(f"{root}/zeros-then-data.bin", "wb") as f:
        f.write(bytes(256 * K) + rng.randbytes(200 * K))


@pytest.fixture(scope="module")
def corpus():
    if not os.path.exists(f"{CORPUS}/zeros-then-data.bin"):
        make_small_corpus(CORPUS)
    return CORPUS


def predict(compression: str) -> dict:
    p = subprocess.run([sys.executable, "-m", "zfslab", "footprint", CORPUS, "--layouts", LAYOUT, "--compression",
                        compression, "--zfs-version", _version(), "--json"], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    if compression == "lz4":   # the module's own code, not the package's: else about 2 % high
        assert "openzfs (libzpool)" in json.dumps(out), out
    return out["layouts"][0]


def test_footprint_predicts_used_with_compression_off_gzip_and_lz4(zfs, disks, corpus):
    lay = parse_layout(LAYOUT)
    zfs.create_pool(POOL, lay, disks[:lay.disks], ashift=12, force=True,
                    fs_props={"atime": "off", "mountpoint": f"/mnt/{POOL}"})
    failures, rows = [], []
    try:
        for compression in ("off", "gzip", "lz4"):
            fs = f"{POOL}/{compression}"
            # ALLOC before the dataset exists: the prediction counts the dataset's own blocks (objset,
            # meta-dnode, the ZPL's ZAPs), which a growth measured after its creation only rewrites.
            # Measured after it, on 2.3.9, the growth was 166,272 B under the prediction for off and
            # gzip alike, 4.2 % of gzip's growth on this small corpus
            sh("zpool", "sync", POOL)
            before = int(sh("zpool", "list", "-Hp", "-o", "alloc", POOL).split()[0])
            sh("zfs", "create", "-o", f"compression={compression}", "-o", "recordsize=128K", fs)
            copy_tree(corpus, f"/mnt/{fs}")
            sh("zpool", "sync", POOL)
            grown = int(sh("zpool", "list", "-Hp", "-o", "alloc", POOL).split()[0]) - before
            used = int(sh("zfs", "get", "-Hp", "-o", "value", "used", fs).split()[0])
            p = predict(compression)
            rows.append(f"{fs}: USED predicted {p['used_bytes']:,} real {used:,}; "
                        f"ALLOC growth predicted {p['alloc_bytes']:,} real {grown:,}")
            # 1 % of USED, plus 16 KiB for the part of this small corpus's metadata (about 400 KB
            # estimated) that depends on how many txgs the copy spans: an indirect block whose block
            # pointers carry several birth txgs compresses less. The same gzip data gave 2,755,280 B
            # (one guest at a time) and 2,766,192 B (two guests and a DKMS build beside it), on
            # 2.3.9 and 2.4.4 alike; the full-size corpus (test_footprint.py) holds USED to 1 %
            if abs(p["used_bytes"] - used) > 0.01 * used + 16 * K:
                failures.append(rows[-1])
            elif abs(p["alloc_bytes"] - grown) > 0.03 * grown:  # ALLOC also carries the MOS and pending frees
                failures.append(rows[-1])
    finally:
        zfs.destroy_pool(POOL, force=True)
    print("\n" + "\n".join(rows))
    assert not failures, failures


SHAPE_TREE = "/var/tmp/zfslab-footprint-ci-shape"


def test_footprint_predicts_used_on_directories_symlinks_and_sparse_files(zfs, disks):
    """The metadata's shapes (issue 38), small: 75 directories, a fat ZAP of 650 entries and one of
    60-byte names, 40 symlinks, files of several records, a 1 GiB sparse file and two others, copied
    by cp -a (holes kept), compression off, on raidz1:3: USED to 1 % plus 16 KiB, as the corpus
    above; ALLOC growth to 3 %."""
    from tests.e2e.inside.test_footprint import make_shape_tree, measure_tree, print_rows
    if not os.path.exists(f"{SHAPE_TREE}/sparse/hole.img"):
        make_shape_tree(SHAPE_TREE, scale=4)
    rows = measure_tree(zfs, disks, SHAPE_TREE, LAYOUT, 12, ["off"], pool=POOL)
    print_rows(rows)
    bad = [r for r in rows if abs(r[1] - r[2]) > 0.01 * r[2] + 16 * K or abs(r[3] - r[4]) > 0.03 * r[4]]
    assert not bad, bad
