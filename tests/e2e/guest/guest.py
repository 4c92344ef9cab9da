"""The test guest: a qemu (TCG) VM running Debian's kernel with the real OpenZFS module.

- `ensure_image(series)` builds the image once (build-image.sh) and caches it outside the
  repository, keyed by the OpenZFS and kernel package versions and the recipe itself. Series
  2.1 has a Debian 12 image; 2.3 and 2.4 share one Debian 13 image that carries both builds;
- `boot(...)` starts it with the image as a throw-away snapshot, N virtual disks (sparse files
  on virtio-scsi with distinct serial numbers, so the guest has /dev/sdX and
  /dev/disk/by-id), the repository shared read-only at /mnt/repo, runs a payload as root with
  the series' module loaded and returns its output and exit code.

Run by hand: python3 tests/e2e/guest/guest.py 2.4 'zpool version; lsblk'
(ZFSLAB_GUEST_REPO=/path/to/checkout mounts another checkout at /mnt/repo.)
"""

from __future__ import annotations

import hashlib
import re
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
CACHE = Path(os.environ.get("ZFSLAB_GUEST_CACHE", "/var/cache/zfslab-guest"))
# Which Debian image serves each OpenZFS series (docs/test-guest.md#building-the-image).
DIST = {"2.1": "bookworm", "2.3": "trixie", "2.4": "trixie"}
SERIES = tuple(DIST)
GIB = 1 << 30


def _trixie_lists():
    """tests/oracle/chroot.py, whose private apt lists of trixie and trixie-backports key the
    trixie image too (the host's apt knows only bookworm)."""
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    from tests.oracle import chroot
    return chroot


class GuestError(RuntimeError):
    pass


class GuestBootStalled(GuestError):
    """The boot never reached the payload in the time allowed (a guest stuck under a loaded host)."""


class GuestHung(GuestBootStalled):
    """The payload stopped making progress while the kernel reported tasks blocked: a guest whose
    I/O stalled for good under TCG (a 2.4 drill boot of a CI-like run, 2026-11-29: txg_sync and fio
    blocked, nothing written for half an hour, qemu idle). Booted once more, as a stalled boot is."""


class GuestKernelCrash(GuestError):
    """The guest's kernel oopsed (the kernel line says oops=panic, so the guest stops at once
    instead of hanging its payload until the timeout)."""

    def __init__(self, message: str, console: str):
        super().__init__(message)
        self.console = console


# What the kernel prints when it dies: an oops, a BUG, or an OpenZFS VERIFY/PANIC.
CRASH_MARKS = ("general protection fault", "BUG:", "Oops:", "Kernel panic", "PANIC at ")
# The kernel's hung-task report; with no new output from the payload or the console for HUNG_S,
# the guest is taken as hung. A slow test under a loaded host writes to run.log well within it
# (a dot per test), and a passing stall rarely lasts beyond the report's 120 s.
HUNG_MARK = "blocked for more than"
HUNG_S = 600.0
# The report's own lines, which the kernel repeats every 120 s of the guest's clock (faster than the
# host's) while the task stays blocked: no progress, so they do not count as output (a CI-like run's
# raidz_expand hang kept its console changing for 18 min, and the watchdog never fired).
# A guest that works burns qemu's CPU; a hung one idles (ci9's sat at 6 % of a core, ci12's used
# none between looks): a look that finds qemu busier than this since the last counts as progress,
# so a slow reflow whose kernel reports blocked tasks and whose test writes nothing for minutes
# is not taken for a hang.
BUSY_FRACTION = 0.12
HUNG_REPORT = re.compile(r"blocked for more than|^\s*Tainted: |hung_task_timeout_secs|^\s*(Call Trace:|</?TASK>|\? |"
                         r"[A-Za-z_][A-Za-z_0-9.]*\+0x)")
WATCH_S = 5.0   # how often wait() looks at the share for a stalled boot or a hung payload


def _bookworm_version(package: str) -> str:
    """Candidate version of a bookworm package (not backports) in the host's apt, or 'unknown'."""
    try:
        out = subprocess.run(["apt-cache", "madison", package], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    versions = [line.split("|")[1].strip() for line in out.splitlines() if "|" in line]
    versions = [v for v in versions if "bpo" not in v] or versions
    return versions[0] if versions else "unknown"


def package_versions(dist: str) -> dict[str, str]:
    """The versions the image of `dist` would install now: OpenZFS and the kernel."""
    if dist == "bookworm":
        return {pkg: _bookworm_version(pkg) for pkg in ("zfs-dkms", "linux-image-amd64")}
    lists = _trixie_lists()
    zfs = lists.suite_versions("zfs-dkms")
    return {"zfs-dkms/trixie": zfs["trixie"], "zfs-dkms/trixie-backports": zfs["trixie-backports"],
            "linux-image-amd64/trixie": lists.suite_versions("linux-image-amd64")["trixie"]}


def image_key(dist: str) -> str:
    """What the image depends on: the recipe files and the package versions it would install."""
    h = hashlib.sha256()
    for name in ("build-image.sh", "ci-init"):
        h.update((HERE / name).read_bytes())
    h.update(dist.encode())
    for pkg, version in sorted(package_versions(dist).items()):
        h.update(f"{pkg}={version}\n".encode())
    return f"{dist}-{h.hexdigest()[:16]}"


def find_image(series: str) -> Path | None:
    """The built image that serves the series under the current key, or None; no network."""
    if series not in SERIES:
        raise GuestError(f"series {series!r}: use one of {SERIES}")
    out = CACHE / image_key(DIST[series])
    return out if (out / "versions.txt").exists() else None


# One build at a time: in CI the first boot thread builds the image while the host's own tests run
# (scripts/test.sh no longer waits for it), and every other boot thread waits here for that build.
_BUILD_LOCK = threading.Lock()
# Images built by this process, and in how many seconds: tests/conftest.py prints them at the end
BUILT_SECONDS: dict[str, float] = {}
# What the boot threads have to say (a boot once more, a fleet guest's ssh tries). pytest captures
# fd 2 around each test, so a line a background thread printed landed in whatever test ran then: in
# CI a unit test that asserts an empty stderr failed on a fleet guest's ssh retry. They are kept
# here, and tests/conftest.py prints them at the end; by hand (ECHO) they are printed at once.
NOTES: list[str] = []
ECHO = False


def note(message: str) -> None:
    NOTES.append(f"{time.strftime('%H:%M:%S')} {message}")  # list.append is atomic: threads may call it
    if ECHO:
        print(message, file=sys.stderr, flush=True)


def ensure_image(series: str) -> Path:
    """The cached image that serves the series, built first if missing (needs root)."""
    if series not in SERIES:
        raise GuestError(f"series {series!r}: use one of {SERIES}")
    dist = DIST[series]
    with _BUILD_LOCK:
        if dist == "trixie":
            try:
                _trixie_lists().refresh_lists()
            except (OSError, subprocess.SubprocessError):
                pass  # offline or not root: the lists as last refreshed still name a built image
        out = CACHE / image_key(dist)
        if not (out / "versions.txt").exists():
            CACHE.mkdir(parents=True, exist_ok=True)
            t0 = time.monotonic()
            build = subprocess.run(["bash", str(HERE / "build-image.sh"), dist, str(out)], capture_output=True, text=True)
            if build.returncode != 0 or not (out / "versions.txt").exists():
                raise GuestError(f"building the {dist} guest failed:\n{build.stdout[-3000:]}\n{build.stderr[-3000:]}")
            BUILT_SECONDS[out.name] = time.monotonic() - t0
    if f"zfs-{series}" not in versions(out):
        raise GuestError(f"the image {out} carries no OpenZFS {series}: {versions(out)}")
    return out


def versions(image: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in (image / "versions.txt").read_text().split() if "=" in line)


@dataclass(frozen=True)
class Disk:
    serial: str
    size_bytes: int
    # qemu's block throttling (-drive throttling.bps-total / iops-total): a disk slowed on purpose,
    # for the fleet's outlier test. None: as fast as the emulation goes
    throttle_bytes_per_s: int | None = None
    throttle_iops: int | None = None


@dataclass(frozen=True)
class GuestResult:
    returncode: int
    log: str
    console: str
    share: Path
    seconds: float


def repo_to_mount() -> Path:
    """The checkout the guest sees at /mnt/repo: this one, or $ZFSLAB_GUEST_REPO (another worktree)."""
    return Path(os.environ.get("ZFSLAB_GUEST_REPO") or REPO).resolve()


def _disk_argv(disks, disk_dir: Path) -> list[str]:
    """virtio-scsi disks backed by sparse files in disk_dir; a file already there is kept as it is
    (its contents too: a host that comes back boots the same disks again)."""
    if not disks:
        return []
    argv = ["-device", "virtio-scsi-pci,id=scsi0"]
    for i, d in enumerate(disks):
        path = disk_dir / f"{d.serial}.img"
        if not path.exists() or path.stat().st_size != d.size_bytes:
            with open(path, "wb") as f:
                f.truncate(d.size_bytes)
        throttle = "".join(f",throttling.{name}={value}" for name, value in
                           (("bps-total", d.throttle_bytes_per_s), ("iops-total", d.throttle_iops)) if value)
        argv += ["-drive", f"file={path},if=none,id=d{i},format=raw,cache=unsafe{throttle}",
                 "-device", f"scsi-hd,drive=d{i},bus=scsi0.0,serial={d.serial}"]
    return argv


def _nic_argv(ssh_port: int | None) -> list[str]:
    """No network at all, or (for the fleet tests) qemu's user networking with only one way in: a
    forward from 127.0.0.1:ssh_port on the host to the guest's sshd. restrict=on: the guest reaches
    nothing outside its emulated network (no host, no internet); the forward still comes in."""
    if ssh_port is None:
        return ["-nic", "none"]
    return ["-nic", f"user,model=virtio-net-pci,restrict=on,hostfwd=tcp:127.0.0.1:{ssh_port}-:22"]


class RunningGuest:
    """A guest booted in the background (`start`): `wait()` for its payload's result, `kill()` to
    stop it dead, as a host that loses power."""

    def __init__(self, process: subprocess.Popen, share: Path, disk_dir: Path, keep_disks: bool, timeout_s: float):
        self.process, self.share, self.disk_dir = process, share, disk_dir
        self.keep_disks, self.timeout_s = keep_disks, timeout_s
        self.t0 = time.monotonic()
        self._output: tuple = ()   # what the payload and the kernel had written at the last look
        self._output_at = self.t0  # when that last changed
        self._cpu = (self.t0, self._cpu_s())  # (when, qemu's CPU seconds) at the last look

    def alive(self) -> bool:
        return self.process.poll() is None

    def console(self) -> str:
        path = self.share / "console.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def kill(self) -> None:
        """SIGKILL to qemu: the guest's host "dies" (no shutdown, no sync); its disks stay."""
        if self.alive():
            self.process.kill()
        self.process.wait()
        self._done()

    def _done(self) -> None:
        if not self.keep_disks:
            shutil.rmtree(self.disk_dir, ignore_errors=True)

    def payload_started(self) -> bool:
        """ci-init redirects the payload's output to run.log as it starts it: the boot is over."""
        return (self.share / "run.log").exists()

    def _cpu_s(self) -> float:
        """qemu's own CPU time (user and system), from /proc; 0 once it is gone."""
        try:
            with open(f"/proc/{self.process.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, IndexError, ValueError):
            return 0.0

    def hung(self, quiet_s: float) -> bool:
        """The payload started, the console holds the kernel's hung-task report, and for quiet_s
        neither the payload's output nor the console has changed, but for the report's own lines,
        and qemu has been idle at every look (BUSY_FRACTION)."""
        if not self.payload_started():
            return False
        console = self.console()
        log = self.share / "run.log"
        kernel = [line for line in console.splitlines() if not HUNG_REPORT.search(line.split("] ", 1)[-1])]
        output = (log.stat().st_size if log.exists() else 0, len(kernel), kernel[-1:])
        now = time.monotonic()
        (then, cpu_then), cpu = self._cpu, self._cpu_s()
        self._cpu = (now, cpu)
        busy = now > then and (cpu - cpu_then) / (now - then) >= BUSY_FRACTION
        if output != self._output or busy:
            self._output, self._output_at = output, now
        return HUNG_MARK in console and now - self._output_at > quiet_s

    def wait(self, timeout_s: float | None = None, *, payload_within_s: float | None = None,
             hung_s: float = HUNG_S) -> GuestResult:
        """The payload's exit code and output once the guest powers off; killed after the timeout
        (from the boot, or timeout_s from now), which then counts as no exit code. payload_within_s:
        a boot that has not started the payload that long after it began is killed and raises
        GuestBootStalled, so that a guest stuck in its boot costs minutes, not the whole timeout;
        one whose kernel reported blocked tasks and that then wrote nothing for hung_s is killed
        and raises GuestHung, for the same reason."""
        left = self.timeout_s - (time.monotonic() - self.t0) if timeout_s is None else timeout_s
        deadline = time.monotonic() + max(left, 0)
        stalled = hung = False
        try:
            while True:
                try:  # the poll reads a file the guest writes; the wait itself is the process's
                    self.process.wait(timeout=max(min(deadline - time.monotonic(), WATCH_S), 0))
                    break
                except subprocess.TimeoutExpired:
                    over = time.monotonic() >= deadline
                    stalled = not over and payload_within_s is not None and not self.payload_started() \
                        and time.monotonic() - self.t0 > payload_within_s
                    hung = not over and not stalled and self.hung(hung_s)
                    if over or stalled or hung:
                        self.process.kill()
                        self.process.wait()
                        break
        finally:
            self._done()
        if hung:
            raise GuestHung(f"the guest hung in its payload: the kernel reported blocked tasks and nothing was "
                            f"written for {hung_s:.0f} s; console tail:\n{self.console()[-3000:]}")
        if stalled:
            raise GuestBootStalled(f"the guest had not started its payload {payload_within_s:.0f} s after "
                                   f"its boot began; console tail:\n{self.console()[-3000:]}")
        seconds = time.monotonic() - self.t0
        console = self.console()
        rc_file = self.share / "run.rc"
        if not rc_file.exists() and any(mark in console for mark in CRASH_MARKS):
            start = min(console.find(m) for m in CRASH_MARKS if m in console)
            raise GuestKernelCrash(f"the guest's kernel crashed:\n{console[start:start + 3000]}", console)
        if not rc_file.exists():
            qemu = (self.share / "qemu.log").read_text(errors="replace")[-1000:]
            raise GuestError(f"the guest gave no exit code (no boot, a panic or a timeout); qemu said: {qemu}\n"
                             f"console tail:\n{console[-3000:]}")
        rc = int(rc_file.read_text().strip().removeprefix("rc="))
        log = (self.share / "run.log").read_text(errors="replace") if (self.share / "run.log").exists() else ""
        return GuestResult(rc, log, console, self.share, seconds)


def start(image: Path, payload: str, *, series: str, disks: list[Disk] = (), share: Path | None = None,
          timeout_s: int = 1800, memory_mib: int = 4096, disk_dir: Path | None = None, keep_disks: bool = False,
          cpus: int | None = None, ssh_port: int | None = None, nice: int = 0,
          own_root: bool = False) -> RunningGuest:
    """Boot the guest in the background with the series' OpenZFS loaded and run `payload` (a shell
    script) as root. keep_disks: disk_dir outlives the guest, and files already in it are the disks
    (the same host booted again); ssh_port: a forward from 127.0.0.1:ssh_port to its port 22;
    own_root: the root filesystem is disk_dir/rootfs.img, a sparse copy of the image's made at the
    first boot and written in place, so what the guest wrote survives its death as on a real host
    (its results database); otherwise a throw-away snapshot of the image."""
    share = share or Path(tempfile.mkdtemp(prefix="zfslab-guest-share-"))
    share.mkdir(parents=True, exist_ok=True)
    for stale in ("run.rc", "run.log", "console.log", "qemu.log"):
        (share / stale).unlink(missing_ok=True)
    (share / "run.sh").write_text("#!/bin/sh\n" + payload)
    (share / "run.sh").chmod(0o755)
    disk_dir = disk_dir or Path(tempfile.mkdtemp(prefix="zfslab-guest-disks-"))
    disk_dir.mkdir(parents=True, exist_ok=True)
    root = f"file={image / 'rootfs.img'},format=raw,if=virtio,cache=unsafe,snapshot=on"
    if own_root:
        if not (disk_dir / "rootfs.img").exists():
            subprocess.run(["cp", "--sparse=always", str(image / "rootfs.img"), str(disk_dir / "rootfs.img.part")],
                           check=True)
            (disk_dir / "rootfs.img.part").rename(disk_dir / "rootfs.img")
        # writeback: the guest's flushes reach the file, so a kill loses no more than a power cut
        root = f"file={disk_dir / 'rootfs.img'},format=raw,if=virtio,cache=writeback"
    argv = [
        # thread=single: one host thread runs every vCPU. With a thread per vCPU (the default), the
        # kernel's int3 text patching of a static key raced the other vCPU and oopsed, at boot and
        # 539 s in (docs/test-guest.md#kernel-crashes); the host's two cores are shared by the
        # guests and the host's tests, so the guests lose little. One vCPU by default: on one host
        # thread a second only adds IPIs and cross-CPU text patching (a NULL call in the open path
        # oopsed CI's 2.3 guest with two), and was no faster (147 s of CPU against 158 s, a
        # boot with plan, create, write, scrub and destroy, two runs each, 2026-11-28)
        "qemu-system-x86_64", "-machine", "q35", "-accel", "tcg,thread=single", "-cpu", "max",
        "-smp", str(cpus or 1),
        "-m", str(memory_mib), "-nographic", "-no-reboot", "-monitor", "none", "-display", "none",
        "-kernel", str(image / "vmlinuz"), "-initrd", str(image / "initrd.img"),
        # tsc=reliable: under TCG the clocksource watchdog finds the TSC skewed and marks it unstable;
        # that flips sched_clock's static key, and the kernel's int3 text patching then oopsed the other
        # vCPU in sched_clock_cpu (CI, 2026-11-26, docs/test-guest.md#kernel-crashes)
        # clocksource=hpet: the guest keeps time by the emulated HPET, which qemu drives from the host's
        # clock, not by the TSC at a rate the kernel calibrated at boot. On a loaded host that
        # calibration can be wrong by far: a 2.3 boot's clock ran 19 times too fast (its console read
        # 1,898 s after 99 s: the initramfs gave up waiting for /dev/vda, and every timeout fires early)
        # (docs/test-guest.md#kernel-crashes)
        # rcupdate.rcu_cpu_stall_suppress=1, nowatchdog: a guest the host starves is no fault of the
        # guest's, and a loaded local 2.4 boot hung inside an RCU stall report's dump of another
        # vCPU's stack, never reaching its payload; a real hang is caught by the payload's deadline
        "-append", f"console=ttyS0 root=/dev/vda rw init=/sbin/ci-init oops=panic panic=-1 quiet tsc=reliable "
                   f"clocksource=hpet rcupdate.rcu_cpu_stall_suppress=1 nowatchdog "
                   f"zfslab.zfs={series}",
        "-drive", root,
        "-virtfs", f"local,path={share},mount_tag=host0,security_model=passthrough,id=host0",
        "-virtfs", f"local,path={repo_to_mount()},mount_tag=repo,security_model=none,readonly=on,id=repo",
        "-serial", f"file:{share / 'console.log'}",
        *_nic_argv(ssh_port),
        *_disk_argv(disks, disk_dir),
    ]
    if nice:
        argv = ["nice", "-n", str(nice), *argv]
    with open(share / "qemu.log", "wb") as log:   # a file, not a pipe nobody reads while it runs
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
    return RunningGuest(process, share, disk_dir, keep_disks, timeout_s)


def boot(image: Path, payload: str, *, series: str, disks: list[Disk] = (), share: Path | None = None,
         timeout_s: int = 1800, memory_mib: int = 4096, disk_dir: Path | None = None,
         payload_within_s: float | None = None) -> GuestResult:
    """Boot the guest with the series' OpenZFS loaded, run `payload` (a shell script) as root,
    return its exit code and output (no network: -nic none)."""
    return start(image, payload, series=series, disks=disks, share=share, timeout_s=timeout_s,
                 memory_mib=memory_mib, disk_dir=disk_dir).wait(payload_within_s=payload_within_s)


def main() -> int:
    global ECHO
    ECHO = True
    if len(sys.argv) >= 2 and sys.argv[1] == "--build":
        for series in sys.argv[2:]:
            t0 = time.monotonic()
            image = ensure_image(series)
            print(f"guest {series}: {image} (OpenZFS {versions(image)[f'zfs-{series}']}) ready in {time.monotonic() - t0:.0f} s",
                  file=sys.stderr)
        return 0
    args = sys.argv[1:]
    cpus = None
    if len(args) == 4 and args[0] == "--cpus":     # more vCPUs: e.g. more allocators per pool
        cpus, args = int(args[1]), args[2:]
    if len(args) != 2:
        print("usage: guest.py [--cpus N] SERIES 'SHELL PAYLOAD' | guest.py --build SERIES...", file=sys.stderr)
        return 2
    image = ensure_image(args[0])
    r = start(image, args[1], series=args[0], disks=[Disk(f"ZFSLAB{i:04d}", 2 * GIB) for i in range(8)],
              cpus=cpus).wait()
    print(r.log)
    print(f"rc={r.returncode} in {r.seconds:.0f} s; files the payload left under /mnt/host: {r.share}", file=sys.stderr)
    return r.returncode


if __name__ == "__main__":
    sys.exit(main())
