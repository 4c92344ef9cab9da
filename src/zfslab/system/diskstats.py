"""Per-disk activity from /proc/diskstats, sampled while a test runs, so a report can tell
whether the disks were busy (and whether reads came from the disks at all)."""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field

SECTOR = 512  # /proc/diskstats counts 512-byte sectors whatever the device's sector size


def read_diskstats(path: str = "/proc/diskstats") -> dict[str, tuple[int, int, int]]:
    """name -> (sectors read, sectors written, milliseconds spent doing I/O)."""
    out = {}
    with open(path) as f:
        for line in f:
            p = line.split()
            if len(p) >= 13:
                out[p[2]] = (int(p[5]), int(p[9]), int(p[12]))
    return out


def kernel_names(devices: list[str]) -> list[str]:
    """sda for /dev/disk/by-id/...; files (sandbox vdevs) have none."""
    names = []
    for d in devices:
        real = os.path.realpath(d)
        if real.startswith("/dev/"):
            names.append(os.path.basename(real))
    return names


@dataclass
class Sampler:
    """Samples the member disks every `interval_s` in a thread between start() and stop()."""

    disks: list[str]
    interval_s: float = 1.0
    source: str = "/proc/diskstats"
    series: dict[str, list[list[float]]] = field(default_factory=dict)

    def start(self) -> "Sampler":
        self._stop = threading.Event()
        self._first = self._last = (time.monotonic(), read_diskstats(self.source))
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._sample()

    def _sample(self) -> None:
        t, stats = time.monotonic(), read_diskstats(self.source)
        t0, before = self._last
        dt = max(t - t0, 1e-6)
        for d in self.disks:
            if d in stats and d in before:
                r, w, ms = (a - b for a, b in zip(stats[d], before[d]))
                self.series.setdefault(d, []).append([round(t - self._first[0], 2), round(min(ms / (dt * 1000), 1.0), 3),
                                                      round(r * SECTOR / dt / 1e6, 2), round(w * SECTOR / dt / 1e6, 2)])
        self._last = (t, stats)

    def stop(self) -> dict:
        """Totals over the whole test: MB read and written by the disks, the busiest disk's utilisation."""
        self._stop.set()
        self._thread.join()
        self._sample()
        t0, first = self._first
        t1, last = self._last
        dt = max(t1 - t0, 1e-6)
        read = written = 0
        util = 0.0
        for d in self.disks:
            if d in first and d in last:
                r, w, ms = (a - b for a, b in zip(last[d], first[d]))
                read, written = read + r, written + w
                util = max(util, min(ms / (dt * 1000), 1.0))
        return {"disk_read_mb": read * SECTOR / 1e6, "disk_write_mb": written * SECTOR / 1e6,
                "disk_util_max": util, "series": self.series}
