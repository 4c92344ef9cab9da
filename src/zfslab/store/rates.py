"""What a stored measurement gives the speed model: the metric a streaming or 4K test measures,
and its rate (validate, plan --db, report). The store's reading of its own rows, by test name,
so that the store never reaches into system/suites.py, which runs the tests."""

from __future__ import annotations

from zfslab.store.results import MeasurementRecord

# the streaming tests and the speed model's metric each one measures (validate, plan --db, report)
STREAMING_METRIC = {"seqwrite": "write", "rewrite": "rewrite", "seqread": "read",
                    "bonnie-write": "write", "bonnie-rewrite": "rewrite", "bonnie-read": "read"}


def streaming_rate(row: MeasurementRecord) -> tuple[str, float | None] | None:
    """(metric, MB/s) a stored measurement (store.results.MeasurementRecord) gives of a streaming
    test, None for any other test: a read test's rate is its read_mb_s, a write or rewrite's its write_mb_s."""
    metric = STREAMING_METRIC.get(row.test)
    if metric is None:
        return None
    return metric, row.read_mb_s if metric == "read" else row.write_mb_s


# the 4K tests of the ars suite and the random-path metric each one measures (plan --db's IOPS fit)
IOPS_METRIC = {"randread-4k-t1q1": "rand_read_iops_qd1", "randread-4k-t8q8": "rand_read_iops_qd8",
               "randwrite-4k-t1q1": "rand_write_iops_qd1", "randwrite-4k-t8q8": "rand_write_iops_qd8",
               "syncwrite-4k-t1q1": "sync_write_iops_qd1", "syncwrite-4k-t8q8": "sync_write_iops_qd8"}


def iops_rate(row: MeasurementRecord) -> tuple[str, float | None] | None:
    """(metric, IOPS) a stored measurement (store.results.MeasurementRecord) gives of a 4K ars test,
    None for any other test: a read test's rate is its read_iops, a write or sync write's its write_iops."""
    metric = IOPS_METRIC.get(row.test)
    if metric is None:
        return None
    return metric, row.read_iops if metric.startswith("rand_read") else row.write_iops
