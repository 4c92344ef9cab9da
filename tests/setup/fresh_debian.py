"""Fresh minimal Debian 12 (bookworm) and 13 (trixie) systems, as chroots, in which the README's
first command runs as a new user would run it (tests/setup/test_fresh_debian.py).

A base tree per suite is `debootstrap --variant=minbase` (no python3, no ca-certificates, no
sudo but the one added below), cached in /var/cache/zfslab-setup under the suite and the Date of
the suite's InRelease on the mirror, so that a point release makes a new tree and nothing else
does. Each run works on a copy of the base (cp --reflink where the filesystem has it), never on
the base itself, and mounts nothing: the install's apt, pip and Python need neither /proc nor
/dev beyond the device nodes debootstrap makes. docs/install.md#how-it-is-tested.

By hand (root):
  python3 tests/setup/fresh_debian.py --build              both base trees (about a minute each)
  python3 tests/setup/fresh_debian.py --run trixie user    the README's first line in a fresh copy
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CACHE = Path(os.environ.get("ZFSLAB_SETUP_CACHE", "/var/cache/zfslab-setup"))
SUITES = ("bookworm", "trixie")
RECIPE = "1"  # part of the cache key: bump it when build_base changes what a tree holds
USER = "ada"  # the normal user each user run creates
# sudo stands for the one a Debian installer gives its first user (who then types a password;
# NOPASSWD in the run's sudoers entry stands in for that)
INCLUDE = ("sudo",)
PATH_ROOT = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class SetupError(RuntimeError):
    pass


def readme_first_line() -> str:
    """The README's first set-up command, as written (its comment cut)."""
    readme = (REPO / "README.md").read_text()
    block = readme.split("## Set-up: two commands", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    return block.splitlines()[0].split("#", 1)[0].strip()


def mirror() -> str:
    """The host's Debian mirror, as scripts/oracle-chroot.sh takes it."""
    try:
        for line in Path("/etc/apt/sources.list.d/debian.sources").read_text().splitlines():
            if line.startswith("URIs:"):
                return line.split()[1]
    except OSError:
        pass
    return "http://deb.debian.org/debian"


def release_date(suite: str) -> str | None:
    """The Date of the suite's InRelease on the mirror as 20250517T083217Z, or None offline."""
    try:
        with urllib.request.urlopen(f"{mirror()}/dists/{suite}/InRelease", timeout=30) as r:
            head = r.read(4096).decode("utf-8", "replace")
    except OSError:
        return None
    m = re.search(r"^Date: \w+, (\d+) (\w+) (\d+) (\d+):(\d+):(\d+)", head, re.M)
    if not m:
        return None
    months = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()
    day, month, year, hh, mm, ss = m.groups()
    return f"{year}{months.index(month) + 1:02d}{int(day):02d}T{hh}{mm}{ss}Z"


def _built(suite: str) -> list[Path]:
    """Finished base trees of a suite, newest release first."""
    trees = [p for p in CACHE.glob(f"{suite}-r{RECIPE}-*") if (p / "built.txt").exists()]
    return sorted(trees, key=lambda p: p.name, reverse=True)


def find_base(suite: str) -> Path | None:
    """The newest finished base tree of a suite, without the network."""
    trees = _built(suite)
    return trees[0] if trees else None


def build_base(suite: str) -> Path:
    """The base tree for the suite's current release, debootstrapped first if missing (root)."""
    date = release_date(suite)
    if date is None:  # offline: the tree last built still stands for a fresh system
        found = find_base(suite)
        if found is None:
            raise SetupError(f"cannot read {mirror()}/dists/{suite}/InRelease and no {suite} tree is cached")
        return found
    out = CACHE / f"{suite}-r{RECIPE}-{date}"
    if (out / "built.txt").exists():
        return out
    if os.geteuid() != 0 or shutil.which("debootstrap") is None:
        raise SetupError(f"no {suite} tree in {CACHE}: as root with debootstrap, "
                         "python3 tests/setup/fresh_debian.py --build")
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / f"{suite}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one build per suite; a second waits and finds it done
        if (out / "built.txt").exists():
            return out
        work = Path(tempfile.mkdtemp(prefix=f"{suite}.build.", dir=CACHE))
        try:
            t0 = time.monotonic()
            p = subprocess.run(["debootstrap", "--variant=minbase", f"--include={','.join(INCLUDE)}", suite,
                                str(work / "root"), mirror()], capture_output=True, text=True, timeout=1800)
            if p.returncode != 0:
                raise SetupError(f"debootstrap {suite} failed:\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
            (work / "root" / "built.txt").write_text(
                f"suite={suite}\nrelease={date}\ndebootstrap_s={time.monotonic() - t0:.0f}\n")
            os.rename(work / "root", out)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    for old in _built(suite)[1:]:  # older releases of the suite: only this cache's own trees
        shutil.rmtree(old, ignore_errors=True)
    return out


@dataclass(frozen=True)
class Run:
    suite: str
    who: str  # "root" or the user's name
    command: str
    exit_code: int
    output: str  # stdout and stderr as the terminal would show them, interleaved
    seconds: float


def _repo_files() -> list[str]:
    """The files a clone of this checkout holds (tracked, and new ones not ignored), as in the tree now."""
    out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                         capture_output=True, text=True, check=True).stdout
    return [f for f in out.split("\0") if f and (REPO / f).is_file()]


def _copy_repo(dest: Path) -> None:
    for f in _repo_files():
        target = dest / f
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / f, target)


def _chroot(root: Path, *argv: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(["chroot", str(root), *argv], capture_output=True, text=True, timeout=timeout,
                          env={"PATH": PATH_ROOT, "HOME": "/root"})


def host_extra_cas() -> list[str]:
    """PEM certificates the host trusts beyond Debian's ca-certificates: the CA of a TLS-inspecting
    proxy, without which pip in the chroot cannot reach PyPI through it. None on a plain machine."""
    def pems(text: str) -> list[str]:
        return re.findall(r"-----BEGIN CERTIFICATE-----.+?-----END CERTIFICATE-----", text, re.S)
    try:
        bundle = pems(Path("/etc/ssl/certs/ca-certificates.crt").read_text())
    except OSError:
        return []
    debian = {"".join(c.split()) for f in Path("/usr/share/ca-certificates").rglob("*.crt")
              for c in pems(f.read_text(errors="replace"))}
    return [c for c in bundle if "".join(c.split()) not in debian]


def prepare(root: Path, who: str) -> str:
    """Set up a copied tree as the machine a user would have: the host's resolv.conf, the user
    (with sudo) when who is not root, and a copy of the checkout in their home. Returns that home."""
    shutil.copy("/etc/resolv.conf", root / "etc" / "resolv.conf")
    # where a site's own CA goes on Debian: ca-certificates, once the install brings it, adds them
    local_cas = root / "usr" / "local" / "share" / "ca-certificates"
    for i, pem in enumerate(host_extra_cas()):
        local_cas.mkdir(parents=True, exist_ok=True)
        (local_cas / f"host-extra-{i}.crt").write_text(pem + "\n")
    if who == "root":
        home = "/root"
    else:
        home = f"/home/{who}"
        p = _chroot(root, "useradd", "--create-home", "--shell", "/bin/bash", who)
        if p.returncode != 0:
            raise SetupError(f"useradd {who}: {p.stderr}")
        (root / "etc" / "sudoers.d" / who).write_text(f"{who} ALL=(ALL) NOPASSWD: ALL\n")
        os.chmod(root / "etc" / "sudoers.d" / who, 0o440)
    _copy_repo(root / home.lstrip("/") / "zfslab")
    if who != "root":
        p = _chroot(root, "chown", "-R", f"{who}:{who}", f"{home}/zfslab")
        if p.returncode != 0:
            raise SetupError(f"chown: {p.stderr}")
    return home


def run_line(root: Path, suite: str, who: str, line: str, timeout: float = 1800) -> Run:
    """The line in a login shell of `who` (su -l: the PATH and ~/.profile a fresh login has), from
    the checkout in their home, with nothing of the host's environment."""
    t0 = time.monotonic()
    p = subprocess.run(["chroot", str(root), "su", "-l", who, "-c", f"cd zfslab && {line}"],
                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=timeout, env={"PATH": PATH_ROOT, "TERM": "dumb"})
    return Run(suite, who, line, p.returncode, p.stdout, time.monotonic() - t0)


def _downloads(suite: str, who: str) -> list[tuple[Path, str]]:
    """(cache kept on the host, the place in the tree it stands for): apt's .deb files and pip's cache."""
    dl = CACHE / "downloads" / suite
    home = "root" if who == "root" else f"home/{who}"
    return [(dl / "apt", "var/cache/apt/archives"), (dl / "pip", f"{home}/.cache/pip")]


def _seed_downloads(root: Path, suite: str, who: str) -> None:
    """What earlier runs downloaded, put where apt and pip look first, as a local mirror would serve it:
    the system stays fresh (nothing installed), only the network is spared."""
    for kept, place in _downloads(suite, who):
        if kept.is_dir():
            shutil.copytree(kept, root / place, dirs_exist_ok=True)
    if who != "root" and (root / f"home/{who}/.cache").exists():
        _chroot(root, "chown", "-R", f"{who}:{who}", f"/home/{who}/.cache")


def _keep_downloads(root: Path, suite: str, who: str) -> None:
    with open(CACHE / f"{suite}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for kept, place in _downloads(suite, who):
            if (root / place).is_dir():
                shutil.copytree(root / place, kept, dirs_exist_ok=True,
                                ignore=shutil.ignore_patterns("lock", "partial", "*.lock"))


@contextlib.contextmanager
def fresh_tree(suite: str, who: str) -> Iterator[Path]:
    """A fresh copy of the suite's base tree set up for `who` (prepare), removed afterwards; what apt
    and pip downloaded in it is kept for the next copy."""
    base = find_base(suite)
    if base is None:
        raise SetupError(f"no {suite} tree in {CACHE}: python3 tests/setup/fresh_debian.py --build (root)")
    work = Path(tempfile.mkdtemp(prefix=f"run-{suite}-{who}.", dir=CACHE))
    try:
        root = work / "root"
        subprocess.run(["cp", "-a", "--reflink=auto", str(base), str(root)], check=True, timeout=600)
        prepare(root, who)
        _seed_downloads(root, suite, who)
        yield root
        _keep_downloads(root, suite, who)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def fresh_run(suite: str, who: str, line: str | None = None) -> Run:
    """The README's first line (or `line`) in a fresh copy of the suite's base tree, as root or a new user."""
    with fresh_tree(suite, who) as root:
        return run_line(root, suite, who, line or readme_first_line())


def main(argv: list[str]) -> int:
    if argv == ["--build"]:
        for suite in SUITES:
            t0 = time.monotonic()
            try:
                tree = build_base(suite)
            except (SetupError, OSError, subprocess.SubprocessError) as e:
                print(f"fresh_debian: {e}", file=sys.stderr)
                return 1
            facts = dict(line.split("=", 1) for line in (tree / "built.txt").read_text().split())
            print(f"fresh {suite} tree: {tree} (debootstrap {facts.get('debootstrap_s')} s when built; "
                  f"ready in {time.monotonic() - t0:.0f} s)", file=sys.stderr)
        return 0
    if len(argv) == 3 and argv[0] == "--run" and argv[1] in SUITES:
        who = argv[2]
        r = fresh_run(argv[1], who)
        print(r.output)
        print(f"{r.suite} as {r.who}: `{r.command}` exit {r.exit_code} in {r.seconds:.0f} s", file=sys.stderr)
        return r.exit_code
    print("usage: fresh_debian.py --build | --run bookworm|trixie root|USER", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
