"""What a layout's write pipeline costs the host's CPU, measured with the real OpenZFS code.

Builds tests/oracle/zspace.c against Debian's libzpool (userspace OpenZFS), writes MIB MiB of
incompressible 128 KiB records on each layout (file vdevs in /dev/shm, ashift 9 as calomel's
disks), keeps the least CPU time of REPEATS runs (the run least disturbed by the machine), and
fits host microseconds per record = fixed + per child I/O x children + per copy x raw/data
+ per parity column x parity. Then it asks whether that cost, as a host write ceiling relative
to a plain stripe, would explain calomel's wide-raidz writes (issue 7): it prints the median
absolute error of `validate`'s write prediction with and without it.

Run: python3 benchmarks/write_cpu_cost.py [MIB] [REPEATS]   (no root; needs libzfslinux-dev, gcc)
"""

from __future__ import annotations

import csv
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from zfslab.model.capacity import psize_to_asize
from zfslab.model.performance import data_disks
from zfslab.model.layout_grammar import parse_layout
from zfslab.model.layouts import Layout, VdevKind
from zfslab.model.zpool_syntax import zpool_vdev_args
from zfslab.model.validation import parse_dataset, validate

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the harness's build lives with the oracle tests
from tests.oracle import harness  # noqa: E402

RECORD = 128 * 1024
ASHIFT = 9
LAYOUTS = ("disk", "24xdisk", "mirror:2", "12xmirror:2", "raidz1:3", "raidz1:5", "raidz1:12", "raidz1:24",
           "raidz2:4", "raidz2:6", "raidz2:12", "raidz2:24", "raidz3:5", "raidz3:12", "raidz3:24")


def cpu_us_per_record(binary: Path, layout: Layout, mib: int, scratch: Path) -> float:
    files = []
    # room for 3x the data on the data disks, at least 256 MiB: tmpfs holds it all in RAM
    size = max(256 << 20, 3 * (mib << 20) // max(int(data_disks(layout)), 1))
    for i in range(layout.disks):
        f = scratch / f"d{i}"
        f.unlink(missing_ok=True)  # a fresh sparse file: no pages left from the last layout
        with open(f, "wb") as fh:
            fh.truncate(size)
            os.posix_fallocate(fh.fileno(), 0, size)  # tmpfs pages now, not on the timed write path
        files.append(str(f))
    out = subprocess.run([str(binary), "-a", str(ASHIFT), "-w", str(mib), f"zwc{os.getpid()}",
                          *zpool_vdev_args(layout, files)], check=True, capture_output=True, text=True).stdout
    line = next(x for x in out.splitlines() if x.startswith("WRITE "))
    fields = dict(kv.split("=") for kv in line.split()[1:])
    return float(fields["cpu_s"]) / int(fields["records"]) * 1e6


def features(layout: Layout) -> list[float]:
    """[1, child I/Os per record, raw bytes per data byte, parity columns] of a one-group layout."""
    g = layout.groups[0]
    children = 1 if g.kind is VdevKind.DISK else g.width
    copies = g.width if g.kind is VdevKind.MIRROR else 1
    raw = copies * psize_to_asize(g, RECORD, ASHIFT) / RECORD
    return [1.0, float(children), raw, float(g.parity if g.kind is VdevKind.RAIDZ else 0)]


def main() -> None:
    mib = int(sys.argv[1]) if len(sys.argv) > 1 else 512
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    reason = harness.missing()
    if reason:
        sys.exit(f"the libzpool harness cannot be built: {reason} (bash scripts/install-test-deps.sh)")
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory(dir="/dev/shm") as shm:
        binary = Path(tmp) / "zspace"
        error = harness.build(binary)
        if error:
            sys.exit(f"the libzpool harness does not build: {error}")
        costs = {}
        for name in LAYOUTS:
            layout = parse_layout(name)
            costs[name] = min(cpu_us_per_record(binary, layout, mib, Path(shm)) for _ in range(repeats))
    X = np.array([features(parse_layout(n)) for n in LAYOUTS])
    y = np.array([costs[n] for n in LAYOUTS])
    coef, *_ = np.linalg.lstsq(X, y, rcond=None)
    print(f"host CPU us per 128 KiB record, least of {repeats} runs of {mib} MiB, ashift {ASHIFT}:")
    for n, measured, fitted in zip(LAYOUTS, y, X @ coef):
        print(f"  {n:12s} {measured:7.0f}  (fit {fitted:5.0f})")
    print("fit: {:.0f} fixed + {:.1f} per child I/O + {:.1f} per copy of the record + {:.1f} per parity column"
          .format(*coef))

    # The same cost as a host write ceiling relative to a plain disk, on calomel's table
    stripe = float(np.dot(features(parse_layout("disk")), coef))
    with open(ROOT / "tests/data/calomel-calibrated.csv", newline="") as f:
        rows = parse_dataset(list(csv.DictReader(f)))
    base = validate(rows, ashift=ASHIFT)
    ceiling = base["parameters"]["host_write_mb_s"]
    errors_with = []
    for row, out in zip(rows, base["rows"]):
        if row.calibration or "write" not in row.measured:
            continue
        relative = float(np.dot(features(row.layout), coef)) / stripe  # per record: vdev count aside
        with_cost = min(out["predicted"]["write"], ceiling / relative)
        measured = row.measured["write"]
        errors_with.append(abs(with_cost - measured) / measured * 100)
    print(f"calomel write, median absolute error: {base['metrics']['write']['median_ape_pct']:.1f} % as validate "
          f"predicts it, {statistics.median(errors_with):.1f} % with this CPU cost as the host's ceiling")


if __name__ == "__main__":
    main()
