"""The bonnie++ engine: calomel.org's instrument, run as it ran it, its CSV line parsed.

Two CSV formats exist (bon_csv2html(1); docs/bench.md#bonnie). Field 0 names the format:
"1.96"/"1.97" and "1.98" (which bonnie++ 2.00a still prints). 1.98 inserts two fields
(seeks, seek_proc_count) after chunk_size, shifting every later field by 2. Block rates are
KiB/s; a rate too fast to time prints as "+++++"; latencies carry a unit ("7252us", "1350ms").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from zfslab.errors import ZfslabError
from zfslab.system.runner import CommandFailed, Runner


class BonnieFailed(ZfslabError):
    """bonnie++ failed: {}"""

    exit_code = 6


# 0-based positions in the 1.96/1.97 line; the 1.98 line has them 2 later from `putc` on
_FIELDS_197 = {"put_block": 9, "put_block_cpu": 10, "rewrite": 11, "rewrite_cpu": 12, "get_block": 15,
               "get_block_cpu": 16, "seeks": 17, "seeks_cpu": 18, "put_block_latency": 37,
               "rewrite_latency": 38, "get_block_latency": 40, "seeks_latency": 41}
_SHIFT = {"1.96": 0, "1.97": 0, "1.98": 2}
_LATENCY_UNITS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1000.0}


@dataclass(frozen=True, slots=True)
class BonnieResult:
    """One bonnie++ run. Rates in KiB/s as bonnie++ prints them (None: skipped or too fast)."""

    format_version: str
    bonnie_version: str
    name: str
    concurrency: int
    file_size: str
    put_block_kib_s: float | None
    put_block_cpu_pct: float | None
    rewrite_kib_s: float | None
    rewrite_cpu_pct: float | None
    get_block_kib_s: float | None
    get_block_cpu_pct: float | None
    seeks_per_s: float | None
    put_block_latency_ms: float | None
    rewrite_latency_ms: float | None
    get_block_latency_ms: float | None
    seeks_latency_ms: float | None
    raw_csv: str

    @staticmethod
    def mb_s(kib_s: float | None) -> float:
        return 0.0 if kib_s is None else kib_s * 1024 / 1e6


def _number(text: str) -> float | None:
    text = text.strip()
    if not text or set(text) == {"+"}:
        return None
    try:
        return float(text)
    except ValueError:
        raise BonnieFailed(f"unexpected number {text!r} in its CSV line") from None


def _latency_ms(text: str) -> float | None:
    text = text.strip()
    if not text or set(text) == {"+"}:
        return None
    m = re.fullmatch(r"([0-9.]+)\s*(ns|us|ms|s)?", text)
    if not m:
        raise BonnieFailed(f"unexpected latency {text!r} in its CSV line")
    return float(m.group(1)) * _LATENCY_UNITS[m.group(2) or "us"]


def parse_csv_line(line: str) -> BonnieResult:
    """A bonnie++ CSV result line (format 1.96, 1.97 or 1.98) as typed values."""
    fields = line.strip().split(",")
    version = fields[0]
    if version not in _SHIFT:
        raise BonnieFailed(f"unknown CSV format {version!r} (known: 1.96, 1.97, 1.98)")
    shift = _SHIFT[version]
    need = max(_FIELDS_197.values()) + shift + 1
    if len(fields) < need:
        raise BonnieFailed(f"CSV line of format {version} has {len(fields)} fields, expected at least {need}")

    def at(key: str) -> str:
        return fields[_FIELDS_197[key] + shift]
    return BonnieResult(
        version, fields[1], fields[2], int(fields[3] or 1), fields[5],
        _number(at("put_block")), _number(at("put_block_cpu")), _number(at("rewrite")), _number(at("rewrite_cpu")),
        _number(at("get_block")), _number(at("get_block_cpu")), _number(at("seeks")),
        _latency_ms(at("put_block_latency")), _latency_ms(at("rewrite_latency")),
        _latency_ms(at("get_block_latency")), _latency_ms(at("seeks_latency")), line.strip())


def parse_output(stdout: str) -> BonnieResult:
    """The CSV line from `bonnie++ -q` output (human-readable text goes to stderr)."""
    lines = [x for x in stdout.splitlines() if x.split(",", 1)[0] in _SHIFT]
    if not lines:
        raise BonnieFailed("no CSV result line in its output")
    return parse_csv_line(lines[-1])


@dataclass(frozen=True, slots=True)
class BonnieJob:
    """calomel's command: `bonnie++ -u root -r 1024 -s 16384 -d DIR -f -b -n 1 -c 4`.

    -f skips the per-character tests; -b fsyncs after every write; -r is the RAM bonnie++
    assumes (it insists on a file of twice that size); -s is the file size in MiB."""

    directory: str
    size_mib: int = 16384
    ram_mib: int = 1024
    concurrency: int = 4
    files: int = 1  # -n: thousands of files for the create/stat/delete tests (0 skips them)
    fsync_each_write: bool = True
    user: str = "root"

    def __post_init__(self) -> None:
        if self.size_mib < 2 * self.ram_mib:
            raise ValueError(f"size_mib(={self.size_mib}) must be at least twice ram_mib(={self.ram_mib}), "
                             "as bonnie++ requires")

    def argv(self) -> list[str]:
        a = ["bonnie++", "-q", "-u", self.user, "-r", str(self.ram_mib), "-s", str(self.size_mib),
             "-d", self.directory, "-f", "-n", str(self.files), "-c", str(self.concurrency)]
        return a + (["-b"] if self.fsync_each_write else [])


class Bonnie:
    def __init__(self, runner: Runner) -> None:
        self.runner = runner

    def run(self, job: BonnieJob, *, timeout_s: float = 24 * 3600) -> BonnieResult:
        try:
            done = self.runner.run(job.argv(), timeout_s=timeout_s)
        except CommandFailed as e:
            raise BonnieFailed(e.stderr_tail or f"exit code {e.returncode}") from e
        return parse_output(done.stdout)
