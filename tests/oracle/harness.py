"""The libzpool harness (tests/oracle/zspace.c): what it needs, how it is built and run, for each
OpenZFS the oracle checks; shared by the oracle tests and benchmarks/write_cpu_cost.py.

A target is one libzpool: the host's (Debian 12, OpenZFS 2.1), or one of the two in the trixie
chroot (tests/oracle/chroot.py): trixie-backports' 2.4 in /usr and trixie's 2.3 unpacked in
/opt/zfs-trixie. A chroot target is compiled and run inside the chroot, in a private mount
namespace where the host's /dev/shm is bound at the same path, so the sparse files and the binary
the tests put there have one name on both sides (docs/test-guest.md#newer-openzfs-in-a-trixie-chroot).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

SOURCE = Path(__file__).parent / "zspace.c"
HEADER = SOURCE.with_name("zoracle.h")  # shared with zexpand.c; copied beside each source that is compiled
HOST = "bookworm"
CHROOT_PREFIX = {"trixie-backports": "/usr", "trixie": "/opt/zfs-trixie/usr"}
TARGETS = (HOST, "trixie-backports", "trixie")  # 2.1, 2.4, 2.3
SHARED_DIR = "/dev/shm"  # bound into the chroot; a tmpfs also takes sparse files above 16 TiB


@dataclass(frozen=True)
class Target:
    """One libzpool the harness builds against."""

    name: str  # where it comes from: bookworm (the host), trixie-backports, trixie
    package_version: str  # Debian's libzfslinux-dev version, e.g. 2.4.4-1~bpo13+1
    root: Path | None  # the chroot, or None for the host
    prefix: str = "/usr"  # inside root

    @property
    def version(self) -> str:
        """The OpenZFS release, e.g. 2.4.4: what capacity.rules_for() takes."""
        m = re.match(r"\d+\.\d+\.\d+", self.package_version)
        return m.group(0) if m else self.package_version

    def path(self, inside: str) -> Path:
        """A path of the target's tree as the host sees it."""
        return Path(inside) if self.root is None else self.root / inside.lstrip("/")


def host_target() -> Target | str:
    """The host's libzpool, or why the harness cannot be built here."""
    reason = missing()
    if reason:
        return reason
    p = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "libzfslinux-dev"], capture_output=True, text=True)
    return Target(HOST, p.stdout.strip() or "unknown", None)


def chroot_target(name: str, root: Path, package_version: str) -> Target:
    return Target(name, package_version, root, CHROOT_PREFIX[name])


def missing() -> str | None:
    """Why the harness cannot be built on the host, or None."""
    if shutil.which("gcc") is None:
        return "gcc is not installed"
    if not os.path.exists("/usr/include/libzfs/sys/spa.h"):
        return "libzfslinux-dev is not installed (Debian contrib)"
    return None


def api_flags(target: Target) -> list[str]:
    """The -D flags zspace.c needs for this library's API, read from its headers."""
    inc = target.path(f"{target.prefix}/include/libzfs/sys")
    spa, dmu = (inc / "spa.h").read_text(errors="replace"), (inc / "dmu.h").read_text(errors="replace")
    flags = ["-D_GNU_SOURCE"]
    if not re.search(r"spa_prop_get\(spa_t \*\w*, nvlist_t \*\*", spa):
        flags.append("-DZFS_23")  # spa_prop_get() fills the caller's nvlist
    if "DMU_TX_WAIT" in dmu:
        flags.append("-DZFS_DMU_TX_WAIT")
    if re.search(r"void\s+dmu_write\([^;]*dmu_flags_t", dmu):
        flags.append("-DZFS_DMU_WRITE_FLAGS")
    metaslab = (inc / "metaslab.h").read_text(errors="replace") if (inc / "metaslab.h").exists() else ""
    if "metaslab_class_get_dalloc" in metaslab:
        flags.append("-DZFS_DALLOC")
    if "spa_special_embedded_log_class" in spa:
        flags.append("-DZFS_SPECIAL_ELOG")
    return flags


def compile_argv(target: Target, source: str, out: str) -> list[str]:
    """gcc's argv, with paths as the compiler sees them (inside the chroot for a chroot target)."""
    inc = f"{target.prefix}/include"
    argv = ["gcc", "-O1", "-w", *api_flags(target), f"-I{inc}/libspl", f"-I{inc}/libzfs", "-o", out, source]
    if target.prefix != "/usr":  # unpacked beside the installed one: link and load these
        lib = f"{target.prefix}/lib/x86_64-linux-gnu"
        argv += [f"-L{lib}", f"-Wl,--disable-new-dtags,-rpath,{lib}"]  # an RPATH also covers libzpool's own needs
    return argv + ["-lzpool", "-lnvpair"]


def wrap(target: Target, argv: list[str]) -> list[str]:
    """argv to run `argv` against the target: as is on the host, else chrooted with /dev/shm bound."""
    if target.root is None:
        return argv
    # A private mount namespace drops the bind mount when the process ends; as a user, a user
    # namespace maps them to root there, which chroot and mount need.
    userns = [] if os.geteuid() == 0 else ["--user", "--map-root-user"]
    script = f'mount --bind {SHARED_DIR} "$0{SHARED_DIR}" && exec chroot "$0" "$@"'
    return ["unshare", "--mount", "--propagation", "private", *userns, "sh", "-c", script, str(target.root), *argv]


def build_target(target: Target, out: Path) -> str | None:
    """Compile the harness for the target to `out` (under /dev/shm for a chroot target); the
    compiler's error tail, or None when it built."""
    source = SOURCE
    if target.root is not None:
        source = out.with_name("zspace.c")
        shutil.copyfile(SOURCE, source)
        shutil.copyfile(HEADER, out.with_name(HEADER.name))
    p = subprocess.run(wrap(target, compile_argv(target, str(source), str(out))), capture_output=True, text=True)
    return None if p.returncode == 0 else p.stderr[-500:]


def build(out: Path) -> str | None:
    """Compile the harness against the host's libzpool to `out`; the compiler's error tail, or None."""
    target = host_target()
    if isinstance(target, str):
        return target
    return build_target(target, out)
