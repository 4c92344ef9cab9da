"""The CPU's raidz parity speed, as the loaded ZFS module measured it.

At load, OpenZFS times every parity implementation the CPU supports (vdev_raidz_math.c:
128 KiB blocks over 8 data + 3 parity columns, about 25 ms each), picks the fastest per
operation, and publishes the table in /proc/spl/kstat/zfs/vdev_raidz_bench. Its figures are
bytes per second *per column* (the data processed divided by the 11 columns), so the data one
core protects per second is the figure times 11. Reading it costs nothing, unlike
`raidz_test -B`, which takes many minutes.
"""

from __future__ import annotations

from dataclasses import dataclass

KSTAT_PATH = "/proc/spl/kstat/zfs/vdev_raidz_bench"
BENCH_COLUMNS = 11  # BENCH_D_COLS (8) + PARITY_PQR (3) in vdev_raidz_math.c, 2.1 to 2.3
GENERATE = ("gen_p", "gen_pq", "gen_pqr")


class RaidzBenchError(ValueError):
    """The kstat text is not the table OpenZFS writes."""


@dataclass(frozen=True, slots=True)
class RaidzBench:
    """Parity generation per implementation, as the module measured it."""

    per_column_bytes_s: dict[str, tuple[int, int, int]]  # implementation -> gen_p, gen_pq, gen_pqr
    fastest: tuple[str, str, str]  # the implementation the module uses for each

    def parity_mb_s(self) -> tuple[float, float, float]:
        """Data MB/s (10^6 bytes) one core protects with raidz1, raidz2, raidz3 parity."""
        rates = tuple(self.per_column_bytes_s[impl][i] * BENCH_COLUMNS / 1e6 for i, impl in enumerate(self.fastest))
        return rates  # type: ignore[return-value]


def parse_raidz_bench(text: str) -> RaidzBench:
    """The kstat's table: a header row naming the operations, a row per implementation, `fastest`."""
    lines = [line.split() for line in text.splitlines() if line.strip()]
    start = next((i for i, cells in enumerate(lines) if cells[0] == "implementation"), None)
    if start is None:
        raise RaidzBenchError("no 'implementation' header row")
    header = lines[start]
    try:
        columns = [header.index(name) for name in GENERATE]
    except ValueError:
        raise RaidzBenchError(f"the header lacks {', '.join(GENERATE)}: {' '.join(header)}") from None
    rates: dict[str, tuple[int, int, int]] = {}
    fastest: tuple[str, ...] | None = None
    for cells in lines[start + 1:]:
        if len(cells) < len(header):
            raise RaidzBenchError(f"short row: {' '.join(cells)}")
        if cells[0] == "fastest":
            fastest = tuple(cells[c] for c in columns)
            continue
        try:
            rates[cells[0]] = tuple(int(cells[c]) for c in columns)  # type: ignore[assignment]
        except ValueError:
            raise RaidzBenchError(f"not a number in row: {' '.join(cells)}") from None
    if fastest is None:
        raise RaidzBenchError("no 'fastest' row")
    unknown = [f for f in fastest if f not in rates]
    if unknown:
        raise RaidzBenchError(f"'fastest' names {', '.join(unknown)}, which has no row")
    if any(rates[impl][i] <= 0 for i, impl in enumerate(fastest)):
        raise RaidzBenchError("the fastest implementation has a zero rate")
    return RaidzBench(rates, fastest)  # type: ignore[arg-type]


def read_raidz_bench(path: str = KSTAT_PATH) -> RaidzBench | None:
    """The loaded module's table, or None when no ZFS module is loaded."""
    try:
        with open(path) as f:
            return parse_raidz_bench(f.read())
    except FileNotFoundError:
        return None
