"""`zfslab drill`: measure the integrity corner on a real pool.

Scenarios, each on data whose checksums fio keeps (written with verify=crc32c):
- degraded: take 1..p disks of one vdev offline (and one in each of two vdevs), read every
  byte back with verification, time the degraded read;
- resilver: replace an offline disk with a fresh one (or a hot spare / dRAID distributed spare),
  time it, bytes and MB/s; on a mirror, a sequential rebuild (`replace -s`) too when asked
  (a race in OpenZFS's rebuild thread, fixed by openzfs/zfs#18276 in 2026, can crash the kernel
  of older releases: zfslab's CI saw it on Debian's 2.3.2, a general protection fault in
  zio_add_child_first under vdev_rebuild_range, so it is not run unasked);
- corrupt: overwrite regions of up to p members behind ZFS's back, scrub, count CKSUM errors
  and repaired bytes, verify the data; then corrupt p+1 members and list the files ZFS
  declares permanently damaged.
This module runs the scenarios and records what happened; report/verdict.py words the result,
store/results.py keeps it, system/health.py judges an existing pool.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from zfslab.model.layouts import Layout, VdevKind
from zfslab.system.diskstats import SECTOR, kernel_names, read_diskstats
from zfslab.system.fio import Fio, FioFailed, FioJob
from zfslab.system.runner import CommandFailed
from zfslab.system.zfs import ZfsDriver
from zfslab.system.zfs_output import PoolStatus

POOL = "zfslab-drill"
MARK = "zfslab:drill"
FILL_JOB = "fill"


@dataclass
class ScenarioResult:
    scenario: str
    outcome: str  # survived | lost | repaired | damaged | skipped
    seconds: float
    detail: dict = field(default_factory=dict)


def _mb_s(nbytes: int, seconds: float) -> float:
    return nbytes / 1e6 / seconds if seconds > 0 else 0.0


@dataclass
class Drill:
    zfs: ZfsDriver
    fio: Fio
    layout: Layout
    devices: list[str]
    spare: str | None = None  # a fresh disk for replacements
    fill: float = 0.5
    ashift: int = 12
    log: Callable[[str], None] = lambda text: None
    corrupt_mb: int = 4  # sets the window: a quarter of it is overwritten every 8 MiB
    sequential_rebuild: bool = False  # also time `replace -s` on a mirror (see the module docstring)
    on_created: Callable[[str], None] = lambda guid: None  # told the pool's GUID the moment it exists
    fill_bytes: int = 0
    results: list[ScenarioResult] = field(default_factory=list)

    # --- set-up --------------------------------------------------------------------------
    def create(self) -> None:
        self.zfs.create_pool(POOL, self.layout, self.devices, ashift=self.ashift,
                             fs_props={"compression": "off", "primarycache": "metadata", "atime": "off", MARK: "1"})
        self.on_created(self.zfs.pool_guid(POOL))
        self.zfs.pool_set(POOL, "failmode", "continue")  # a lost pool answers with errors instead of hanging
        usable = self.zfs.dataset(POOL).usable_bytes
        self.fill_bytes = max(int(usable * self.fill) // (1 << 20) * (1 << 20), 16 << 20)
        self.mnt = self.zfs.get(POOL, "mountpoint")["mountpoint"].value
        t0 = time.monotonic()
        self.fio.run(self._job("write"), timeout_s=7200)
        self.log(f"filled {self.fill_bytes / 1e6:.0f} MB in {time.monotonic() - t0:.0f} s")

    def _job(self, rw: str) -> FioJob:
        return FioJob(FILL_JOB, rw, bs="1m", size=str(self.fill_bytes), directory=self.mnt, verify="crc32c",
                      do_verify=False if rw == "write" else None, end_fsync=rw == "write")

    def verify(self) -> tuple[bool, float, str]:
        """Read every byte back against fio's checksums: (all good, MB/s, error text)."""
        t0 = time.monotonic()
        try:
            r = self.fio.run(self._job("read"), timeout_s=7200)
            return True, r.jobs[0].read.mb_s or _mb_s(self.fill_bytes, time.monotonic() - t0), ""
        except FioFailed as e:
            return False, 0.0, str(e)

    def _degraded_write(self) -> float:
        """MB/s of a short write while degraded (a separate file: the checksummed data stays as is)."""
        job = FioJob("degraded-write", "write", bs="1m", size=str(min(self.fill_bytes, 32 << 20)),
                     directory=self.mnt, end_fsync=True)
        return self.fio.run(job, timeout_s=3600).jobs[0].write.mb_s

    def _first_vdev_leaves(self) -> list[str]:
        """Names (as zpool status shows them) of the online disks of the first top-level vdev; a
        dRAID distributed spare or a disk already taken out is not one of them."""
        status = self.zfs.status(POOL)
        top = status.top_level[0]
        leaves = top.leaves if top.children else [top]
        return [v.name for v in leaves if v.state == "ONLINE" and self._device_for(v.name) is not None]

    def _device_for(self, leaf_name: str) -> str | None:
        """The device path of a leaf: one of the pool's disks or the spare disk resilvered in."""
        for d in self.devices + ([self.spare] if self.spare else []):
            if os.path.basename(os.path.realpath(d)) == leaf_name or os.path.basename(d) == leaf_name or d == leaf_name:
                return d
        return None

    # --- scenarios -----------------------------------------------------------------------
    def degraded(self) -> ScenarioResult:
        p = self.layout.groups[0].parity
        if p == 0:
            return self._add(ScenarioResult("degraded", "skipped", 0, {"why": "no redundancy: any failure loses the pool"}))
        leaves = self._first_vdev_leaves()
        rows = []
        t0 = time.monotonic()
        for k in range(1, p + 1):
            for leaf in leaves[:k]:
                self.zfs.offline(POOL, leaf)
            state = self.zfs.status(POOL).state
            ok, mb_s, err = self.verify()
            rows.append({"failed": k, "pool_state": state, "verified": ok, "read_mb_s": mb_s, "error": err,
                         "write_mb_s": self._degraded_write()})
            for leaf in leaves[:k]:
                self.zfs.online(POOL, leaf)
            self.zfs.wait(POOL, "resilver", timeout_s=7200)
            if not ok:
                break
        # p+1 disks of one vdev: ZFS refuses to take the last redundancy away; record its answer
        beyond = None
        if all(r["verified"] for r in rows) and len(leaves) > p:
            for leaf in leaves[:p]:
                self.zfs.offline(POOL, leaf)
            try:
                self.zfs.offline(POOL, leaves[p])
                beyond = {"failed": p + 1, "zfs_refused": None, "pool_state": self.zfs.status(POOL).state}
                self.zfs.online(POOL, leaves[p])
            except CommandFailed as e:
                beyond = {"failed": p + 1, "zfs_refused": e.stderr_tail, "pool_state": self.zfs.status(POOL).state}
            for leaf in leaves[:p]:
                self.zfs.online(POOL, leaf)
            self.zfs.wait(POOL, "resilver", timeout_s=7200)
        across = None
        if self.layout.top_level_vdevs >= 2:
            status = self.zfs.status(POOL)
            picks = [(v.leaves[0].name if v.children else v.name) for v in status.top_level[:2]]
            for leaf in picks:
                self.zfs.offline(POOL, leaf)
            ok, mb_s, err = self.verify()
            across = {"failed": picks, "verified": ok, "read_mb_s": mb_s}
            for leaf in picks:
                self.zfs.online(POOL, leaf)
            self.zfs.wait(POOL, "resilver", timeout_s=7200)
        survived = all(r["verified"] for r in rows) and (across is None or across["verified"])
        return self._add(ScenarioResult("degraded", "survived" if survived else "lost", time.monotonic() - t0,
                                        {"steps": rows, "across_vdevs": across, "beyond_parity": beyond, "parity": p}))

    def resilver(self) -> ScenarioResult:
        if self.layout.groups[0].parity == 0:
            return self._add(ScenarioResult("resilver", "skipped", 0, {"why": "no redundancy to resilver from"}))
        g = self.layout.groups[0]
        leaves = self._first_vdev_leaves()
        victim = leaves[0]
        self.zfs.offline(POOL, victim)
        detail: dict = {}
        if g.kind is VdevKind.DRAID and g.draid_spares:
            target, how = f"draid{g.parity}-0-0", "dRAID distributed spare (sequential rebuild)"
        elif self.layout.hot_spares:
            target, how = self.devices[-1], "hot spare"
        elif self.spare:
            target, how = self.spare, "fresh disk"
        else:
            self.zfs.online(POOL, victim)
            self.zfs.wait(POOL, "resilver", timeout_s=7200)
            return self._add(ScenarioResult("resilver", "skipped", 0, {"why": "no spare disk given (--spare-disk)"}))
        t0 = time.monotonic()
        self.zfs.replace(POOL, victim, target, wait=True, timeout_s=14400)
        seconds = time.monotonic() - t0
        scan = self.zfs.status(POOL).scan
        done_bytes = scan.resilvered_bytes
        ok, mb_s, err = self.verify()
        detail.update({"replaced": victim, "with": target, "how": how, "seconds": seconds,
                       "resilvered_bytes": done_bytes, "mb_s": _mb_s(done_bytes, seconds), "verified": ok})
        if g.kind is VdevKind.MIRROR and how == "fresh disk":
            detail["sequential"] = (self._sequential_rebuild(target, self._device_for(victim) or victim)
                                    if self.sequential_rebuild else
                                    {"skipped": "not asked for (--sequential-rebuild); it can crash OpenZFS "
                                                "releases without the fix of openzfs/zfs#18276"})
        return self._add(ScenarioResult("resilver", "survived" if ok else "lost", seconds, detail))

    def _sequential_rebuild(self, source: str, back: str) -> dict:
        """`replace -s` from `source` back onto `back` (the disk just replaced out), timed. ZFS
        starts a scrub right after it, whose line may hide the rebuild's in zpool status, so the
        bytes written to the disk (/proc/diskstats) are recorded too."""
        names = kernel_names([back])
        before = read_diskstats()
        t0 = time.monotonic()
        self.zfs.replace(POOL, source, back, sequential=True, wait=True, timeout_s=14400)
        seconds = time.monotonic() - t0
        after = read_diskstats()
        written = ((after[names[0]][1] - before[names[0]][1]) * SECTOR
                   if names and names[0] in before and names[0] in after else 0)
        scan = self.zfs.status(POOL).scan
        return {"seconds": seconds, "written_bytes": written,
                "resilvered_bytes": scan.resilvered_bytes if scan.kind == "resilver" else 0,
                "mb_s": _mb_s(written, seconds)}

    def _data_region(self, device: str) -> tuple[str, int, int]:
        """Where ZFS keeps data on this device: (path, first byte, end): past the front labels and
        boot area, before the back labels; inside partition 1 on a whole disk."""
        real = os.path.realpath(device)
        path = device
        if real.startswith("/dev/"):
            part = real + ("p1" if real[-1].isdigit() else "1")
            path = part if os.path.exists(part) else real
        with open(path, "rb") as f:
            size = f.seek(0, os.SEEK_END)
        return path, 4 << 20, size - (1 << 20)

    def _corrupt(self, leaves: list[str]) -> int:
        """Overwrite members behind ZFS's back: a window of random bytes every 8 MiB across the whole
        data region (wherever the allocator put the data), at the same offsets on every member, so
        with more members than the parity the blocks there lose too many columns to be rebuilt."""
        written = 0
        window = max(min(self.corrupt_mb << 20, 4 << 20) // 4, 64 << 10)
        noise = os.urandom(window)
        for leaf in leaves:
            path, start, end = self._data_region(self._device_for(leaf))
            with open(path, "r+b", buffering=0) as f:
                for offset in range(start, end - window, 8 << 20):
                    f.seek(offset)
                    written += f.write(noise)
                os.fsync(f.fileno())
        return written

    def corrupt(self) -> list[ScenarioResult]:
        p = self.layout.groups[0].parity
        leaves = self._first_vdev_leaves()
        out = []
        if p > 0:
            self.zfs.clear(POOL)
            t0 = time.monotonic()
            written = self._corrupt(leaves[:p])
            self.zfs.scrub(POOL, wait=True, timeout_s=14400)
            status = self.zfs.status(POOL)
            ok, _, err = self.verify()
            out.append(self._add(ScenarioResult(
                "corrupt", "repaired" if ok and status.no_known_errors else "damaged", time.monotonic() - t0,
                {"members": p, "bytes_overwritten": written, "cksum": _cksum(status, leaves[:p]),
                 "repaired_bytes": status.scan.repaired_bytes, "errors": status.errors, "verified": ok,
                 "damaged_files": list(status.damaged_files), "fio_error": err})))
        if len(leaves) > p:
            self.zfs.clear(POOL)
            t0 = time.monotonic()
            written = self._corrupt(leaves[:p + 1])
            self.zfs.scrub(POOL, wait=True, timeout_s=14400)
            status = self.zfs.status(POOL)
            ok, _, err = self.verify()
            status = self.zfs.status(POOL)  # the verify's reads add what they found
            out.append(self._add(ScenarioResult(
                "corrupt-beyond-parity", "damaged" if status.damaged_files or not ok else "repaired",
                time.monotonic() - t0,
                {"members": p + 1, "bytes_overwritten": written, "cksum": _cksum(status, leaves[:p + 1]),
                 "repaired_bytes": status.scan.repaired_bytes, "errors": status.errors, "verified": ok,
                 "damaged_files": list(status.damaged_files), "pool_state": status.state, "fio_error": err})))
        return out

    def _add(self, r: ScenarioResult) -> ScenarioResult:
        self.results.append(r)
        self.log(f"{r.scenario}: {r.outcome} in {r.seconds:.0f} s")
        return r


def _cksum(status: PoolStatus, leaves: list[str]) -> dict[str, int]:
    out = {}
    for leaf in leaves:
        v = status.vdev(leaf)
        out[leaf] = v.checksum_errors if v else 0
    return out
