"""footprint against the real kernel module: a generated corpus (incompressible, text-like and
log-like data, all-zero regions, a sparse file, many small files, a few large ones) copied byte for
byte into datasets with compression off, lz4 and zstd on raidz1:3, raidz2:6, mirror:2 and a dRAID
(ashift 12; one mirror at ashift 9; one dataset at recordsize 1M), compared with zfs get -p
used,logicalused and the pool's ALLOC growth after zpool sync.

The prediction's data blocks follow OpenZFS's rules block by block; its metadata is an estimate
(docs/footprint.md#metadata), so the comparison is of the whole USED with a tolerance that
covers the metadata estimate's error; the table printed gives every difference. Kept small for
the TCG guest (about 8 MB of data per dataset)."""

import functools
import json
import os
import random
import subprocess
import sys
from collections.abc import Callable

import pytest

from zfslab.model.layout_grammar import parse_layout

K = 1024
POOL = "zfslab-e2e-footprint"
CORPUS = "/var/tmp/zfslab-footprint-corpus"


def sh(*argv: str) -> str:
    p = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, f"{argv}: {p.stderr[-2000:]}"
    return p.stdout


def text_like(rng: random.Random, letters: bytes, vocabulary: int, longest: int,
              per_line: int) -> Callable[[int], bytes]:
    """A maker of text-like data: lines of `per_line` words drawn from `vocabulary` made-up words of 2 to
    `longest` of `letters`. Both corpora use it; each keeps its own parameters and seed, so their
    bytes, and the tables measured on them, stay the same (the words are drawn first, then the lines)."""
    words = [bytes(rng.choice(letters) for _ in range(rng.randint(2, longest))) for _ in range(vocabulary)]

    def text(n: int) -> bytes:
        out = bytearray()
        while len(out) < n:
            out += b" ".join(rng.choice(words) for _ in range(per_line)) + b".\n"
        return bytes(out[:n])

    return text


def make_corpus(root: str) -> None:
    rng = random.Random(25)
    text = text_like(rng, b"etaoinshrdlucmfw", vocabulary=2000, longest=10, per_line=12)

    def log(n: int) -> bytes:
        out = bytearray()
        t = 1_700_000_000
        while len(out) < n:
            t += rng.randint(0, 3)
            out += f"{t} host{rng.randint(1, 9)} svc[{rng.randint(100, 999)}]: request {rng.randint(0, 10**6)} " \
                   f"took {rng.randint(1, 900)} ms status={rng.choice([200, 200, 200, 404, 500])}\n".encode()
        return bytes(out[:n])

    os.makedirs(f"{root}/small", exist_ok=True)
    os.makedirs(f"{root}/large", exist_ok=True)
    kinds = (lambda n: rng.randbytes(n), text, log)
    for i in range(600):
        size = int(2 ** rng.uniform(5, 15))
        with open(f"{root}/small/f{i:04d}", "wb") as f:
            f.write(kinds[i % 3](size))
    with open(f"{root}/large/random.bin", "wb") as f:
        f.write(rng.randbytes(2 << 20))
    with open(f"{root}/large/text.txt", "wb") as f:
        f.write(text(1536 * K))
    with open(f"{root}/large/app.log", "wb") as f:
        f.write(log(1536 * K))
    with open(f"{root}/large/zeros-and-data.bin", "wb") as f:
        f.write(bytes(512 * K) + rng.randbytes(300 * K) + bytes(256 * K + 100))
    with open(f"{root}/large/sparse.img", "wb") as f:   # 2 MiB with one written record: read as zeros
        f.truncate(2 << 20)
        f.seek(640 * K)
        f.write(text(100 * K))


def make_shape_tree(root: str, scale: int = 1) -> None:
    """A tree whose metadata matters (issue 38): many small directories (microzaps, most too small
    for a block), one of 2,600 entries and one of names of 60 bytes (fat ZAPs), files of several
    records (indirect blocks), symlinks with short and long targets, and sparse files (a 1 GiB one
    with three 256 KiB islands, one with data at both ends, one all hole) that `cp -a` keeps sparse.
    `scale` divides the counts (the CI case). About 19 MB of data at scale 1."""
    rng = random.Random(38)
    text = text_like(rng, b"etaoinshrdlucmfwypvbgk", vocabulary=3000, longest=11, per_line=11)
    os.makedirs(f"{root}/dirs", exist_ok=True)
    for d in range(300 // scale):
        os.makedirs(f"{root}/dirs/d{d:03d}", exist_ok=True)
        for i in range(rng.choice((0, 1, 3, 6, 9, 14, 25, 40))):
            with open(f"{root}/dirs/d{d:03d}/{'n' * rng.randint(1, 12)}{i}.txt", "wb") as f:
                f.write(text(rng.randint(100, 6000)))
    os.makedirs(f"{root}/big-dir", exist_ok=True)
    for i in range(2600 // scale):
        with open(f"{root}/big-dir/entry-{i:05d}", "wb") as f:
            f.write(text(rng.randint(50, 400)))
    os.makedirs(f"{root}/long-names", exist_ok=True)
    for i in range(30):
        with open(f"{root}/long-names/{'a-rather-long-file-name-that-a-microzap-cannot-hold-'}{i:08d}", "wb") as f:
            f.write(text(700))
    os.makedirs(f"{root}/links", exist_ok=True)
    for i in range(160 // scale):
        target = "../big-dir/entry-00001" if i % 4 else "../" + "/".join(["sub"] * 60) + f"/{i}"
        os.symlink(target, f"{root}/links/l{i:03d}")
    os.makedirs(f"{root}/large", exist_ok=True)
    with open(f"{root}/large/random.bin", "wb") as f:
        f.write(rng.randbytes((5 << 20) // scale))
    with open(f"{root}/large/text.txt", "wb") as f:
        f.write(text((9 << 20) // scale + 12345))
    os.makedirs(f"{root}/sparse", exist_ok=True)
    with open(f"{root}/sparse/disk.img", "wb") as f:
        f.truncate(1 << 30)
        for at in (0, 300 << 20, 1000 << 20):
            f.seek(at)
            f.write(text(256 * K))
    with open(f"{root}/sparse/ends.img", "wb") as f:
        f.write(rng.randbytes(100 * K))
        f.seek((64 << 20) - 100 * K)
        f.write(rng.randbytes(100 * K))
    with open(f"{root}/sparse/hole.img", "wb") as f:
        f.truncate(10 << 20)


def copy_tree(src: str, dst: str) -> None:
    """Every byte written, zeros too (as rsync without -S does): compression decides the holes."""
    for dirpath, _, names in os.walk(src):
        rel = os.path.relpath(dirpath, src)
        os.makedirs(os.path.join(dst, rel), exist_ok=True)
        for n in names:
            with open(os.path.join(dirpath, n), "rb") as r, open(os.path.join(dst, rel, n), "wb") as w:
                while chunk := r.read(1 << 20):
                    w.write(chunk)


@functools.lru_cache(maxsize=None)
def _predict_all(compression: str, recordsize: str, ashift: int) -> dict:
    """One read of the corpus prices every layout of CASES (reading is the slow part under TCG)."""
    layouts = ",".join(sorted({c[0] for c in CASES}))
    p = subprocess.run([sys.executable, "-m", "zfslab", "footprint", CORPUS, "--layouts", layouts, "--compression",
                        compression, "--recordsize", recordsize, "--ashift", str(ashift), "--zfs-version",
                        _version(), "--special-small-blocks", SPECIAL_SMALL, "--sparse", "fill", "--json"],
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    return {r["layout"]: r for r in json.loads(p.stdout)["layouts"]}


def predict(layout: str, compression: str, recordsize: str, ashift: int) -> dict:
    return _predict_all(compression, recordsize, ashift)[layout]


def _version() -> str:
    out = sh("zfs", "version")
    return out.split("-")[1].rsplit(".", 1)[0] if out.startswith("zfs-") else "2.3"


def pool_alloc() -> int:
    return int(sh("zpool", "list", "-Hp", "-o", "alloc", POOL).split()[0])


def _have(module: str) -> bool:
    try:
        __import__(module)
        return True
    except ImportError:
        return False


# lz4 and zstd need the python3-lz4 and python3-zstandard packages in the guest; gzip uses zlib
OPTIONAL = {"lz4": _have("lz4"), "zstd": _have("zstandard")}

CASES = [  # (layout, ashift, [(compression, recordsize)])
    ("raidz1:3", 12, [("off", "128K"), ("lz4", "128K"), ("zstd", "128K"), ("gzip", "128K"), ("zstd", "1M")]),
    ("raidz2:6", 12, [("off", "128K"), ("lz4", "128K"), ("zstd", "1M")]),
    ("mirror:2", 12, [("off", "128K"), ("lz4", "128K"), ("zstd", "128K"), ("off", "1M")]),
    ("draid1:4d:6c:0s", 12, [("off", "128K"), ("lz4", "128K"), ("zstd", "128K"), ("off", "1M")]),
    ("mirror:2", 9, [("off", "128K"), ("lz4", "128K")]),
    # a special vdev: the metadata and the data blocks of at most special_small_blocks go there
    ("raidz1:3+special=mirror:2", 12, [("off", "128K"), ("zstd", "128K")]),
]
SPECIAL_SMALL = "16K"  # the datasets' special_small_blocks where the pool has a special vdev


SHAPE_TREE = "/var/tmp/zfslab-footprint-shape"
SHAPE_CASES = [  # (layout, ashift, compressions): each dataset gets the tree by cp -a (holes kept)
    ("raidz1:5", 12, ["off", "zstd"]),
    ("raidz2:6", 12, ["lz4"]),
    ("mirror:2", 12, ["off"]),
    ("mirror:2", 9, ["off", "lz4"]),
    ("draid1:4d:6c:0s", 12, ["off", "lz4"]),
    ("raidz1:3+special=mirror:2", 12, ["off"]),
]


def measure_tree(zfs, disks, tree: str, layout: str, ashift: int, compressions, pool: str = POOL) -> list[tuple]:
    """cp -a the tree into one dataset per compression; (name, predicted, real) of USED and ALLOC
    growth for each, the prediction from `zfslab footprint TREE` with the pool's settings."""
    lay = parse_layout(layout)
    devices = lay.disks + sum(c.group.disks for c in lay.classes)
    zfs.create_pool(pool, lay, disks[:devices], ashift=ashift, force=True,
                    fs_props={"atime": "off", "mountpoint": f"/mnt/{pool}"})
    rows = []
    try:
        for compression in compressions:
            if not OPTIONAL.get(compression, True):
                continue
            fs = f"{pool}/{compression}"
            sh("zpool", "sync", pool)
            before = int(sh("zpool", "list", "-Hp", "-o", "alloc", pool).split()[0])
            sh("zfs", "create", "-o", f"compression={compression}", fs)
            sh("cp", "-a", f"{tree}/.", f"/mnt/{fs}/")
            sh("zpool", "sync", pool)
            grown = int(sh("zpool", "list", "-Hp", "-o", "alloc", pool).split()[0]) - before
            used = int(sh("zfs", "get", "-Hp", "-o", "value", "used", fs).split()[0])
            p = subprocess.run([sys.executable, "-m", "zfslab", "footprint", tree, "--layouts", layout,
                                "--compression", compression, "--ashift", str(ashift), "--zfs-version", _version(),
                                "--json"], capture_output=True, text=True, timeout=600)
            assert p.returncode == 0, p.stderr
            r = json.loads(p.stdout)["layouts"][0]
            rows.append((f"{layout} a{ashift} {compression}", r["used_bytes"], used, r["alloc_bytes"], grown,
                         r["data_used_bytes"]))
        if os.environ.get("ZFSLAB_FOOTPRINT_ZDB"):   # by hand: the pool's blocks by type, to see which differ
            print(f"\nzdb -bb {layout} a{ashift} ({', '.join(compressions)}):")
            out = subprocess.run(["zdb", "-bb", "-L", pool], capture_output=True, text=True, timeout=600).stdout
            print("\n".join(line for line in out.splitlines() if "  " in line and line.strip()[:1].isdigit()
                            and "Total" not in line and not line.strip().startswith("-")))
    finally:
        zfs.destroy_pool(pool, force=True)
    return rows


def print_rows(rows) -> None:
    print(f"\n{'case':34} {'USED pred':>11} {'USED real':>11} {'diff':>7} {'ALLOC pred':>11} {'ALLOC real':>11} "
          f"{'diff':>7} {'data pred':>11}")
    for name, pu, ru, pa, ra, pd in rows:
        print(f"{name:34} {pu:>11,} {ru:>11,} {(pu - ru) / ru:>+7.2%} {pa:>11,} {ra:>11,} {(pa - ra) / ra:>+7.2%} "
              f"{pd:>11,}")


@pytest.mark.parametrize("layout, ashift, compressions", SHAPE_CASES, ids=[f"{c[0]}-a{c[1]}" for c in SHAPE_CASES])
def test_footprint_on_directories_symlinks_large_and_sparse_files(zfs, disks, layout, ashift, compressions):
    """USED and ALLOC growth to 1 % on a tree of many directories, a fat ZAP, symlinks, files of many
    records and sparse files copied by cp -a (docs/footprint.md#metadata)."""
    if not os.path.exists(f"{SHAPE_TREE}/sparse/hole.img"):
        make_shape_tree(SHAPE_TREE)
    rows = measure_tree(zfs, disks, SHAPE_TREE, layout, ashift, compressions)
    print_rows(rows)
    bad = [r for r in rows if abs(r[1] - r[2]) > 0.01 * r[2] or abs(r[3] - r[4]) > 0.01 * r[4]]
    assert not bad, bad


@pytest.fixture(scope="module")
def corpus():
    if not os.path.exists(f"{CORPUS}/large/sparse.img"):
        make_corpus(CORPUS)
    return CORPUS


@pytest.mark.parametrize("layout, ashift, datasets", CASES, ids=[f"{c[0]}-a{c[1]}" for c in CASES])
def test_footprint_predicts_used_and_alloc(zfs, disks, corpus, layout, ashift, datasets):
    lay = parse_layout(layout)
    # ZfsCli.create_pool retries once after udev settles ('currently unavailable' right after a destroy)
    devices = lay.disks + sum(c.group.disks for c in lay.classes)
    zfs.create_pool(POOL, lay, disks[:devices], ashift=ashift, force=True,
                    fs_props={"atime": "off", "mountpoint": f"/mnt/{POOL}"})
    rows, failures = [], []
    try:
        for compression, recordsize in datasets:
            if not OPTIONAL.get(compression, True):
                print(f"\n{layout} {compression}: not compared, no Python binding for it here")
                continue
            fs = f"{POOL}/{compression}-{recordsize}"
            special = ["-o", f"special_small_blocks={SPECIAL_SMALL}"] if lay.classes else []
            # ALLOC before the dataset exists, as test_footprint_ci.py: the prediction counts the
            # dataset's own blocks (objset, meta-dnode, the ZPL's ZAPs), which its creation allocates
            sh("zpool", "sync", POOL)
            before = pool_alloc()
            sh("zfs", "create", "-o", f"compression={compression}", "-o", f"recordsize={recordsize}", *special, fs)
            copy_tree(corpus, f"/mnt/{fs}")
            sh("zpool", "sync", POOL)
            grown = pool_alloc() - before
            used, logical = (int(v) for v in sh("zfs", "get", "-Hp", "-o", "value", "used,logicalused", fs).split())
            p = predict(layout, compression, recordsize, ashift)
            rows.append((f"{layout} a{ashift} {compression} {recordsize}", p["used_bytes"], used, p["data_used_bytes"],
                         p["alloc_bytes"], grown, p["stored_logical_bytes"], logical))
            # the data blocks are exact to the byte on 2.3.9 and 2.4.4, the rest is the metadata estimate;
            # lz4 too with OpenZFS's own lz4 from libzpool (docs/footprint.md#lz4-from-libzpool). Where
            # the guest has no libzpool, footprint prices lz4 with the lz4 package, ~2 % larger
            import zfslab.system.zfs_lz4 as own_lz4
            tolerance = 0.045 if compression == "lz4" and own_lz4.zfs_lz4() is None else 0.01
            # dRAID: its metadata blocks are stored uncompressed (a 16K block cannot shrink below a row),
            # which the estimate now knows; the 2.4.4 measurement recomputed is within 0.4 % (docs/footprint.md)
            if abs(p["used_bytes"] - used) > tolerance * used:
                failures.append(f"{fs}: USED predicted {p['used_bytes']:,} real {used:,}")
            # the pool's ALLOC growth also moves with the MOS and frees a sync leaves pending
            if abs(p["alloc_bytes"] - grown) > max(tolerance, 0.03) * grown:
                failures.append(f"{fs}: ALLOC growth predicted {p['alloc_bytes']:,} real {grown:,}")
    finally:
        zfs.destroy_pool(POOL, force=True)
    print(f"\n{'case':34} {'USED pred':>11} {'USED real':>11} {'diff':>7} {'data pred':>11} "
          f"{'ALLOC pred':>11} {'ALLOC real':>11} {'diff':>7} {'stored lg p':>11} {'logicalused':>11}")
    for name, pu, ru, pd, pa, ra, pl, rl in rows:
        print(f"{name:34} {pu:>11,} {ru:>11,} {(pu - ru) / ru:>+7.2%} {pd:>11,} {pa:>11,} {ra:>11,} "
              f"{(pa - ra) / ra:>+7.2%} {pl:>11,} {rl:>11,}")
    assert not failures, failures
