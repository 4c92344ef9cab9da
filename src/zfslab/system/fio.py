"""The fio driver: jobs from typed settings, `--output-format=json` parsed into typed results."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from zfslab.errors import ZfslabError
from zfslab.system.runner import CommandFailed, Runner

RW_MODES = ("read", "write", "randread", "randwrite", "rw", "randrw", "trim", "randtrim")


class FioFailed(ZfslabError):
    """fio job {!r} failed: {}"""

    exit_code = 6


@dataclass(frozen=True, slots=True)
class FioJob:
    """One fio job; None leaves fio's default. Sizes are fio strings ('4k', '1m', '1g')."""

    name: str
    rw: str
    bs: str = "128k"
    size: str = "256m"
    directory: str | None = None
    filename: str | None = None
    numjobs: int = 1
    iodepth: int = 1
    ioengine: str = "psync"
    runtime_s: int | None = None
    ramp_time_s: int | None = None
    time_based: bool = False
    direct: bool | None = None
    fsync: int | None = None  # fsync after this many writes (1 = every write: a sync workload)
    end_fsync: bool = False
    verify: str | None = None  # e.g. 'crc32c'
    do_verify: bool | None = None
    readonly: bool = False
    group_reporting: bool = True
    extra: tuple[tuple[str, str], ...] = field(default=())

    def __post_init__(self) -> None:
        if self.rw not in RW_MODES:
            raise ValueError(f"rw(={self.rw!r}) must be one of {RW_MODES}")
        if self.numjobs < 1 or self.iodepth < 1:
            raise ValueError(f"numjobs(={self.numjobs}) and iodepth(={self.iodepth}) must be >= 1")
        if (self.directory is None) == (self.filename is None):
            raise ValueError("give exactly one of directory and filename")

    def args(self) -> list[str]:
        # --thread: jobs are threads of the one fio process, so they end with it (forked job
        # processes outlive a killed fio and keep the pool busy)
        a = [f"--name={self.name}", f"--rw={self.rw}", f"--bs={self.bs}", f"--size={self.size}",
             f"--numjobs={self.numjobs}", f"--iodepth={self.iodepth}", f"--ioengine={self.ioengine}", "--thread"]
        a.append(f"--directory={self.directory}" if self.directory else f"--filename={self.filename}")
        if self.runtime_s is not None:
            a.append(f"--runtime={self.runtime_s}")
        if self.ramp_time_s is not None:
            a.append(f"--ramp_time={self.ramp_time_s}")
        if self.time_based:
            a.append("--time_based")
        if self.direct is not None:
            a.append(f"--direct={int(self.direct)}")
        if self.fsync is not None:
            a.append(f"--fsync={self.fsync}")
        if self.end_fsync:
            a.append("--end_fsync=1")
        if self.verify:
            # fio otherwise leaves local-<job>-<n>-verify.state in the caller's working directory
            a += [f"--verify={self.verify}", "--verify_state_save=0"]
        if self.do_verify is not None:
            a.append(f"--do_verify={int(self.do_verify)}")
        if self.readonly:
            a.append("--readonly")
        if self.group_reporting:
            a.append("--group_reporting")
        a += [f"--{k}={v}" for k, v in self.extra]
        return a


@dataclass(frozen=True, slots=True)
class IoStats:
    """One direction (read or write) of a job."""

    io_bytes: int
    bw_bytes_s: float
    iops: float
    runtime_ms: int
    clat_mean_ns: float
    clat_p50_ns: float | None
    clat_p99_ns: float | None
    clat_p999_ns: float | None

    @property
    def mb_s(self) -> float:
        return self.bw_bytes_s / 1e6


@dataclass(frozen=True, slots=True)
class FioJobResult:
    name: str
    error: int
    read: IoStats
    write: IoStats
    sync_mean_ns: float | None
    sync_p99_ns: float | None
    sync_count: int


@dataclass(frozen=True, slots=True)
class FioResult:
    version: str
    jobs: tuple[FioJobResult, ...]
    raw_json: str


def _pct(clat: dict, key: str) -> float | None:
    value = (clat.get("percentile") or {}).get(key)
    return float(value) if value is not None else None


def _io(d: dict) -> IoStats:
    clat = d.get("clat_ns") or {}
    return IoStats(int(d.get("io_bytes", 0)), float(d.get("bw_bytes", 0)), float(d.get("iops", 0.0)),
                   int(d.get("runtime", 0)), float(clat.get("mean", 0.0)),
                   _pct(clat, "50.000000"), _pct(clat, "99.000000"), _pct(clat, "99.900000"))


def parse_fio_json(text: str) -> FioResult:
    """fio's JSON; text fio prints before it (warnings) is skipped."""
    start = text.find("{")
    if start < 0:
        raise FioFailed("?", f"no JSON in fio's output: {text.strip()[:300]!r}")
    try:
        data = json.loads(text[start:])
    except json.JSONDecodeError as e:
        raise FioFailed("?", f"fio's JSON does not parse ({e})") from None
    jobs = []
    for j in data.get("jobs", []):
        sync = j.get("sync") or {}
        lat = sync.get("lat_ns") or {}
        jobs.append(FioJobResult(
            name=j.get("jobname", "?"), error=int(j.get("error", 0)), read=_io(j.get("read", {})),
            write=_io(j.get("write", {})), sync_mean_ns=float(lat["mean"]) if lat.get("N") else None,
            sync_p99_ns=_pct(lat, "99.000000"), sync_count=int(sync.get("total_ios", 0)),
        ))
    return FioResult(data.get("fio version", "?"), tuple(jobs), text[start:])


def fio_argv(job: FioJob) -> list[str]:
    """The argv Fio.run runs for `job` (a plan shows the same list)."""
    return ["fio", "--output-format=json", *job.args()]


class Fio:
    def __init__(self, runner: Runner | None = None) -> None:
        self.runner = runner or Runner()

    def argv(self, job: FioJob) -> list[str]:
        return fio_argv(job)

    def run(self, job: FioJob, *, timeout_s: float = 3600) -> FioResult:
        return self._run(self.argv(job), job.name, timeout_s=timeout_s)

    def run_file(self, path: str, directory: str, *, timeout_s: float = 3600) -> FioResult:
        """The user's own job file, run from the pool's mountpoint."""
        return self._run(["fio", "--output-format=json", path], path, timeout_s=timeout_s, cwd=directory)

    def _run(self, argv: list[str], name: str, *, timeout_s: float, cwd: str | None = None) -> FioResult:
        try:
            done = self.runner.run(argv, timeout_s=timeout_s, cwd=cwd)
        except CommandFailed as e:
            raise FioFailed(name, e.stderr_tail) from None
        result = parse_fio_json(done.stdout)
        for j in result.jobs:
            if j.error:
                raise FioFailed(j.name, f"error {j.error} ({done.stderr.strip()[-300:] or 'see fio output'})")
        return result
