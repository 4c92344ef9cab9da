#!/usr/bin/env python3
"""Time `zfslab merge` on synthetic results databases as the fleet grows: one file per host,
each one run of M measurements with an fio JSON of K KiB (what bench keeps beside the numbers).
Prints one line per size: rows, seconds for a first merge and for merging again (idempotent:
the output read back as one more input), rows per second, output size and peak memory."""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

from tests.fleet_data import RunSpec, write_db  # noqa: E402
from zfslab.store.merge import merge  # noqa: E402


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--hosts", default="10,100,300,1000", help="fleet sizes, comma-separated")
    p.add_argument("--measurements", type=int, default=60, help="measurements per host (a calibration set: ~60)")
    p.add_argument("--fio-kib", type=int, default=4, help="size of each stored fio JSON, KiB")
    args = p.parse_args()
    fio = json.dumps({"fio version": "fio-3.33", "pad": "x" * (args.fio_kib * 1024 - 40)})
    keys = tuple((f"layout{i // 6:02d}", ("seqread", "seqwrite", "randread")[i % 3], i % 2)
                 for i in range(args.measurements))
    print(f"{'hosts':>6} {'rows':>8} {'merge s':>8} {'again s':>8} {'rows/s':>8} {'out MB':>8} {'peak RSS MB':>11}")
    for hosts in (int(h) for h in args.hosts.split(",")):
        folder = tempfile.mkdtemp(prefix="zfslab-merge-bench-")
        try:
            paths = []
            for h in range(hosts):
                path = os.path.join(folder, f"st{h:04d}.sqlite")
                write_db(path, [RunSpec(f"run-{h}", f"st{h:04d}", "2026-11-25T00:00:00+00:00", keys)], fio_json=fio)
                paths.append(path)
            out = os.path.join(folder, "all.sqlite")
            t0 = time.monotonic()
            s = merge(paths, out)
            t1 = time.monotonic()
            again = merge(paths, out)
            t2 = time.monotonic()
            assert s.measurements == again.measurements == hosts * len(keys) and again.runs_added == 0
            rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(f"{hosts:>6} {s.measurements:>8} {t1 - t0:>8.2f} {t2 - t1:>8.2f} {s.measurements / (t1 - t0):>8.0f} "
                  f"{os.path.getsize(out) / 1e6:>8.1f} {rss_mb:>11.0f}", flush=True)
        finally:
            shutil.rmtree(folder)
    return 0


if __name__ == "__main__":
    sys.exit(main())
