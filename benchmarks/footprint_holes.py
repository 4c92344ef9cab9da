"""CPU and memory of footprint on trees that are mostly holes (docs/footprint.md#sparse-files).

    python3 benchmarks/footprint_holes.py                        # this checkout's src, 3 runs each
    python3 benchmarks/footprint_holes.py --src /tmp/old/src     # another source, e.g. git archive of an older commit

Makes, in a new temporary folder (never through a symlink), tree3: 3 files of 8 TiB, each with
8 runs of 1 MiB of /usr/bin/python3's bytes at 1000k + 37i + 1 GiB (file i, run k); tree1: a
1 TiB file with 3 runs of 40 KiB of seeded random bytes, and a 6-byte file. Then runs each command
in a child and prints user+sys CPU seconds and peak RSS (wait4), and removes the folder."""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GIB, MIB = 1 << 30, 1 << 20
sys.path.insert(0, os.path.join(REPO, "tests"))
from sparse_files import write_sparse  # noqa: E402


def _sparse(path: str, size: int, writes) -> None:
    write_sparse(path, size, writes)


def make_trees(top: str) -> tuple[str, str]:
    with open(os.path.realpath("/usr/bin/python3"), "rb") as f:
        binary = f.read(MIB + 8)
    tree3, tree1 = os.path.join(top, "tree3"), os.path.join(top, "tree1")
    os.mkdir(tree3)
    os.mkdir(tree1)
    for i in range(1, 4):
        _sparse(os.path.join(tree3, f"big{i}"), 8 << 40,
                [((k * 1000 + i * 37 + 1) * GIB, binary[k:k + MIB]) for k in range(8)])
    rng = random.Random(38)
    _sparse(os.path.join(tree1, "big"), 1 << 40, [((k * 9_000_000 + 5) * 40 * 1024, rng.randbytes(40 * 1024))
                                                  for k in range(3)])
    with open(os.path.join(tree1, "small"), "xb") as f:
        f.write(b"small\n")
    return tree3, tree1


def measure(src: str, argv: list[str]) -> tuple[float, float]:
    """(user+sys CPU seconds, peak RSS in MiB) of `python3 -m zfslab argv` with PYTHONPATH=src."""
    env = dict(os.environ, PYTHONPATH=src)
    child = subprocess.Popen([sys.executable, "-m", "zfslab", *argv], env=env, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)}: exit {os.waitstatus_to_exitcode(status)}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--src", default=os.path.join(REPO, "src"), help="the zfslab source to run (default: this checkout)")
    p.add_argument("--runs", type=int, default=3)
    opts = p.parse_args()
    top = tempfile.mkdtemp(prefix="zfslab-holes-")
    try:
        tree3, tree1 = make_trees(top)
        for argv in (["footprint", tree3], ["footprint", tree3, "--sample", "1s"],
                     ["footprint", tree3, "--sample", "1s", "--recordsize", "4K"],
                     ["footprint", tree1, "--sample", "1s", "--recordsize", "4K"],
                     ["plan", "8x12TB", "--data-from", tree3]):
            runs = [measure(opts.src, argv) for _ in range(opts.runs)]
            shown = " ".join(a if not a.startswith(top) else os.path.basename(a) for a in argv)
            print(f"{shown:52} CPU {min(c for c, _ in runs):.2f}-{max(c for c, _ in runs):.2f} s  "
                  f"RSS {min(m for _, m in runs):.0f}-{max(m for _, m in runs):.0f} MiB")
    finally:
        shutil.rmtree(top)


if __name__ == "__main__":
    main()
