"""Boots the test guest (real OpenZFS kernel module, OpenZFS 2.4 and 2.3) and runs tests/e2e/inside in it.

Needs root and qemu (scripts/install-test-deps.sh installs them); skipped otherwise, unless
ZFSLAB_TEST_REQUIRE_E2E=1, when a skip fails. One boot per version serves its whole suite; the
versions boot at the same time, as soon as collection ends, and these tests run last: a TCG guest
keeps about one host core busy, and the host's own tests run meanwhile.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.guest import guest

pytestmark = pytest.mark.e2e
REPO = Path(__file__).resolve().parents[2]

DISKS = [guest.Disk(f"ZFSLAB{i:04d}", 2 * guest.GIB) for i in range(8)]
# A guard against a hung guest, not a performance target. An hour killed the 2.4 boot of a CI-like
# run on 2026-11-27 while it was still running its tests, 35 done, and likely stop 39's in CI too
# (a boot stuck before its payload is caught by PAYLOAD_WITHIN_S instead); the whole run must end
# within CI's 90 minutes anyway.
BOOT_TIMEOUT_S = 4800
# From qemu's start to the payload's: about 1.5 min on an idle host, 4-9 min at a load of 10-12
# (2026-11-27). A boot stuck longer (a 2.4 boot at load 11 had not started its payload after 23
# min, its console ending in an RCU stall report) is killed here and booted once more.
PAYLOAD_WITHIN_S = 900
BY_ID = ",".join(f"/dev/disk/by-id/scsi-0QEMU_QEMU_HARDDISK_{d.serial}" for d in DISKS)


def _need_guest():
    missing = [t for t in ("qemu-system-x86_64", "debootstrap") if shutil.which(t) is None]
    reason = f"missing {', '.join(missing)}" if missing else "not root" if os.geteuid() != 0 else None
    if reason:
        if os.environ.get("ZFSLAB_TEST_REQUIRE_E2E") == "1":
            pytest.fail(f"ZFSLAB_TEST_REQUIRE_E2E=1 but the guest cannot run: {reason}")
        pytest.skip(f"the e2e guest needs root and qemu: {reason}")


def run_inside(series: str, tests: str, tmp_path) -> tuple[guest.GuestResult, ET.Element]:
    image = guest.ensure_image(series)
    payload = f"""
cd /tmp
# numpy's argsort (AVX2/AVX-512 x86-simd-sort) died of SIGSEGV under TCG in special-size, every time:
# the emulator's vector instructions, not zfslab; the guest's numpy keeps to its SSE baseline
export NPY_DISABLE_CPU_FEATURES="AVX2 FMA3 AVX512F AVX512CD AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL AVX512_SPR"
# bytecode in the guest's tmpfs (the checkout is mounted read-only): each zfslab a test starts
# compiles nothing again (with none written, every process compiled ~120 modules, ~3 s under TCG)
export PYTHONPATH=/mnt/repo/src:/mnt/repo PYTHONPYCACHEPREFIX=/tmp/pycache HYPOTHESIS_STORAGE_DIRECTORY=/tmp/hyp
export ZFSLAB_TEST_DISKS={BY_ID} ZFSLAB_TEST_REQUIRE_E2E=1 ZFSLAB_TEST_FILEDIR=/var/tmp/zfslab-e2e ZFSLAB_E2E_INSIDE=1
python3 -m pytest -p no:cacheprovider -q -rA --rootdir=/mnt/repo -c /mnt/repo/pyproject.toml \\
    --junitxml=/mnt/host/junit.xml {tests}
"""
    share = tmp_path / "share"
    boot = lambda share: guest.boot(image, payload, series=series, disks=DISKS, share=share,  # noqa: E731
                                    timeout_s=BOOT_TIMEOUT_S, payload_within_s=PAYLOAD_WITHIN_S)
    try:
        result = boot(share)
    except guest.GuestKernelCrash as crash:
        # The suites judge zfslab, a user-space program: a kernel crash is OpenZFS's (the rebuild
        # race of openzfs/zfs#18276 in 2.1.11 and 2.3.2) or the emulator's (a NULL call in the
        # open path of 2.3's guest in CI, 2026-11-28; docs/test-guest.md#kernel-crashes). Not ours
        # to fix, and CI must not go red on it: the suite runs once more on a fresh boot, and the
        # crash's first lines are said in the session's summary. A second crash fails.
        first = "; ".join(str(crash).splitlines()[1:3])
        guest.note(f"guest {series}: the kernel crashed ({first}); booting once more")
        share = tmp_path / "share-retry"
        result = boot(share)
    except guest.GuestBootStalled as stalled:
        # a boot stuck before its payload under a loaded host, or hung in it (GuestHung: blocked
        # tasks, then silence; docs/test-guest.md#kernel-crashes): once more on a fresh boot, and
        # said; a second stall fails
        guest.note(f"guest {series}: {str(stalled).splitlines()[0]}; booting once more")
        share = tmp_path / "share-retry"
        result = boot(share)
    junit = share / "junit.xml"
    assert junit.exists(), f"the suite did not run in the guest:\n{result.log[-4000:]}"
    return result, ET.parse(junit).getroot()


# What each boot runs in CI, by name: the OpenZFS series is the name's part before any "-". The
# driver's contract (output formats, error texts) differs by version and runs on both series; 2.3
# also runs test_footprint_ci.py (footprint against real ZFS, small; docs/footprint.md#judged-on-real-zfs).
# RAIDZ expansion is judged in the guest on 2.4, and on 2.3.9 and 2.4.4 by the libzpool oracle on the
# host (tests/oracle/test_expansion_oracle.py: the same OpenZFS code in user space). The newest's tests are
# split over two boots of about equal CPU, each TCG guest being one host thread: "2.4" (bench, safety,
# contract, the udev races) and "2.4-drivers" (the drivers, the drill, expansion, special-size,
# zpool create's udev hold and `zfslab pool`). In a CI-like run of 2026-11-28 on an idle machine the
# two took 691 and 547 s of a core, and "2.4" ran alone at the end; test_create_race.py and
# test_pool.py (about 60 s) moved across to even them.
# 2.1 is not run in CI (its image costs a second debootstrap and DKMS build), but stays buildable
# and bootable by hand: `guest.py 2.1 '...'`, with the CONTRACT files. A named file missing from
# the checkout is left out. CI time: docs/test-guest.md#time-in-ci.
CONTRACT = ("test_drivers.py", "test_zfs_contract.py")
SUITES = {"2.4": (), "2.3": ("test_zfs_contract.py", "test_footprint_ci.py"),
          "2.4-drivers": ("test_drivers.py", "test_drill.py", "test_expansion.py", "test_special_size.py",
                          "test_create_race.py", "test_pool.py")}
BY_HAND = {"2.1": CONTRACT}  # SUITES' (): the whole folder but NOT_IN_CI and the files another boot of the series runs
# Files 2.4's whole-folder run leaves out: test_footprint.py (lz4 and zstd from the image's
# python3-lz4 and python3-zstandard), run by hand, about 6.5 min of pytest in a guest of its own and
# more beside CI's two; test_footprint_ci.py, which 2.3 runs: the model's rules are the same on both
NOT_IN_CI = ("test_footprint.py", "test_footprint_ci.py")
MIN_TESTS = {"2.4": 21, "2.3": 10, "2.4-drivers": 37, "2.1": 15}
# The fleet's two guests (tests/e2e/test_fleet.py) boot with the suites, once the image is built:
# booted after 2.3's guest, as until 2026-11-28, they made CI's longest chain (the image, 2.3, then
# the fleet's 30-odd minutes, ending with one core idle). None: wait for no boot; a suite's name:
# boot when that suite's guest has powered off. docs/test-guest.md#time-in-ci.
FLEET_AFTER: str | None = None
# pytest imports this file as e2e.test_guest, tests/conftest.py as tests.e2e.test_guest: two module
# objects. The guest module is imported by one name only, so the started suites live there, once.
_STARTED: dict[str, Future] = guest.__dict__.setdefault("_started_suites", {})


_SHARES: dict[str, Path] = guest.__dict__.setdefault("_suite_shares", {})


# The fleet's tests (test_fleet.py) drive two guests from the host's pytest, one test after another,
# mostly waiting on the guests. Run among the host's tests they started only when every host and
# set-up test had ended: in a CI-like run of 2026-11-28 the fleet stood booted and idle from 19:43 to
# 19:58 while a core idled too, and ended last. So a full session runs them in a pytest of their own
# in the background, started once the image is built (test_fleet_suite.py reports it); that pytest
# sets FLEET_INSIDE, and runs them as `pytest tests/e2e/test_fleet.py` does by hand.
FLEET_INSIDE = "ZFSLAB_FLEET_INSIDE"
FLEET_FILE = "tests/e2e/test_fleet.py"
FLEET_TIMEOUT_S = 2 * 3600  # a guard against a hang, as BOOT_TIMEOUT_S


# the fleet's pytest, once started (one a session): stop_fleet_suite() ends it if it still runs
_FLEET_CHILD: list[subprocess.Popen] = guest.__dict__.setdefault("_fleet_child", [])


@dataclass(frozen=True)
class FleetSuite:
    returncode: int
    junit: ET.Element | None
    log: str
    seconds: float
    tests: tuple[str, ...]   # the node ids it was given


def run_fleet_suite(tests: tuple[str, ...], rootdir: Path, out: Path) -> FleetSuite:
    """The fleet's tests in a pytest of their own, once the image is there: this process's build
    (guest.ensure_image's lock is per process, so the child must not look before it is built)."""
    from tests.e2e.guest import fleet as fleet_guests

    guest.ensure_image(fleet_guests.SERIES)
    junit = out / "junit.xml"
    log = out / "pytest.log"
    t0 = time.monotonic()
    with open(log, "w") as f:
        child = subprocess.Popen([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-rA",
                                  f"--rootdir={rootdir}", f"--junitxml={junit}", *tests],
                                 cwd=rootdir, env={**os.environ, FLEET_INSIDE: "1"}, stdin=subprocess.DEVNULL,
                                 stdout=f, stderr=subprocess.STDOUT, start_new_session=True)
        _FLEET_CHILD.append(child)
        try:
            code = child.wait(timeout=FLEET_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            code = stop_fleet_suite()
    root = ET.parse(junit).getroot() if junit.exists() else None
    return FleetSuite(code, root, log.read_text(errors="replace"), time.monotonic() - t0, tests)


def stop_fleet_suite() -> int | None:
    """Stop the fleet's pytest if it still runs (a hang, or this session interrupted: it has a
    session of its own, so a Ctrl-C here does not reach it): SIGINT, on which it stops its guests
    as a Ctrl-C would, then SIGKILL to its whole session after a grace period."""
    if not _FLEET_CHILD or _FLEET_CHILD[0].poll() is not None:
        return _FLEET_CHILD[0].returncode if _FLEET_CHILD else None
    child = _FLEET_CHILD[0]
    child.send_signal(signal.SIGINT)
    try:
        return child.wait(timeout=120)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)   # its guests too: they are in its session
        return child.wait()


def boots_settled() -> bool:
    """Is no boot of SUITES (not the fleet's: its own boot waits for ssh) under way, between qemu's
    start and its payload's? Until then the host's background work (tests/setup) waits before each
    run: a boot is the most sensitive time of a guest's (docs/test-guest.md#kernel-crashes). A boot
    still waiting for the image (no run.sh written yet) is not under way: the set-up's runs, four
    to eight minutes in all, fit in the image's build (10-25 min cold), when no guest runs at all;
    waiting for the boots to reach their payloads, as until 2026-11-28, put them beside five guests
    at nice 10, and they ended the idle run of that day."""
    for name, future in _STARTED.items():
        if name.startswith("fleet") or future.done():
            continue
        share = _SHARES.get(name)
        if share is None:
            return False
        dirs = [share / d for d in ("share", "share-retry")]
        if any((d / "run.sh").exists() for d in dirs) and not any((d / "run.log").exists() for d in dirs):
            return False
    return True


def series_of(name: str) -> str:
    return name.split("-")[0]


def _tests_for(name: str) -> str:
    """The payload's test paths for a boot: the named files present in the mounted checkout."""
    names = {**SUITES, **BY_HAND}[name]
    present = [n for n in names if (guest.repo_to_mount() / "tests/e2e/inside" / n).exists()]
    inside = "/mnt/repo/tests/e2e/inside"
    if names:
        return " ".join(f"{inside}/{n}" for n in present) or inside
    elsewhere = [f for other, files in SUITES.items()
                 if other != name and series_of(other) == series_of(name) for f in files]
    return " ".join([inside, *(f"--ignore={inside}/{n}" for n in (*NOT_IN_CI, *elsewhere))])


def start_guest_suites(*, suites: bool = True, fleet: bool = False,
                       fleet_tests: tuple[str, ...] = (), rootdir: Path | None = None) -> dict[str, Future]:
    """Each boot of SUITES in a background thread at once, and the fleet's guests (after the boot
    FLEET_AFTER names, if any), or the fleet's tests in a pytest of their own ("fleet-tests": the
    node ids given, run_fleet_suite), each once a session. tests/conftest.py starts them when
    collection ends, so that the host's own tests run beside them."""
    from tests.e2e.guest import fleet as fleet_guests

    todo = [s for s in SUITES if suites and s not in _STARTED]
    if fleet_tests and "fleet-tests" not in _STARTED:
        out = Path(tempfile.mkdtemp(prefix="zfslab-fleet-tests-"))
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fleet-tests")
        _STARTED["fleet-tests"] = pool.submit(run_fleet_suite, tuple(fleet_tests), rootdir or REPO, out)
        pool.shutdown(wait=False)
    if todo or (fleet and "fleet" not in _STARTED):
        # no image is built here: each boot's thread calls guest.ensure_image, the first builds the
        # image the others share (2.3, 2.4 and the fleet's) while the host's own tests run
        pool = ThreadPoolExecutor(max_workers=len(SUITES) + 1, thread_name_prefix="guest")
        shares = {name: Path(tempfile.mkdtemp(prefix=f"zfslab-guest-{name}-")) for name in todo}
        _SHARES.update(shares)
        for name in todo:
            _STARTED[name] = pool.submit(run_inside, series_of(name), _tests_for(name), shares[name])
        if fleet and "fleet" not in _STARTED:
            _STARTED["fleet"] = pool.submit(fleet_guests.boot_fleet, _STARTED.get(FLEET_AFTER) if FLEET_AFTER else None)
        pool.shutdown(wait=False)
    return _STARTED


def guest_can_run() -> bool:
    return all(shutil.which(t) for t in ("qemu-system-x86_64", "debootstrap")) and os.geteuid() == 0


@pytest.fixture(scope="module")
def guest_suites():
    """A test waits on its own version's suite."""
    _need_guest()
    return start_guest_suites()


def junit_problems(root: ET.Element) -> tuple[list[str], list[str]]:
    """A JUnit report's failed or errored cases ("name: message") and its skipped ones (names)."""
    cases = list(root.iter("testcase"))
    failed = [f"{c.get('name')}: {(c.find('failure') if c.find('failure') is not None else c.find('error')).get('message')}"
              for c in cases if c.find("failure") is not None or c.find("error") is not None]
    return failed, [c.get("name") for c in cases if c.find("skipped") is not None]


@pytest.mark.parametrize("name", tuple(SUITES))
def test_drivers_in_the_guest(name, guest_suites: dict[str, Future], record_property):
    result, root = guest_suites[name].result()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    record_property("guest_seconds", round(result.seconds))
    failed, skipped = junit_problems(suite)
    assert not failed, "\n".join(failed) + "\n" + result.log[-3000:]
    assert not skipped, skipped
    assert int(suite.get("tests")) >= MIN_TESTS[name]
    assert result.returncode == 0, result.log[-3000:]
