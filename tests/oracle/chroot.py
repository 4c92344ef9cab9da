"""The Debian 13 (trixie) chroot in which the libzpool oracle runs OpenZFS 2.4 and 2.3.

Their libraries need trixie's C library, so scripts/oracle-chroot.sh debootstraps trixie with
gcc, trixie-backports' libzfslinux-dev (2.4) and trixie's libzpool (2.3) unpacked beside it.
The tree is cached outside the repository, as the guest images are (tests/e2e/guest/guest.py),
one directory per key: the recipe plus the two libzfslinux-dev versions Debian serves now, read
from apt lists of trixie and trixie-backports kept in the cache (the host's apt never sees
them). docs/test-guest.md#newer-openzfs-in-a-trixie-chroot.

Run by hand: python3 tests/oracle/chroot.py --build   (root; prints where the tree is)
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
RECIPE = REPO / "scripts" / "oracle-chroot.sh"
CACHE = Path(os.environ.get("ZFSLAB_ORACLE_CACHE", "/var/cache/zfslab-oracle"))
KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
PACKAGE = "libzfslinux-dev"


class ChrootError(RuntimeError):
    pass


def _mirror() -> str:
    try:
        for line in Path("/etc/apt/sources.list.d/debian.sources").read_text().splitlines():
            if line.startswith("URIs:"):
                return line.split()[1]
    except OSError:
        pass
    return "http://deb.debian.org/debian"


def _apt_options() -> list[str]:
    """apt options that read and write only the cache's own trixie lists."""
    apt = CACHE / "apt"
    return ["-o", f"Dir::Etc::SourceList={apt / 'sources.list'}", "-o", "Dir::Etc::SourceParts=/nonexistent",
            "-o", f"Dir::State::Lists={apt / 'lists'}", "-o", f"Dir::Cache={apt / 'cache'}",
            "-o", "Dir::Cache::pkgcache=", "-o", "Dir::Cache::srcpkgcache=", "-o", "APT::Architectures=amd64"]


# contrib for OpenZFS; trixie's main for the kernel the test guest's trixie image installs
# (tests/e2e/guest/guest.py keys its image on these lists too).
SUITES = (("trixie", "main contrib"), ("trixie-backports", "contrib"))


def refresh_lists() -> None:
    """Download trixie's and trixie-backports' package lists into the cache (a few seconds)."""
    apt = CACHE / "apt"
    for d in (apt / "lists" / "partial", apt / "cache" / "archives" / "partial"):
        d.mkdir(parents=True, exist_ok=True)
    (apt / "sources.list").write_text("".join(
        f"deb [signed-by={KEYRING}] {_mirror()} {suite} {components}\n" for suite, components in SUITES))
    with open(apt / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        subprocess.run(["apt-get", *_apt_options(), "-qq", "update"], capture_output=True, text=True, timeout=300)


def madison_versions(out: str) -> dict[str, str]:
    """{'trixie': ..., 'trixie-backports': ...} from `apt-cache madison` lines, 'unknown' if absent."""
    found = {"trixie": "unknown", "trixie-backports": "unknown"}
    for line in out.splitlines():
        fields = [f.strip() for f in line.split("|")]
        source = fields[2].split() if len(fields) == 3 else []
        suite = source[1].split("/")[0] if len(source) > 1 else ""
        if suite in found and found[suite] == "unknown":
            found[suite] = fields[1]
    return found


def suite_versions(package: str) -> dict[str, str]:
    """The versions of a package in the cached trixie and trixie-backports lists."""
    try:
        out = subprocess.run(["apt-cache", *_apt_options(), "madison", package],
                             capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        out = ""
    return madison_versions(out)


def candidate_versions() -> dict[str, str]:
    """The versions of libzfslinux-dev in the cached trixie and trixie-backports lists."""
    return suite_versions(PACKAGE)


def chroot_key() -> str:
    """What the tree depends on: the recipe and the package versions it would install."""
    h = hashlib.sha256(RECIPE.read_bytes())
    for suite, version in sorted(candidate_versions().items()):
        h.update(f"{suite}={version}\n".encode())
    return f"trixie-{h.hexdigest()[:16]}"


def find_chroot() -> Path | None:
    """The built tree for the current key (from the lists as last refreshed), or None; no network."""
    root = CACHE / chroot_key()
    return root if (root / "versions.txt").exists() else None


def ensure_chroot() -> Path:
    """The tree for the current key, built first if missing (root; about 2 min from scratch)."""
    try:
        refresh_lists()
    except (OSError, subprocess.SubprocessError):
        pass  # offline or not root: the lists as last refreshed still name a built tree
    root = find_chroot()
    if root is not None:
        return root
    if os.geteuid() != 0:
        raise ChrootError(f"no oracle chroot in {CACHE}; build it as root: python3 tests/oracle/chroot.py --build")
    out = CACHE / chroot_key()
    build = subprocess.run(["bash", str(RECIPE), str(out)], capture_output=True, text=True)
    if build.returncode != 0 or not (out / "versions.txt").exists():
        raise ChrootError(f"building the oracle chroot failed:\n{build.stdout[-3000:]}\n{build.stderr[-3000:]}")
    return out


def versions(root: Path) -> dict[str, str]:
    """versions.txt of a built tree: trixie-backports, trixie, libc6, gcc, seconds per stage."""
    return dict(line.split("=", 1) for line in (root / "versions.txt").read_text().split() if "=" in line)


def main() -> int:
    if sys.argv[1:] != ["--build"]:
        print("usage: chroot.py --build", file=sys.stderr)
        return 2
    t0 = time.monotonic()
    try:
        root = ensure_chroot()
    except ChrootError as e:
        print(e, file=sys.stderr)
        return 1
    v = versions(root)
    print(f"oracle chroot: {root} (2.4: {v.get('trixie-backports')}, 2.3: {v.get('trixie')}) "
          f"ready in {time.monotonic() - t0:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
