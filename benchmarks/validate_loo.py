"""How long `validate --loo` takes by dataset size (issue 26: 1.7 s at 26 rows, 12 s at 260, over
4 min at 1,000, the most validate accepts). The datasets repeat tests/data/calomel-calibrated.csv's
rows with a few % of seeded noise on the rates, so every row is a distinct measurement.

Issue 38, measured on the 2-core machine at a load average of 10-13 (one run each; CPU time is
inflated by the load, compare within a line):
- before (commit c808c78, one refit per row by fit_speed, one BLAS thread): 204 rows 22.5 s;
  1,000 rows not done after 276 s (stopped);
- after (the problem built once, the model vectorised, one BLAS thread): 26 rows 0.4 s,
  204 rows 2.4-2.8 s, 1,000 rows 21-26 s. The identical figures are checked by
  tests/unit/test_validation.py. What is left per refit at 1,000 rows (about 20 ms): half in
  scipy's trust-region steps on a 3,000 x 10 Jacobian, half in the model and the soft-L1 loss.

    python3 benchmarks/validate_loo.py              # 26, 260 and 1000 rows
    python3 benchmarks/validate_loo.py --rows 26 260

Prints each size's CPU seconds for leave_one_out() alone (the fit of validate itself excluded)."""

from __future__ import annotations

import argparse
import csv
import os
import random
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "src"))

from zfslab.commands.validate import single_blas_thread  # noqa: E402

single_blas_thread()  # as `zfslab validate` does before numpy loads
from zfslab.model.validation import leave_one_out, parse_dataset  # noqa: E402


def dataset(rows: int, seed: int = 26) -> list[dict[str, str]]:
    with open(os.path.join(REPO, "tests", "data", "calomel-calibrated.csv"), encoding="utf-8") as f:
        base = list(csv.DictReader(f))
    rng = random.Random(seed)
    out = []
    for i in range(rows):
        r = dict(base[i % len(base)])
        if i >= len(base):
            for k in ("write_MBps", "rewrite_MBps", "read_MBps"):
                if r.get(k):
                    r[k] = f"{float(r[k]) * rng.uniform(0.97, 1.03):.1f}"
        out.append(r)
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, nargs="+", default=[26, 260, 1000])
    args = p.parse_args()
    for n in args.rows:
        rows = parse_dataset(dataset(n))
        start = time.process_time()
        result = leave_one_out(rows, ashift=12)
        cpu = time.process_time() - start
        scores = ", ".join(f"{m} {v['median_ape_pct']:.1f} %" for m, v in result.items() if v["rows"])
        print(f"{n:>5} rows: {cpu:7.2f} s CPU  (median error: {scores})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
