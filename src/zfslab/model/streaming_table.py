"""performance.streaming_mb_s() over many layouts at once, for the fit's inner loop.

A fit evaluates the streaming model at the same few shapes hundreds of times per refit, and
`validate --loo` refits once per row: as numpy arrays over every vdev group of every shape, one
evaluation costs tens of microseconds instead of one Python call per layout
(benchmarks/validate_loo.py). The rules are performance.py's, term for term (docs/speed.md);
tests/unit/test_performance.py holds the two to 1e-12 on every kind of vdev. Kept out of
performance.py so that `plan` does not import numpy for it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from zfslab.model.performance import LayoutShape


class StreamingTable:
    """The shapes of many layouts (each with its parity ceiling) as arrays."""

    def __init__(self, shapes: Sequence[LayoutShape], ceilings_mb_s: Sequence[float]):
        groups = [(i, g, s.recordsize) for i, s in enumerate(shapes) for g in s.groups]
        self.size = len(shapes)
        # each layout's first group (every layout has one): its groups follow, to sum the vdevs' writes
        self._first_group = np.searchsorted([i for i, _, _ in groups], np.arange(len(shapes)))
        self._count = np.array([g.count for _, g, _ in groups], dtype=float)
        self._data_share = np.array([g.data_share for _, g, _ in groups], dtype=float)
        self._asize = np.array([g.asize_bytes for _, g, _ in groups], dtype=float)
        self._write_children = np.array([g.write_children for _, g, _ in groups], dtype=float)
        self._recordsize = np.array([r for _, _, r in groups], dtype=float)
        self._data_disks = np.array([s.data_disks for s in shapes], dtype=float)
        self._read_children = np.array([s.read_children for s in shapes], dtype=float)
        self._mean_parity = np.array([s.mean_parity for s in shapes], dtype=float)
        self._ceiling = np.array(ceilings_mb_s, dtype=float)

    def streaming_mb_s(self, *, disk_write_mb_s, disk_read_mb_s, disk_rewrite_mb_s, host_write_mb_s, host_read_mb_s,
                       reads_in_flight, rewrite_parallel, vdev_pipeline_mb_s, child_io_us,
                       parity_us_per_mb) -> np.ndarray:
        """(sets, shapes, 3) array of write, rewrite and read MB/s, performance.streaming_mb_s() per
        shape, for each of k parameter sets (each argument a float or k floats)."""
        def col(v) -> np.ndarray:
            return np.asarray(v, dtype=float).reshape(-1, 1)

        s_w, s_r, r_1 = col(disk_write_mb_s), col(disk_read_mb_s), col(disk_rewrite_mb_s)
        c_w, c_r, q, rho = col(host_write_mb_s), col(host_read_mb_s), col(reads_in_flight), col(rewrite_parallel)
        v, t_c, t_p = col(vdev_pipeline_mb_s), col(child_io_us), col(parity_us_per_mb)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            pipeline_us = self._asize / v + self._write_children * t_c
            vdev = self._data_share * s_w
            vdev = np.where(pipeline_us > 0, np.minimum(vdev, self._recordsize / pipeline_us), vdev)
            write_disks = np.add.reduceat(self._count * vdev, self._first_group, axis=-1)
            host_s_per_mb = 1.0 / c_w + self._mean_parity * t_p * 1e-6
            host = np.where(host_s_per_mb == 0, np.inf, 1.0 / host_s_per_mb)
            write = np.minimum(np.minimum(write_disks, host), self._ceiling)
            read = _closed_loop(self._read_children * s_r, c_r, q)
            rewrite = r_1 * (1.0 + (self._data_disks - 1.0) * rho)
            rewrite = np.minimum(rewrite, 1.0 / (1.0 / read + 1.0 / write))
        return np.stack([write, rewrite, read], axis=2)


def _closed_loop(disks_mb_s: np.ndarray, host_mb_s: np.ndarray, in_flight: np.ndarray) -> np.ndarray:
    """performance.closed_loop_mb_s(), elementwise."""
    slow, fast = np.minimum(disks_mb_s, host_mb_s), np.maximum(disks_mb_s, host_mb_s)
    u = slow / fast
    log_u = np.log(u)
    loop = slow * np.expm1(in_flight * log_u) / np.expm1((in_flight + 1.0) * log_u)
    loop = np.where(u >= 1.0 - 1e-12, slow * in_flight / (in_flight + 1.0), loop)
    return np.where(np.isinf(fast) | np.isinf(in_flight), slow, loop)
