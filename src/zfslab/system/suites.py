"""Benchmark suites: the fio tests `bench` runs on each layout (docs/bench.md#suites)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from zfslab.errors import ParamError
from zfslab.system.fio import FioJob


@dataclass(frozen=True, slots=True)
class Test:
    """One test of a suite: a fio job without its directory (the pool's mountpoint fills it in)."""

    name: str
    rw: str
    bs: str
    numjobs: int = 1
    iodepth: int = 1
    ioengine: str = "posixaio"
    fsync: int | None = None
    end_fsync: bool = False
    time_based: bool = True
    overwrite: bool = False

    @property
    def reads(self) -> bool:
        return "read" in self.rw

    def job(self, directory: str, *, size: str, runtime_s: int, ramp_s: int) -> FioJob:
        # one set of files per job count: a read test reads what the write test wrote, no new layout
        extra = (("filename_format", "bench.$jobnum.$filenum"),) + ((("overwrite", "1"),) if self.overwrite else ())
        return FioJob(self.name, self.rw, bs=self.bs, size=size, directory=directory, numjobs=self.numjobs,
                      iodepth=self.iodepth, ioengine=self.ioengine, fsync=self.fsync, end_fsync=self.end_fsync,
                      runtime_s=runtime_s if self.time_based else None, ramp_time_s=ramp_s if self.time_based else None,
                      time_based=self.time_based, extra=extra)


def _ars() -> list[Test]:
    """Ars Technica's chart families: 4K and 1M x random read / write / sync write x (1 job QD1, 8 jobs QD8)."""
    tests = []
    for bs in ("4k", "1m"):
        for jobs, depth in ((1, 1), (8, 8)):
            tag = f"{bs}-{'t1q1' if jobs == 1 else 't8q8'}"
            tests += [
                Test(f"randread-{tag}", "randread", bs, jobs, depth),
                Test(f"randwrite-{tag}", "randwrite", bs, jobs, depth, end_fsync=True),
                Test(f"syncwrite-{tag}", "randwrite", bs, jobs, depth, fsync=1),
            ]
    return tests


SUITES: dict[str, list[Test]] = {
    "ars": _ars(),
    # calomel's bonnie++ columns: a large file written, rewritten in place, read back
    "seq": [Test("seqwrite", "write", "1m", end_fsync=True, time_based=False),
            Test("rewrite", "write", "1m", end_fsync=True, time_based=False, overwrite=True),
            Test("seqread", "read", "1m", time_based=False)],
    # a 2-minute smoke test per layout
    "quick": [Test("seqwrite", "write", "1m", end_fsync=True, time_based=False),
              Test("seqread", "read", "1m", time_based=False),
              Test("randread-4k-t1q1", "randread", "4k"),
              Test("syncwrite-4k-t1q1", "randwrite", "4k", fsync=1)],
}

# suite bonnie runs bonnie++ itself, as calomel did; one run measures these three columns
BONNIE_TESTS = ("bonnie-write", "bonnie-rewrite", "bonnie-read")

DEFAULTS = {"ars": ("4g", 60, 10), "seq": ("16g", 0, 0), "quick": ("1g", 10, 2),
            "bonnie": ("16g", 0, 0)}  # size per job (bonnie: the file), runtime, ramp


def suite_tests(name: str) -> list[Test]:
    if name in SUITES:
        return SUITES[name]
    if name == "bonnie":
        return []
    raise ParamError("suite", name, "use ars, seq, quick, bonnie or a FILE.fio job file")


def with_overrides(tests: list[Test], **changes) -> list[Test]:
    return [replace(t, **changes) for t in tests]
